// RUN: mtia-opt %s --verify-diagnostics --split-input-file | filecheck %s

%x = mtia.pe_id {axis = 2 : i32} : i32
// CHECK: axis must be 0 (x, PE column) or 1 (y, PE row), got 2

// -----

%w = "mtia.num_pes"() <{axis = -1 : i32}> : () -> i32
// CHECK: axis must be 0 (x, PE column) or 1 (y, PE row), got -1

// RUN: mtia-opt %s --verify-diagnostics --split-input-file | filecheck %s

%x = "test.op"() : () -> tensor<16xf32>
%a = mtia.re_allreduce %x {pe_axis = 2 : i32, kind = "addf"} : tensor<16xf32> -> tensor<16xf32>
// CHECK: pe_axis must be 0 (the PEs of a row) or 1 (the PEs of a column), got 2

// -----

%x = "test.op"() : () -> tensor<16xf32>
%a = mtia.re_allreduce %x {pe_axis = 0 : i32, kind = "mulf"} : tensor<16xf32> -> tensor<16xf32>
// CHECK: unknown reduction kind 'mulf'

// -----

%x = "test.op"() : () -> tensor<16xf32>
%a = mtia.re_allreduce %x {pe_axis = 0 : i32, kind = "addf"} : tensor<16xf32> -> tensor<8xf32>
// CHECK: the result has the input's type tensor<16xf32>, not tensor<8xf32>

// RUN: mtia-opt %s | mtia-opt | filecheck %s
// RUN: mtia-opt %s --print-op-generic | mtia-opt | filecheck %s

// mtia.pe_id / mtia.num_pes (language extension get_pe_id) round-trip in custom and generic form.
// CHECK: %{{.*}} = mtia.pe_id {axis = 0 : i32} : i32
// CHECK: %{{.*}} = mtia.pe_id {axis = 1 : i32} : i32
// CHECK: %{{.*}} = mtia.num_pes {axis = 0 : i32} : i32
// CHECK: %{{.*}} = mtia.num_pes {axis = 1 : i32} : i32
builtin.module {
  %x = mtia.pe_id {axis = 0 : i32} : i32
  %y = "mtia.pe_id"() <{axis = 1 : i32}> : () -> i32
  %w = mtia.num_pes {axis = 0 : i32} : i32
  %h = mtia.num_pes {axis = 1 : i32} : i32
}

// RUN: mtia-opt %s | mtia-opt | filecheck %s
// RUN: mtia-opt %s --print-op-generic | mtia-opt | filecheck %s

// mtia.re_allreduce (language extension re_reduce) round-trips on tiles and scalars.
// CHECK: mtia.re_allreduce %{{.*}} {pe_axis = 0 : i32, kind = "addf"} : tensor<16xf32> -> tensor<16xf32>
// CHECK: mtia.re_allreduce %{{.*}} {pe_axis = 1 : i32, kind = "maxsi"} : i32 -> i32
builtin.module {
  %x, %i = "test.op"() : () -> (tensor<16xf32>, i32)
  %a = mtia.re_allreduce %x {pe_axis = 0 : i32, kind = "addf"} : tensor<16xf32> -> tensor<16xf32>
  %b = "mtia.re_allreduce"(%i) <{pe_axis = 1 : i32, kind = "maxsi"}> : (i32) -> i32
}

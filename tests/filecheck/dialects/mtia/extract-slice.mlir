// RUN: mtia-opt %s | mtia-opt | filecheck %s
// RUN: mtia-opt %s --print-op-generic | mtia-opt | filecheck %s

// mtia.extract_slice (language extension extract_slice) round-trips with static and dynamic offsets.
// CHECK: mtia.extract_slice %{{.*}} {static_offsets = array<i64: 4, 0>} : tensor<16x8xf32> -> tensor<8x8xf32>
// CHECK: mtia.extract_slice %{{.*}}[%{{.*}}] {static_offsets = array<i64: -9223372036854775808, 2>} : tensor<16x8xf32> -> tensor<8x4xf32>, i32
builtin.module {
  %x, %o = "test.op"() : () -> (tensor<16x8xf32>, i32)
  %a = mtia.extract_slice %x {static_offsets = array<i64: 4, 0>} : tensor<16x8xf32> -> tensor<8x8xf32>
  %b = "mtia.extract_slice"(%x, %o) <{static_offsets = array<i64: -9223372036854775808, 2>}> : (tensor<16x8xf32>, i32) -> tensor<8x4xf32>
}

// RUN: mtia-opt %s | mtia-opt | filecheck %s
// RUN: mtia-opt %s --print-op-generic | mtia-opt | filecheck %s
// RUN: mtia-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Tensor descriptors and the other ops Triton 3.9 added, in upstream's custom syntax.

builtin.module {
  // CHECK-LABEL: tt.func public @descriptors
  tt.func public @descriptors(%p: !tt.ptr<f32>, %u: !tt.ptr<i32>, %n: i32, %s: i64, %x: tensor<8xi32>) {
    // CHECK: tt.make_tensor_descriptor %{{.*}}, [%{{.*}}, %{{.*}}], [%{{.*}}, %{{.*}}] {padding = 2 : i32} : <f32>, <1x32xf32>
    // GENERIC: "tt.make_tensor_descriptor"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{padding = 2 : i32, operandSegmentSizes = array<i32: 1, 2, 2>}> : (!tt.ptr<f32>, i32, i32, i64, i64) -> !tt.tensordesc<1x32xf32>
    %d = tt.make_tensor_descriptor %p, [%n, %n], [%s, %s] {padding = 2 : i32} : <f32>, <1x32xf32>
    // CHECK: tt.make_tensor_descriptor %{{.*}}, [%{{.*}}, %{{.*}}], [%{{.*}}, %{{.*}}] : <i32>, <16x32xui32>
    %ud = tt.make_tensor_descriptor %u, [%n, %n], [%s, %s] : !tt.ptr<i32>, !tt.tensordesc<16x32xui32>
    // CHECK: tt.descriptor_load %{{.*}}[%{{.*}}, %{{.*}}] {cachePolicy = #tt.cache_policy<cache_modifier = cg, eviction_policy = evict_last>} : !tt.tensordesc<16x32xui32> -> tensor<16x32xi32>
    %t = tt.descriptor_load %ud[%n, %n] {cachePolicy = #tt.cache_policy<cache_modifier = cg, eviction_policy = evict_last>} : !tt.tensordesc<16x32xui32> -> tensor<16x32xi32>
    // CHECK: tt.descriptor_store %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} : !tt.tensordesc<16x32xui32>, tensor<16x32xi32>
    tt.descriptor_store %ud[%n, %n], %t : !tt.tensordesc<16x32xui32>, tensor<16x32xi32>
    // CHECK: tt.descriptor_reduce xor, %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} : !tt.tensordesc<16x32xui32>, tensor<16x32xi32>
    // GENERIC: "tt.descriptor_reduce"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{kind = 8 : i32}>
    tt.descriptor_reduce xor, %ud[%n, %n], %t : !tt.tensordesc<16x32xui32>, tensor<16x32xi32>
    // CHECK: tt.descriptor_gather %{{.*}}[%{{.*}}, %{{.*}}] : (!tt.tensordesc<1x32xf32>, tensor<8xi32>, i32) -> tensor<8x32xf32>
    %g = tt.descriptor_gather %d[%x, %n] : (!tt.tensordesc<1x32xf32>, tensor<8xi32>, i32) -> tensor<8x32xf32>
    // CHECK: tt.descriptor_scatter %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} : !tt.tensordesc<1x32xf32>, tensor<8xi32>, i32, tensor<8x32xf32>
    tt.descriptor_scatter %d[%x, %n], %g : !tt.tensordesc<1x32xf32>, tensor<8xi32>, i32, tensor<8x32xf32>
    tt.return
  }

  // CHECK-LABEL: tt.func public @atomics_and_map
  tt.func public @atomics_and_map(%pp: tensor<8x!tt.ptr<i32>>, %m: tensor<8xi1>, %v: tensor<8xi32>, %f: tensor<8xf32>, %s: i64) {
    // CHECK: tt.atomic_load relaxed, cta, %{{.*}}, %{{.*}} : (tensor<8x!tt.ptr<i32>>, tensor<8xi1>) -> tensor<8xi32>
    // GENERIC: "tt.atomic_load"(%{{.*}}, %{{.*}}) <{sem = 1 : i32, scope = 2 : i32}>
    %a = tt.atomic_load relaxed, cta, %pp, %m : (tensor<8x!tt.ptr<i32>>, tensor<8xi1>) -> tensor<8xi32>
    // CHECK: tt.atomic_store release, gpu, %{{.*}}, %{{.*}}, %{{.*}} : tensor<8x!tt.ptr<i32>>
    tt.atomic_store release, gpu, %pp, %a, %m : tensor<8x!tt.ptr<i32>>
    // CHECK: tt.atomic_poll acquire, gpu, %{{.*}}, %{{.*}} timeout %{{.*}} : tensor<8x!tt.ptr<i32>>, tensor<8xi32> -> tensor<8xi1>
    %p1 = tt.atomic_poll acquire, gpu, %pp, %v timeout %s : tensor<8x!tt.ptr<i32>>, tensor<8xi32> -> tensor<8xi1>
    // CHECK: tt.atomic_poll acquire, gpu, %{{.*}}, %{{.*}} : tensor<8x!tt.ptr<i32>>, tensor<8xi32> -> tensor<8xi1>
    %p2 = tt.atomic_poll acquire, gpu, %pp, %v : tensor<8x!tt.ptr<i32>>, tensor<8xi32> -> tensor<8xi1>
    // CHECK: tt.approx_divf %{{.*}}, %{{.*}} : tensor<8xf32>
    %q = tt.approx_divf %f, %f : tensor<8xf32>
    // CHECK: "tt.map_elementwise"(%{{.*}}, %{{.*}}) <{pack = 1 : i32}> ({
    // CHECK: tt.map_elementwise.return %{{.*}} : f32
    %me = "tt.map_elementwise"(%f, %q) <{pack = 1 : i32}> ({
    ^bb0(%x: f32, %y: f32):
      %z = arith.addf %x, %y : f32
      tt.map_elementwise.return %z : f32
    }) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    tt.return
  }
}

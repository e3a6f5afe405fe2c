// RUN: mtia-opt %s --split-input-file -p tt-rewrite-tensor-descriptor-to-pointer | filecheck %s
// RUN: mtia-opt %s --split-input-file -p tt-rewrite-tensor-descriptor-to-pointer,test-mtia-memory-access | filecheck %s --check-prefix=ACCESS

// A block load: one tt.load of pointers base + sum (i_d + range_d) * stride_d, masked by both bounds of
// every dimension (no branch); masked-off lanes read the padding (NaN here). The mask is a box: the
// memory-access analysis makes it one DMA with effective-shape bounds and start lanes (a block may begin
// before its tensor).
// CHECK-LABEL: tt.func public @load
// CHECK-NOT:     tt.make_tensor_descriptor
// CHECK-NOT:     scf.if
// CHECK:         %[[PTR:.*]] = tt.addptr %{{.*}}, %{{.*}} : tensor<16x32x!tt.ptr<f32>>, tensor<16x32xi64>
// CHECK:         arith.andi %{{.*}}, %{{.*}} : tensor<16x32xi1>
// CHECK-NEXT:    arith.andi %{{.*}}, %{{.*}} : tensor<16x32xi1>
// CHECK-NEXT:    %[[MASK:.*]] = arith.andi %{{.*}}, %{{.*}} : tensor<16x32xi1>
// CHECK-NEXT:    %[[NAN:.*]] = arith.constant 0x7fc00000 : f32
// CHECK:         %[[OTHER:.*]] = tt.splat %[[NAN]]
// CHECK-NEXT:    %[[T:.*]] = tt.load %[[PTR]], %[[MASK]], %[[OTHER]] : tensor<16x32x!tt.ptr<f32>>
// CHECK-NOT:     scf.if
// CHECK:         tt.return %[[T]]
// ACCESS-LABEL: tt.func public @load
// ACCESS:       tt.load {{.*}}mtia.access = "dma base=%x+((%i * %s) + %j) strides=[%s, 1] bounds=[(%m - %i), (%n - %j)] shape=[16, 32] starts=[-(%i), -(%j)]"
tt.func public @load(%x: !tt.ptr<f32>, %m: i32, %n: i32, %s: i64, %i: i32, %j: i32) -> tensor<16x32xf32> {
  %one = arith.constant 1 : i64
  %d = tt.make_tensor_descriptor %x, [%m, %n], [%s, %one] {padding = 2 : i32} : <f32>, <16x32xf32>
  %t = tt.descriptor_load %d[%i, %j] : !tt.tensordesc<16x32xf32> -> tensor<16x32xf32>
  tt.return %t : tensor<16x32xf32>
}

// -----

// A store: one masked tt.store, a DMA with start lanes.
// CHECK-LABEL: tt.func public @store
// CHECK-NOT:     scf.if
// CHECK:         tt.store %{{.*}}, %{{.*}}, %{{.*}} : tensor<8x!tt.ptr<i32>>
// CHECK-NOT:     tt.descriptor_store
// ACCESS-LABEL: tt.func public @store
// ACCESS:       tt.store {{.*}}mtia.access = "dma base=%x+%i strides=[1] bounds=[(%n - %i)] shape=[8] starts=[-(%i)]"
tt.func public @store(%x: !tt.ptr<i32>, %n: i32, %i: i32, %v: tensor<8xi32>) {
  %one = arith.constant 1 : i64
  %d = tt.make_tensor_descriptor %x, [%n], [%one] : <i32>, <8xi32>
  tt.descriptor_store %d[%i], %v : !tt.tensordesc<8xi32>, tensor<8xi32>
  tt.return
}

// -----

// Reductions become masked atomics: add on floats is fadd; max through an unsigned descriptor is umax.
// CHECK-LABEL: tt.func public @reduce
// CHECK:         tt.atomic_rmw fadd, relaxed, gpu, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8x!tt.ptr<f32>>, tensor<8xf32>, tensor<8xi1>) -> tensor<8xf32>
// CHECK:         tt.atomic_rmw umax, relaxed, gpu, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8x!tt.ptr<i32>>, tensor<8xi32>, tensor<8xi1>) -> tensor<8xi32>
tt.func public @reduce(%x: !tt.ptr<f32>, %u: !tt.ptr<i32>, %n: i32, %i: i32, %v: tensor<8xf32>, %w: tensor<8xi32>) {
  %one = arith.constant 1 : i64
  %d = tt.make_tensor_descriptor %x, [%n], [%one] : <f32>, <8xf32>
  tt.descriptor_reduce add, %d[%i], %v : !tt.tensordesc<8xf32>, tensor<8xf32>
  %e = tt.make_tensor_descriptor %u, [%n], [%one] : <i32>, <8xui32>
  tt.descriptor_reduce max, %e[%i], %w : !tt.tensordesc<8xui32>, tensor<8xi32>
  tt.return
}

// -----

// Gather and scatter: rows from x_offsets, columns y_offset + range, both bounds in the mask.
// CHECK-LABEL: tt.func public @gather_scatter
// CHECK:         %[[G:.*]] = tt.load %{{.*}}, %{{.*}}, %{{.*}} : tensor<8x16x!tt.ptr<f32>>
// CHECK:         tt.store %{{.*}}, %[[G]], %{{.*}} : tensor<8x16x!tt.ptr<f32>>
// CHECK-NOT:     tt.descriptor_
tt.func public @gather_scatter(%x: !tt.ptr<f32>, %m: i32, %n: i32, %s: i64, %r: tensor<8xi32>, %c: i32) {
  %one = arith.constant 1 : i64
  %d = tt.make_tensor_descriptor %x, [%m, %n], [%s, %one] : <f32>, <1x16xf32>
  %g = tt.descriptor_gather %d[%r, %c] : (!tt.tensordesc<1x16xf32>, tensor<8xi32>, i32) -> tensor<8x16xf32>
  tt.descriptor_scatter %d[%r, %c], %g : !tt.tensordesc<1x16xf32>, tensor<8xi32>, i32, tensor<8x16xf32>
  tt.return
}

// -----

// A host-side descriptor (a kernel argument, followed by its shape and strides as Triton's frontend passes
// them) becomes its base pointer and an i1 that is true for NaN padding; loads read the padding selected
// at run time, still one DMA (the access analysis takes the splat of a scalar as `other`).
// CHECK-LABEL: tt.func public @host
// CHECK-SAME:    (%{{.*}}: !tt.ptr<f32>, %[[NAN_FLAG:[^:]*]]: i1, %m: i32, %n: i32, %s0: i64, %s1: i64, %i: i32) -> tensor<16x32xf32>
// CHECK-NOT:     tt.tensordesc
// CHECK:         %[[PAD:.*]] = arith.select %[[NAN_FLAG]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    %[[OTHER:.*]] = tt.splat %[[PAD]] : f32 -> tensor<16x32xf32>
// CHECK-NEXT:    tt.load %{{.*}}, %{{.*}}, %[[OTHER]]
// ACCESS-LABEL: tt.func public @host
// ACCESS:       tt.load {{.*}}mtia.access = "dma base=%0+((%i * %s0) + (%i * %s1)) strides=[%s0, %s1] bounds=[(%m - %i), (%n - %i)] shape=[16, 32] starts=[-(%i), -(%i)]"
tt.func public @host(%d: !tt.tensordesc<16x32xf32>, %m: i32, %n: i32, %s0: i64, %s1: i64, %i: i32) -> tensor<16x32xf32> {
  %t = tt.descriptor_load %d[%i, %i] : !tt.tensordesc<16x32xf32> -> tensor<16x32xf32>
  tt.return %t : tensor<16x32xf32>
}

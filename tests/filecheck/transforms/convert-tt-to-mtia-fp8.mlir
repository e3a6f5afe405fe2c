// RUN: mtia-opt %s --split-input-file -p convert-tt-to-mtia | filecheck %s

// fp8 values become their bit patterns (i8, pointers too); a conversion to fp8 is one vector-core
// command encoding f32 (round to nearest even), a conversion from fp8 one decoding to f32.
// CHECK-LABEL: tt.func public @roundtrip(%p: !tt.ptr<f32>, %q: !tt.ptr<i8>, %n: i64)
// CHECK:         %[[X:.*]] = mtia.dma_load %p
// CHECK:         %[[E:.*]] = mtia.vec_compute ins(%[[X]] : tensor<16xf32>) {
// CHECK:           arith.bitcast %{{.*}} : tensor<16xf32> to tensor<16xi32>
// CHECK:           %[[T:.*]] = arith.trunci %{{.*}} : tensor<16xi32> to tensor<16xi8>
// CHECK-NEXT:      mtia.yield %[[T]] : tensor<16xi8>
// CHECK-NEXT:    } -> tensor<16xi8>
// CHECK:         mtia.dma_store %[[E]], %q[%{{.*}}] bounds[%{{.*}}] : tensor<16xi8>, !tt.ptr<i8>
// CHECK:         %[[D:.*]] = mtia.vec_compute ins(%[[E]] : tensor<16xi8>) {
// CHECK:           arith.extui %{{.*}} : tensor<16xi8> to tensor<16xi32>
// CHECK:           mtia.yield %{{.*}} : tensor<16xf32>
// CHECK-NEXT:    } -> tensor<16xf32>
// CHECK:         mtia.dma_store %[[D]], %p[%{{.*}}]
// CHECK-NOT:     f8E5M2
builtin.module {
  tt.func public @roundtrip(%p: !tt.ptr<f32>, %q: !tt.ptr<f8E5M2>, %n: i64) {
    %r = tt.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %pp = tt.addptr %ps, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %x = tt.load %pp : tensor<16x!tt.ptr<f32>>
    %e = tt.fp_to_fp %x, rounding = rtne : tensor<16xf32> -> tensor<16xf8E5M2>
    %qs = tt.splat %q : !tt.ptr<f8E5M2> -> tensor<16x!tt.ptr<f8E5M2>>
    %qp = tt.addptr %qs, %r : tensor<16x!tt.ptr<f8E5M2>>, tensor<16xi32>
    tt.store %qp, %e : tensor<16x!tt.ptr<f8E5M2>>
    %d = tt.fp_to_fp %e : tensor<16xf8E5M2> -> tensor<16xf32>
    tt.store %pp, %d : tensor<16x!tt.ptr<f32>>
    tt.return
  }
}

// -----

// Arithmetic on fp8 decodes each operand once, computes in f32 on the SE, and encodes the result;
// fp8 constants become i8 constants of their bit patterns (1.5 in E4M3FN is 0x3C = 60).
// CHECK-LABEL: tt.func public @arith(%x: tensor<8xi8>, %m: tensor<8xi1>) -> tensor<8xi8>
// CHECK:         %[[D:.*]] = mtia.vec_compute ins(%x : tensor<8xi8>) {
// CHECK:         } -> tensor<8xf32>
// CHECK:         %[[S:.*]] = mtia.se_compute ins(%[[D]] : tensor<8xf32>) {
// CHECK:           arith.mulf %{{.*}}, %{{.*}} : tensor<8xf32>
// CHECK:         %[[E:.*]] = mtia.vec_compute ins(%[[S]] : tensor<8xf32>) {
// CHECK:         } -> tensor<8xi8>
// CHECK:         mtia.vec_compute ins(%m, %[[E]] : tensor<8xi1>, tensor<8xi8>) {
// CHECK:           %[[C:.*]] = arith.constant dense<60> : tensor<8xi8>
// CHECK-NEXT:      arith.select %{{.*}}, %{{.*}}, %[[C]] : tensor<8xi1>, tensor<8xi8>
builtin.module {
  tt.func public @arith(%x: tensor<8xf8E4M3FN>, %m: tensor<8xi1>) -> tensor<8xf8E4M3FN> {
    %y = arith.mulf %x, %x : tensor<8xf8E4M3FN>
    %c = arith.constant dense<1.5> : tensor<8xf8E4M3FN>
    %z = arith.select %m, %y, %c : tensor<8xi1>, tensor<8xf8E4M3FN>
    tt.return %z : tensor<8xf8E4M3FN>
  }
}

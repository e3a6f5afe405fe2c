// RUN: mtia-opt %s -p mtia-rematerialize-index-tiles | filecheck %s

// An index tile (a range, a mask computed from it) read by two gathers and a store far apart: each reader
// gets its own copy of the chain (range, then mask) right before it, and the originals are gone. A loaded
// tile is no index tile: the add reading it keeps its operand, and only its index operand is copied.
// CHECK-LABEL: tt.func public @k
// CHECK-NEXT:    %[[R1:.*]] = mtia.vec_compute {
// CHECK-NEXT:      tt.make_range
// CHECK:         %[[M1:.*]] = mtia.vec_compute ins(%[[R1]], %n : tensor<16xi32>, i32) {
// CHECK:           arith.cmpi slt
// CHECK:         %[[A:.*]] = "mtia.gather"(%p, %[[M1]], %f)
// CHECK-NEXT:    %[[R2:.*]] = mtia.vec_compute {
// CHECK-NEXT:      tt.make_range
// CHECK:         %[[M2:.*]] = mtia.vec_compute ins(%[[R2]], %n : tensor<16xi32>, i32) {
// CHECK:         %[[B:.*]] = "mtia.gather"(%p, %[[M2]], %f)
// CHECK-NEXT:    %[[R3:.*]] = mtia.vec_compute {
// CHECK-NEXT:      tt.make_range
// CHECK:         mtia.vec_compute ins(%[[A]], %[[R3]] : tensor<16xf32>, tensor<16xi32>)
// CHECK-NOT:     tt.make_range
// CHECK:         tt.return
tt.func public @k(%p: tensor<16x!tt.ptr<f32>>, %n: i32, %f: f32) -> tensor<16xf32> {
  %r = mtia.vec_compute {
    %0 = tt.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
    mtia.yield %0 : tensor<16xi32>
  } -> tensor<16xi32>
  %m = mtia.vec_compute ins(%r, %n : tensor<16xi32>, i32) {
  ^bb0(%x: tensor<16xi32>, %k: i32):
    %s = tt.splat %k : i32 -> tensor<16xi32>
    %c = arith.cmpi slt, %x, %s : tensor<16xi32>
    mtia.yield %c : tensor<16xi1>
  } -> tensor<16xi1>
  %a = "mtia.gather"(%p, %m, %f) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<16x!tt.ptr<f32>>, tensor<16xi1>, f32) -> tensor<16xf32>
  %b = "mtia.gather"(%p, %m, %f) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<16x!tt.ptr<f32>>, tensor<16xi1>, f32) -> tensor<16xf32>
  %sum = mtia.vec_compute ins(%a, %r : tensor<16xf32>, tensor<16xi32>) {
  ^bb0(%u: tensor<16xf32>, %v: tensor<16xi32>):
    %w = arith.sitofp %v : tensor<16xi32> to tensor<16xf32>
    %y = arith.addf %u, %w : tensor<16xf32>
    mtia.yield %y : tensor<16xf32>
  } -> tensor<16xf32>
  %out = mtia.vec_compute ins(%sum, %b : tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%u2: tensor<16xf32>, %v2: tensor<16xf32>):
    %y2 = arith.addf %u2, %v2 : tensor<16xf32>
    mtia.yield %y2 : tensor<16xf32>
  } -> tensor<16xf32>
  tt.return %out : tensor<16xf32>
}

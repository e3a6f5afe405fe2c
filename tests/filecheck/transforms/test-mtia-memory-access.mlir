// RUN: mtia-opt %s -p test-mtia-memory-access | filecheck %s

// CHECK-LABEL: tt.func public @accesses
tt.func public @accesses(%x: !tt.ptr<f32>, %stride: i32, %m: i32, %n: i32) {
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %rows = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %st = tt.splat %stride : i32 -> tensor<16x1xi32>
  %rowoff = arith.muli %rows, %st : tensor<16x1xi32>
  %cols = tt.expand_dims %r {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %rb = tt.broadcast %rowoff : tensor<16x1xi32> -> tensor<16x16xi32>
  %cb = tt.broadcast %cols : tensor<1x16xi32> -> tensor<16x16xi32>
  %offs = arith.addi %rb, %cb : tensor<16x16xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %ptrs = tt.addptr %xs, %offs : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  %ms = tt.splat %m : i32 -> tensor<16x1xi32>
  %mrow = arith.cmpi slt, %rows, %ms : tensor<16x1xi32>
  %ns = tt.splat %n : i32 -> tensor<1x16xi32>
  %mcol = arith.cmpi slt, %cols, %ns : tensor<1x16xi32>
  %mrb = tt.broadcast %mrow : tensor<16x1xi1> -> tensor<16x16xi1>
  %mcb = tt.broadcast %mcol : tensor<1x16xi1> -> tensor<16x16xi1>
  %mask = arith.andi %mrb, %mcb : tensor<16x16xi1>
  // A 2-d tile with a row stride and a box mask: one DMA, bounds = effective shape.
  // CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+0 strides=[%stride, 1] bounds=[%m, %n] shape=[16, 16]"}
  %v = tt.load %ptrs, %mask : tensor<16x16x!tt.ptr<f32>>
  // Unmasked: the bounds are the block shape.
  // CHECK: tt.store {{.*}} {mtia.access = "dma base=%x+0 strides=[%stride, 1] bounds=[16, 16] shape=[16, 16]"}
  tt.store %ptrs, %v : tensor<16x16x!tt.ptr<f32>>
  // The same tile through its transpose-like broadcast of rows only: a mask that is not a prefix.
  %gt = arith.cmpi sgt, %offs, %offs : tensor<16x16xi32>
  // CHECK: tt.load {{.*}} {mtia.access = "scalar: mask is not a box"}
  %w = tt.load %ptrs, %gt : tensor<16x16x!tt.ptr<f32>>
  // Offsets squared are not affine.
  %sq = arith.muli %offs, %offs : tensor<16x16xi32>
  %qp = tt.addptr %xs, %sq : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  // CHECK: tt.load {{.*}} {mtia.access = "scalar: pointer is not an affine block"}
  %q = tt.load %qp : tensor<16x16x!tt.ptr<f32>>
  // A scalar pointer is a scalar-core access.
  // CHECK: tt.load {{.*}} {mtia.access = "scalar: scalar pointer"}
  %s = tt.load %x : !tt.ptr<f32>
  tt.return
}

// Unnamed values are shown by the names the printer gives them.
// CHECK-LABEL: tt.func public @unnamed
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%arg0+%[[START:[0-9]+]] strides=[1] bounds=[(%arg1 - %[[START]])] shape=[64]"}
tt.func public @unnamed(%arg0: !tt.ptr<f32>, %arg1: i32) {
  %0 = tt.get_program_id x : i32
  %1 = arith.constant 64 : i32
  %2 = arith.muli %0, %1 : i32
  %3 = tt.splat %2 : i32 -> tensor<64xi32>
  %4 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %5 = arith.addi %3, %4 : tensor<64xi32>
  %6 = tt.splat %arg1 : i32 -> tensor<64xi32>
  %7 = arith.cmpi slt, %5, %6 : tensor<64xi32>
  %8 = tt.splat %arg0 : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %9 = tt.addptr %8, %5 : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %10 = tt.load %9, %7 : tensor<64x!tt.ptr<f32>>
  tt.return
}

// Lower bounds: `i + lo >= 0` and `0 <= i + lo` (sge and sle) skip leading lanes: one DMA with starts,
// the larger start where a dimension has two; broadcasting the mask along a new dimension keeps them.
// CHECK-LABEL: tt.func public @lower_bounds
tt.func public @lower_bounds(%x: !tt.ptr<f32>, %lo: i32, %lo2: i32, %n: i32) {
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %los = tt.splat %lo : i32 -> tensor<16xi32>
  %idx = arith.addi %los, %r : tensor<16xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %ptrs = tt.addptr %xs, %idx : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
  %zero = arith.constant dense<0> : tensor<16xi32>
  %ns = tt.splat %n : i32 -> tensor<16xi32>
  %up = arith.cmpi slt, %idx, %ns : tensor<16xi32>
  %ge = arith.cmpi sge, %idx, %zero : tensor<16xi32>
  %le = arith.cmpi sle, %zero, %idx : tensor<16xi32>
  %lo2s = tt.splat %lo2 : i32 -> tensor<16xi32>
  %ge2 = arith.cmpi sge, %r, %lo2s : tensor<16xi32>
  %m1 = arith.andi %up, %ge : tensor<16xi1>
  // CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+%lo strides=[1] bounds=[(%n - %lo)] shape=[16] starts=[-(%lo)]"}
  %a = tt.load %ptrs, %m1 : tensor<16x!tt.ptr<f32>>
  %m2 = arith.andi %le, %ge2 : tensor<16xi1>
  // CHECK: tt.store {{.*}} {mtia.access = "dma base=%x+%lo strides=[1] bounds=[16] shape=[16] starts=[max(-(%lo), %lo2)]"}
  tt.store %ptrs, %a, %m2 : tensor<16x!tt.ptr<f32>>
  %row = tt.expand_dims %ge {axis = 0 : i32} : tensor<16xi1> -> tensor<1x16xi1>
  %bm = tt.broadcast %row : tensor<1x16xi1> -> tensor<8x16xi1>
  %cbase = tt.expand_dims %ptrs {axis = 0 : i32} : tensor<16x!tt.ptr<f32>> -> tensor<1x16x!tt.ptr<f32>>
  %bp = tt.broadcast %cbase : tensor<1x16x!tt.ptr<f32>> -> tensor<8x16x!tt.ptr<f32>>
  // CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+%lo strides=[0, 1] bounds=[8, 16] shape=[8, 16] starts=[0, -(%lo)]"}
  %c = tt.load %bp, %bm : tensor<8x16x!tt.ptr<f32>>
  tt.return
}

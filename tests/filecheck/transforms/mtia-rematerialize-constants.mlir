// RUN: mtia-opt %s -p mtia-rematerialize-constants | filecheck %s

// A zero tile hoisted to the top and read by a dot in a loop, by the loop's initial value and after the
// loop: each reader gets its own fill right before it (one CB alive from fill to reader); the hoisted
// fill is gone. A fill whose only reader follows it stays as it is.
// CHECK-LABEL: tt.func public @k
// CHECK:         arith.constant 1 : i32
// CHECK-NEXT:    %[[INIT:.*]] = mtia.se_compute {
// CHECK-NEXT:      arith.constant dense<0.000000e+00> : tensor<16x16xf32>
// CHECK-NEXT:      mtia.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]])
// CHECK-NEXT:      %[[ZERO:.*]] = mtia.se_compute {
// CHECK-NEXT:        arith.constant dense<0.000000e+00> : tensor<16x16xf32>
// CHECK:           %[[D:.*]] = mtia.dpe_matmul %a, %b, %[[ZERO]]
// CHECK-NEXT:      mtia.se_compute ins(%[[ACC]], %[[D]]
// CHECK:         %[[AFTER:.*]] = mtia.se_compute {
// CHECK-NEXT:      arith.constant dense<0.000000e+00> : tensor<16x16xf32>
// CHECK:         %[[ONE:.*]] = mtia.se_compute {
// CHECK-NEXT:      arith.constant dense<1.000000e+00> : tensor<16x16xf32>
// CHECK:         mtia.se_compute ins(%{{.*}}, %[[AFTER]], %[[ONE]]
tt.func public @k(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %n: i32) -> tensor<16x16xf32> {
  %zero = mtia.se_compute {
    %z = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
    mtia.yield %z : tensor<16x16xf32>
  } -> tensor<16x16xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<16x16xf32>) : i32 {
    %d = mtia.dpe_matmul %a, %b, %zero {input_precision = 0 : i32} : tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    %s = mtia.se_compute ins(%acc, %d : tensor<16x16xf32>, tensor<16x16xf32>) {
    ^bb0(%x: tensor<16x16xf32>, %y: tensor<16x16xf32>):
      %t = arith.addf %x, %y : tensor<16x16xf32>
      mtia.yield %t : tensor<16x16xf32>
    } -> tensor<16x16xf32>
    scf.yield %s : tensor<16x16xf32>
  }
  %one = mtia.se_compute {
    %o = arith.constant dense<1.000000e+00> : tensor<16x16xf32>
    mtia.yield %o : tensor<16x16xf32>
  } -> tensor<16x16xf32>
  %out = mtia.se_compute ins(%r, %zero, %one : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) {
  ^bb0(%x: tensor<16x16xf32>, %y: tensor<16x16xf32>, %w: tensor<16x16xf32>):
    %t = arith.addf %x, %y : tensor<16x16xf32>
    %u = arith.mulf %t, %w : tensor<16x16xf32>
    mtia.yield %u : tensor<16x16xf32>
  } -> tensor<16x16xf32>
  tt.return %out : tensor<16x16xf32>
}

// A range (tl.arange) is a fill too: made once before the loop, it held a CB ID through the loop; each
// iteration now makes it right before its reader.
// CHECK-LABEL: tt.func public @range_in_loop
// CHECK-NOT:     tt.make_range
// CHECK:         scf.for
// CHECK-NEXT:      %[[R:.*]] = mtia.vec_compute {
// CHECK-NEXT:        tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
// CHECK-NEXT:        mtia.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      mtia.vec_compute ins(%[[R]], %{{.*}} : tensor<32xi32>, i32)
tt.func public @range_in_loop(%n: i32) {
  %range = mtia.vec_compute {
    %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    mtia.yield %r : tensor<32xi32>
  } -> tensor<32xi32>
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  scf.for %off = %c0 to %n step %c32 : i32 {
    %idx = mtia.vec_compute ins(%range, %off : tensor<32xi32>, i32) {
    ^bb0(%x: tensor<32xi32>, %o: i32):
      %s = tt.splat %o : i32 -> tensor<32xi32>
      %t = arith.addi %x, %s : tensor<32xi32>
      mtia.yield %t : tensor<32xi32>
    } -> tensor<32xi32>
    "test.op"(%idx) : (tensor<32xi32>) -> ()
  }
  tt.return
}

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

// RUN: mtia-opt %s --split-input-file -p convert-tt-to-mtia | filecheck %s
// RUN: mtia-opt %s --split-input-file -p mtia-set-target,convert-tt-to-mtia,mtia-cb-bufferize | filecheck %s --check-prefix=CB

// A scalar carried around a loop, out of a branch or through a while is an engine value (it lives in a
// CB) when an engine makes any value it is carried from, the init or the yield: the one rule mtia-cb-bufferize
// places CBs by (transforms/analysis/cb_residency.py). Scalar float math on it stays on the SE; the scalar
// core does not read it back from the CB (no mtia.cb_read before an arith op on it).

// The iter_arg starts as a constant but the yield is made by the RE (through the SE): `acc * 2` on the SE.
// CHECK-LABEL: tt.func public @carried_for
// CHECK:         scf.for
// CHECK-NEXT:      mtia.se_compute ins(%{{.*}} : f32) {
// CHECK:             arith.mulf
// CB-LABEL:    tt.func public @carried_for
// CB-NOT:        mtia.cb_read
// CB:            tt.return
tt.func public @carried_for(%x: tensor<32xf32>, %p: !tt.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %two = arith.constant 2.000000e+00 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) : i32 {
    %t = arith.mulf %acc, %two : f32
    %s = "tt.reduce"(%x) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %m = arith.addf %a, %b : f32
      tt.reduce.return %m : f32
    }) : (tensor<32xf32>) -> f32
    %u = arith.addf %t, %s : f32
    scf.yield %u : f32
  }
  tt.store %p, %r : !tt.ptr<f32>
  tt.return
}

// -----

// The then-branch yields a constant, the else-branch a reduction: the result lives in a CB, `v * v` on the SE.
// CHECK-LABEL: tt.func public @carried_if
// CHECK:         %[[V:.*]] = scf.if
// CHECK:         mtia.se_compute ins(%[[V]] : f32) {
// CHECK:           arith.mulf
// CB-LABEL:    tt.func public @carried_if
// CB-NOT:        mtia.cb_read
// CB:            tt.return
tt.func public @carried_if(%x: tensor<32xf32>, %p: !tt.ptr<f32>, %c: i1) {
  %one = arith.constant 1.000000e+00 : f32
  %v = scf.if %c -> (f32) {
    scf.yield %one : f32
  } else {
    %s = "tt.reduce"(%x) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %m = arith.addf %a, %b : f32
      tt.reduce.return %m : f32
    }) : (tensor<32xf32>) -> f32
    scf.yield %s : f32
  }
  %w = arith.mulf %v, %v : f32
  tt.store %p, %w : !tt.ptr<f32>
  tt.return
}

// -----

// A reduction carried through scf.while: its after-region argument lives in a CB, `v * v` on the SE.
// CHECK-LABEL: tt.func public @carried_while
// CHECK:         } do {
// CHECK-NEXT:    ^{{.*}}(%[[V:.*]]: f32, %{{.*}}: i32):
// CHECK-NEXT:      mtia.se_compute ins(%[[V]] : f32) {
// CHECK:             arith.mulf
// CB-LABEL:    tt.func public @carried_while
// CB-NOT:        mtia.cb_read
// CB:            tt.return
tt.func public @carried_while(%x: tensor<32xf32>, %p: !tt.ptr<f32>, %n: i32) {
  %s = "tt.reduce"(%x) <{axis = 0 : i32}> ({
  ^bb0(%a: f32, %b: f32):
    %m = arith.addf %a, %b : f32
    tt.reduce.return %m : f32
  }) : (tensor<32xf32>) -> f32
  %c0 = arith.constant 0 : i32
  %r:2 = scf.while (%v = %s, %i = %c0) : (f32, i32) -> (f32, i32) {
    %go = arith.cmpi slt, %i, %n : i32
    scf.condition(%go) %v, %i : f32, i32
  } do {
  ^bb0(%v2: f32, %i2: i32):
    %h = arith.mulf %v2, %v2 : f32
    %c1 = arith.constant 1 : i32
    %j = arith.addi %i2, %c1 : i32
    scf.yield %h, %j : f32, i32
  }
  tt.store %p, %r#0 : !tt.ptr<f32>
  tt.return
}

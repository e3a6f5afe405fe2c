// RUN: mtia-opt %s --split-input-file -p tt-inline | filecheck %s

// Helper calls (what tl.sum and @triton.jit helpers become) are inlined, the helper is dropped and
// the constants it used are folded.
// CHECK-LABEL: tt.func public @kernel
// CHECK-NOT:     tt.call
// CHECK:         %[[R:.*]] = "tt.reduce"
// CHECK:           arith.addf
// CHECK:         tt.return %[[R]] : f32
// CHECK-NOT:     tt.func private @sum
builtin.module {
  tt.func public @kernel(%x: tensor<16xf32>) -> f32 {
    %r = tt.call @sum(%x) : (tensor<16xf32>) -> f32
    tt.return %r : f32
  }
  tt.func private @sum(%v: tensor<16xf32>) -> f32 attributes {noinline = false} {
    %s = "tt.reduce"(%v) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tt.reduce.return %c : f32
    }) : (tensor<16xf32>) -> f32
    tt.return %s : f32
  }
}

// -----

// Folded constants are materialized where the folded op was and hoisted at the next sweep: constants
// outside the leading run move to the front one by one (so they come out reversed), as MLIR's greedy
// driver orders them (libtriton's inliner gives this exact order). Chains of constant additions
// reassociate (Philox keys), extui of true folds, a constant lhs of xori moves right.
// RUN: mtia-opt %s --split-input-file -p tt-inline | filecheck %s --check-prefix=ORDER
// ORDER-LABEL: tt.func public @order
// ORDER-NEXT:    %[[ONE:.*]] = arith.constant dense<1> : tensor<4xi32>
// ORDER-NEXT:    %[[C3:.*]] = arith.constant 3 : i32
// ORDER-NEXT:    %[[C2:.*]] = arith.constant 2 : i32
// ORDER-NEXT:    %[[K2:.*]] = arith.addi %k, %[[C2]] : i32
// ORDER-NEXT:    %[[K3:.*]] = arith.addi %k, %[[C3]] : i32
// ORDER-NEXT:    %[[S:.*]] = arith.addi %[[K2]], %[[K3]] : i32
// ORDER-NEXT:    %[[T:.*]] = tt.splat %[[S]] : i32 -> tensor<4xi32>
// ORDER-NEXT:    %[[X:.*]] = arith.xori %[[T]], %[[ONE]] : tensor<4xi32>
// ORDER-NEXT:    tt.return %[[X]] : tensor<4xi32>
builtin.module {
  tt.func public @order(%k: i32) -> tensor<4xi32> {
    %c1 = arith.constant 1 : i32
    %k1 = arith.addi %k, %c1 : i32
    %k2 = arith.addi %k1, %c1 : i32
    %k3 = arith.addi %k2, %c1 : i32
    %s = arith.addi %k2, %k3 : i32
    %t = tt.splat %s : i32 -> tensor<4xi32>
    %true = arith.constant true
    %one = arith.extui %true : i1 to i32
    %ones = tt.splat %one : i32 -> tensor<4xi32>
    %x = arith.xori %ones, %t : tensor<4xi32>
    tt.return %x : tensor<4xi32>
  }
}

// -----

// Integer folds with MLIR's semantics (libtriton's inliner gives this exact output): signed division
// truncates, shifts by the width or more stay, trunci(extsi(x)) is x, extui zero-extends, x - x and
// true ^ true are zero.
// ORDER-LABEL: tt.func public @folds
// ORDER-NEXT:    %[[F:.*]] = arith.constant false
// ORDER-NEXT:    %[[Z:.*]] = arith.constant 0 : i32
// ORDER-NEXT:    %[[U:.*]] = arith.constant 255 : i32
// ORDER-NEXT:    %[[C2:.*]] = arith.constant 2 : i32
// ORDER-NEXT:    %[[C32:.*]] = arith.constant 32 : i32
// ORDER-NEXT:    %[[Q:.*]] = arith.constant -3 : i32
// ORDER-NEXT:    %[[R:.*]] = arith.constant -1 : i32
// ORDER-NEXT:    %[[S:.*]] = arith.constant 127 : i8
// ORDER-NEXT:    %[[BIG:.*]] = arith.shli %[[C2]], %[[C32]] : i32
// ORDER-NEXT:    tt.return %[[Q]], %[[R]], %[[S]], %[[BIG]], %x, %[[U]], %[[Z]], %[[F]]
builtin.module {
  tt.func public @folds(%x: i16) -> (i32, i32, i8, i32, i16, i32, i32, i1) {
    %m7 = arith.constant -7 : i32
    %c2 = arith.constant 2 : i32
    %c32 = arith.constant 32 : i32
    %m1 = arith.constant -1 : i8
    %c1i8 = arith.constant 1 : i8
    %q = arith.divsi %m7, %c2 : i32
    %r = arith.remsi %m7, %c2 : i32
    %s = arith.shrui %m1, %c1i8 : i8
    %big = arith.shli %c2, %c32 : i32
    %e = arith.extsi %x : i16 to i32
    %t = arith.trunci %e : i32 to i16
    %u = arith.extui %m1 : i8 to i32
    %z = arith.subi %e, %e : i32
    %true = arith.constant true
    %f = arith.xori %true, %true : i1
    tt.return %q, %r, %s, %big, %t, %u, %z, %f : i32, i32, i8, i32, i16, i32, i32, i1
  }
}

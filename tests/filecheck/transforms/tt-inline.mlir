// RUN: mtia-opt %s -p tt-inline | filecheck %s

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

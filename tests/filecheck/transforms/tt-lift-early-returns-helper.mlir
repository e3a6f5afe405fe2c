// RUN: mtia-opt %s -p tt-lift-early-returns | filecheck %s

// A helper returning a value early: its branches become an scf.if yielding the returned values, and
// the helper, now one block, is inlined into the kernel and dropped.
// CHECK-LABEL: tt.func public @kernel
// CHECK:         %[[C:.*]] = arith.cmpi sgt
// CHECK-NEXT:    %[[R:.*]] = scf.if %[[C]] -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[A:.*]] = arith.addf
// CHECK-NEXT:      scf.yield %[[A]] : tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[M:.*]] = arith.mulf
// CHECK-NEXT:      scf.yield %[[M]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    tt.store %{{.*}}, %[[R]]
// CHECK-NOT:     tt.call
// CHECK-NOT:     @helper
builtin.module {
  tt.func public @kernel(%p: tensor<4x!tt.ptr<f32>>, %x: tensor<4xf32>, %flag: i32) {
    %r = tt.call @helper(%x, %flag) : (tensor<4xf32>, i32) -> tensor<4xf32>
    tt.store %p, %r : tensor<4x!tt.ptr<f32>>
    tt.return
  }
  tt.func private @helper(%x: tensor<4xf32>, %flag: i32) -> tensor<4xf32> attributes {noinline = false} {
    %zero = arith.constant 0 : i32
    %c = arith.cmpi sgt, %flag, %zero : i32
    cf.cond_br %c, ^early, ^rest
  ^early:
    %a = arith.addf %x, %x : tensor<4xf32>
    tt.return %a : tensor<4xf32>
  ^rest:
    cf.br ^tail
  ^tail:
    %m = arith.mulf %x, %x : tensor<4xf32>
    tt.return %m : tensor<4xf32>
  }
}

// RUN: mtia-opt %s -p mtia-cb-bufferize --verify-diagnostics | filecheck %s

// Tensors carried by a while loop are refused with the kernel line (not supported yet).
// CHECK: w.py:7:4: error: tensors carried by a while loop are not supported yet; use a for loop (range) or keep the values in memory
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @carried(%n: i32) {
    %zero = mtia.se_compute {
      %z = arith.constant dense<0.0> : tensor<64xf32>
      mtia.yield %z : tensor<64xf32>
    } -> tensor<64xf32>
    %c0 = arith.constant 0 : i32
    %r:2 = scf.while (%i = %c0, %acc = %zero) : (i32, tensor<64xf32>) -> (i32, tensor<64xf32>) {
      %cond = arith.cmpi slt, %i, %n : i32
      scf.condition(%cond) %i, %acc : i32, tensor<64xf32>
    } do {
    ^bb0(%j: i32, %a: tensor<64xf32>):
      %c1 = arith.constant 1 : i32
      %k = arith.addi %j, %c1 : i32
      scf.yield %k, %a : i32, tensor<64xf32>
    } loc("w.py":7:4)
    tt.return
  }
}

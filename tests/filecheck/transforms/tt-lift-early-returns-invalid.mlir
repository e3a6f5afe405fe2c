// RUN: mtia-opt %s -p tt-lift-early-returns --verify-diagnostics | filecheck %s

// A loop built from branches is not an early return.
// CHECK: k.py:4:2: error: this control flow (branches between blocks other than an early return) is not supported yet; express it with if/else blocks that both reach the end of the kernel
tt.func public @loop(%n: i32) {
  %c0 = arith.constant 0 : i32
  cf.br ^head(%c0 : i32) loc("k.py":4:2)
^head(%i: i32):
  %c = arith.cmpi slt, %i, %n : i32
  cf.cond_br %c, ^head(%i : i32), ^exit
^exit:
  tt.return
}

// RUN: not mtia-run %s --arg f32:64 --arg 1 --arg 64 2>&1 | filecheck %s

// mtia-run checks the CB allocation of a buffer-level input before the model runs it: two CBs alive at
// once with one CB ID is refused at the later value's kernel line, naming both, not a traceback.
// CHECK:     k.py:2:1: error: CB ID 0 is given to two CBs alive at the same time: the CB #0 {{.*}} at k.py:1:1 {{.*}} and the CB #1 {{.*}} at k.py:2:1
// CHECK-NOT: Traceback
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @k(%p: !tt.ptr<f32>, %s: i64, %n: i64) {
    %x = mtia.cb_alloc {cb_id = 0 : i32, ls_offset = 0 : i64} : !mtia.cb<1, tensor<64xf32>>
    %y = mtia.cb_alloc {cb_id = 0 : i32, ls_offset = 256 : i64} : !mtia.cb<1, tensor<64xf32>>
    mtia.cb_reserve %x, 1 : !mtia.cb<1, tensor<64xf32>>
    mtia.dma_load %p[%s] bounds[%n] : !tt.ptr<f32> into %x : !mtia.cb<1, tensor<64xf32>> loc("k.py":1:1)
    mtia.cb_push %x, 1 : !mtia.cb<1, tensor<64xf32>>
    mtia.cb_wait %x, 1 : !mtia.cb<1, tensor<64xf32>>
    mtia.cb_reserve %y, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":2:1)
    mtia.se_compute ins(%x : !mtia.cb<1, tensor<64xf32>>) outs(%y : !mtia.cb<1, tensor<64xf32>>) {
    ^bb0(%a: tensor<64xf32>):
      %d = arith.addf %a, %a : tensor<64xf32>
      mtia.yield %d : tensor<64xf32>
    } loc("k.py":2:1)
    mtia.cb_push %y, 1 : !mtia.cb<1, tensor<64xf32>>
    mtia.cb_pop %x, 1 : !mtia.cb<1, tensor<64xf32>>
    mtia.cb_wait %y, 1 : !mtia.cb<1, tensor<64xf32>>
    mtia.dma_store %y, %p[%s] bounds[%n] : !mtia.cb<1, tensor<64xf32>>, !tt.ptr<f32> loc("k.py":3:1)
    mtia.cb_pop %y, 1 : !mtia.cb<1, tensor<64xf32>>
    tt.return
  } loc("k.py":0:1)
}

// RUN: not mtia-run %s --kernel deadlock --arg f32:64 2>&1 | filecheck %s
// RUN: not mtia-run %s --kernel no_wait --arg f32:64 2>&1 | filecheck %s --check-prefix=WAIT

// Reserving a second slot of a depth-1 CB that nobody pops deadlocks.
// CHECK: k.py:3:4: error: cb_reserve of 1 slot(s) would wait forever: 1 published and 0 reserved of 1; pop tiles first or deepen the CB
tt.func public @deadlock(%x: !tt.ptr<f32>) {
  %cb = mtia.cb_alloc : !mtia.cb<1, tensor<64xf32>> loc("k.py":1:1)
  %s = arith.constant 1 : i64
  %n = arith.constant 64 : i64
  mtia.cb_reserve %cb, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":2:4)
  mtia.dma_load %x[%s] bounds[%n] : !tt.ptr<f32> into %cb : !mtia.cb<1, tensor<64xf32>> loc("k.py":2:4)
  mtia.cb_push %cb, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":2:4)
  mtia.cb_reserve %cb, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":3:4)
  tt.return
}


// Reading a CB tile without waiting for it is a protocol error.
// WAIT: k.py:4:4: error: a command reads a CB without a cb_wait for its tile
tt.func public @no_wait(%x: !tt.ptr<f32>) {
  %cb = mtia.cb_alloc : !mtia.cb<1, tensor<64xf32>> loc("k.py":1:1)
  %s = arith.constant 1 : i64
  %n = arith.constant 64 : i64
  mtia.cb_reserve %cb, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":2:4)
  mtia.dma_load %x[%s] bounds[%n] : !tt.ptr<f32> into %cb : !mtia.cb<1, tensor<64xf32>> loc("k.py":2:4)
  mtia.cb_push %cb, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":2:4)
  mtia.dma_store %cb, %x[%s] bounds[%n] : !mtia.cb<1, tensor<64xf32>>, !tt.ptr<f32> loc("k.py":4:4)
  tt.return
}

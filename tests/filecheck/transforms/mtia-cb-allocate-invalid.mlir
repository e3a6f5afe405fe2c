// RUN: mtia-opt %s --split-input-file --verify-diagnostics -p mtia-cb-allocate | filecheck %s

// An input allocation is checked before the pass places the CBs anew (verify_cb_allocation, as mtia-run does):
// two CBs alive at once with one CB ID.
// CHECK: k.py:2:1: error: CB ID 0 is given to two CBs alive at the same time: the CB #0 !mtia.cb<1, tensor<64xf32>> holding the value at k.py:1:1 (alive at points 2-9) and the CB #1 !mtia.cb<1, tensor<64xf32>> holding the value at k.py:2:1 (alive at points 6-12)
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

// -----

// Two CBs alive at once whose LS bytes overlap.
// CHECK: k.py:2:1: error: LS bytes [0, 256) and [128, 384) overlap but their CBs are alive at the same time: the CB #0 {{.*}} at k.py:1:1 {{.*}} and the CB #1 {{.*}} at k.py:2:1
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @k(%p: !tt.ptr<f32>, %s: i64, %n: i64) {
    %x = mtia.cb_alloc {cb_id = 0 : i32, ls_offset = 0 : i64} : !mtia.cb<1, tensor<64xf32>>
    %y = mtia.cb_alloc {cb_id = 1 : i32, ls_offset = 128 : i64} : !mtia.cb<1, tensor<64xf32>>
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

// -----

// mtia-cb-allocate refuses a kernel with more CBs alive at once than MachineConfig.cb_ids (overridden to 1,
// written as an integer; a string, "1", is taken too).
// CHECK: k.py:0:1: error: 2 circular buffers are alive at once at k.py:2:1, but the CP of a PE tracks 1 CB IDs (MachineConfig.cb_ids)
// CHECK: !mtia.cb<1, tensor<64xf32>>: 256 bytes, for the value made at k.py:1:1
// CHECK: !mtia.cb<1, tensor<64xf32>>: 256 bytes, for the value made at k.py:2:1
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">, mtia.machine_overrides = {cb_ids = 1}} {
  tt.func public @k(%p: !tt.ptr<f32>, %s: i64, %n: i64) {
    %x = mtia.cb_alloc  : !mtia.cb<1, tensor<64xf32>>
    %y = mtia.cb_alloc  : !mtia.cb<1, tensor<64xf32>>
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

// -----

// ... and one whose allocation needs more LS than MachineConfig.ls_bytes (overridden to 500 bytes).
// CHECK: k.py:0:1: error: the kernel's circular buffers need 512 bytes of local storage but a PE has 500; 2 CBs with 512 bytes are alive at once at k.py:2:1
// CHECK: for the value made at k.py:1:1
// CHECK: for the value made at k.py:2:1
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">, mtia.machine_overrides = {ls_bytes = "500"}} {
  tt.func public @k(%p: !tt.ptr<f32>, %s: i64, %n: i64) {
    %x = mtia.cb_alloc  : !mtia.cb<1, tensor<64xf32>>
    %y = mtia.cb_alloc  : !mtia.cb<1, tensor<64xf32>>
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

// -----

// An override that is not a string, number or boolean is refused, naming the entry.
// CHECK: mtia.machine_overrides entry cb_ids = [1 : i64, 2 : i64]: expected a string, an integer, a float or a boolean
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">, mtia.machine_overrides = {cb_ids = [1, 2]}} {
  tt.func public @k() {
    tt.return
  } loc("k.py":0:1)
}

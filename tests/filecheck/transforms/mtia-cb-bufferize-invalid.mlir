// RUN: mtia-opt %s -p mtia-cb-bufferize --verify-diagnostics | filecheck %s

// Two 256 KiB tiles do not fit the 384 KiB of a PE's local storage.
// CHECK: need 524288 bytes of local storage but a PE has 393216; lower the block sizes (BLOCK_*)
// CHECK: !mtia.cb<1, tensor<65536xf32>>: 262144 bytes
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @too_big(%p: !tt.ptr<f32>, %s: i64, %n: i64) {
    %x = mtia.dma_load %p[%s] bounds[%n] : !tt.ptr<f32> -> tensor<65536xf32>
    %y = mtia.se_compute ins(%x : tensor<65536xf32>) {
    ^bb0(%a: tensor<65536xf32>):
      %d = arith.addf %a, %a : tensor<65536xf32>
      mtia.yield %d : tensor<65536xf32>
    } -> tensor<65536xf32>
    mtia.dma_store %y, %p[%s] bounds[%n] : tensor<65536xf32>, !tt.ptr<f32>
    tt.return
  }
}

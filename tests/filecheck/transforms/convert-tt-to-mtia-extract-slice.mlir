// RUN: mtia-opt %s -p convert-tt-to-mtia | filecheck %s
// RUN: mtia-opt %s -p convert-tt-to-mtia,canonicalize,cse,mtia-cb-bufferize | filecheck %s --check-prefix=CB

// A slice of a loaded tile becomes an MLU command (a copy inside LS), not another DMA: one dma_load only.
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  // CHECK-LABEL: tt.func public @window
  // CHECK:       %[[TILE:.*]] = mtia.dma_load
  // CHECK-NOT:   mtia.dma_load
  // CHECK:       mtia.mlu_compute ins(%[[TILE]], %{{.*}} : tensor<32xf32>, i32) {
  // CHECK-NEXT:  ^{{.*}}(%[[T:.*]]: tensor<32xf32>, %[[O:.*]]: i32):
  // CHECK-NEXT:    mtia.extract_slice %[[T]][%[[O]]] {static_offsets = array<i64: -9223372036854775808>} : tensor<32xf32> -> tensor<16xf32>, i32
  // CB-LABEL:    tt.func public @window
  // CB:          mtia.mlu_compute ins(%{{.*}}, %{{.*}} : !mtia.cb<1, tensor<32xf32>>, i32) outs(%{{.*}} : !mtia.cb<1, tensor<16xf32>>)
  tt.func public @window(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %k: i32) {
    %r = tt.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
    %a = tt.addptr %p, %r : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
    %t = tt.load %a : tensor<32x!tt.ptr<f32>>
    %s = mtia.extract_slice %t[%k] {static_offsets = array<i64: -9223372036854775808>} : tensor<32xf32> -> tensor<16xf32>, i32
    %r16 = tt.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
    %q = tt.splat %y : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %b = tt.addptr %q, %r16 : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    tt.store %b, %s : tensor<16x!tt.ptr<f32>>
    tt.return
  }
}

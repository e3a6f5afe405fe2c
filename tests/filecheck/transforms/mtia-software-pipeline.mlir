// RUN: mtia-opt %s -p 'mtia-software-pipeline{num-stages=3}' | filecheck %s
// RUN: mtia-opt %s -p 'mtia-software-pipeline{num-stages=1}' | filecheck %s --check-prefix=OFF

// The loop streams %cx and %cy (DMA) and %cz (SE) within each iteration: the loop and their cb_allocs
// are marked for up to 3 slots; the load of %cy moves, with the index computation it needs, above the SE
// command so the DMA queue receives both loads first. %acc is carried around the loop (used outside
// it) and is not streamed. A load after a store stays after it (the store may write what it reads).
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  // CHECK-LABEL: tt.func @stream
  // CHECK:      %cx = mtia.cb_alloc {mtia.pipeline_stages = 3 : i64}
  // CHECK-NEXT: %cy = mtia.cb_alloc {mtia.pipeline_stages = 3 : i64}
  // CHECK-NEXT: %cz = mtia.cb_alloc {mtia.pipeline_stages = 3 : i64}
  // CHECK:      scf.for
  // CHECK-NEXT:   mtia.cb_reserve %cx
  // CHECK-NEXT:   mtia.dma_load %x
  // CHECK-NEXT:   mtia.cb_push %cx
  // CHECK-NEXT:   %off = arith.extsi %i
  // CHECK-NEXT:   mtia.cb_reserve %cy
  // CHECK-NEXT:   mtia.dma_load %y[%off
  // CHECK-NEXT:   mtia.cb_push %cy
  // CHECK-NEXT:   mtia.cb_wait %cx
  // CHECK:        mtia.se_compute
  // CHECK:      } {mtia.pipeline_stages = 3 : i64}
  // OFF-NOT: mtia.pipeline_stages
  tt.func @stream(%x: !tt.ptr<bf16>, %y: !tt.ptr<bf16>, %z: !tt.ptr<bf16>, %n: i32) {
    %cx = mtia.cb_alloc : !mtia.cb<1, tensor<64x128xbf16>>
    %cy = mtia.cb_alloc : !mtia.cb<1, tensor<64x128xbf16>>
    %cz = mtia.cb_alloc : !mtia.cb<1, tensor<64x128xbf16>>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %s1 = arith.constant 1 : i64
    %s128 = arith.constant 128 : i64
    %b = arith.constant 64 : i64
    scf.for %i = %c0 to %n step %c1 : i32 {
      mtia.cb_reserve %cx, 1 : !mtia.cb<1, tensor<64x128xbf16>>
      mtia.dma_load %x[%s128, %s1] bounds[%b, %s128] : !tt.ptr<bf16> into %cx : !mtia.cb<1, tensor<64x128xbf16>>
      mtia.cb_push %cx, 1 : !mtia.cb<1, tensor<64x128xbf16>>
      mtia.cb_wait %cx, 1 : !mtia.cb<1, tensor<64x128xbf16>>
      mtia.cb_reserve %cz, 1 : !mtia.cb<1, tensor<64x128xbf16>>
      mtia.se_compute ins(%cx : !mtia.cb<1, tensor<64x128xbf16>>) outs(%cz : !mtia.cb<1, tensor<64x128xbf16>>) {
      ^bb0(%t: tensor<64x128xbf16>):
        %e = math.exp %t : tensor<64x128xbf16>
        mtia.yield %e : tensor<64x128xbf16>
      }
      mtia.cb_push %cz, 1 : !mtia.cb<1, tensor<64x128xbf16>>
      mtia.cb_pop %cx, 1 : !mtia.cb<1, tensor<64x128xbf16>>
      %off = arith.extsi %i : i32 to i64
      mtia.cb_reserve %cy, 1 : !mtia.cb<1, tensor<64x128xbf16>>
      mtia.dma_load %y[%off, %s1] bounds[%b, %s128] : !tt.ptr<bf16> into %cy : !mtia.cb<1, tensor<64x128xbf16>>
      mtia.cb_push %cy, 1 : !mtia.cb<1, tensor<64x128xbf16>>
      mtia.cb_wait %cy, 1 : !mtia.cb<1, tensor<64x128xbf16>>
      mtia.cb_wait %cz, 1 : !mtia.cb<1, tensor<64x128xbf16>>
      mtia.dma_store %cz, %z[%s128, %s1] bounds[%b, %s128] : !mtia.cb<1, tensor<64x128xbf16>>, !tt.ptr<bf16>
      mtia.cb_pop %cz, 1 : !mtia.cb<1, tensor<64x128xbf16>>
      mtia.cb_pop %cy, 1 : !mtia.cb<1, tensor<64x128xbf16>>
      scf.yield
    }
    tt.return
  }

  // CHECK-LABEL: tt.func @carried_and_barrier
  // CHECK:      %acc = mtia.cb_alloc : !mtia.cb<1, tensor<64xf32>>
  // CHECK-NEXT: %cv = mtia.cb_alloc {mtia.pipeline_stages = 3 : i64}
  // CHECK:      scf.for
  // CHECK:        mtia.dma_store
  // CHECK:        mtia.cb_reserve %cv
  // CHECK-NEXT:   mtia.dma_load %v
  // CHECK:      } {mtia.pipeline_stages = 3 : i64}
  tt.func @carried_and_barrier(%v: !tt.ptr<f32>, %o: !tt.ptr<f32>, %n: i32) {
    %acc = mtia.cb_alloc : !mtia.cb<1, tensor<64xf32>>
    %cv = mtia.cb_alloc : !mtia.cb<1, tensor<64xf32>>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %s1 = arith.constant 1 : i64
    %b = arith.constant 64 : i64
    mtia.cb_reserve %acc, 1 : !mtia.cb<1, tensor<64xf32>>
    mtia.se_compute outs(%acc : !mtia.cb<1, tensor<64xf32>>) {
      %zero = arith.constant dense<0.000000e+00> : tensor<64xf32>
      mtia.yield %zero : tensor<64xf32>
    }
    mtia.cb_push %acc, 1 : !mtia.cb<1, tensor<64xf32>>
    scf.for %i = %c0 to %n step %c1 : i32 {
      mtia.cb_wait %acc, 1 : !mtia.cb<1, tensor<64xf32>>
      mtia.dma_store %acc, %o[%s1] bounds[%b] : !mtia.cb<1, tensor<64xf32>>, !tt.ptr<f32>
      mtia.cb_reserve %cv, 1 : !mtia.cb<1, tensor<64xf32>>
      mtia.dma_load %v[%s1] bounds[%b] : !tt.ptr<f32> into %cv : !mtia.cb<1, tensor<64xf32>>
      mtia.cb_push %cv, 1 : !mtia.cb<1, tensor<64xf32>>
      mtia.cb_wait %cv, 1 : !mtia.cb<1, tensor<64xf32>>
      mtia.se_compute ins(%cv, %acc : !mtia.cb<1, tensor<64xf32>>, !mtia.cb<1, tensor<64xf32>>) outs(%acc : !mtia.cb<1, tensor<64xf32>>) {
      ^bb0(%t: tensor<64xf32>, %a: tensor<64xf32>):
        %s = arith.addf %t, %a : tensor<64xf32>
        mtia.yield %s : tensor<64xf32>
      }
      mtia.cb_pop %cv, 1 : !mtia.cb<1, tensor<64xf32>>
    }
    mtia.cb_wait %acc, 1 : !mtia.cb<1, tensor<64xf32>>
    mtia.cb_pop %acc, 1 : !mtia.cb<1, tensor<64xf32>>
    tt.return
  }
}

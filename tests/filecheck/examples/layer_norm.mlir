// RUN: mtia-opt %S/../../../examples/layer_norm.py -p tt-inline,mtia-set-target,convert-tt-to-mtia,canonicalize,cse,mtia-cb-bufferize | filecheck %s

// Layer norm: three loops over column blocks, each load a DMA bounded by N - off; the running sums
// are loop-carried CBs; mean and rstd are engine scalars stored with 0-d DMAs.
// CHECK-LABEL: tt.func public @_layer_norm_fwd_fused
// CHECK:         scf.for
// CHECK:           mtia.dma_load
// CHECK:         mtia.re_reduce %{{.*}} {axis = 0 : i32, kind = "addf"}
// CHECK:         scf.for
// CHECK:           arith.select
// CHECK:         mtia.re_reduce %{{.*}} {axis = 0 : i32, kind = "addf"}
// CHECK:         math.sqrt
// CHECK:         mtia.dma_store %{{.*}}, %{{.*}}[] bounds[] : !mtia.cb<1, f32>, !tt.ptr<f32>
// CHECK:         mtia.dma_store %{{.*}}, %{{.*}}[] bounds[] : !mtia.cb<1, f32>, !tt.ptr<f32>
// CHECK:         scf.for
// CHECK-COUNT-3:   mtia.dma_load
// CHECK:           mtia.dma_store

// RUN: mtia-opt %S/../../../examples/softmax.py -p tt-inline,mtia-set-target,convert-tt-to-mtia,canonicalize,cse,mtia-cb-bufferize | filecheck %s

// Fused softmax: the row is one DMA padded with -inf beyond n_cols, max and sum run on the RE, the
// subtract / exp / divide on the SE, the row goes back with one DMA.
// CHECK-LABEL: tt.func public @softmax_kernel
// CHECK:         %[[NEGINF:.*]] = arith.constant 0xff800000 : f32
// CHECK:         mtia.dma_load %{{.*}}[%{{.*}}] bounds[%{{.*}}] other(%[[NEGINF]] : f32) : !tt.ptr<f32> into %[[ROW:.*]] : !mtia.cb<1, tensor<1024xf32>>
// CHECK:         mtia.re_reduce %[[ROW]] {axis = 0 : i32, kind = "maxnumf"}
// CHECK:         math.exp
// CHECK:         mtia.re_reduce %{{.*}} {axis = 0 : i32, kind = "addf"}
// CHECK:         arith.divf
// CHECK:         mtia.dma_store

// RUN: mtia-opt %S/../../../examples/matmul.py -p tt-inline,mtia-set-target,convert-tt-to-mtia,canonicalize,cse,mtia-cb-bufferize | filecheck %s

// Tiled matmul: the K loop carries scalar base pointers instead of tensors of pointers; each
// iteration DMAs a 64x32 A tile and a 32x64 B tile (bounds from the M/N/K masks) and issues one DPE
// command accumulating in place into a 1-slot CB (a wait, no reserve/push/pop); the fp16 result goes
// out with one 2-d DMA.
// CHECK-LABEL: tt.func public @matmul_kernel
// CHECK-DAG:     %[[ACC:.*]] = mtia.cb_alloc : !mtia.cb<1, tensor<64x64xf32>>
// CHECK-DAG:     %[[A:.*]] = mtia.cb_alloc : !mtia.cb<1, tensor<64x32xf16>>
// CHECK-DAG:     %[[B:.*]] = mtia.cb_alloc : !mtia.cb<1, tensor<32x64xf16>>
// CHECK:         scf.for %{{.*}} iter_args(%[[PA:.*]] = %{{.*}}, %[[PB:.*]] = %{{.*}}) -> (!tt.ptr<f16>, !tt.ptr<f16>)
// CHECK:           mtia.dma_load %[[PA]][%{{.*}}, %{{.*}}] bounds[%{{.*}}, %{{.*}}] other({{.*}}) : !tt.ptr<f16> into %[[A]]
// CHECK:           mtia.dma_load %[[PB]][%{{.*}}, %{{.*}}] bounds[%{{.*}}, %{{.*}}] other({{.*}}) : !tt.ptr<f16> into %[[B]]
// CHECK:           mtia.cb_wait %[[ACC]], 1
// CHECK-NEXT:      mtia.dpe_matmul %[[A]], %[[B]], %[[ACC]] inplace {{.*}} into %[[ACC]]
// CHECK-NOT:       %[[ACC]]
// CHECK:           scf.yield
// CHECK:         arith.truncf
// CHECK:         mtia.dma_store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] bounds[%{{.*}}, %{{.*}}] : !mtia.cb<1, tensor<64x64xf16>>

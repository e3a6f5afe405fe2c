// RUN: mtia-opt %S/../../../examples/layer_norm.py -p "tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}" -t mtia-cpp | filecheck %s

// layer_norm as C++: loops over the row's column blocks for the mean, the variance and the output; the mean
// and rstd leave as one-element DMA stores.
// CHECK-LABEL: static void _layer_norm_fwd_fused(
// CHECK:         for (int64_t
// CHECK:           mtia_dma_load(
// CHECK:         mtia_compute_end(pe, &work);
// CHECK:         for (int64_t
// CHECK:         for (int64_t
// CHECK:         mtia_dma_store(
// CHECK:         mtia_dma_store(
// CHECK:         for (int64_t
// CHECK:           mtia_dma_store(

// RUN: mtia-opt %S/../../../examples/attention.py -p "tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}" -t mtia-cpp | filecheck %s

// attention as C++: the KV loop with two DPE matmuls (q k^T and p v) and the online softmax on the SE/RE.
// CHECK-LABEL: static void attn_fwd(
// CHECK:         for (int64_t
// CHECK:           mtia_cmd_begin(pe, MTIA_DPE, "dpe_matmul",
// CHECK:           std::exp2(
// CHECK:           mtia_cmd_begin(pe, MTIA_DPE, "dpe_matmul",
// CHECK:         }
// CHECK:         mtia_dma_store(

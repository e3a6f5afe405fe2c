// RUN: mtia-opt %S/../../../examples/flash_attention.py -p "tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}" -t mtia-cpp | filecheck %s

// attn_fwd (upstream's tutorial kernel): every CB fits the PE's 14 CB IDs (IDs 0..13, CBs never alive
// together share one), the kernel's names (acc, q, k, qk, p, alpha, m_i, l_i) name the CBs, Q is loaded
// once, and each K/V block is a DMA load feeding the DPE (qk = q @ k at line 51, acc += p @ v at line 62).
// CHECK:      // flash_attention.py:69
// CHECK:      const int32_t acc_cb = mtia_cb_alloc(pe, /*CB ID*/ 1, /*depth*/ 1, /*slot bytes*/ 65536,
// CHECK:      const int32_t q_cb = mtia_cb_alloc(pe, /*CB ID*/ {{[0-9]|1[0-3]}}, /*depth*/ 1, /*slot bytes*/ 32768,
// CHECK-NOT:  /*CB ID*/ {{1[4-9]|[2-9][0-9]}},
// CHECK:      mtia_dma_load(pe, q_cb, &{{dma[0-9]+}}, &{{other[0-9]+}}, MTIA_KERNEL_FILE ":95:9");
// CHECK:      mtia_dma_load(pe, k_cb, &{{dma[0-9]+}}, &{{other[0-9]+}}, MTIA_KERNEL_FILE ":50:13");
// CHECK:      mtia_dma_load(pe, v_cb, &{{dma[0-9]+}}, &{{other[0-9]+}}, MTIA_KERNEL_FILE ":61:13");
// CHECK:      mtia_cmd_begin(pe, MTIA_DPE, "dpe_matmul", MTIA_KERNEL_FILE ":51:14");
// CHECK:      mtia_dpe_end(pe, /*batch*/ 1, /*M*/ 128, /*N*/ 64, /*K*/ 128, "f16",
// CHECK:      mtia_cmd_begin(pe, MTIA_DPE, "dpe_matmul", MTIA_KERNEL_FILE ":62:15");
// CHECK:      mtia_dpe_end(pe, /*batch*/ 1, /*M*/ 128, /*N*/ 128, /*K*/ 64, "f16",
// CHECK:      mtia_dma_store(pe, {{[a-z_0-9]+}}, &{{dma[0-9]+}}, MTIA_KERNEL_FILE ":103:5");

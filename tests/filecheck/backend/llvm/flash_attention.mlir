// RUN: mtia-opt %S/../../../../examples/flash_attention.py -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm | filecheck %s

// attn_fwd (upstream's tutorial kernel): Q loaded once into q_cb, each K/V block a DMA load into k_cb / v_cb,
// qk = q @ k (line 51) and acc += p @ v (line 62) on the DPE with their M, N, K, and the output DMA stored.
// CHECK-LABEL: define void @"attn_fwd"(ptr %"pe", ptr %"args")
// CHECK:       call ccc void @"mtia_dma_load"(ptr %"pe", i32 %"q_cb", ptr %"{{dma(\.[0-9]+)?}}", ptr %"{{value(\.[0-9]+)?}}", [{{[0-9]+}} x i8]* @"flash_attention.py:95:9")
// CHECK:       call ccc void @"mtia_dma_load"(ptr %"pe", i32 %"k_cb", ptr %"{{dma(\.[0-9]+)?}}", ptr %"{{value(\.[0-9]+)?}}", [{{[0-9]+}} x i8]* @"flash_attention.py:50:13")
// CHECK:       call ccc void @"mtia_dma_load"(ptr %"pe", i32 %"v_cb", ptr %"{{dma(\.[0-9]+)?}}", ptr %"{{value(\.[0-9]+)?}}", [{{[0-9]+}} x i8]* @"flash_attention.py:61:13")
// CHECK:       call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 {{[0-9]+}}, [{{[0-9]+}} x i8]* @"kind.dpe_matmul", [{{[0-9]+}} x i8]* @"flash_attention.py:51:14")
// CHECK:       call ccc void @"mtia_dpe_end"(ptr %"pe", i64 1, i64 128, i64 64, i64 128, [4 x i8]* @"dtype.f16",
// CHECK:       call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 {{[0-9]+}}, [{{[0-9]+}} x i8]* @"kind.dpe_matmul", [{{[0-9]+}} x i8]* @"flash_attention.py:62:15")
// CHECK:       call ccc void @"mtia_dpe_end"(ptr %"pe", i64 1, i64 128, i64 128, i64 64, [4 x i8]* @"dtype.f16",
// CHECK:       call ccc void @"mtia_dma_store"(ptr %"pe", i32 %"{{[a-z_0-9.]+}}", ptr %"dma{{(\.[0-9]+)?}}", [{{[0-9]+}} x i8]* @"flash_attention.py:103:5")

// RUN: mtia-opt %S/../../../examples/column_sums.py -p "tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}" -t mtia-cpp | filecheck %s

// col_sums_per_pe: the RE sums the 64x256 block's columns into the partial_cb the kernel names, then the SE
// adds that tile to the loaded row (a strip-mined vector loop), and DMA stores it; CB IDs and LS offsets are
// the allocator's (CB ID 0 is reused by a CB not alive with the first).
// CHECK:      // column_sums.py:40
// CHECK-NEXT: const int32_t [[X:[a-z_0-9]+]] = mtia_cb_alloc(pe, /*CB ID*/ 0, /*depth*/ 1, /*slot bytes*/ 65536, /*LS offset*/ 0, MTIA_KERNEL_FILE ":40:1");  // !mtia.cb<1, tensor<64x256xf32>>
// CHECK-NEXT: const int32_t partial_cb = mtia_cb_alloc(pe, /*CB ID*/ 1, /*depth*/ 1, /*slot bytes*/ 1024, /*LS offset*/ 65536,
// CHECK:      // column_sums.py:29
// CHECK:      mtia_dma_load(pe, [[X]], &{{dma[0-9]+}}, nullptr, MTIA_KERNEL_FILE ":29:19");
// CHECK:      mtia_cmd_begin(pe, MTIA_RE, "re_reduce", MTIA_KERNEL_FILE ":29:12");
// CHECK:      mtia_cb_push(pe, partial_cb, 1, MTIA_KERNEL_FILE ":29:12");
// CHECK:      // column_sums.py:44
// CHECK:      mtia_cmd_begin(pe, MTIA_SE, "se_compute", MTIA_KERNEL_FILE ":44:19");
// CHECK:      const float *partial = (const float *)mtia_cmd_in(pe, partial_cb);
// CHECK:      mtia_vsetvl(
// CHECK:      mtia_dma_store(pe, {{[a-z_0-9]+}}, &{{dma[0-9]+}}, MTIA_KERNEL_FILE ":44:5");

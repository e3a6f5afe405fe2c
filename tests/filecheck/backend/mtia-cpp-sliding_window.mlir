// RUN: mtia-opt %S/../../../examples/sliding_window.py -p "tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}" -t mtia-cpp | filecheck %s

// fir_slices: one DMA load of the 2048-element window (tile_cb), then one MLU command per tap that takes a
// slice of it (mtl.extract_slice, line 25), and an SE command that accumulates the taps into acc_cb, which
// DMA stores; the CBs keep the kernel's names where it has them.
// CHECK:      // sliding_window.py:19
// CHECK-NEXT: const int32_t tile_cb = mtia_cb_alloc(pe, /*CB ID*/ 0, /*depth*/ 1, /*slot bytes*/ 8192, /*LS offset*/ 0, MTIA_KERNEL_FILE ":19:1");  // !mtia.cb<1, tensor<2048xf32>>
// CHECK:      const int32_t acc_cb = mtia_cb_alloc(pe,
// CHECK:      // sliding_window.py:22
// CHECK:      mtia_dma_load(pe, tile_cb, &{{dma[0-9]+}}, &{{other[0-9]+}}, MTIA_KERNEL_FILE ":22:12");
// CHECK:      // sliding_window.py:25
// CHECK:      mtia_cmd_begin(pe, MTIA_MLU, "mlu_compute", MTIA_KERNEL_FILE ":25:37");
// CHECK:      mtia_cmd_begin(pe, MTIA_MLU, "mlu_compute", MTIA_KERNEL_FILE ":25:37");
// CHECK:      mtia_cmd_begin(pe, MTIA_SE, "se_compute", MTIA_KERNEL_FILE ":25:9");
// CHECK:      // sliding_window.py:27
// CHECK:      mtia_dma_store(pe, acc_cb, &{{dma[0-9]+}}, MTIA_KERNEL_FILE ":27:5");

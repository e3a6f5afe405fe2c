// RUN: mtia-opt %S/../../../examples/tensor_view.py -p "tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}" -t mtia-cpp | filecheck %s

// scale_view: a ctypes.Structure argument (TensorView) gives the DMA descriptor its base and strides; the
// 32x32 tile lands in x_cb, the SE scales it row by row (strip-mined along the row), and DMA stores it.
// CHECK:      // tensor_view.py:46
// CHECK-NEXT: const int32_t x_cb = mtia_cb_alloc(pe, /*CB ID*/ 0, /*depth*/ 1, /*slot bytes*/ 4096, /*LS offset*/ 0, MTIA_KERNEL_FILE ":46:1");  // !mtia.cb<1, tensor<32x32xf32>>
// CHECK:      // tensor_view.py:50
// CHECK:      mtia_dma_load(pe, x_cb, &{{dma[0-9]+}}, nullptr, MTIA_KERNEL_FILE ":50:9");
// CHECK:      // tensor_view.py:51
// CHECK:      mtia_cmd_begin(pe, MTIA_SE, "se_compute", MTIA_KERNEL_FILE ":51:52");
// CHECK:      i10 += MTIA_VLMAX(float)
// CHECK:      mtia_dma_store(pe, {{[a-z_0-9]+}}, &{{dma[0-9]+}}, MTIA_KERNEL_FILE ":51:5");

// RUN: mtia-opt %S/../../../../examples/tensor_view.py -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm | filecheck %s

// scale_view: the TensorView structure's fields give the DMA descriptor; the tile lands in x_cb, the SE
// scales it, DMA stores it.
// CHECK-LABEL: define void @"scale_view"(ptr %"pe", ptr %"args")
// CHECK:       %"x_cb" = call ccc i32 @"mtia_cb_alloc"(ptr %"pe", i32 0, i32 1, i64 4096, i64 0, [{{[0-9]+}} x i8]* @"tensor_view.py:46:1")
// CHECK:       call ccc void @"mtia_dma_load"(ptr %"pe", i32 %"x_cb", ptr %"{{dma(\.[0-9]+)?}}", ptr null, [{{[0-9]+}} x i8]* @"tensor_view.py:50:9")
// CHECK:       call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 {{[0-9]+}}, [{{[0-9]+}} x i8]* @"kind.se_compute", [{{[0-9]+}} x i8]* @"tensor_view.py:51:52")
// CHECK:       call ccc void @"mtia_dma_store"(ptr %"pe", i32 %"{{[a-z_0-9.]+}}", ptr %"dma", [{{[0-9]+}} x i8]* @"tensor_view.py:51:5")

// RUN: mtia-opt %S/../../../../examples/sliding_window.py -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm | filecheck %s

// fir_slices: the window lands in tile_cb with one DMA load, one MLU command per tap slices it (line 25), the
// SE accumulates into acc_cb, which DMA stores; values keep the kernel's names.
// CHECK-LABEL: define void @"fir_slices"(ptr %"pe", ptr %"args")
// CHECK:       %"tile_cb" = call ccc i32 @"mtia_cb_alloc"(ptr %"pe", i32 0, i32 1, i64 8192, i64 0, [{{[0-9]+}} x i8]* @"sliding_window.py:19:1")
// CHECK:       %"acc_cb" = call ccc i32 @"mtia_cb_alloc"(ptr %"pe",
// CHECK:       call ccc void @"mtia_dma_load"(ptr %"pe", i32 %"tile_cb", ptr %"{{dma(\.[0-9]+)?}}", ptr %"{{value(\.[0-9]+)?}}", [{{[0-9]+}} x i8]* @"sliding_window.py:22:12")
// CHECK:       call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 {{[0-9]+}}, [{{[0-9]+}} x i8]* @"kind.mlu_compute", [{{[0-9]+}} x i8]* @"sliding_window.py:25:37")
// CHECK:       call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 {{[0-9]+}}, [{{[0-9]+}} x i8]* @"kind.mlu_compute", [{{[0-9]+}} x i8]* @"sliding_window.py:25:37")
// CHECK:       call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 {{[0-9]+}}, [{{[0-9]+}} x i8]* @"kind.se_compute", [{{[0-9]+}} x i8]* @"sliding_window.py:25:9")
// CHECK:       call ccc void @"mtia_dma_store"(ptr %"pe", i32 %"acc_cb", ptr %"dma", [{{[0-9]+}} x i8]* @"sliding_window.py:27:5")

// RUN: mtia-opt %S/../../../../examples/column_sums.py -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm | filecheck %s

// col_sums_per_pe: CB IDs and LS offsets as the allocator chose them (the kernel's partial_cb keeps its name),
// the RE reduction of the loaded block, then the SE add and the DMA store, each call carrying its kernel line.
// CHECK-LABEL: define void @"col_sums_per_pe"(ptr %"pe", ptr %"args")
// CHECK:       %"[[X:cb0]]" = call ccc i32 @"mtia_cb_alloc"(ptr %"pe", i32 0, i32 1, i64 65536, i64 0, [{{[0-9]+}} x i8]* @"column_sums.py:40:1")
// CHECK-NEXT:  %"partial_cb" = call ccc i32 @"mtia_cb_alloc"(ptr %"pe", i32 1, i32 1, i64 1024, i64 65536,
// CHECK:       call ccc void @"mtia_dma_load"(ptr %"pe", i32 %"[[X]]", ptr %"{{dma(\.[0-9]+)?}}", ptr null, [{{[0-9]+}} x i8]* @"column_sums.py:29:19")
// CHECK:       call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 {{[0-9]+}}, [{{[0-9]+}} x i8]* @"kind.re_reduce", [{{[0-9]+}} x i8]* @"column_sums.py:29:12")
// CHECK:       call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 {{[0-9]+}}, [{{[0-9]+}} x i8]* @"kind.se_compute", [{{[0-9]+}} x i8]* @"column_sums.py:44:19")
// CHECK:       call ccc void @"mtia_dma_store"(ptr %"pe", i32 %"{{[a-z_0-9.]+}}", ptr %"dma", [{{[0-9]+}} x i8]* @"column_sums.py:44:5")

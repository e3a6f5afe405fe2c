// RUN: mtia-opt %S/../../../../examples/row_sums.py -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm | filecheck %s

// row_sums_re: after the column loop the scalar core reads the row block's partial sums whole (mtia_cb_read into
// a stack array), reduces them across its PE row (mtia_re_allreduce on a copy, kind addf) and PE x = 0 stores
// the tile it holds with mtia_dma_store_value (no CB, no command).
// CHECK-LABEL: define void @"row_sums_re"(ptr %"pe", ptr %"args")
// CHECK:       for.end:
// CHECK:         call ccc void @"mtia_cb_read"(ptr %"pe", i32 %"{{acc_cb(\.[0-9]+)?}}", ptr %"[[READ:tile(\.[0-9]+)?]]", i64 32, [{{[0-9]+}} x i8]* @"row_sums.py:37:17")
// CHECK:         call void @"llvm.memcpy.p0.p0.i64"(ptr %"[[SUMS:tile(\.[0-9]+)?]]", ptr %"[[READ]]", i64 32, i1 0)
// CHECK:         call ccc void @"mtia_re_allreduce"(ptr %"pe", ptr %"[[SUMS]]", i64 8, i32 4, [4 x i8]* @"dtype.f32", [5 x i8]* @"kind.addf", i32 0, [{{[0-9]+}} x i8]* @"row_sums.py:37:17")
// CHECK:       if.then:
// CHECK:         call ccc void @"mtia_dma_store_value"(ptr %"pe", ptr %"[[SUMS]]", ptr %"dma{{.*}}", [{{[0-9]+}} x i8]* @"row_sums.py:39:13")

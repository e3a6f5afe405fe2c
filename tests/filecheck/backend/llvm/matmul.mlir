// RUN: mtia-opt %S/../../../../examples/matmul.py -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm | filecheck %s

// matmul: the accumulator zeroed by a two-level tile loop; the K loop of blocks with its pointers as phis; in
// it the DPE command: A and B read (mtia_cmd_in), the accumulator updated in place (mtia_cmd_inout: a wait
// and a fill), D = A @ B + C accumulated in f64 over the valid K per valid element, then mtia_dpe_end;
// after the loop the truncation to f16 clamped to the valid rows and columns.
// CHECK-LABEL: define void @"matmul_kernel"
// CHECK:       tile.d0:
// CHECK:       tile.d1:
// CHECK:         store float {{ *}}0x0
// CHECK:       tile.d1.end:
// CHECK:       tile.d0.end:
// CHECK:         call ccc void @"mtia_compute_end"(
// CHECK:       for:
// CHECK:         icmp slt i32
// CHECK:       for.body:
// CHECK:         call ccc void @"mtia_dma_load"(
// CHECK:         call ccc void @"mtia_dma_load"(
// CHECK:         call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 2, {{.*}}@"kind.dpe_matmul"
// CHECK:         %"a" = call ccc ptr @"mtia_cmd_in"
// CHECK:         %"b" = call ccc ptr @"mtia_cmd_in"
// CHECK-NOT:     mtia_cmd_in"(ptr %"pe", i32 %"accumulator_cb")
// CHECK:         %"d" = call ccc ptr @"mtia_cmd_inout"(ptr %"pe", i32 %"accumulator_cb")
// CHECK:       dpe.k.body:
// CHECK:         fpext half %{{.*}} to double
// CHECK:         fmul double
// CHECK:         fadd double
// CHECK:       dpe.k.end:
// CHECK:         fptrunc double %{{.*}} to float
// CHECK:         call ccc void @"mtia_dpe_end"(ptr %"pe", i64 1, i64 64, i64 64, i64 32, {{.*}}@"dtype.f16", i32 0, i64 {{[0-9]+}}, i32 3,
// CHECK:         br label %"for"
// CHECK:       for.end:
// CHECK:       tile.d1.body{{.*}}:
// CHECK:         fptrunc float %{{.*}} to half
// CHECK:         store half
// CHECK:         call ccc void @"mtia_compute_end"(
// CHECK:         call ccc void @"mtia_dma_store"(

// RUN: mtia-opt %S/../../../../examples/matmul.py -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm | filecheck %s

// matmul: the K loop becomes a loop of blocks with its pointers as phis; the DPE command is a packed runtime
// call inside it; the fp32 accumulator is zeroed by a two-level tile loop before and truncated to f16 by
// one after the K loop, clamped to the valid rows and columns.
// CHECK-LABEL: define void @"matmul_kernel"
// CHECK:       tile.d0:
// CHECK:       tile.d1:
// CHECK:         store float {{ *}}0x0
// CHECK:       tile.d1.end:
// CHECK:       tile.d0.end:
// CHECK:         call ccc void @"mtia_se_compute"(i32 {{[0-9]+}}, ptr null)
// CHECK:       for:
// CHECK:         icmp slt i32
// CHECK:       for.body:
// CHECK:         call ccc void @"mtia_dma_load"(
// CHECK:         call ccc void @"mtia_dma_load"(
// CHECK:         call ccc void @"mtia_dpe_matmul"(
// CHECK:         br label %"for"
// CHECK:       for.end:
// CHECK:         call i64 @"llvm.smin.i64"
// CHECK:       tile.d1.body{{.*}}:
// CHECK:         fptrunc float %{{.*}} to half
// CHECK:         store half
// CHECK:         call ccc void @"mtia_se_compute"(
// CHECK:         call ccc void @"mtia_dma_store"(

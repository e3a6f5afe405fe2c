// RUN: mtia-opt %S/../../../../examples/attention.py -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm | filecheck %s

// attention: in the KV loop the MLU transposes K (a two-level tile loop reading the input at the swapped
// index), the DPE computes Q @ K^T with f64 accumulation, and the softmax update's SE bodies use exp2.
// CHECK-LABEL: define void @"attn_fwd"
// CHECK:       for:
// CHECK:         call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 5, {{.*}}@"kind.mlu_compute"
// CHECK:       tile.d1.body{{.*}}:
// CHECK:         %[[ROW:.*]] = mul i64 %"i1{{.*}}", 64
// CHECK:         add i64 %[[ROW]], %"i0
// CHECK:         load half
// CHECK:         store half
// CHECK:         call ccc void @"mtia_compute_end"(
// CHECK:         call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 2, {{.*}}@"kind.dpe_matmul"
// CHECK:       dpe.k.body{{.*}}:
// CHECK:         fmul double
// CHECK:         call ccc void @"mtia_dpe_end"(ptr %"pe", i64 1, i64 64, i64 64, i64 64, {{.*}}@"dtype.f16"
// CHECK:         call float @"llvm.exp2"
// CHECK:       for.end:
// CHECK:         call ccc void @"mtia_dma_store"(

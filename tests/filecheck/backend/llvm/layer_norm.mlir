// RUN: mtia-opt %S/../../../../examples/layer_norm.py -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm | filecheck %s

// layer_norm: the running sums accumulate in SE commands inside the column loop; after it the RE reduces the
// row sum (numpy's pairwise order, as the model), a scalar SE command divides it by N (no tile loop: a 0-d tile), and the rstd
// command takes the square root; the mean and rstd are stored with DMAs.
// CHECK-LABEL: define void @"_layer_norm_fwd_fused"
// CHECK:       for:
// CHECK:       for.body:
// CHECK:         call ccc void @"mtia_dma_load"(
// CHECK:         call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 3, {{.*}}@"kind.se_compute"
// CHECK:         call ccc void @"mtia_compute_end"(
// CHECK:       for.end:
// CHECK:         call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 4, {{.*}}@"kind.re_reduce"
// CHECK:       re.pairwise.body:
// CHECK:         fadd float
// CHECK:         call ccc void @"mtia_re_end"(ptr %"pe", i32 1,
// CHECK:         call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 3, {{.*}}@"kind.se_compute"
// CHECK-NOT:   tile.d0
// CHECK:         fdiv float
// CHECK:         call ccc void @"mtia_compute_end"(
// CHECK:         call float @"llvm.sqrt"
// CHECK:         call ccc void @"mtia_dma_store"(

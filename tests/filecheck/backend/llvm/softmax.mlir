// RUN: mtia-opt %S/../../../../examples/softmax.py -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm | filecheck %s

// softmax: the row maximum and sum are RE commands whose reductions are in the IR: a loop of maximumnum from the
// identity, then the sum in numpy's pairwise order (the model's): 8 accumulators per block of 128 lanes; the SE
// bodies read the scalar tile once before their loop (the broadcast operand) and compute exp(x - max) and
// x / sum per lane.
// CHECK-LABEL: define void @"softmax_kernel"
// CHECK:         call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 4, {{.*}}@"kind.re_reduce"
// CHECK:       re.d0.body:
// CHECK:         call float @"llvm.maximumnum.f32"
// CHECK:         call ccc void @"mtia_re_end"(ptr %"pe", i32 1,
// CHECK:         call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 3, {{.*}}@"kind.se_compute"
// CHECK:         %"in1" = call ccc ptr @"mtia_cmd_in"
// CHECK:         %[[MAX:.*]] = load float, ptr %"in1"
// CHECK:       tile.d0.body:
// CHECK:         fsub float %{{.*}}, %[[MAX]]
// CHECK:         call float @"llvm.exp"
// CHECK:         call ccc void @"mtia_compute_end"(
// CHECK:         call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 4, {{.*}}@"kind.re_reduce"
// CHECK:       re.pairwise.body:
// CHECK-COUNT-8: fadd float
// CHECK:       re.pairwise.end:
// CHECK:         call ccc void @"mtia_re_end"(
// CHECK:       tile.d0.body{{.*}}:
// CHECK:         fdiv float
// CHECK:         call ccc void @"mtia_compute_end"(
// CHECK-NOT:     call ccc void @"mtia_compute_end"(
// CHECK:         ret void

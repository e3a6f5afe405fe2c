// RUN: mtia-opt %S/../../../../examples/softmax.py -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm | filecheck %s

// softmax: the row maximum and sum are RE commands the runtime runs (packed calls); the SE bodies read the
// scalar tile once before their loop (the broadcast operand) and compute exp(x - max) and x / sum per lane.
// CHECK-LABEL: define void @"softmax_kernel"
// CHECK:         call ccc void @"mtia_re_reduce"(
// CHECK:         call ccc ptr @"mtia_cb_front"
// CHECK:         %[[MAX:.*]] = load float, ptr %"in1"
// CHECK:       tile.d0.body:
// CHECK:         fsub float %{{.*}}, %[[MAX]]
// CHECK:         call float @"llvm.exp"
// CHECK:         call ccc void @"mtia_se_compute"(
// CHECK:         call ccc void @"mtia_re_reduce"(
// CHECK:       tile.d0.body{{.*}}:
// CHECK:         fdiv float
// CHECK:         call ccc void @"mtia_se_compute"(
// CHECK-NOT:     call ccc void @"mtia_se_compute"(
// CHECK:         ret void

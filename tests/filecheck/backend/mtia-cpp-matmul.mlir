// RUN: mtia-opt %S/../../../examples/matmul.py -p "tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}" -t mtia-cpp | filecheck %s

// matmul as C++: the K loop is a for loop carrying the A and B base addresses; its two loads go into
// 2-slot CBs (software pipelining); the DPE accumulates in place into the 1-slot accumulator CB. Values, CBs and
// the loop variable carry the kernel's names (`num_pid_m`, `pid_m`, `accumulator_cb`, `k`).
// CHECK-LABEL: static void matmul_kernel(
// CHECK:         const int32_t [[ACC:accumulator_cb]] = mtia_cb_alloc(pe, /*CB ID*/ 0, /*depth*/ 1, /*slot bytes*/ 16384,
// CHECK:         const int32_t [[A:a_cb]] = mtia_cb_alloc(pe, /*CB ID*/ 1, /*depth*/ 2,
// CHECK:         const int32_t [[B:b_cb]] = mtia_cb_alloc(pe, /*CB ID*/ 2, /*depth*/ 2,
// CHECK:         const int32_t num_pid_m = mtia_divsi<int32_t>(
// CHECK:         const int32_t pid_m = (int32_t)(first_pid_m + {{v[0-9]+}});
// CHECK:         for (int64_t k_ = 0; k_ < {{.*}}; k_ += 1) {
// CHECK-NEXT:      {{.*}}const int32_t k = (int32_t)k_;
// CHECK:           mtia_dma_load(pe, [[A]],
// CHECK:           mtia_dma_load(pe, [[B]],
// CHECK:             mtia_cmd_begin(pe, MTIA_DPE, "dpe_matmul", MTIA_KERNEL_FILE ":57:23");
// CHECK:             float *{{out[0-9]+}} = (float *)mtia_cmd_inout(pe, [[ACC]]);
// CHECK:             mtia_dpe_end(pe, /*batch*/ 1, /*M*/ 64, /*N*/ 64, /*K*/ 32, "f16", /*input precision*/ 0,
// CHECK:           mtia_cb_pop(pe, [[A]], 1,
// CHECK:         }
// CHECK:         mtia_f32_to_f16(
// CHECK:         mtia_dma_store(

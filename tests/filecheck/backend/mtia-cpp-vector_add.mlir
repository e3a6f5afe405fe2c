// RUN: mtia-opt %S/../../../examples/vector_add.py -p "tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}" -t mtia-cpp | filecheck %s

// vector_add as C++: program ids and the grid are arguments, three 1-slot CBs at the allocator's CB IDs and
// LS offsets, two DMA loads and a store with the mask's bound, the add strip-mined on the SE (RVV form first
// under __riscv_vector, the portable loop after #else) with its static work, kernel lines as comments; values
// and CBs are named after the kernel's variables (`block_start`, `x_cb`, the SE reads `x` and `y`).
// CHECK:       #include "mtia_runtime.h"
// CHECK-LABEL: static void add_kernel(mtia_pe *pe, {{.*}} int32_t pid_x, {{.*}}, {{.*}}mtia_addr x_ptr, {{.*}}mtia_addr y_ptr, {{.*}}mtia_addr output_ptr, {{.*}}int32_t n_elements) {
// CHECK:         const int32_t [[X:x_cb]] = mtia_cb_alloc(pe, /*CB ID*/ 0, /*depth*/ 1, /*slot bytes*/ 4096, /*LS offset*/ 0,
// CHECK:         const int32_t [[Y:y_cb]] = mtia_cb_alloc(pe, /*CB ID*/ 1, /*depth*/ 1, /*slot bytes*/ 4096, /*LS offset*/ 4096,
// CHECK:         const int32_t [[OUT:output_cb]] = mtia_cb_alloc(pe, /*CB ID*/ 2, /*depth*/ 1, /*slot bytes*/ 4096, /*LS offset*/ 8192,
// CHECK:         // vector_add.py:13
// CHECK-NEXT:    const int32_t block_start = (int32_t)(pid_x * 1024);
// CHECK:         // vector_add.py:16
// CHECK:         mtia_cb_reserve(pe, [[X]], 1, MTIA_KERNEL_FILE ":16:9");
// CHECK-NEXT:    mtia_scalar_instrs(pe, {{[0-9]+}});
// CHECK:           const mtia_dma_desc [[D:dma[0-9]+]] = {/*base*/ {{.*}}, /*rank*/ 1, /*elem bytes*/ 4, /*shape*/ {1024, 0, 0, 0}
// CHECK-NEXT:      mtia_dma_load(pe, [[X]], &[[D]], nullptr, MTIA_KERNEL_FILE ":16:9");
// CHECK:         // vector_add.py:17
// CHECK:           mtia_dma_load(pe, [[Y]],
// CHECK:         // vector_add.py:18
// CHECK:           mtia_cmd_begin(pe, MTIA_SE, "se_compute", MTIA_KERNEL_FILE ":18:14");
// CHECK-NEXT:      {{.*}} *[[A:x]] = {{.*}}mtia_cmd_in(pe, [[X]]);
// CHECK-NEXT:      {{.*}} *[[B:y]] = {{.*}}mtia_cmd_in(pe, [[Y]]);
// CHECK-NEXT:      float *[[O:out[0-9]+]] = (float *)mtia_cmd_out(pe, [[OUT]]);
// CHECK-NEXT:  #ifdef __riscv_vector
// CHECK:             vfadd_vv_f32m1
// CHECK:       #else
// CHECK:             const int64_t vl = mtia_vsetvl(
// CHECK:                 const float [[T:output]] = ([[A]][{{.*}}] + [[B]][{{.*}}]);
// CHECK-NEXT:            [[O]][{{.*}}] = [[T]];
// CHECK:       #endif
// CHECK-NEXT:      const mtia_work work = {/*elems*/ 1024, /*dtype*/ "f32", /*lut*/ 0, {{.*}} /*LS bytes*/ 12288};
// CHECK-NEXT:      mtia_compute_end(pe, &work);
// CHECK:         // vector_add.py:19
// CHECK:           mtia_dma_store(pe, [[OUT]],
// CHECK:       extern "C" void mtia_kernel_entry(mtia_pe *pe, const int64_t *args) {
// CHECK:       extern "C" const char *mtia_kernel_meta(void) {

// RUN: mtia-opt %S/../../../examples/layer_norm.py -p "tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}" -t mtia-cpp | filecheck %s
// RUN: mtia-opt %S/../../../examples/softmax.py -p "tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}" -t mtia-cpp | filecheck %s --check-prefix=SOFTMAX

// The RVV form of each SE/VEC body (backend/rvv.py) precedes the portable loop under __riscv_vector.
// CHECK:      #ifdef __riscv_vector
// CHECK-NEXT: #include <riscv_vector.h>
// CHECK-LABEL: static void _layer_norm_fwd_fused(

// The mask of `cols < N`: make_range as vid + offset, compared with the splatted N (.vx), stored as bytes.
// CHECK:      vid_v_u32m1(vl)
// CHECK:      vmslt_vx_i32m1_b32({{rvv_v[0-9]+}}, N, vl)
// CHECK:      vse8_v_u8mf4(

// The fused variance body: strip-mined with vsetvl, the mean subtracted in the .vf form, the masked
// select, square and sum stay in vector registers (no store before the result's).
// CHECK:      #ifdef __riscv_vector
// CHECK:      const size_t vl = vsetvl_e32m1(
// CHECK:      vbool32_t [[M:rvv_m[0-9]+]] = vmsne_vx_u8mf4_b32(vle8_v_u8mf4(
// CHECK:      [[D:rvv_v[0-9]+]] = vfsub_vf_f32m1({{rvv_v[0-9]+}}, mean{{(_[0-9]+)?}}[0], vl);
// CHECK-NOT:  vse32
// CHECK:      [[S:rvv_v[0-9]+]] = vmerge_vvm_f32m1([[M]], {{rvv_s[0-9]+}}, [[D]], vl);
// CHECK-NOT:  vse32
// CHECK:      [[Q:rvv_v[0-9]+]] = vfmul_vv_f32m1([[S]], [[S]], vl);
// CHECK-NEXT: [[R:rvv_v[0-9]+]] = vfadd_vv_f32m1({{rvv_v[0-9]+}}, [[Q]], vl);
// CHECK-NEXT: vse32_v_f32m1({{out[0-9]+}} + j, [[R]], vl);
// CHECK:      #else
// CHECK:      mtia_vsetvl(
// CHECK:      #endif

// Softmax: exp has no RVV instruction, so each chunk (at most 64 lanes) is spilled and exp'd lane by
// lane; the division by the row sum is a .vf op over the valid extent.
// SOFTMAX-LABEL: static void softmax_kernel(
// SOFTMAX:      float spill[64];
// SOFTMAX:      vsetvl_e32m1(size_t(std::min<int64_t>(1024 - j, 64)))
// SOFTMAX:      vfsub_vf_f32m1({{rvv_v[0-9]+}}, {{in[0-9]+}}[0], vl)
// SOFTMAX:      spill[lane] = std::exp
// SOFTMAX:      for (int64_t j = 0; j < std::min<int64_t>([[N:v[0-9]+]], 1024);) {
// SOFTMAX:      vfdiv_vf_f32m1({{rvv_v[0-9]+}}, {{in[0-9]+}}[0], vl)

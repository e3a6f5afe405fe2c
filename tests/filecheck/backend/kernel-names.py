# RUN: python3 -m mtia_xdsl.frontend %s:names --signature x_ptr=*fp32,out_ptr=*fp32,n=i32,steps=i32,BLOCK=constexpr --constexpr BLOCK=64 --clean | filecheck %s --check-prefix=TTIR
# RUN: mtia-opt %s -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-cpp | filecheck %s --check-prefix=CPP
# RUN: mtia-opt %s -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm | filecheck %s --check-prefix=LLVM
# mtia-opt: kernel=names signature=x_ptr:*fp32,out_ptr:*fp32,n:i32,steps:i32 constexprs=BLOCK:64

# Values are named after the kernel's variables, from the TTIR (xDSL name hints) to the C++ and the LLVM IR:
# the value an assignment produces gets the variable's name, its intermediates stay unnamed; a second `x` is
# `x_1` in C++ (`x.1` in LLVM IR); a C++ keyword (`auto`) or a name the emitted code declares itself in a scope
# that reads kernel values (`i`, `vl`) gets a trailing underscore.

import triton
import triton.language as tl


@triton.jit
def names(x_ptr, out_ptr, n, steps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    auto = pid * BLOCK
    total = 0
    for i in range(0, steps):
        total += i
    vl = total.to(tl.float32)
    offs = auto + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    x = x * 2.0 + vl
    tl.store(out_ptr + offs, x, mask=mask)


# TTIR-LABEL: tt.func public @names(%x_ptr: !tt.ptr<f32>, %out_ptr: !tt.ptr<f32>, %n: i32, %steps: i32)
# TTIR:         %auto = arith.muli %pid, %{{.*}} : i32
# TTIR:         %total_1 = scf.for %i = %{{.*}} to %steps step %{{.*}} iter_args(%total_2 = %total) -> (i32) : i32 {
# TTIR-NEXT:      %total_3 = arith.addi %total_2, %i : i32
# TTIR:         %vl = arith.sitofp %total_1 : i32 to f32
# TTIR:         %[[T:[0-9]+]] = tt.make_range
# TTIR-NEXT:    %[[S:[0-9]+]] = tt.splat %auto
# TTIR-NEXT:    %offs = arith.addi %[[S]], %[[T]] : tensor<64xi32>
# TTIR:         %mask = arith.cmpi slt, %offs, %{{.*}} : tensor<64xi32>
# TTIR:         %x = tt.load %{{.*}}, %mask : tensor<64x!tt.ptr<f32>>
# TTIR:         %x_1 = arith.addf %{{[0-9]+}}, %{{[0-9]+}} : tensor<64xf32>
# TTIR:         tt.store %{{.*}}, %x_1, %mask

# CPP-LABEL: static void names(
# CPP-SAME:    mtia_addr x_ptr, {{.*}} mtia_addr out_ptr, {{.*}} int32_t n, {{.*}} int32_t steps) {
# CPP:         const int32_t x_cb = mtia_cb_alloc(pe, /*CB ID*/ 0,
# CPP-NEXT:    const int32_t x_cb_1 = mtia_cb_alloc(pe, /*CB ID*/ 1,
# CPP:         const int32_t auto_ = (int32_t)(pid_x * 64);
# CPP:         int32_t total = 0;
# CPP:         for (int64_t i__ = 0; i__ < steps; i__ += 1) {
# CPP-NEXT:      const int32_t i_ = (int32_t)i__;
# CPP:           const int32_t total_1 = (int32_t)(total + i_);
# CPP-NEXT:      total = total_1;
# CPP:         const float vl_ = (float)(total);
# CPP:         mtia_dma_load(pe, x_cb,
# CPP:         const float *x = (const float *)mtia_cmd_in(pe, x_cb);
# CPP:         float *[[OUT:out[0-9]+]] = (float *)mtia_cmd_out(pe, x_cb_1);
# CPP:         const size_t vl = vsetvl_e32m1(
# CPP:         vfadd_vf_f32m1({{v[0-9]+}}, vl_, vl);
# CPP:         #else
# CPP:         const float x_1 = ({{t[0-9]+}} + vl_);
# CPP-NEXT:    [[OUT]][i0] = x_1;
# CPP:         mtia_dma_store(pe, x_cb_1,

# LLVM-LABEL: define void @"names"(ptr %"pe", ptr %"args")
# LLVM:         %"x_cb" = call ccc i32 @"mtia_cb_alloc"
# LLVM-NEXT:    %"x_cb.1" = call ccc i32 @"mtia_cb_alloc"
# LLVM:         %"auto" = mul i32 %"pid", 64
# LLVM:       for:
# LLVM-NEXT:    %"i" = phi i32
# LLVM-NEXT:    %"total" = phi i32 [0, %"entry"], [%"total.2", %"for.body"]
# LLVM:         %"total.2" = add i32 %"total", %"i"
# LLVM:       for.end:
# LLVM-NEXT:    %"total.1" = phi i32
# LLVM-NEXT:    %"vl" = sitofp i32 %"total.1" to float
# LLVM:         %"x.tile" = call ccc ptr @"mtia_cmd_in"(ptr %"pe", i32 %"x_cb")
# LLVM:       tile.d0.body:
# LLVM:         %"x" = load float, ptr
# LLVM-NEXT:    %[[M:.*]] = fmul float %"x", 0x4000000000000000
# LLVM-NEXT:    %"x.1" = fadd float %[[M]], %"vl"
# LLVM:         store float %"x.1", ptr

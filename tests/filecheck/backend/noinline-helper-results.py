# RUN: mtia-opt %s -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-cpp | filecheck %s --check-prefix=CPP
# RUN: mtia-opt %s -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm | filecheck %s --check-prefix=LLVM
# mtia-opt: kernel=calls signature=x_ptr:*fp32,y_ptr:*fp32,n:i32 constexprs=BLOCK:64

# A noinline helper (tt.call) returning several scalars: in C++ a function returning a std::tuple of their
# types, read back one std::get per result; in LLVM IR a function returning a literal struct of their
# registers, built with insertvalue and taken apart with extractvalue.

import triton
import triton.language as tl


@triton.jit(noinline=True)
def divmod_half(v, d):
    return v // d, v % d, v.to(tl.float32) * 0.5


@triton.jit
def calls(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    q, r, h = divmod_half(n, 3)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * h, mask=offs < q + r)


# CPP:       static std::tuple<int32_t, int32_t, float> [[FN:fn_[a-zA-Z0-9_]*divmod_half[a-zA-Z0-9_]*]](mtia_pe *pe, {{.*}} int32_t v) {
# CPP:         const int32_t [[Q:[a-z0-9_]+]] = mtia_divsi<int32_t>(v, 3);
# CPP:         const int32_t [[R:[a-z0-9_]+]] = mtia_remsi<int32_t>(v, 3);
# CPP:         const float [[H:[a-z0-9_]+]] = ({{.*}} * 0.5f);
# CPP:         return std::tuple<int32_t, int32_t, float>([[Q]], [[R]], [[H]]);
# CPP-LABEL: static void calls(
# CPP:         const std::tuple<int32_t, int32_t, float> [[T:[a-z0-9_]+]] = [[FN]](pe, pid_x, pid_y, pid_z, grid_x, grid_y, grid_z, n);
# CPP-NEXT:    const int32_t [[CQ:[a-z0-9_]+]] = std::get<0>([[T]]);
# CPP-NEXT:    const int32_t [[CR:[a-z0-9_]+]] = std::get<1>([[T]]);
# CPP-NEXT:    const float {{[a-z0-9_]+}} = std::get<2>([[T]]);
# CPP:         const int32_t {{[a-z0-9_]+}} = (int32_t)([[CQ]] + [[CR]]);

# LLVM:      define {i32, i32, float} @"[[FN:[^"]*divmod_half[^"]*]]"(ptr %"pe", i32 %"v")
# LLVM:        %[[S0:.*]] = insertvalue {i32, i32, float} undef, i32 %{{.*}}, 0
# LLVM-NEXT:   %[[S1:.*]] = insertvalue {i32, i32, float} %[[S0]], i32 %{{.*}}, 1
# LLVM-NEXT:   %[[S2:.*]] = insertvalue {i32, i32, float} %[[S1]], float %{{.*}}, 2
# LLVM-NEXT:   ret {i32, i32, float} %[[S2]]
# LLVM:      define void @"calls"(
# LLVM:        %[[C:.*]] = call ccc {i32, i32, float} @"[[FN]]"(ptr %"pe", i32 %"n")
# LLVM-NEXT:   %{{.*}} = extractvalue {i32, i32, float} %[[C]], 0
# LLVM-NEXT:   %{{.*}} = extractvalue {i32, i32, float} %[[C]], 1
# LLVM-NEXT:   %{{.*}} = extractvalue {i32, i32, float} %[[C]], 2

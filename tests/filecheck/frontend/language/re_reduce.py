# RUN: mtia-opt %s --print-debuginfo | filecheck %s
# RUN: mtia-opt %s -p tt-inline,mtia-set-target,convert-tt-to-mtia,canonicalize,cse,mtia-cb-bufferize | filecheck %s --check-prefix=LOWERED
# RUN: sed 's/^    # BAD /    /' %s > %t.py && not mtia-opt %t.py 2>&1 | filecheck %s --check-prefix=BAD
# mtia-opt: kernel=partials signature=x_ptr:*fp32,out_ptr:*i32

# mtl.re_reduce / tl.mtia.re_reduce emit mtia.re_allreduce at the kernel line, the combiner chosen by the
# element type. Lowered, the tile computed on an engine is read by the scalar core (cb_read), which issues
# the collective and waits for it; the result feeds the next command.

import triton
import triton.language as tl

import mtia_xdsl.language as mtl


@triton.jit
def partials(x_ptr, out_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16)) * 2.0
    s = mtl.re_reduce(x, 0, "sum")
    m = tl.mtia.re_reduce(mtl.get_pe_id(), 1, "max")
    # BAD s = mtl.re_reduce(x, 0, "prod")
    tl.store(x_ptr + tl.arange(0, 16), s + 1.0)
    tl.store(out_ptr, m)


# CHECK-LABEL: tt.func public @partials
# CHECK:       mtia.re_allreduce %{{.*}} {pe_axis = 0 : i32, kind = "addf"} : tensor<16xf32> -> tensor<16xf32> loc("{{.*}}re_reduce.py":19:
# CHECK:       mtia.re_allreduce %{{.*}} {pe_axis = 1 : i32, kind = "maxsi"} : i32 -> i32 loc("{{.*}}re_reduce.py":20:

# LOWERED:     mtia.se_compute
# LOWERED:     %[[T:.*]] = mtia.cb_read %{{.*}} : !mtia.cb<1, tensor<16xf32>> -> tensor<16xf32>
# LOWERED:     %[[S:.*]] = mtia.re_allreduce %[[T]] {pe_axis = 0 : i32, kind = "addf"}
# LOWERED:     mtia.se_compute ins(%[[S]] : tensor<16xf32>)

# BAD: re_reduce.py{{.*}}:21:{{[0-9]+}}: error: re_reduce: op must be one of 'sum', 'max', 'min', got 'prod'

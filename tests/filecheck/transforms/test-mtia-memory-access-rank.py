# RUN: mtia-opt %s -p 'tt-inline,canonicalize,cse,test-mtia-memory-access' | filecheck %s
# RUN: mtia-opt %s -p 'tt-inline,canonicalize,cse,convert-tt-to-mtia' | filecheck %s --check-prefix=MTIA
# mtia-opt: kernel=box_ranks signature=y_ptr:*fp32,z_ptr:*fp32,out_ptr:*fp32

# A flat index split by `%` and `//` into five digits of a 5-D tensor (a permuted prologue, memory_access.py
# `place_value_split`) is a box of rank 5, one dimension per digit; the DMA takes at most
# MachineConfig.dma_max_rank = 4 (`fit_rank`). `a`: no two dimensions are one run in the tile's order, in
# memory order all are (the whole of y): [1024], permuted back by the MLU. `b`: the two inner digits are
# one run in the tile's order: [2, 8, 4, 16]. `c` (a padded view, strides 2000, 200, 30, 5, 1): no merge in
# either order, so the load stays on the scalar core, with the reason.

import triton
import triton.language as tl


@triton.jit
def box_ranks(y_ptr, z_ptr, out_ptr):
    rm = tl.arange(0, 16)[:, None]
    k = tl.arange(0, 64)[None, :]
    xindex = k + 64 * rm
    x9 = xindex % 4
    x10 = (xindex // 4) % 4
    x11 = (xindex // 16) % 4
    x12 = (xindex // 64) % 8
    x13 = xindex // 512
    a = tl.load(y_ptr + (x10 + 4 * x9 + 16 * x12 + 128 * x11 + 512 * x13))
    b = tl.load(y_ptr + (4 * x10 + x9 + 16 * x12 + 128 * x11 + 512 * x13))
    c = tl.load(z_ptr + (x9 + 5 * x10 + 30 * x11 + 200 * x12 + 2000 * x13))
    tl.store(out_ptr + xindex, a + b + c)


# CHECK-LABEL: tt.func public @box_ranks
# CHECK: tt.load {{.*}}mtia.access = "dma base=%y_ptr+0 strides=[1] bounds=[1024] shape=[1024] view=[16, 64] order=[0, 2, 1, 4, 3]"
# CHECK: tt.load {{.*}}mtia.access = "dma base=%y_ptr+0 strides=[512, 16, 128, 1] bounds=[2, 8, 4, 16] shape=[2, 8, 4, 16] view=[16, 64]"
# CHECK: tt.load {{.*}}mtia.access = "scalar: a DMA box of rank 5 (5 with its contiguous dimensions merged, in memory order too); MachineConfig.dma_max_rank is 4"
# CHECK: tt.store {{.*}}mtia.access = "dma

# MTIA-LABEL: tt.func public @box_ranks
# MTIA:      %[[A:.*]] = mtia.dma_load %y_ptr[{{.*}}] bounds[{{.*}}] : !tt.ptr<f32> -> tensor<1024xf32>
# MTIA:      tt.reshape %{{.*}} : tensor<1024xf32> -> tensor<2x4x8x4x4xf32>
# MTIA:      tt.trans %{{.*}} {order = array<i32: 0, 2, 1, 4, 3>} : tensor<2x4x8x4x4xf32> -> tensor<2x8x4x4x4xf32>
# MTIA:      tt.reshape %{{.*}} : tensor<2x8x4x4x4xf32> -> tensor<16x64xf32>
# MTIA:      mtia.dma_load %y_ptr[{{.*}}] bounds[{{.*}}] : !tt.ptr<f32> -> tensor<2x8x4x16xf32>
# MTIA:      tt.reshape %{{.*}} : tensor<2x8x4x16xf32> -> tensor<16x64xf32>
# MTIA:      "mtia.gather"

# RUN: mtia-opt %s --print-debuginfo | filecheck %s
# RUN: sed 's/^    # BAD /    /' %s > %t.py && not mtia-opt %t.py 2>&1 | filecheck %s --check-prefix=BAD
# mtia-opt: kernel=slices signature=x_ptr:*fp32,out_ptr:*fp32,k:i32 constexprs=BLOCK:16

# tl.extract_slice / mtl.extract_slice emit mtia.extract_slice at the kernel line: constant offsets as
# static_offsets, a scalar offset as an operand. A constant offset past the tile is refused at its line.

import triton
import triton.language as tl

import mtia_xdsl.language as mtl


@triton.jit
def slices(x_ptr, out_ptr, k, BLOCK: tl.constexpr):
    r = tl.arange(0, 2 * BLOCK)[:, None] * 4 + tl.arange(0, 4)[None, :]
    tile = tl.load(x_ptr + r)
    a = tl.extract_slice(tile, [3, 0], [BLOCK, 4])
    b = mtl.extract_slice(tile, [k, 2], [BLOCK, 2])
    # BAD c = mtl.extract_slice(tile, [BLOCK + 1, 0], [BLOCK, 4])
    o = tl.arange(0, BLOCK)[:, None] * 4 + tl.arange(0, 4)[None, :]
    tl.store(out_ptr + o, a + tl.broadcast_to(tl.sum(b, axis=1)[:, None], (BLOCK, 4)))


# CHECK-LABEL: tt.func public @slices
# CHECK:       mtia.extract_slice %{{.*}} {static_offsets = array<i64: 3, 0>} : tensor<32x4xf32> -> tensor<16x4xf32> loc("{{.*}}extract_slice.py":18:
# CHECK:       mtia.extract_slice %{{.*}}[%k] {static_offsets = array<i64: -9223372036854775808, 2>} : tensor<32x4xf32> -> tensor<16x2xf32>, i32 loc("{{.*}}extract_slice.py":19:

# BAD: extract_slice.py{{.*}}:20:9: error: extract_slice: offset 17 + size 16 leaves dimension 0 of the tile (extent 32); keep 0 <= offset <= 16

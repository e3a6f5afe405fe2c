"""Small Triton kernels exercising frontend constructs the example kernels do not (if, while, helpers)."""

import triton
import triton.language as tl


@triton.jit
def _scale(x, factor):
    return x * factor


@triton.jit
def helpers_and_casts(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = _scale(x, 2.0)
    y = tl.rsqrt(tl.abs(y) + 1.0) + tl.exp(y)
    y = tl.where(y > 0.5, y, -y)
    tl.store(y_ptr + offs, y.to(tl.bfloat16).to(tl.float32).to(tl.float16), mask=mask)


@triton.jit
def if_and_while(x_ptr, y_ptr, n, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    if flag > 0:
        acc = acc + 1.0
    else:
        acc = acc - 1.0
    i = 0
    while i < n:
        acc += tl.load(x_ptr + i * BLOCK + offs)
        i += 1
    tl.store(y_ptr + offs, acc)


@triton.jit
def reductions_2d(x_ptr, y_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    x = tl.load(x_ptr + rows * BLOCK_N + cols)
    s = tl.sum(x, axis=1) + tl.max(x, axis=1)
    tl.store(y_ptr + tl.arange(0, BLOCK_M), s)


@triton.jit
def unsupported_inline_asm(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y)


@triton.jit
def shape_mismatch(x_ptr, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK))
    b = a + tl.arange(0, 2 * BLOCK)
    tl.store(x_ptr + tl.arange(0, BLOCK), a)
    tl.store(x_ptr + tl.arange(0, 2 * BLOCK), b)

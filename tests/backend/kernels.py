"""Kernels the backend tests of more than one emitter share."""

import triton
import triton.language as tl


@triton.jit
def embedding_rows(ids_ptr, table_ptr, out_ptr, n, R: tl.constexpr, XBLOCK: tl.constexpr):
    """An embedding lookup as Inductor writes it: the rows an index tile [XBLOCK, 1] picks (mtia.dma_gather_rows)."""
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < n
    r = tl.arange(0, R)[None, :]
    tmp0 = tl.load(ids_ptr + xindex, xmask)
    tmp0 = tl.where(tmp0 < 0, tmp0 + 100, tmp0)
    row = tl.load(table_ptr + (r + R * tmp0), xmask, other=0.0)
    tl.store(out_ptr + (r + R * xindex), row * 2.0, xmask)


@triton.jit(noinline=True)
def divmod_half(v, d):
    """A noinline helper returning three scalars (a std::tuple in C++, a literal struct in LLVM IR)."""
    return v // d, v % d, v.to(tl.float32) * 0.5


@triton.jit
def calls_tuple_helper(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """Calls `divmod_half` and uses all three results: y[i] = x[i] * (n / 2) for i < n // 3 + n % 3."""
    offs = tl.arange(0, BLOCK)
    q, r, h = divmod_half(n, 3)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * h, mask=offs < q + r)

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

"""Inductor's index forms run as DMA blocks and give eager's results (memory_access.py `_rem_div`)."""

import torch
import triton
import triton.language as tl

import mtia_xdsl


@triton.jit
def bias_rows(in_ptr, bias_ptr, scale_ptr, out_ptr, xnumel, XBLOCK: tl.constexpr):
    """Inductor's pointwise form: x0 = xindex % 64 (column), x1 = xindex // 64 (row)."""
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x0 = xindex % 64
    x1 = xindex // 64
    a = tl.load(in_ptr + (x0 + 64 * x1), xmask)
    b = tl.load(bias_ptr + x0, xmask)
    s = tl.load(scale_ptr + x1, xmask)
    tl.store(out_ptr + xindex, a * s + b, xmask)


def test_flat_index_decomposition_is_dma_and_matches_eager():
    x, bias, scale = torch.randn(6, 64), torch.randn(64), torch.randn(6)
    out = torch.empty_like(x)
    kernel = mtia_xdsl.compile(bias_rows, constexprs={"XBLOCK": 32})
    kernel[(x.numel() // 32,)](x, bias, scale, out, x.numel())
    torch.testing.assert_close(out, x * scale[:, None] + bias)
    mtia = kernel.asm["mtia"]
    assert mtia.count("mtia.dma_load") == 3 and "mtia.gather" not in mtia and "mtia.scatter" not in mtia


@triton.jit
def rows_mod_m(a_ptr, out_ptr, M, K: tl.constexpr, BLOCK_M: tl.constexpr):
    """Inductor's GEMM template rows: `rm % M` under multiple_of / max_contiguous hints, store masked."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + ram[:, None] * K + rk[None, :])
    tl.store(out_ptr + rm[:, None] * K + rk[None, :], a * 2.0, mask=rm[:, None] < M)


def test_hinted_rows_mod_m_is_dma_and_matches_eager():
    a = torch.randn(40, 16)  # 40 rows: the second block of 32 would wrap past M
    out = torch.zeros_like(a)
    kernel = mtia_xdsl.compile(rows_mod_m, constexprs={"K": 16, "BLOCK_M": 32})
    kernel[(2,)](a, out, 40)
    torch.testing.assert_close(out, a * 2.0)
    mtia = kernel.asm["mtia"]
    assert "mtia.dma_load" in mtia and "mtia.gather" not in mtia

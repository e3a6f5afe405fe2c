"""mtia_xdsl's flash-attention kernel for SDPA (mtia_xdsl/runtime/inductor_attention.py) against aten's CPU kernel."""

import pytest
import torch

from mtia_xdsl.runtime import inductor_attention

FLASH_CPU = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default


@pytest.mark.parametrize(
    ("dtype", "causal", "n_q", "n_k", "head_dim", "scale", "tol"),
    [
        (torch.float32, False, 20, 20, 16, None, 1e-5),  # 20 rows: a block of 32, 12 rows masked
        (torch.float32, True, 80, 80, 32, None, 1e-5),  # two query blocks of 64 (the second partial), two key blocks
        (torch.float16, True, 20, 20, 64, 0.3, 2e-3),
        (torch.float16, False, 7, 33, 128, None, 2e-3),  # cross attention: 7 queries, 33 keys
        (torch.bfloat16, True, 24, 40, 16, None, 2e-2),  # causal, more keys than queries (top-left aligned)
    ],
)
def test_flash_attention_matches_aten(dtype, causal, n_q, n_k, head_dim, scale, tol):
    """Output and log-sum-exp (which the aten op's backward reads) of aten's CPU flash attention: values, dtypes,
    shapes and strides, for sequence lengths that are not a multiple of the block."""
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 3, n_q, head_dim, generator=g).to(dtype)
    k, v = (torch.randn(2, 3, n_k, head_dim, generator=g).to(dtype) for _ in range(2))
    assert inductor_attention.unsupported(q, k, v, 0.0, None) is None
    got = inductor_attention.flash_attention(q, k, v, causal, scale)
    expected = FLASH_CPU(q, k, v, 0.0, causal, scale=scale)
    for g_, e in zip(got, expected, strict=True):
        assert (g_.shape, g_.dtype, g_.stride()) == (e.shape, e.dtype, e.stride())
        torch.testing.assert_close(g_.float(), e.float(), rtol=tol, atol=tol)


def test_flash_attention_of_strided_views():
    """q, k, v as nn.MultiheadAttention makes them (views of one projection, heads by transpose): read in place
    at their strides; the output has query's layout, as aten's."""
    torch.manual_seed(0)
    qkv = torch.randn(2, 24, 3, 4, 16)  # [B, L, (q, k, v), H, E]
    q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
    got = inductor_attention.flash_attention(q, k, v, False, None)
    expected = FLASH_CPU(q, k, v, 0.0, False)
    assert got[0].stride() == expected[0].stride()
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"dropout_p": 0.1}, "dropout_p=0.1"),
        ({"attn_mask": torch.zeros(8, 8)}, "attn_mask given"),
        ({"key": torch.randn(1, 1, 8, 16)}, "2 query heads, 1 key heads"),
        ({"query": torch.randn(1, 2, 8, 24)}, "head dims (24, 16, 16)"),
        ({"query": torch.randn(1, 2, 8, 16, dtype=torch.float64)}, "dtypes torch.float64"),
    ],
)
def test_unsupported_names_the_case(change, reason):
    """Dropout, an attention mask, grouped-query heads, a head dim not in HEAD_DIMS and f64 are left to the host,
    each with the reason the coverage table prints."""
    args = {"query": torch.randn(1, 2, 8, 16), "key": torch.randn(1, 2, 8, 16), "value": torch.randn(1, 2, 8, 16)}
    args |= {"dropout_p": 0.0, "attn_mask": None} | change
    got = inductor_attention.unsupported(**args)
    assert got is not None and reason in got, got

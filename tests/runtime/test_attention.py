"""Causal flash attention forward (examples/attention.py) on the machine model against torch.

Small ragged sizes: the key loop's bound differs between query blocks (causal), so batches of programs
diverge and are split; the last query and key blocks are partly masked. fp32 tolerances are tf32 ones,
since `tl.dot` on fp32 defaults to tf32 inputs.
"""

import pytest
import torch

from examples import attention


@pytest.mark.parametrize(
    ("dtype", "causal", "tol"),
    [(torch.float16, True, 2e-3), (torch.float32, True, 2e-3), (torch.float16, False, 2e-3)],
)
def test_attention_matches_torch(dtype: torch.dtype, causal: bool, tol: float) -> None:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 80, 32, generator=g).to(dtype) for _ in range(3))
    out = attention.attention(q, k, v, causal=causal, BLOCK_M=32, BLOCK_N=32)
    ref = attention.reference(q, k, v, causal=causal)
    assert out.dtype == dtype
    torch.testing.assert_close(out.float(), ref.float(), rtol=tol, atol=tol)

"""Values upstream's tests and differential fuzzing against Triton's interpreter found wrong here."""

import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _cumsum_kernel(x, z, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(z + offs, tl.cumsum(tl.load(x + offs), axis=0))


def test_bf16_cumsum_accumulates_in_fp32_and_rounds_once():
    # 0.01 is not a bf16 value: a running bf16 sum of 1024 of them stalls far from 10.24
    x = torch.full((1024,), 0.01, dtype=torch.bfloat16)
    z = torch.empty(1024, dtype=torch.float32)
    _cumsum_kernel[(1,)](x, z, 1024)
    expected = torch.cumsum(x.float(), 0).to(torch.bfloat16).float()
    assert torch.equal(z, expected)


@triton.jit
def _floordiv_kernel(a, b, q, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(q + offs, tl.load(a + offs) // tl.load(b + offs))


def test_int64_division_with_int64_min_rounds_toward_zero():
    lo = -(2**63)
    pairs = [(lo, 3), (lo, -3), (lo, 7), (lo, lo), (lo + 1, lo), (-7, 2), (7, -2), (lo, 2)]
    a = torch.tensor([p[0] for p in pairs], dtype=torch.int64)
    b = torch.tensor([p[1] for p in pairs], dtype=torch.int64)
    q = torch.zeros(8, dtype=torch.int64)
    _floordiv_kernel[(1,)](a, b, q, 8)
    expected = [abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1) for x, y in pairs]  # C's division
    assert q.tolist() == expected

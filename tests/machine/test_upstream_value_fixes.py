"""Values upstream's tests and differential fuzzing against Triton's interpreter found wrong here."""

import pytest
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


@triton.jit
def _cast_kernel(x, y, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y + offs, tl.load(x + offs).to(y.dtype.element_ty))


def _round_once(value: int, bits: int) -> float:
    """An integer rounded to `bits` significant bits, nearest even, in exact integer arithmetic."""
    m, shift = abs(value), max(abs(value).bit_length() - bits, 0)
    q, rest = m >> shift, m & ((1 << shift) - 1)
    if shift and (rest > 1 << (shift - 1) or (rest == 1 << (shift - 1) and q & 1)):
        q += 1
    return float((q << shift) * (1 if value >= 0 else -1))


# values where rounding to float64 first lands on a tie that then rounds the wrong way
_INT64S = [
    2**62 + 2**38 + 1,
    -(2**62 + 2**38 + 1),
    2**60 + 2**36 + 2**7 + 1,
    (1 << 24) + 1 + (1 << 54),
    -(2**63),
    0,
    7,
    -(2**40) - 3,
]
_UINT64S = [2**64 - 1, 2**63 + 2**39 + 1, 2**63 + 2**55 + 1, 2**64 - 2**39 - 1]


@pytest.mark.parametrize(("dst", "bits"), [(torch.float32, 24), (torch.float16, 11), (torch.bfloat16, 8)])
def test_int64_and_uint64_to_narrow_floats_round_once(dst, bits):
    x = torch.tensor(_INT64S, dtype=torch.int64)
    y = torch.empty(len(_INT64S), dtype=dst)
    _cast_kernel[(1,)](x, y, len(_INT64S))
    expected = torch.tensor([_round_once(v, bits) for v in _INT64S], dtype=torch.float64).to(dst)
    assert torch.equal(y, expected)
    u = torch.tensor([v - 2**64 for v in _UINT64S], dtype=torch.int64)  # the same bits, read as uint64
    yu = torch.empty(len(_UINT64S), dtype=dst)
    _cast_kernel[(1,)](triton.reinterpret(u, tl.uint64), yu, len(_UINT64S))
    expected_u = torch.tensor([_round_once(v, bits) for v in _UINT64S], dtype=torch.float64).to(dst)
    assert torch.equal(yu, expected_u)


def test_fp64_and_int32_to_bf16_round_once():
    # 1 + 2^-8 + 2^-30: fp32 rounds it to the tie 1 + 2^-8, which bf16 then rounds down to 1
    x = torch.tensor([1 + 2**-8 + 2**-30, -(1 + 2**-8 + 2**-30)], dtype=torch.float64)
    y = torch.empty(2, dtype=torch.bfloat16)
    _cast_kernel[(1,)](x, y, 2)
    assert y.float().tolist() == [1 + 2**-7, -(1 + 2**-7)]
    i = torch.tensor([2**24 + 2**16 + 1, 2**30 + 2**22 + 2**6 + 1], dtype=torch.int32)
    yi = torch.empty(2, dtype=torch.bfloat16)
    _cast_kernel[(1,)](i, yi, 2)
    assert yi.float().tolist() == [_round_once(int(v), 8) for v in i.tolist()]

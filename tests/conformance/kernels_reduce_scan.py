"""Reduction, scan and sort corpus kernels (one program per row of an M x N matrix with a row stride).

Float sums and scans run on small integer values, so any summation order gives the exact result and the
comparison stays bit-exact.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from spec import SIGNED, Case, Draw, Launch, int_valued, rand, rows

F32, I32 = torch.float32, torch.int32


@triton.jit
def rs_sum_max_min(x_ptr, s_ptr, mx_ptr, mn_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0)
    tl.store(s_ptr + row, tl.sum(x, axis=0))
    tl.store(mx_ptr + row, tl.max(tl.where(mask, x, -1000), axis=0))
    tl.store(mn_ptr + row, tl.min(tl.where(mask, x, 1000), axis=0))


@triton.jit
def rs_argmax_argmin_ties(x_ptr, amax_ptr, amin_ptr, vmax_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0)
    tl.store(amax_ptr + row, tl.argmax(tl.where(mask, x, -100), axis=0))
    tl.store(amin_ptr + row, tl.argmin(tl.where(mask, x, 100), axis=0, tie_break_left=False))
    v, i = tl.max(tl.where(mask, x, -100), axis=0, return_indices=True)
    tl.store(vmax_ptr + row, v + i)


@triton.jit
def rs_argmax_nan(x_ptr, amax_ptr, amin_ptr, mx_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols)
    tl.store(amax_ptr + row, tl.argmax(x, axis=0))
    tl.store(amin_ptr + row, tl.argmin(x, axis=0))
    tl.store(mx_ptr + row, tl.max(x, axis=0))


@triton.jit
def rs_xor_or_sum(x_ptr, xs_ptr, os_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0)
    tl.store(xs_ptr + row, tl.xor_sum(x, axis=0))
    tl.store(os_ptr + row, tl.reduce_or(x, axis=0))


@triton.jit
def _closest_to_zero(a, ia, b, ib):
    pick_a = (tl.abs(a) < tl.abs(b)) | ((tl.abs(a) == tl.abs(b)) & (ia < ib))
    return tl.where(pick_a, a, b), tl.where(pick_a, ia, ib)


@triton.jit
def rs_reduce_custom(x_ptr, v_ptr, i_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=1000.0)
    v, i = tl.reduce((x, cols), 0, _closest_to_zero)
    tl.store(v_ptr + row, v)
    tl.store(i_ptr + row, i)


@triton.jit
def rs_sum_axis0_keepdims(x_ptr, out_ptr, total_ptr, stride, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    mask = (rows < M) & (cols < N)
    x = tl.load(x_ptr + rows * stride + cols, mask=mask, other=0)
    colsum = tl.sum(x, axis=0, keep_dims=True)
    tl.store(out_ptr + rows * stride + cols, x * 2 - colsum, mask=mask)
    tl.store(total_ptr, tl.sum(x) + tl.max(tl.max(x, axis=1), axis=0))


@triton.jit
def rs_sum_promotion(x_ptr, s_ptr, d_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0)
    tl.store(s_ptr + row, tl.sum(x, axis=0))
    tl.store(d_ptr + row, tl.sum(x, axis=0, dtype=tl.float64))


@triton.jit
def rs_cumsum_cumprod(x_ptr, cs_ptr, rcs_ptr, cp_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    offs = row * stride + cols
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(cs_ptr + offs, tl.cumsum(x, axis=0), mask=mask)
    tl.store(rcs_ptr + offs, tl.cumsum(x, axis=0, reverse=True), mask=mask)
    tl.store(cp_ptr + offs, tl.cumprod(tl.where(mask, x, 1), axis=0), mask=mask)


@triton.jit
def _affine(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@triton.jit
def rs_associative_scan(a_ptr, b_ptr, h_ptr, rh_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    offs = row * stride + cols
    a = tl.load(a_ptr + offs, mask=mask, other=1)
    b = tl.load(b_ptr + offs, mask=mask, other=0)
    _, h = tl.associative_scan((a, b), 0, _affine)
    _, rh = tl.associative_scan((a, b), 0, _affine, reverse=True)
    tl.store(h_ptr + offs, h, mask=mask)
    tl.store(rh_ptr + offs, rh, mask=mask)


@triton.jit
def rs_scan_axis0_2d(x_ptr, out_ptr, stride, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    mask = (rows < M) & (cols < N)
    x = tl.load(x_ptr + rows * stride + cols, mask=mask, other=0)
    tl.store(out_ptr + rows * stride + cols, tl.cumsum(x, axis=0) + tl.cumsum(x, axis=1), mask=mask)


@triton.jit
def rs_sort(x_ptr, up_ptr, down_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    offs = row * stride + cols
    x = tl.load(x_ptr + offs)
    tl.store(up_ptr + offs, tl.sort(x))
    tl.store(down_ptr + offs, tl.sort(x, descending=True))


@triton.jit
def rs_topk(x_ptr, out_ptr, stride, n, BLOCK: tl.constexpr, K: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * stride + tl.arange(0, BLOCK))
    tl.store(out_ptr + row * K + tl.arange(0, K), tl.topk(x, K))


def _argmax_nan_fill(d: Draw, shape: tuple[int, int], dtype: torch.dtype) -> torch.Tensor:
    x = int_valued(d, shape, dtype, -3, 3)
    all_nan = rand(d, shape[0], torch.int32, 0, 2) == 0
    all_nan[0] = True
    x[all_nan, :] = float("nan")
    return x


def _last(mask: torch.Tensor) -> torch.Tensor:
    """Index of the last True per row."""
    n = mask.shape[1]
    return n - 1 - mask.flip(1).int().argmax(1)


def _argmax_nan_ref(args: list) -> None:
    x = args[0]
    nan = torch.isnan(x).all(1)
    last = torch.full_like(nan, x.shape[1] - 1, dtype=torch.int64)
    args[1].copy_(torch.where(nan, last, x.argmax(1)).to(torch.int32))
    args[2].copy_(torch.where(nan, last, x.argmin(1)).to(torch.int32))
    args[3].copy_(x.max(1).values)


def _ties_ref(args: list) -> None:
    x = args[0]
    args[1].copy_(x.argmax(1).to(torch.int32))
    args[2].copy_(_last(x == x.min(1, keepdim=True).values).to(torch.int32))
    args[3].copy_(x.max(1).values.float() + x.argmax(1).float())


def _matrix(d: Draw, dtype: torch.dtype, bm: int, bn: int, fill) -> Launch:
    m, n = d.int(1, bm), d.int(1, bn)
    stride = n + d.choice([0, 5])
    x = torch.zeros(m, stride, dtype=dtype)
    x[:, :n] = fill(d, (m, n), dtype)
    out = torch.zeros(m, stride, dtype=dtype)
    return Launch([x[:, :n], out[:, :n], stride, m, n], (1,))


def _axis0(d: Draw) -> Launch:
    launch = _matrix(d, d.choice([F32, I32]), 8, 16, int_valued)
    x, out, stride, m, n = launch.args
    launch.args = [x, out, torch.zeros(1, dtype=x.dtype), stride, m, n]
    return launch


def _topk_build(d: Draw) -> Launch:
    m = d.int(1, 4)
    x = rand(d, (m, 32), d.choice([F32, I32]))
    return Launch([x, torch.zeros(m, 4, dtype=x.dtype), 32, 32], (m,))


SMALL = (F32, I32, torch.int64, torch.float16)
CASES = [
    rows(rs_sum_max_min, [SMALL], [(SMALL, "row")] * 3, fill=int_valued),
    rows(
        rs_argmax_argmin_ties,
        [(F32, I32)],
        [(I32, "row"), (I32, "row"), (F32, "row")],
        lo=-3,
        hi=3,
        reference=_ties_ref,
        why="Triton's interpreter ignores tie_break_left=False (numpy argmin takes the first minimum); Triton's "
        "combine keeps the right operand on a tie, so in any order-preserving reduction tree the last minimum wins",
    ),
    rows(
        rs_argmax_nan,
        [F32],
        [(I32, "row"), (I32, "row"), (F32, "row")],
        exact_n=True,
        fill=_argmax_nan_fill,
        reference=_argmax_nan_ref,
        why="Triton's interpreter is wrong on all-NaN rows (numpy picks the first NaN); Triton's combine "
        "(value1 > value2 or tie) keeps the right operand when either is NaN, so an all-NaN row gives its last "
        "index in any order-preserving tree (rows with some NaNs are order-dependent upstream and not drawn); "
        "tl.max of an all-NaN row is NaN",
    ),
    rows(rs_xor_or_sum, [SIGNED], [(torch.int64, "row")] * 2),
    rows(rs_reduce_custom, [F32], [(F32, "row"), (I32, "row")], fill=int_valued),
    Case(rs_sum_axis0_keepdims, _axis0, (1, 2), constexprs={"BM": 8, "BN": 16}),
    rows(
        rs_sum_promotion,
        [(torch.int8, torch.int16, torch.float16, torch.bool)],
        [(I32, "row"), (torch.float64, "row")],
        fill=int_valued,
    ),
    rows(
        rs_cumsum_cumprod,
        [(F32, I32)],
        [(F32, "full"), (F32, "full"), (I32, "full")],
        fill=lambda d, s, t: int_valued(d, s, t, -2, 3),
    ),
    rows(rs_associative_scan, [I32, I32], [(I32, "full"), (I32, "full")], lo=-3, hi=4),
    Case(
        rs_scan_axis0_2d,
        lambda d: _matrix(d, d.choice([F32, I32]), 8, 16, int_valued),
        (1,),
        constexprs={"BM": 8, "BN": 16},
    ),
    rows(rs_sort, [(F32, I32)], [(F32, "full"), (F32, "full")], exact_n=True, block=16, max_rows=3),
    Case(rs_topk, _topk_build, (1,), constexprs={"BLOCK": 32, "K": 4}),
]


@triton.jit
def rs_reduce_3d(x_ptr, s_ptr, m_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    ia = tl.arange(0, A)[:, None, None]
    ib = tl.arange(0, B)[None, :, None]
    ic = tl.arange(0, C)[None, None, :]
    x = tl.load(x_ptr + ia * B * C + ib * C + ic)
    s = tl.sum(x, axis=1)  # [A, C]
    tl.store(s_ptr + tl.arange(0, A)[:, None] * C + tl.arange(0, C)[None, :], s)
    tl.store(m_ptr, tl.max(tl.min(x, axis=2), axis=None))


def _reduce_3d(d: Draw) -> Launch:
    dtype = d.choice([F32, I32, torch.int8])
    x = int_valued(d, (2, 4, 8), dtype)
    return Launch(
        [x, torch.zeros(2, 8, dtype=x.dtype if dtype != torch.int8 else I32), torch.zeros(1, dtype=dtype)], (1,)
    )


CASES.append(Case(rs_reduce_3d, _reduce_3d, (1, 2), {"A": 2, "B": 4, "C": 8}))

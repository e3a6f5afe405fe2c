"""Layout corpus kernels: join/split/interleave/cat/permute/trans/reshape/view/broadcast_to/gather/histogram/
flip, and tl.dot on integer-valued inputs (exact in any accumulation order)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from spec import Case, Draw, Launch, full_grid, int_valued, rand

F32, I32 = torch.float32, torch.int32


@triton.jit
def lay_join_split(a_ptr, b_ptr, j_ptr, s_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0)
    b = tl.load(b_ptr + offs, mask=mask, other=0)
    j = tl.join(a, b)  # [BLOCK, 2]
    pair = tl.arange(0, 2)[None, :]
    tl.store(j_ptr + offs[:, None] * 2 + pair, j, mask=mask[:, None])
    lo, hi = tl.split(j * 3)
    tl.store(s_ptr + offs, lo - hi, mask=mask)


@triton.jit
def lay_interleave(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs, mask=offs < n, other=0)
    b = tl.load(b_ptr + offs, mask=offs < n, other=0)
    o = pid * 2 * BLOCK + tl.arange(0, 2 * BLOCK)
    tl.store(out_ptr + o, tl.interleave(a, b), mask=o < 2 * n)


@triton.jit
def lay_cat_sum(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs, mask=offs < n, other=0)
    b = tl.load(b_ptr + offs, mask=offs < n, other=0)
    c = tl.cat(a, b * 10, can_reorder=True)
    tl.store(out_ptr + pid, tl.sum(c, axis=0))


@triton.jit
def lay_permute_trans(x_ptr, p_ptr, t_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    ia = tl.arange(0, A)[:, None, None]
    ib = tl.arange(0, B)[None, :, None]
    ic = tl.arange(0, C)[None, None, :]
    x = tl.load(x_ptr + ia * B * C + ib * C + ic)
    p = tl.permute(x, (2, 0, 1))  # [C, A, B]
    jc = tl.arange(0, C)[:, None, None]
    ja = tl.arange(0, A)[None, :, None]
    jb = tl.arange(0, B)[None, None, :]
    tl.store(p_ptr + jc * A * B + ja * B + jb, p)
    m = tl.load(x_ptr + tl.arange(0, A)[:, None] * C + tl.arange(0, C)[None, :])  # [A, C]
    t = tl.trans(m)
    tl.store(t_ptr + tl.arange(0, C)[:, None] * A + tl.arange(0, A)[None, :], t)


@triton.jit
def lay_reshape_view(x_ptr, r_ptr, v_ptr, f_ptr, s_ptr, BM: tl.constexpr, BN: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :])
    r = tl.reshape(x, (BN, BM))
    tl.store(r_ptr + tl.arange(0, BN)[:, None] * BM + tl.arange(0, BM)[None, :], r)
    flat = tl.ravel(x)
    tl.store(v_ptr + tl.arange(0, BM * BN), flat + 1)
    tl.store(f_ptr + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], tl.flip(x, 1))
    viewed = tl.view(x, (2, BM * BN // 2))  # element order unspecified: compare an order-free sum
    tl.store(s_ptr + tl.arange(0, 2), tl.sum(viewed, axis=1) * 0 + tl.sum(tl.sum(viewed, axis=1), axis=0))


@triton.jit
def lay_broadcast(x_ptr, y_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm, mask=rm < M, other=0)
    y = tl.load(y_ptr + rn, mask=rn < N, other=0)
    xb = tl.broadcast_to(tl.expand_dims(x, 1), (BM, BN))
    yb, _ = tl.broadcast(y[None, :], xb)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], xb * 10 + yb, mask=mask)


@triton.jit
def lay_gather(x_ptr, idx_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + offs)
    idx = tl.load(idx_ptr + offs)
    tl.store(out_ptr + offs, tl.gather(x, idx, axis=1))


@triton.jit
def lay_histogram(x_ptr, out_ptr, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + tl.arange(0, BINS), tl.histogram(x, BINS, mask=mask))


@triton.jit
def lay_dot(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0)
    c = tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _join_split(d: Draw) -> Launch:
    n = d.int(1, 70)
    dtype = d.choice([F32, I32])
    outs = [torch.zeros(n, 2, dtype=dtype), torch.zeros(n, dtype=dtype)]
    return Launch([rand(d, n, dtype), rand(d, n, dtype), *outs, n], full_grid(n, 32))


def _interleave(d: Draw) -> Launch:
    n = d.int(1, 70)
    dtype = d.choice([F32, I32])
    return Launch([rand(d, n, dtype), rand(d, n, dtype), torch.zeros(2 * n, dtype=dtype), n], full_grid(n, 32))


def _cat(d: Draw) -> Launch:
    n = d.int(1, 70)
    return Launch([rand(d, n, I32), rand(d, n, I32), torch.zeros(3, dtype=I32), n], full_grid(n, 32))


def _fixed(shapes_in: list[tuple[int, ...]], shapes_out: list[tuple[int, ...]]):
    def build(d: Draw) -> Launch:
        dtype = d.choice([F32, I32, torch.float16])
        ins = [int_valued(d, s, dtype) for s in shapes_in]  # integer-valued: sums are exact in any order
        return Launch([*ins, *(torch.zeros(s, dtype=dtype) for s in shapes_out)], (1,))

    return build


def _broadcast(d: Draw) -> Launch:
    m, n = d.int(1, 8), d.int(1, 16)
    return Launch([rand(d, m, I32), rand(d, n, I32), torch.zeros(m * n, dtype=I32), m, n], (1,))


def _gather(d: Draw) -> Launch:
    x = rand(d, (4, 16), d.choice([F32, I32]))
    idx = rand(d, (4, 16), I32, 0, 16)
    return Launch([x, idx, torch.zeros_like(x)], (1,))


def _histogram(d: Draw) -> Launch:
    n = d.int(1, 64)
    return Launch([rand(d, n, I32, 0, 8), torch.zeros(8, dtype=I32), n], (1,))


def _dot(d: Draw) -> Launch:
    m, n, k = d.int(1, 16), d.int(1, 16), d.int(1, 16)
    dtype = d.choice([F32, torch.float16])
    a, b = int_valued(d, (m, k), dtype, -4, 4), int_valued(d, (k, n), dtype, -4, 4)
    return Launch([a, b, torch.zeros(m, n), m, n, k], (1,))


CASES = [
    Case(lay_join_split, _join_split, (2, 3), {"BLOCK": 32}),
    Case(lay_interleave, _interleave, (2,), {"BLOCK": 32}),
    Case(lay_cat_sum, _cat, (2,), {"BLOCK": 32}),
    Case(lay_permute_trans, _fixed([(2, 4, 8)], [(8, 2, 4), (8, 2)]), (1, 2), {"A": 2, "B": 4, "C": 8}),
    Case(lay_reshape_view, _fixed([(4, 8)], [(8, 4), (32,), (4, 8), (2,)]), (1, 2, 3, 4), {"BM": 4, "BN": 8}),
    Case(lay_broadcast, _broadcast, (2,), {"BM": 8, "BN": 16}),
    Case(lay_gather, _gather, (2,), {"BM": 4, "BN": 16}),
    Case(lay_histogram, _histogram, (1,), {"BLOCK": 64, "BINS": 8}),
    Case(lay_dot, _dot, (2,), {"BM": 16, "BN": 16, "BK": 16}),
]


@triton.jit
def lay_dot_bf16_int8(a_ptr, b_ptr, c_ptr, i_ptr, j_ptr, k_ptr, B: tl.constexpr):
    r = tl.arange(0, B)
    offs = r[:, None] * B + r[None, :]
    acc = tl.dot(tl.load(a_ptr + offs), tl.load(b_ptr + offs))
    tl.store(c_ptr + offs, acc)
    acc_i = tl.dot(tl.load(i_ptr + offs), tl.load(j_ptr + offs))
    tl.store(k_ptr + offs, acc_i)


def _dot_bf16_int8(d: Draw) -> Launch:
    a, b = int_valued(d, (32, 32), torch.bfloat16, -4, 4), int_valued(d, (32, 32), torch.bfloat16, -4, 4)
    i, j = rand(d, (32, 32), torch.int8, -128, 128), rand(d, (32, 32), torch.int8, -128, 128)
    return Launch([a, b, torch.zeros(32, 32), i, j, torch.zeros(32, 32, dtype=I32)], (1,))


def _dot_bf16_int8_ref(args: list) -> None:
    args[2].copy_(args[0].double() @ args[1].double())
    args[5].copy_(args[3].long() @ args[4].long())


CASES.append(
    Case(
        lay_dot_bf16_int8,
        _dot_bf16_int8,
        (2, 5),
        {"B": 32},  # int8 dots need K >= 32 upstream
        reference=_dot_bf16_int8_ref,
        why="Triton's interpreter computes tl.dot on bf16 from the raw bits; integer-valued bf16 products and "
        "int8 -> int32 dots are exact, so the float64/int64 torch product is bit-exact",
    )
)


@triton.jit
def lay_dot_acc_batched(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    ib = tl.arange(0, B)[:, None, None]
    a = tl.load(a_ptr + ib * M * K + tl.arange(0, M)[None, :, None] * K + tl.arange(0, K)[None, None, :])
    b = tl.load(b_ptr + ib * K * N + tl.arange(0, K)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    acc = tl.full((B, M, N), 1.0, tl.float32)
    acc = tl.dot(a, b, acc)
    acc = tl.dot(a, b, acc, out_dtype=tl.float32)
    tl.store(c_ptr + ib * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :], acc)


def _dot_batched(d: Draw) -> Launch:
    dtype = d.choice([torch.float16, F32])
    a, b = int_valued(d, (2, 16, 16), dtype, -4, 4), int_valued(d, (2, 16, 16), dtype, -4, 4)
    return Launch([a, b, torch.zeros(2, 16, 16)], (1,))


CASES.append(Case(lay_dot_acc_batched, _dot_batched, (2,), {"B": 2, "M": 16, "N": 16, "K": 16}))

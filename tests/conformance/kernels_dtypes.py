"""Dtype corpus kernels: every Triton dtype (int1..int64, uint8..uint64, fp16, bf16, fp32, fp64, fp8) with
casts, bitcasts, promotion and wrap-around.

Triton's interpreter is wrong for bf16 arithmetic and fp32 -> bf16/fp8 rounding (DESIGN.md): those cases
use torch references (round to nearest even per operation, as upstream's GPU code does).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from spec import SIGNED, UNSIGNED, Case, Draw, Launch, Tol, elementwise, full_grid, rand

F16, BF16, F32, F64 = torch.float16, torch.bfloat16, torch.float32, torch.float64
INTS = SIGNED + UNSIGNED


@triton.jit
def dt_int_casts(x_ptr, out_ptr, wide_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, x, mask=mask)  # implicit cast to the output's element type
    tl.store(wide_ptr + offs, x.to(tl.int64) + x.to(tl.uint8).to(tl.int64), mask=mask)


@triton.jit
def dt_float_casts(x_ptr, out_ptr, h_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, x, mask=mask)
    tl.store(h_ptr + offs, x.to(tl.float16).to(tl.float64), mask=mask)


@triton.jit
def dt_bf16_casts(x_ptr, out_ptr, back_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    b = x.to(tl.bfloat16)
    tl.store(out_ptr + offs, b, mask=mask)
    tl.store(back_ptr + offs, b.to(tl.float32), mask=mask)


@triton.jit
def dt_int_float_casts(x_ptr, i_ptr, f_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(i_ptr + offs, (x * 1.75).to(tl.int32), mask=mask)
    tl.store(f_ptr + offs, x.to(tl.int16).to(tl.float32) / 3, mask=mask)


@triton.jit
def dt_promotion(a_ptr, b_ptr, out_ptr, sum_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0)
    b = tl.load(b_ptr + offs, mask=mask, other=0)
    c = a + b
    tl.store(out_ptr + offs, c.to(tl.float64), mask=mask)
    tl.store(sum_ptr + offs, (a * 2 + b * 1.5).to(tl.float64), mask=mask)


@triton.jit
def dt_bool_i1(x_ptr, y_ptr, and_ptr, xor_ptr, cnt_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    y = tl.load(y_ptr + offs, mask=mask, other=0)
    tl.store(and_ptr + offs, x & ~y, mask=mask)
    tl.store(xor_ptr + offs, (x ^ y) | (x == y), mask=mask)
    tl.store(cnt_ptr + offs, x.to(tl.int32) + y.to(tl.int32) * 2, mask=mask)


@triton.jit
def dt_fp8_casts(x_ptr, e4_ptr, e5_ptr, back_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    e4 = x.to(tl.float8e4nv)
    tl.store(e4_ptr + offs, e4, mask=mask)
    tl.store(e5_ptr + offs, x.to(tl.float8e5), mask=mask)
    tl.store(back_ptr + offs, e4.to(tl.float32), mask=mask)


@triton.jit
def dt_bitcast(x_ptr, bits_ptr, neg_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    bits = x.to(tl.int32, bitcast=True)
    tl.store(bits_ptr + offs, bits, mask=mask)
    tl.store(neg_ptr + offs, (bits ^ -0x80000000).to(tl.float32, bitcast=True), mask=mask)


@triton.jit
def dt_uint_arith(x_ptr, y_ptr, q_ptr, r_ptr, s_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1)
    y = tl.load(y_ptr + offs, mask=mask, other=1) | 1
    tl.store(q_ptr + offs, x // y, mask=mask)
    tl.store(r_ptr + offs, x % y, mask=mask)
    tl.store(s_ptr + offs, (x >> 3) + (y << 2), mask=mask)
    tl.store(c_ptr + offs, x < y, mask=mask)


@triton.jit
def dt_fp16_fp64_arith(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1)
    y = tl.load(y_ptr + offs, mask=mask, other=1)
    z = tl.load(z_ptr + offs, mask=mask, other=1)
    tl.store(out_ptr + offs, (x * y + z) / (tl.abs(y) + 1) - tl.abs(x) * 0.5, mask=mask)


@triton.jit
def dt_bf16_arith(x_ptr, y_ptr, z_ptr, out_ptr, q_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1)
    y = tl.load(y_ptr + offs, mask=mask, other=1)
    z = tl.load(z_ptr + offs, mask=mask, other=1)
    tl.store(out_ptr + offs, x * y + z - x, mask=mask)
    tl.store(q_ptr + offs, x / (tl.abs(y) + 1), mask=mask)


@triton.jit
def dt_int_wraparound(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    y = tl.load(y_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, x * y + x + 77, mask=mask)


def _bf16_casts_ref(args: list) -> None:
    b = args[0].to(BF16)
    args[1].copy_(b)
    args[2].copy_(b.float())


def _fp8_ref(args: list) -> None:
    x = args[0]
    e4 = x.to(torch.float8_e4m3fn)
    args[1].copy_(e4)
    args[2].copy_(x.to(torch.float8_e5m2))
    args[3].copy_(e4.float())


def _bf16_arith_ref(args: list) -> None:
    x, y, z = args[0], args[1], args[2]
    args[3].copy_(x * y + z - x)
    args[4].copy_(x / (y.abs() + 1))


def _fp8_fill(d: Draw, n: int, dtype: torch.dtype) -> torch.Tensor:
    x = rand(d, n, torch.float32)
    return torch.clamp(x, -400, 400)  # inside fp8e4nv's range (448) so saturation rules do not matter


def _promotion(d: Draw) -> Launch:
    n = d.int(1, 96)
    pairs = [
        (torch.int8, F16),
        (torch.uint8, torch.int8),
        (torch.int16, torch.int64),
        (torch.int32, F32),
        (torch.uint32, torch.int32),
        (F16, F32),
        (torch.bool, torch.int8),
    ]
    a_t, b_t = d.choice(pairs)
    a, b = rand(d, n, a_t), rand(d, n, b_t)
    return Launch([a, b, torch.zeros(n, dtype=F64), torch.zeros(n, dtype=F64), n], full_grid(n, 32))


def _bool(d: Draw) -> Launch:
    n = d.int(1, 96)
    x, y = rand(d, n, torch.bool), rand(d, n, torch.bool)
    z = [torch.zeros(n, dtype=torch.bool), torch.zeros(n, dtype=torch.bool), torch.zeros(n, dtype=torch.int32)]
    return Launch([x, y, *z, n], full_grid(n, 32))


CASES = [
    elementwise(dt_int_casts, [INTS], [INTS, torch.int64], block=32, lo=-(2**40), hi=2**40),
    elementwise(dt_float_casts, [(F16, F32, F64)], [(F16, F32, F64), F64], block=32),
    elementwise(
        dt_bf16_casts,
        [(F32, F64, F16)],
        [BF16, F32],
        block=32,
        reference=_bf16_casts_ref,
        why="Triton's interpreter truncates fp32 -> bf16; torch rounds to nearest even as upstream's cvt.rn.bf16",
    ),
    elementwise(dt_int_float_casts, [(F32, F64, torch.int32, torch.int8)], [torch.int32, F32], block=32),
    Case(dt_promotion, _promotion, (2, 3), {"BLOCK": 32}),
    Case(dt_bool_i1, _bool, (2, 3, 4), {"BLOCK": 32}),
    elementwise(
        dt_fp8_casts,
        [F32],
        [torch.float8_e4m3fn, torch.float8_e5m2, F32],
        block=32,
        fill=_fp8_fill,
        reference=_fp8_ref,
        why="Triton's interpreter rounds fp32 -> fp8 wrongly; torch's fp8 casts round to nearest even",
    ),
    elementwise(dt_bitcast, [F32], [torch.int32, F32], block=32),
    elementwise(
        dt_uint_arith,
        [(torch.uint32, torch.uint8, torch.uint64)] * 2,
        [torch.int64] * 3 + [torch.bool],
        block=32,
        lo=0,
        hi=2**32 - 1,
    ),
    elementwise(dt_fp16_fp64_arith, [(F16, F64)] * 3, [F64], block=32),
    elementwise(
        dt_bf16_arith,
        [BF16] * 3,
        [BF16, BF16],
        block=32,
        reference=_bf16_arith_ref,
        tol=Tol(ulp=1),
        why="Triton's interpreter computes bf16 arithmetic on the raw bits; torch rounds each bf16 op to nearest "
        "even, through fp32 (1 ulp: a division rounded to fp32 first, as on a GPU, may differ from a correctly "
        "rounded one)",
    ),
    elementwise(
        dt_int_wraparound, [(torch.int8, torch.int16, torch.uint8)] * 2, [torch.int64], block=32, lo=-128, hi=255
    ),
]


@triton.jit
def dt_downcast_rtz(x_ptr, rne_ptr, rtz_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(rne_ptr + offs, x.to(tl.float16), mask=mask)
    tl.store(rtz_ptr + offs, x.to(tl.float16, fp_downcast_rounding="rtz"), mask=mask)


CASES.append(elementwise(dt_downcast_rtz, [F32], [F16, F16], block=32))

"""Elementwise corpus kernels: arithmetic, comparisons, math and libdevice functions, special ops."""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from spec import SIGNED, Case, Launch, Tol, elementwise
from triton.language.extra import libdevice


@triton.jit
def ew_add_sub_mul(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, (x + y) * x - y, mask=mask)


@triton.jit
def ew_div_rn_sqrt_rn(x_ptr, y_ptr, q_ptr, s_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(q_ptr + offs, tl.div_rn(x, y), mask=mask)
    tl.store(s_ptr + offs, tl.sqrt_rn(tl.abs(x)), mask=mask)


@triton.jit
def ew_fma_clamp(x_ptr, y_ptr, z_ptr, f_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    z = tl.load(z_ptr + offs, mask=mask)
    tl.store(f_ptr + offs, tl.fma(x, y, z), mask=mask)
    tl.store(c_ptr + offs, tl.clamp(x, -tl.abs(y), tl.abs(y)), mask=mask)


@triton.jit
def ew_umulhi(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.umulhi(x, y), mask=mask)


@triton.jit
def ew_int_div_mod(x_ptr, y_ptr, q_ptr, r_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1)
    y = tl.load(y_ptr + offs, mask=mask, other=1)
    y = tl.where(y == 0, 7, y)
    tl.store(q_ptr + offs, x // y, mask=mask)
    tl.store(r_ptr + offs, x % y, mask=mask)


@triton.jit
def ew_bitwise_shifts(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = y & 7
    r = ((x & y) | (x ^ ~y)) + (x << s) + (x >> s)
    tl.store(out_ptr + offs, r, mask=mask)


@triton.jit
def ew_compare_select(x_ptr, y_ptr, out_ptr, b_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    big = (x > y) & (x >= 0) | (x == y) | ~(x != -y)
    tl.store(out_ptr + offs, tl.where(big, tl.maximum(x, y), tl.minimum(x, y)), mask=mask)
    tl.store(b_ptr + offs, x <= y, mask=mask)


@triton.jit
def ew_nan_propagation(x_ptr, y_ptr, mx_ptr, mn_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    x = tl.where(x > 2.0, float("nan"), x)
    tl.store(mx_ptr + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL), mask=mask)
    tl.store(mn_ptr + offs, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL), mask=mask)


@triton.jit
def ew_math(x_ptr, a_ptr, b_ptr, c_ptr, d_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    ax = tl.abs(x) + 0.5
    tl.store(a_ptr + offs, tl.exp(x * 0.25) + tl.exp2(x * 0.25), mask=mask)
    tl.store(b_ptr + offs, tl.log(ax) + tl.log2(ax), mask=mask)
    tl.store(c_ptr + offs, tl.sqrt(ax) * tl.rsqrt(ax) + tl.sigmoid(x), mask=mask)
    tl.store(d_ptr + offs, tl.floor(x) + tl.ceil(x) + tl.sin(x) * tl.cos(x) + tl.erf(x), mask=mask)


@triton.jit
def ew_libdevice(x_ptr, y_ptr, a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(a_ptr + offs, libdevice.tanh(x * 0.25), mask=mask)
    tl.store(b_ptr + offs, libdevice.atan2(x, y), mask=mask)
    tl.store(c_ptr + offs, libdevice.pow(tl.abs(x) + 0.5, y * 0.25), mask=mask)


@triton.jit
def ew_scalar_args(x_ptr, out_ptr, alpha, k, flag, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = x * alpha + k
    if flag:
        y = -y
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def ew_float_mod_fdiv(x_ptr, y_ptr, m_ptr, f_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    y = tl.where(y == 0.0, 1.0, y)
    tl.store(m_ptr + offs, x % y, mask=mask)
    tl.store(f_ptr + offs, tl.fdiv(x, y) + x / y, mask=mask)


def _libdevice_ref(args: list) -> None:
    x, y = args[0].double(), args[1].double()
    args[2].copy_(torch.tanh(x * 0.25))
    args[3].copy_(torch.atan2(x, y))
    args[4].copy_(torch.pow(x.abs() + 0.5, y * 0.25))


def _ew_math_ref(args: list) -> None:
    x = args[0].double()
    ax = x.abs() + 0.5
    args[1].copy_(torch.exp(x * 0.25) + torch.exp2(x * 0.25))
    args[2].copy_(torch.log(ax) + torch.log2(ax))
    args[3].copy_(torch.sqrt(ax) * torch.rsqrt(ax) + torch.sigmoid(x))
    args[4].copy_(torch.floor(x) + torch.ceil(x) + torch.sin(x) * torch.cos(x) + torch.erf(x))


F32 = torch.float32
CASES = [
    elementwise(ew_add_sub_mul, [(F32, torch.int32, torch.int64, torch.float16)] * 2, [F32]),
    elementwise(ew_div_rn_sqrt_rn, [F32, F32], [F32, F32]),
    elementwise(
        ew_fma_clamp, [F32, F32, F32], [F32, F32], tol=Tol(ulp=1), why="fma: numpy has no fused multiply-add (1 ulp)"
    ),
    elementwise(ew_umulhi, [(torch.int32, torch.uint32)] * 2, [torch.int32], lo=-(2**31), hi=2**31 - 1),
    elementwise(ew_int_div_mod, [SIGNED, SIGNED], [torch.int64, torch.int64]),
    elementwise(ew_bitwise_shifts, [(torch.int32, torch.int64, torch.uint8), torch.int32], [torch.int64]),
    elementwise(ew_compare_select, [(F32, torch.int32), (F32, torch.int32)], [F32, torch.bool], lo=-3, hi=3),
    elementwise(ew_nan_propagation, [F32, F32], [F32, F32]),
    elementwise(
        ew_math,
        [F32],
        [F32, F32, F32, F32],
        tol=Tol(ulp=8, atol=1e-6),
        reference=_ew_math_ref,
        why="math functions: float64 torch reference rounded to fp32, 8 ulp (atol 1e-6 where sums cancel)",
    ),
    elementwise(
        ew_libdevice,
        [F32, F32],
        [F32, F32, F32],
        tol=Tol(ulp=4),
        reference=_libdevice_ref,
        why="Triton's interpreter returns None for libdevice; float64 torch reference, 4 ulp",
    ),
    elementwise(
        ew_scalar_args, [F32], [F32], scalars=lambda d: [d.choice([0.5, -3.0]), d.int(-5, 5), d.choice([False, True])]
    ),
    elementwise(ew_float_mod_fdiv, [F32, F32], [F32, F32]),
]


@triton.jit
def ew_fp16_scalar_annotated(x_ptr, out_ptr, alpha: tl.float16, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * alpha + alpha, mask=mask)


def _fp16_scalar_ref(args: list) -> None:
    x, alpha = args[0], torch.tensor(args[2], dtype=torch.float16)
    args[1].copy_(x * alpha + alpha)


CASES.append(
    elementwise(
        ew_fp16_scalar_annotated,
        [torch.float16],
        [torch.float16],
        scalars=lambda d: [d.choice([0.1, -2.7, 1000.3])],
        reference=_fp16_scalar_ref,
        why="Triton's interpreter keeps a float scalar annotated tl.float16 in fp32; torch rounds it to fp16 "
        "first and rounds each fp16 op",
    )
)


@triton.jit
def ew_libdevice_inductor(x_ptr, y_ptr, a_ptr, b_ptr, c_ptr, d_ptr, e_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    small = x * 0.1
    tl.store(a_ptr + offs, libdevice.log1p(tl.abs(small)) + libdevice.expm1(small), mask=mask)
    tl.store(b_ptr + offs, libdevice.fmod(x, y) + libdevice.copysign(y, x), mask=mask)
    tl.store(c_ptr + offs, libdevice.rint(x) + libdevice.trunc(x) * 100, mask=mask)
    flags = libdevice.isnan(x / y) | libdevice.isinf(x / (y * 0)) | libdevice.signbit(x)
    tl.store(d_ptr + offs, flags, mask=mask)
    tl.store(e_ptr + offs, libdevice.hypot(x, y) + libdevice.sinh(small) + libdevice.cbrt(x), mask=mask)


def _libdevice_inductor_ref(args: list) -> None:
    x, y = args[0].double(), args[1].double()
    small = x * 0.1
    args[2].copy_(torch.log1p(small.abs()) + torch.expm1(small))
    args[3].copy_(torch.fmod(x, y) + torch.copysign(y, x))
    args[4].copy_(torch.round(x) + torch.trunc(x) * 100)  # rint: halves to even, as torch.round
    args[5].copy_(torch.isnan(x / y) | torch.isinf(x / (y * 0)) | torch.signbit(x))
    args[6].copy_(torch.hypot(x, y) + torch.sinh(small) + x.sign() * x.abs().pow(1 / 3))


@triton.jit
def ew_scalar_only(out_ptr, a, b, c):
    q = a // b
    r = a % b
    f = c / b + c * a
    tl.store(out_ptr, q * 1000 + r)
    tl.store(out_ptr + 1, (a << 3) ^ (b >> 1))
    tl.store(out_ptr + 2, f.to(tl.int64))
    tl.store(out_ptr + 3, tl.maximum(a, b) - tl.minimum(a, b))


CASES += [
    elementwise(
        ew_libdevice_inductor,
        [F32, F32],
        [F32, F32, F32, torch.bool, F32],
        reference=_libdevice_inductor_ref,
        tol=Tol(ulp=4, atol=1e-6),
        why="Triton's interpreter returns None for libdevice; float64 torch reference, 4 ulp (atol 1e-6 near 0)",
    ),
    Case(
        ew_scalar_only,
        lambda d: Launch(
            [torch.zeros(4, dtype=torch.int64), d.int(-1000, 1000), d.choice([-7, -3, 2, 9]), d.choice([0.5, -2.25])],
            (1,),
        ),
        (0,),
    ),
]


@triton.jit
def ew_libdevice_rounding(x_ptr, r_ptr, ri_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(r_ptr + offs, libdevice.round(x), mask=mask)
    tl.store(ri_ptr + offs, libdevice.rint(x), mask=mask)


@triton.jit
def ew_libdevice_nearbyint(x_ptr, nb_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(nb_ptr + offs, libdevice.nearbyint(tl.load(x_ptr + offs, mask=mask, other=0.0)), mask=mask)


def _half_steps(d, n: int, dtype: torch.dtype) -> torch.Tensor:
    return torch.randint(-12, 12, (n,), generator=torch.Generator().manual_seed(d.int(0, 2**31 - 1))).to(dtype) / 2


def _rounding_ref(args: list) -> None:
    x = args[0]
    args[1].copy_(torch.sign(x) * torch.floor(x.abs() + 0.5))  # roundf: halves away from zero
    args[2].copy_(torch.round(x))  # rintf: halves to even


def _nearbyint_ref(args: list) -> None:
    args[1].copy_(torch.round(args[0]))  # nearbyintf: halves to even


CASES.append(
    elementwise(
        ew_libdevice_rounding,
        [F32],
        [F32, F32],
        fill=_half_steps,
        reference=_rounding_ref,
        why="Triton's interpreter returns None for libdevice; exact torch reference on multiples of 0.5 "
        "(round: halves away from zero; rint: halves to even)",
    )
)
CASES.append(
    elementwise(
        ew_libdevice_nearbyint,
        [F32],
        [F32],
        fill=_half_steps,
        reference=_nearbyint_ref,
        why="Triton's interpreter returns None for libdevice; exact torch reference (halves to even)",
    )
)

"""One op-semantics table: the machine's engine reductions and the reference interpreter agree bit for bit.

IEEE 754-2019 `maximum`/`maximumNumber` order -0.0 < +0.0; numpy's `maximum`/`fmax` return either zero.
"""

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from mtia_xdsl.semantics.libdevice import LIBDEVICE, libdevice_function
from mtia_xdsl.semantics.scalar import FLOAT_BINARY, FLOAT_UNARY, WIDENED_F32


@triton.jit
def _maximum(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _minimum(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _max_min(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr, tl.max(x, axis=0))
    tl.store(out_ptr + 1, tl.min(x, axis=0))
    tl.store(out_ptr + 2, tl.reduce(x, 0, _maximum))
    tl.store(out_ptr + 3, tl.reduce(x, 0, _minimum))


def test_re_reduce_max_orders_signed_zeros() -> None:
    """max of {-0, +0} is +0 and min is -0, on the machine's RE as in the reference interpreter."""
    for x in (torch.tensor([-0.0, 0.0] * 8), torch.tensor([0.0, -0.0] * 8)):
        out = torch.full((4,), 7.0)
        _max_min[(1,)](x, out, BLOCK=16)
        assert torch.equal(torch.signbit(out), torch.tensor([False, True, False, True])), out


def test_math_round_and_libdevice_round_are_one_function_rounding_halves_away() -> None:
    """`math.round` and libdevice `round` share one semantics; adding 0.5 before truncating (what
    `math.round` once did) rounds 0.49999997 up to 1 and 2^23 + 1 to 2^23 + 2 in f32."""
    x = np.array([0.49999997, -0.49999997, 8388609.0, 2.5, -2.5, -0.0], dtype=np.float32)
    expected = np.array([0.0, -0.0, 8388609.0, 3.0, -3.0, -0.0], dtype=np.float32)
    assert LIBDEVICE["round"] is FLOAT_UNARY["math.round"]
    out = FLOAT_UNARY["math.round"](x)
    assert out.dtype == np.float32
    assert np.array_equal(out, expected) and np.array_equal(np.signbit(out), np.signbit(expected))


def test_libdevice_stems_of_arith_and_math_ops_use_their_semantics() -> None:
    """A libdevice stem that is an arith/math op (`__nv_expf`, `__nv_fadd_rn`) is evaluated by that op's function."""
    assert libdevice_function("__nv_expf") is FLOAT_UNARY["math.exp"]
    assert libdevice_function("__nv_fadd_rn") is FLOAT_BINARY["arith.addf"]
    assert libdevice_function("__nv_isnanf") is np.isnan
    assert libdevice_function("__nv_no_such_function") is None


@triton.jit
def _clamp(x_ptr, lo_ptr, hi_ptr, out_ptr, BLOCK: tl.constexpr, NAN: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x, lo, hi = tl.load(x_ptr + offs), tl.load(lo_ptr + offs), tl.load(hi_ptr + offs)
    tl.store(out_ptr + offs, tl.clamp(x, lo, hi, propagate_nan=NAN))


@pytest.mark.parametrize("nan", [tl.PropagateNan.NONE, tl.PropagateNan.ALL])
def test_clamp_orders_signed_zeros_as_max_and_min(nan) -> None:
    """`tl.clamp` is min(max(x, lo), hi) with the one IEEE max/min of semantics.scalar (-0 < +0): clamping
    +0 to [-0, 1] is +0 and -0 to [-1, +0] is -0 (numpy's maximum/minimum return their second operand
    on equal zeros, so a clamp written with them gave -0 and +0)."""
    x = torch.tensor([0.0, -0.0] * 8)
    lo = torch.tensor([-0.0, -1.0] * 8)
    hi = torch.tensor([1.0, 0.0] * 8)
    out = torch.full((16,), 7.0)
    _clamp[(1,)](x, lo, hi, out, BLOCK=16, NAN=nan)
    assert torch.equal(out, torch.zeros(16))
    assert torch.equal(torch.signbit(out), torch.tensor([False, True] * 8)), out


@pytest.mark.parametrize("name", sorted(WIDENED_F32))
def test_widened_f32_functions_are_the_f64_function_rounded_once(name: str) -> None:
    """semantics.scalar.WIDENED_F32: f32 in, the f64 result rounded once out (numpy's float32 loop differs)."""
    x = np.linspace(-0.9, 3.0, 4001, dtype=np.float32)
    fn = FLOAT_UNARY[name]
    reference = getattr(np, name.removeprefix("math."))
    got = fn(x)
    assert got.dtype == np.float32
    assert np.array_equal(got, reference(x.astype(np.float64)).astype(np.float32))
    assert not np.array_equal(got, reference(x))  # numpy's float32 loop rounds some of them differently
    assert np.asarray(fn(np.float32(0.5))).shape == ()

"""The rules both emitters encode (semantics/scalar.py, semantics/reduce.py, semantics/dot.py) hold on every
executor: integer division and remainder by zero, NaN and signed zeros in max/min, the float sum's pairwise
order, tf32 inputs of a dot, round-toward-zero downcasts. Each kernel runs on the model and through the C++
and the LLVM IR; the written bits must be equal (a diverging emitter fails here)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from triton.language import core

from mtia_xdsl.semantics import reduce as reduce_semantics
from mtia_xdsl.semantics import scalar

EXECUTORS = ["cpp", pytest.param("llvm", marks=pytest.mark.skipif(not __import__("importlib").util.find_spec(
    "llvmlite"), reason="llvmlite is not installed"))]  # fmt: skip


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(torch.uint8)


def _same_on(executor: str, launch) -> None:
    """Run `launch(executor)` on the model and on `executor`; the outputs it returns must be equal bit for bit."""
    want = launch("model")
    got = launch(executor)
    for w, g in zip(want, got, strict=True):
        assert torch.equal(_bits(w), _bits(g)), f"{executor} differs from the model:\n{w}\n{g}"


@triton.jit
def _int_division(a_ptr, b_ptr, q_ptr, r_ptr, uq_ptr, ur_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(q_ptr + offs, a // b)
    tl.store(r_ptr + offs, a % b)
    tl.store(uq_ptr + offs, a.to(tl.uint32, bitcast=True) // b.to(tl.uint32, bitcast=True))
    tl.store(ur_ptr + offs, a.to(tl.uint32, bitcast=True) % b.to(tl.uint32, bitcast=True))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_integer_division_by_zero_and_min_by_minus_one(executor: str) -> None:
    """divsi/remsi/divui/remui by 0 give semantics.scalar.INT_DIV_BY_ZERO; INT_MIN / -1 wraps, its remainder is 0."""
    a = torch.tensor([7, -7, 5, -(2**31), 9, -9, 0, 3] * 2, dtype=torch.int32)
    b = torch.tensor([2, 2, 0, -1, -1, 0, 0, -4] * 2, dtype=torch.int32)

    def launch(ex: str) -> list[torch.Tensor]:
        outs = [torch.full_like(a, 123) for _ in range(4)]
        _int_division[(1,)](a, b, *outs, BLOCK=16, executor=ex)
        return outs

    model = launch("model")
    assert model[0][2].item() == scalar.INT_DIV_BY_ZERO and model[1][5].item() == scalar.INT_DIV_BY_ZERO
    _same_on(executor, launch)


@triton.jit
def _max_min(x_ptr, y_ptr, a_ptr, b_ptr, c_ptr, d_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(a_ptr + offs, tl.maximum(x, y))
    tl.store(b_ptr + offs, tl.minimum(x, y))
    tl.store(c_ptr + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(d_ptr + offs, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_nan_and_signed_zeros_in_max_min(executor: str) -> None:
    """maxnumf/minnumf return the number, maximumf/minimumf NaN (semantics.scalar.MAX_MIN); -0.0 < +0.0."""
    nan = float("nan")
    x = torch.tensor([nan, 1.0, nan, -0.0, 0.0, 2.0, -3.0, 0.0], dtype=torch.float32)
    y = torch.tensor([1.0, nan, nan, 0.0, -0.0, -2.0, 3.0, 0.0], dtype=torch.float32)

    def launch(ex: str) -> list[torch.Tensor]:
        outs = [torch.zeros_like(x) for _ in range(4)]
        _max_min[(1,)](x, y, *outs, BLOCK=8, executor=ex)
        return outs

    model = launch("model")
    assert model[0][0].item() == 1.0 and torch.isnan(model[2][0])  # the table's two NaN rules
    _same_on(executor, launch)


@triton.jit
def _row_sum(x_ptr, s_ptr, BLOCK: tl.constexpr):
    s = tl.sum(tl.load(x_ptr + tl.arange(0, BLOCK)), axis=0)
    tl.store(s_ptr, s)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_float_sum_in_pairwise_order(executor: str) -> None:
    """A float sum of 1024 lanes adds in semantics.reduce.pairwise_sum's order (numpy's), which differs here
    from a sequential sum."""
    g = torch.Generator().manual_seed(3)
    x = (torch.rand(1024, generator=g) * 2.0**24).to(torch.float32) + torch.rand(1024, generator=g)
    sequential = np.float32(0)
    for v in x.numpy():
        sequential = np.float32(sequential + v)
    assert np.float32(reduce_semantics.pairwise_sum(x.numpy())) != sequential  # the order is observable

    def launch(ex: str) -> list[torch.Tensor]:
        s = torch.zeros(1, dtype=torch.float32)
        _row_sum[(1,)](x, s, BLOCK=1024, executor=ex)
        return [s]

    assert launch("model")[0].item() == np.float32(reduce_semantics.pairwise_sum(x.numpy()))
    _same_on(executor, launch)


@triton.jit
def _tf32_dot(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    tl.store(c_ptr + r[:, None] * N + r[None, :], tl.dot(a, b, input_precision="tf32"))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_tf32_dot_rounds_its_inputs(executor: str) -> None:
    """input_precision tf32 rounds f32 inputs to semantics.scalar.TF32_MANTISSA_BITS before the exact sum."""
    g = torch.Generator().manual_seed(5)
    a, b = torch.rand(16, 16, generator=g) + 1.0, torch.rand(16, 16, generator=g) + 1.0

    def launch(ex: str) -> list[torch.Tensor]:
        c = torch.zeros(16, 16)
        _tf32_dot[(1,)](a, b, c, N=16, executor=ex)
        return [c]

    want = scalar.round_tf32(a.numpy()).astype(np.float64) @ scalar.round_tf32(b.numpy()).astype(np.float64)
    assert np.array_equal(launch("model")[0].numpy(), want.astype(np.float32))
    _same_on(executor, launch)


@triton.jit
def _downcast_rtz(x_ptr, h_ptr, bf_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(h_ptr + offs, x.to(tl.float16, fp_downcast_rounding="rtz"))
    tl.store(bf_ptr + offs, x.to(tl.bfloat16, fp_downcast_rounding="rtz"))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_round_toward_zero_downcasts(executor: str) -> None:
    """rtz downcasts (semantics.scalar.round_toward_zero): never rounded up in magnitude; NaN and inf kept."""
    x = torch.tensor([1.0 + 2.0**-11 + 2.0**-12, -(1.0 + 2.0**-8 + 2.0**-9), 70000.0, -1e-8,
                      float("inf"), float("nan"), 3.0, -0.0], dtype=torch.float32)  # fmt: skip

    def launch(ex: str) -> list[torch.Tensor]:
        h, bf = torch.zeros(8, dtype=torch.float16), torch.zeros(8, dtype=torch.bfloat16)
        _downcast_rtz[(1,)](x, h, bf, BLOCK=8, executor=ex)
        return [h, bf]

    h, _ = launch("model")
    want = scalar.round_toward_zero(x.numpy(), np.float16)
    assert np.array_equal(h.numpy().view(np.uint16), want.view(np.uint16))
    _same_on(executor, launch)


def test_pairwise_sum_is_numpys_order() -> None:
    """semantics.reduce.pairwise_sum (the order both emitters write) is numpy's float32 add.reduce, bit for bit."""
    g = np.random.default_rng(7)
    for n in (1, 7, 8, 9, 127, 128, 129, 300, 1024, 1031):
        x = (g.random(n, dtype=np.float32) * 2.0**20).astype(np.float32)
        assert np.float32(reduce_semantics.pairwise_sum(x)) == np.add.reduce(x, dtype=np.float32), n


@core.extern
def _nv_fmax(x, y, _semantic=None):
    return core.extern_elementwise("", "", [x, y], {(core.float32, core.float32): ("__nv_fmaxf", core.float32)},
                                   is_pure=True, _semantic=_semantic)  # fmt: skip


@core.extern
def _nv_fmin(x, y, _semantic=None):
    return core.extern_elementwise("", "", [x, y], {(core.float32, core.float32): ("__nv_fminf", core.float32)},
                                   is_pure=True, _semantic=_semantic)  # fmt: skip


@triton.jit
def _libdevice_fmax_fmin(x_ptr, y_ptr, a_ptr, b_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(a_ptr + offs, _nv_fmax(x, y))
    tl.store(b_ptr + offs, _nv_fmin(x, y))


_NAN, _INF = float("nan"), float("inf")
_OLD = torch.tensor([0.0, -0.0, _NAN, 1.0, _NAN, -_INF, _INF, 0.0, -0.0, 2.0, -2.0, 0.0, -0.0, _NAN, _INF, -_INF])
_VAL = torch.tensor([-0.0, 0.0, 1.0, _NAN, _NAN, -0.0, 0.0, 0.0, -0.0, -0.0, 0.0, _NAN, _NAN, -0.0, _NAN, _NAN])
"""Operand pairs of the max/min tests: each order of +-0, NaN with a number, NaN with NaN, +-inf with 0 and NaN."""


def _same_bits(got: torch.Tensor, want: np.ndarray) -> bool:
    return np.array_equal(got.numpy().view(np.uint32), np.asarray(want, dtype=np.float32).view(np.uint32))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_libdevice_fmax_fmin_are_maxnumf_minnumf(executor: str) -> None:
    """libdevice fmax/fmin (`__nv_fmaxf`) compute arith.maxnumf/minnumf (semantics.scalar.MAX_MIN): the number
    beats a NaN, and -0.0 < +0.0 whichever operand comes first."""

    def launch(ex: str) -> list[torch.Tensor]:
        outs = [torch.zeros_like(_OLD) for _ in range(2)]
        _libdevice_fmax_fmin[(1,)](_OLD, _VAL, *outs, BLOCK=16, executor=ex)
        return outs

    a, b = launch("model")
    assert _same_bits(a, scalar.MAX_MIN["arith.maxnumf"](_OLD.numpy(), _VAL.numpy()))
    assert _same_bits(b, scalar.MAX_MIN["arith.minnumf"](_OLD.numpy(), _VAL.numpy()))
    assert not np.signbit(a[0].item()) and np.signbit(b[1].item())  # max(+0, -0) = +0, min(-0, +0) = -0
    _same_on(executor, launch)


_FLOAT_ATOMIC_MAX_MIN = """
module {
  tt.func public @float_atomic_max_min(%mx: !tt.ptr<f32>, %mn: !tt.ptr<f32>, %v: !tt.ptr<f32>) {
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %m = arith.constant dense<true> : tensor<16xi1>
    %vs = tt.splat %v : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %vp = tt.addptr %vs, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %x = tt.load %vp : tensor<16x!tt.ptr<f32>>
    %xs = tt.splat %mx : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %xp = tt.addptr %xs, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %ns = tt.splat %mn : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %np = tt.addptr %ns, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %o1 = tt.atomic_rmw max, acq_rel, gpu, %xp, %x, %m : (tensor<16x!tt.ptr<f32>>, tensor<16xf32>, tensor<16xi1>) -> tensor<16xf32>
    %o2 = tt.atomic_rmw min, acq_rel, gpu, %np, %x, %m : (tensor<16x!tt.ptr<f32>>, tensor<16xf32>, tensor<16xi1>) -> tensor<16xf32>
    tt.return
  }
}
"""
"""A float tt.atomic_rmw max/min, as imported TTIR carries it (Triton's tl.atomic_max on floats emits integer
max/umin on the bits instead, see test_float_atomic_max_min_match_tritons_interpreter)."""


@pytest.mark.parametrize("executor", EXECUTORS)
def test_float_atomic_rmw_max_min_follow_their_rule(executor: str) -> None:
    """A float atomic_rmw max/min writes semantics.atomic.FLOAT_RMW_MAX_MIN's rule (arith.maximumf/minimumf:
    NaN propagates, -0.0 < +0.0) on every executor."""
    from mtia_xdsl.semantics.atomic import FLOAT_RMW_MAX_MIN

    mx, mn = _float_atomics("model", "max", "min")
    assert _same_bits(mx, FLOAT_RMW_MAX_MIN["max"](_OLD.numpy(), _VAL.numpy()))
    assert _same_bits(mn, FLOAT_RMW_MAX_MIN["min"](_OLD.numpy(), _VAL.numpy()))
    assert not np.signbit(mx[0].item()) and np.signbit(mn[1].item())
    _same_on(executor, lambda ex: _float_atomics(ex, "max", "min"))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_float_atomic_rmw_umax_umin_order_the_bits_unsigned(executor: str) -> None:
    """A float atomic_rmw umax/umin (imported TTIR) compares the bit patterns as unsigned integers
    (semantics.atomic.rmw_update), on every executor: -0.0 (0x80000000) is above +0.0 and every positive float."""
    from mtia_xdsl.semantics.atomic import rmw_update

    mx, mn = _float_atomics("model", "umax", "umin")
    old, val = _OLD.numpy(), _VAL.numpy()
    assert _same_bits(mx, rmw_update(8)(old, val)) and _same_bits(mn, rmw_update(9)(old, val))  # type: ignore[misc]
    assert np.signbit(mx[0].item()) and not np.signbit(mn[0].item())  # umax(+0.0, -0.0) = -0.0: 0x80000000 > 0
    assert mx[5].item() == -float("inf")  # umax(-inf, -0.0): 0xff800000 > 0x80000000
    _same_on(executor, lambda ex: _float_atomics(ex, "umax", "umin"))


def _float_atomics(executor: str, hi: str, lo: str) -> list[torch.Tensor]:
    """`_OLD` after the atomic `hi` (e.g. max) and, in a second tensor, `lo` with `_VAL`, run on `executor`."""
    from mtia_xdsl.frontend import parse_ttir
    from mtia_xdsl.runtime.modules import run_module

    text = _FLOAT_ATOMIC_MAX_MIN.replace("atomic_rmw max,", f"atomic_rmw {hi},").replace(
        "atomic_rmw min,", f"atomic_rmw {lo},")  # fmt: skip
    mx, mn = _OLD.clone(), _OLD.clone()
    run_module(parse_ttir(text), 1, [mx, mn, _VAL], options={"executor": executor})
    return [mx, mn]


@triton.jit
def _atomic_max_min(mx_ptr, mn_ptr, v_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(v_ptr + offs)
    tl.atomic_max(mx_ptr + offs, v)
    tl.atomic_min(mn_ptr + offs, v)


def _interpreted(kernel, *args, **kwargs) -> None:
    from triton.runtime.interpreter import InterpretedFunction

    InterpretedFunction(kernel.fn)[(1,)](*args, **kwargs)


def test_max_min_match_tritons_interpreter() -> None:
    """tl.maximum/minimum (both propagate_nan forms) give Triton's interpreter's values, NaN where it has NaN. The
    sign of a zero picked from +-0 is ours (-0.0 < +0.0): MLIR leaves it open for maxnumf/minnumf, and the
    interpreter's numpy loops pick by operand order."""
    outs = {ex: [torch.zeros_like(_OLD) for _ in range(4)] for ex in ("model", "triton")}
    _max_min[(1,)](_OLD, _VAL, *outs["model"], BLOCK=16)
    _interpreted(_max_min, _OLD, _VAL, *outs["triton"], BLOCK=16)
    for ours, theirs in zip(outs["model"], outs["triton"], strict=True):
        assert torch.equal(ours.isnan(), theirs.isnan()) and torch.equal(ours.nan_to_num(), theirs.nan_to_num())


def test_float_atomic_max_min_match_tritons_interpreter() -> None:
    """tl.atomic_max/min on floats are upstream's integer max/umin on the bits (IEEE total order: -NaN < -inf <
    -0.0 < +0.0 < inf < NaN): bit for bit Triton's interpreter's result."""
    results = {}
    for ex in ("model", "triton"):
        mx, mn = _OLD.clone(), _OLD.clone()
        if ex == "model":
            _atomic_max_min[(1,)](mx, mn, _VAL, BLOCK=16)
        else:
            _interpreted(_atomic_max_min, mx, mn, _VAL, BLOCK=16)
        results[ex] = [mx, mn]
    for ours, theirs in zip(results["model"], results["triton"], strict=True):
        assert torch.equal(_bits(ours), _bits(theirs)), f"{ours}\n{theirs}"


@triton.jit
def _libdevice_erfc_lgamma(x_ptr, a_ptr, b_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(a_ptr + offs, tl.extra.libdevice.erfc(x))
    tl.store(b_ptr + offs, tl.extra.libdevice.lgamma(x))


def test_libdevice_erfc_lgamma_are_computed_in_double_on_cpp() -> None:
    """libdevice erfc and lgamma (Inductor's torch.erfc, torch.lgamma) are the double function rounded once to f32
    on the model (semantics/libdevice.py TORCH_SPECIAL) and in the C++ (std::erfc, std::lgamma of a double)."""
    x = torch.tensor([-3.0, -2.5, -1.0, -0.25, 0.0, 1e-3, 0.5, 1.0, 1.5, 2.0, 3.5, 5.0, 9.0, 20.0, _INF, _NAN])

    def launch(ex: str) -> list[torch.Tensor]:
        outs = [torch.zeros_like(x) for _ in range(2)]
        _libdevice_erfc_lgamma[(1,)](x, *outs, BLOCK=16, executor=ex)
        return outs

    a, b = launch("model")
    torch.testing.assert_close(a, torch.erfc(x), equal_nan=True)
    torch.testing.assert_close(b, torch.lgamma(x), equal_nan=True)
    _same_on("cpp", launch)

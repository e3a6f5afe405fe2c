"""Reference semantics of the `math` ops Triton emits, on numpy scalars and arrays.

Float ops compute in the operand dtype (f16 through numpy's float32 loops; bf16 values are float32
arrays) and round the result to the result type (`values.as_value`). `math.fma` computes in float64 and
rounds once more, so for f32 it can differ from a fused multiply-add in the last bit in rare cases.
`math.erf` uses torch's implementation (numpy has none).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import math
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation

from mtia_xdsl.machine.interpret.values import as_value


def erf(x: np.ndarray) -> np.ndarray:
    """Return the error function of x in float64 (numpy has no erf; torch's is used)."""
    import torch

    x64 = np.ascontiguousarray(x, dtype=np.float64)
    return torch.special.erf(torch.from_numpy(x64)).numpy().reshape(np.shape(x))


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return np.reciprocal(np.sqrt(x))


def _unary(fn: Callable[[np.ndarray], Any]) -> Callable[..., PythonValues]:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        with np.errstate(all="ignore"):
            return (as_value(fn(np.asarray(args[0])), op.results[0].type),)

    return run


def _binary(fn: Callable[[np.ndarray, np.ndarray], Any]) -> Callable[..., PythonValues]:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        with np.errstate(all="ignore"):
            return (as_value(fn(np.asarray(args[0]), np.asarray(args[1])), op.results[0].type),)

    return run


def _ctlz(x: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    u = x.astype(np.int64) & ((1 << bits) - 1)
    out = np.full(u.shape, bits, dtype=np.int64)
    nz = u != 0
    out[nz] = bits - np.floor(np.log2(u[nz].astype(np.float64))).astype(np.int64) - 1
    return out


def _ctpop(x: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    u = x.astype(np.int64) & ((1 << bits) - 1) if bits < 64 else x.view(np.uint64)
    return np.array([int(v).bit_count() for v in np.ravel(u)], dtype=np.int64).reshape(np.shape(x))


def _cttz(x: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    u = x.astype(np.int64)
    lowest = u & -u
    return np.where(u == 0, bits, _ctpop(lowest - 1))


@register_impls
class MathFunctions(InterpreterFunctions):
    """Functional semantics of `math` ops: IEEE results rounded to the result type."""

    run_absf = impl(math.AbsFOp)(_unary(np.abs))
    run_absi = impl(math.AbsIOp)(_unary(np.abs))
    run_ceil = impl(math.CeilOp)(_unary(np.ceil))
    run_floor = impl(math.FloorOp)(_unary(np.floor))
    run_trunc = impl(math.TruncOp)(_unary(np.trunc))
    run_roundeven = impl(math.RoundEvenOp)(_unary(np.rint))
    run_round = impl(math.RoundOp)(_unary(lambda x: np.trunc(x + np.copysign(np.asarray(0.5, x.dtype), x))))
    run_exp = impl(math.ExpOp)(_unary(np.exp))
    run_exp2 = impl(math.Exp2Op)(_unary(np.exp2))
    run_expm1 = impl(math.ExpM1Op)(_unary(np.expm1))
    run_log = impl(math.LogOp)(_unary(np.log))
    run_log2 = impl(math.Log2Op)(_unary(np.log2))
    run_log10 = impl(math.Log10Op)(_unary(np.log10))
    run_log1p = impl(math.Log1pOp)(_unary(np.log1p))
    run_sqrt = impl(math.SqrtOp)(_unary(np.sqrt))
    run_rsqrt = impl(math.RsqrtOp)(_unary(_rsqrt))
    run_cbrt = impl(math.CbrtOp)(_unary(np.cbrt))
    run_sin = impl(math.SinOp)(_unary(np.sin))
    run_cos = impl(math.CosOp)(_unary(np.cos))
    run_tan = impl(math.TanOp)(_unary(np.tan))
    run_sinh = impl(math.SinhOp)(_unary(np.sinh))
    run_cosh = impl(math.CoshOp)(_unary(np.cosh))
    run_tanh = impl(math.TanhOp)(_unary(np.tanh))
    run_asin = impl(math.AsinOp)(_unary(np.arcsin))
    run_acos = impl(math.AcosOp)(_unary(np.arccos))
    run_atan = impl(math.AtanOp)(_unary(np.arctan))
    run_asinh = impl(math.AsinhOp)(_unary(np.arcsinh))
    run_acosh = impl(math.AcoshOp)(_unary(np.arccosh))
    run_atanh = impl(math.AtanhOp)(_unary(np.arctanh))
    run_erf = impl(math.ErfOp)(_unary(erf))
    run_ctlz = impl(math.CountLeadingZerosOp)(_unary(_ctlz))
    run_cttz = impl(math.CountTrailingZerosOp)(_unary(_cttz))
    run_ctpop = impl(math.CtPopOp)(_unary(_ctpop))
    run_atan2 = impl(math.Atan2Op)(_binary(np.arctan2))
    run_copysign = impl(math.CopySignOp)(_binary(np.copysign))
    run_powf = impl(math.PowFOp)(_binary(np.power))
    run_fpowi = impl(math.FPowIOp)(_binary(lambda x, n: np.power(x, n.astype(x.dtype))))
    run_ipowi = impl(math.IPowIOp)(_binary(lambda x, n: np.where(n < 0, 0, np.power(x, np.maximum(n, 0)))))

    @impl(math.FmaOp)
    def run_fma(self, interpreter: Interpreter, op: math.FmaOp, args: PythonValues) -> PythonValues:
        a, b, c = (np.asarray(v, dtype=np.float64) for v in args)
        with np.errstate(all="ignore"):
            return (as_value(a * b + c, op.results[0].type),)

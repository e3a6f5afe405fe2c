"""Reference semantics of the `math` ops Triton emits, on numpy scalars and arrays.

Float ops compute in the operand dtype (f16 through numpy's float32 loops; bf16 values are float32
arrays) and round the result to the result type (`values.as_value`). `math.fma` computes in float64 and
rounds once more, so for f32 it can differ from a fused multiply-add in the last bit in rare cases.
What each float op computes is `mtia_xdsl.semantics.scalar`'s table (`math.erf` uses torch's
implementation there, numpy has none); this module binds it to the ops and holds the integer ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import math
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation

from mtia_xdsl.machine.interpret.values import as_value
from mtia_xdsl.semantics.scalar import FLOAT_BINARY, FLOAT_UNARY


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

    for _op in math.Math.operations:
        if _op.name in FLOAT_UNARY:
            locals()["run_" + _op.name.removeprefix("math.")] = impl(_op)(_unary(FLOAT_UNARY[_op.name]))
        elif _op.name in FLOAT_BINARY:
            locals()["run_" + _op.name.removeprefix("math.")] = impl(_op)(_binary(FLOAT_BINARY[_op.name]))
    del _op
    run_absi = impl(math.AbsIOp)(_unary(np.abs))
    run_ctlz = impl(math.CountLeadingZerosOp)(_unary(_ctlz))
    run_cttz = impl(math.CountTrailingZerosOp)(_unary(_cttz))
    run_ctpop = impl(math.CtPopOp)(_unary(_ctpop))
    run_ipowi = impl(math.IPowIOp)(_binary(lambda x, n: np.where(n < 0, 0, np.power(x, np.maximum(n, 0)))))

    @impl(math.FmaOp)
    def run_fma(self, interpreter: Interpreter, op: math.FmaOp, args: PythonValues) -> PythonValues:
        a, b, c = (np.asarray(v, dtype=np.float64) for v in args)
        with np.errstate(all="ignore"):
            return (as_value(a * b + c, op.results[0].type),)

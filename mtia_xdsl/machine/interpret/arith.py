"""Reference semantics of `arith` ops (scalar or tensor) on numpy, with MLIR's rules.

Integers wrap around in their width (signed storage; unsigned ops reinterpret the bits); `divsi`/`remsi`
truncate toward zero; an integer division by zero gives 0 and a shift by >= the width gives 0 (or the
sign for `shrsi`) instead of poison, since Triton kernels do compute such lanes under a mask and discard
them. Floats compute in the operand dtype and round to the result type (bf16: nearest even).
`maxnumf`/`minnumf` return the non-NaN operand, `maximumf`/`minimumf` propagate NaN and order -0 < +0.
What each element-wise op computes is `mtia_xdsl.semantics.scalar`'s table; this module binds it to the
ops (operand conversion, result rounding and wrapping) and holds the ops that are not element-wise
functions of their operands (constants, casts, shifts, comparisons, select, extended multiplies).

Ops are bound by their MLIR name (`arith.addi`) to the classes of the project's tensor-capable `arith`
dialect.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import builtin
from xdsl.interpreter import Interpreter, InterpreterFunctions, OpImplResult, PythonValues, impl, register_impls
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects.arith import Arith
from mtia_xdsl.machine.interpret.values import (
    as_value,
    batch_scalar,
    bf16_bits_to_f32,
    element_format,
    element_type_of,
    f32_to_bf16_bits,
    is_shaped,
    location_str,
    logical_rank,
    to_bf16_f32,
)
from mtia_xdsl.semantics.scalar import FLOAT_BINARY, FLOAT_UNARY, INT_BINARY, SHIFTS, UINT_BINARY, unsigned

_OPS: dict[str, type[Operation]] = {op.name: op for op in Arith.operations}

Fn = Callable[..., Any]


# ----------------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------------


def int_width(t: Attribute) -> int:
    """Return the bit width of integer (or index) type `t` or of its elements."""
    e = element_type_of(t)
    if isinstance(e, builtin.IntegerType):
        return e.width.data
    return 64  # index


def _int_operands(args: PythonValues) -> list[np.ndarray]:
    """Operands as int64 arrays (i1 becomes 0/1), so every op has one code path."""
    return [np.asarray(a).astype(np.int64) for a in args]


def _float_operands(args: PythonValues) -> list[np.ndarray]:
    return [np.asarray(a) for a in args]


def _result(op: Operation, x: Any) -> PythonValues:
    return (as_value(x, op.results[0].type),)


Prepare = Callable[[Operation], Fn]
"""op -> its implementation with the op's facts (types, widths, predicate) read once (`ArithFunctions.prepare_op`)."""


def _generic(prepare: Prepare) -> Fn:
    """The xDSL implementation of an op whose implementation `prepare` specializes: prepared on every run."""

    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        return prepare(op)(self, interpreter, op, args).values

    return run


_IN_WIDTH: frozenset[Any] = frozenset(
    [np.add, np.subtract, np.multiply, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.maximum, np.minimum]
)
"""`INT_BINARY` functions whose int64 result wrapped to a width w equals the function computed in w bits: the
ring operations and bitwise ops mod 2^w, and max/min (exact)."""
_IN_I1: frozenset[Any] = frozenset([np.multiply, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.maximum, np.minimum])
"""`INT_BINARY` functions that numpy's bool arithmetic computes as on 0/1 with the result's low bit (not add,
which numpy's bools take as `or`, nor subtract)."""


def _int_binary(fn: Fn) -> Prepare:
    """Bind an int64 -> int64 function of two operands; the result wraps to the result width.

    Operands already of the result's dtype skip the int64 round trip where that gives the same bits
    (`_IN_WIDTH`, `_IN_I1`)."""

    def prepare(op: Operation) -> Fn:
        t = op.results[0].type
        i1 = int_width(t) == 1
        direct = fn in (_IN_I1 if i1 else _IN_WIDTH) and int_width(op.operands[0].type) == int_width(t)
        dtype = element_format(element_type_of(t)).compute

        def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
            a, b = args
            if direct and getattr(a, "dtype", None) == dtype and getattr(b, "dtype", None) == dtype:
                with np.errstate(all="ignore"):
                    return OpImplResult((as_value(fn(a, b), t),), None)
            a, b = _int_operands(args)
            with np.errstate(all="ignore"):
                r = fn(a, b)
                return OpImplResult((as_value((r & 1) if i1 else r, t),), None)

        return run

    return prepare


def _uint_binary(fn: Fn) -> Prepare:
    """Bind a function on the unsigned reinterpretation (uint64) of two operands."""

    def prepare(op: Operation) -> Fn:
        w, t = int_width(op.operands[0].type), op.results[0].type
        i1 = int_width(t) == 1

        def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
            a, b = (unsigned(np.asarray(x), w) for x in args)
            with np.errstate(all="ignore"):
                r = fn(a, b)
            r = np.asarray(r).astype(np.int64)
            return OpImplResult((as_value((r & 1) if i1 else r, t),), None)

        return run

    return prepare


def _float_binary(fn: Fn) -> Prepare:
    def prepare(op: Operation) -> Fn:
        t = op.results[0].type

        def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
            a, b = _float_operands(args)
            with np.errstate(all="ignore"):
                return OpImplResult((as_value(fn(a, b), t),), None)

        return run

    return prepare


def _shift_op(fn: Fn) -> Prepare:
    """Bind a shift fn(value, amount, width) on int64 operands; the result wraps to the result width."""

    def prepare(op: Operation) -> Fn:
        t = op.results[0].type
        w = int_width(t)

        def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
            a, b = _int_operands(args)
            r = fn(a, b, w)
            return OpImplResult((as_value((r & 1) if w == 1 else r, t),), None)

        return run

    return prepare


def _cast(fn: Fn) -> Prepare:
    """Bind a cast: fn(value, source type, result type) -> numpy result before rounding to the result type."""

    def prepare(op: Operation) -> Fn:
        src, t = op.operands[0].type, op.results[0].type

        def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
            with np.errstate(all="ignore"):
                return OpImplResult((as_value(fn(np.asarray(args[0]), src, t), t),), None)

        return run

    return prepare


_CMPI: dict[int, tuple[bool, Fn]] = {
    0: (False, np.equal),
    1: (False, np.not_equal),
    2: (False, np.less),
    3: (False, np.less_equal),
    4: (False, np.greater),
    5: (False, np.greater_equal),
    6: (True, np.less),
    7: (True, np.less_equal),
    8: (True, np.greater),
    9: (True, np.greater_equal),
}
"""arith.cmpi predicate encoding -> (compare unsigned, numpy comparison)."""

_CMPF_ORDERED: dict[int, Fn | None] = {
    1: np.equal,
    2: np.greater,
    3: np.greater_equal,
    4: np.less,
    5: np.less_equal,
    6: np.not_equal,
    7: None,
}
"""arith.cmpf ordered predicates (oeq..ord); 8..14 are their unordered twins (ueq..uno) in the same order."""


def _cmpf(pred: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if pred == 0:
        return np.zeros(np.broadcast(a, b).shape, bool)
    if pred == 15:
        return np.ones(np.broadcast(a, b).shape, bool)
    unordered = np.isnan(a) | np.isnan(b)
    if pred == 14:  # uno
        return unordered
    base = pred if pred <= 7 else pred - 7
    fn = _CMPF_ORDERED[base]
    holds = np.ones(unordered.shape, bool) if fn is None else fn(a, b)
    return (holds & ~unordered) if pred <= 7 else (holds | unordered)


def _prop(op: Operation, name: str) -> Attribute | None:
    """Return property `name` of `op`, or the attribute of that name (generic IR may carry either)."""
    attr = op.properties.get(name)
    return attr if attr is not None else op.attributes.get(name)


def _predicate(op: Operation) -> int:
    attr = _prop(op, "predicate")
    if not isinstance(attr, builtin.IntegerAttr):
        raise InterpretationError(f"{location_str(op.location)}: error: {op.name} lacks an integer predicate")
    return attr.value.data


def dense_value(attr: Attribute, t: Attribute, where: str = "<unknown location>") -> Any:
    """Return the runtime value of a constant attribute (integer, float, bool or dense) of type `t`."""
    if isinstance(attr, builtin.IntegerAttr | builtin.FloatAttr):
        return as_value(attr.value.data, t)
    if isinstance(attr, builtin.DenseIntOrFPElementsAttr):
        fmt = element_format(attr.get_element_type())
        if fmt.name == "bf16":
            vals: Any = bf16_bits_to_f32(np.frombuffer(attr.data.data, dtype=np.uint16))
        else:
            vals = np.asarray(attr.get_values())
        shape = tuple(attr.get_shape())
        vals = vals.reshape(shape) if vals.size == int(np.prod(shape)) else vals.reshape(())
        return as_value(vals, t)
    raise InterpretationError(f"{where}: error: constant attribute {attr} has no machine-model value")


# ----------------------------------------------------------------------------------------------------
# casts
# ----------------------------------------------------------------------------------------------------


def _extui(x: np.ndarray, src: Attribute, dst: Attribute) -> np.ndarray:
    return unsigned(x, int_width(src)).astype(np.int64)


def _extsi(x: np.ndarray, src: Attribute, dst: Attribute) -> np.ndarray:
    return -x.astype(np.int64) if int_width(src) == 1 else x.astype(np.int64)


def _trunci(x: np.ndarray, src: Attribute, dst: Attribute) -> np.ndarray:
    return (x.astype(np.int64) & 1) if int_width(dst) == 1 else x.astype(np.int64)


_SIGNIFICAND_BITS = {"f64": 53, "f32": 24, "f16": 11, "bf16": 8}
"""Significand bits (with the implicit one) of the float formats an integer converts to in one rounding."""


def _round_magnitude(m: np.ndarray, bits: int) -> np.ndarray:
    """Round unsigned integers (uint64) to `bits` significant bits, nearest even; return them as float64.

    Exact: the rounded significand has at most `bits` <= 53 bits and is scaled by a power of two, so the
    result converts to a float format of `bits` significand bits without a second rounding.
    """
    m = m.astype(np.uint64)
    with np.errstate(all="ignore"):
        _, exp = np.frexp(m.astype(np.float64))  # bit length, or one more where float64 rounded up
    exp = exp.astype(np.int64)
    too_long = (exp > 0) & (exp <= 64) & ((m >> np.clip(exp - 1, 0, 63).astype(np.uint64)) == 0)
    length = np.where(too_long, exp - 1, exp)
    shift = np.clip(length - bits, 0, 63).astype(np.uint64)
    q = m >> shift
    rest = m - (q << shift)
    half = np.where(shift > 0, np.uint64(1) << np.maximum(shift, np.uint64(1)) - np.uint64(1), np.uint64(0))
    up = (shift > 0) & ((rest > half) | ((rest == half) & ((q & np.uint64(1)) == 1)))
    q = q + up.astype(np.uint64)
    return np.ldexp(q.astype(np.float64), shift.astype(np.int64))


def _int_to_float(x: np.ndarray, negative: np.ndarray | bool, magnitude: np.ndarray, dst: Attribute) -> np.ndarray:
    bits = _SIGNIFICAND_BITS.get(element_format(element_type_of(dst)).name)
    if bits is None:  # fp8: rounded from float64 by the fp8 emulation
        return x
    value = _round_magnitude(magnitude, bits)
    return np.where(negative, -value, value)


def _uitofp(x: np.ndarray, src: Attribute, dst: Attribute) -> np.ndarray:
    """Unsigned integer -> float, rounded once to the result format (not via float64 first)."""
    m = unsigned(x, int_width(src))
    return _int_to_float(m.astype(np.float64), False, m, dst)


def _sitofp(x: np.ndarray, src: Attribute, dst: Attribute) -> np.ndarray:
    """Signed integer -> float, rounded once to the result format (not via float64 first)."""
    if int_width(src) == 1:  # i1 true is -1 when read as signed
        return -x.astype(np.float64)
    s = x.astype(np.int64)
    negative = s < 0
    magnitude = np.where(negative, (~s).astype(np.uint64) + np.uint64(1), s.astype(np.uint64))  # |INT64_MIN| too
    return _int_to_float(s.astype(np.float64), negative, magnitude, dst)


def _fptosi(x: np.ndarray, src: Attribute, dst: Attribute) -> np.ndarray:
    t = np.trunc(x.astype(np.float64))
    return np.where(np.isfinite(t), t, 0).astype(np.int64)


def _fptoui(x: np.ndarray, src: Attribute, dst: Attribute) -> np.ndarray:
    t = np.trunc(x.astype(np.float64))
    return np.where(np.isfinite(t) & (t >= 0), t, 0).astype(np.uint64).astype(np.int64)


def _float_convert(x: np.ndarray, src: Attribute, dst: Attribute) -> np.ndarray:
    """as_value rounds to the result type; fp64 -> bf16 is rounded here, once (not via fp32)."""
    if x.dtype == np.float64 and element_format(element_type_of(dst)).name == "bf16":
        return to_bf16_f32(x)
    return x


def bitcast_value(x: np.ndarray, src: Attribute, dst: Attribute) -> np.ndarray:
    """Reinterpret the bits of `x` (values of type `src`) as values of type `dst` (same width)."""
    sfmt, dfmt = element_format(element_type_of(src)), element_format(element_type_of(dst))
    raw = f32_to_bf16_bits(x) if sfmt.name == "bf16" else x.astype(sfmt.storage)
    if dfmt.name == "bf16":
        return bf16_bits_to_f32(raw.view(np.uint16))
    return raw.view(dfmt.storage).astype(dfmt.compute)


def to_signed(x: np.ndarray, width: int) -> np.ndarray:
    """Wrap an object array of Python ints to `width` bits, as signed int64 storage."""
    mask = (1 << width) - 1
    half = 1 << (width - 1)
    wrapped = np.vectorize(lambda v: ((int(v) & mask) ^ half) - half, otypes=[object])(x)
    return np.asarray(wrapped).astype(np.int64)


def _low_high(op: Operation, product: np.ndarray) -> PythonValues:
    """Split an exact (object array) product into the low and high halves of `*_extended` ops."""
    w = int_width(op.operands[0].type)
    high = np.vectorize(lambda v: int(v) >> w, otypes=[object])(product)
    low = as_value(to_signed(product, w), op.results[0].type)
    return (low, as_value(to_signed(high, w), op.results[1].type))


# ----------------------------------------------------------------------------------------------------
# the functions
# ----------------------------------------------------------------------------------------------------


def _bind(name: str, fn: Fn) -> Fn:
    return impl(_OPS[name])(fn)


def _prepare_cmpi(op: Operation) -> Fn:
    is_unsigned, fn = _CMPI[_predicate(op)]
    w, t = int_width(op.operands[0].type), op.results[0].type
    direct = not is_unsigned and w > 1  # operands of one signed integer dtype compare as they are, not widened

    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
        a, b = args
        dtype = getattr(a, "dtype", None)
        if direct and dtype is not None and dtype.kind == "i" and getattr(b, "dtype", None) == dtype:
            return OpImplResult((as_value(fn(a, b), t),), None)  # same signed dtype: compares as in int64
        if is_unsigned:
            a, b = (unsigned(np.asarray(x), w) for x in args)
        else:
            a, b = _int_operands(args)
            if w == 1:  # i1 true is -1 when signed
                a, b = -a, -b
        return OpImplResult((as_value(fn(a, b), t),), None)

    return run


def _prepare_cmpf(op: Operation) -> Fn:
    pred, t = _predicate(op), op.results[0].type

    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
        a, b = _float_operands(args)
        return OpImplResult((as_value(_cmpf(pred, a, b), t),), None)

    return run


def _prepare_select(op: Operation) -> Fn:
    t = op.results[0].type
    scalar_cond, rank = not is_shaped(op.operands[0].type), logical_rank(t)

    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
        cond, a, b = args
        if np.ndim(cond) == 0:
            return OpImplResult((a if bool(cond) else b,), None)
        if scalar_cond:  # a batch of scalar conditions
            cond = batch_scalar(cond, rank)
        return OpImplResult((as_value(np.where(np.asarray(cond, dtype=bool), a, b), t),), None)

    return run


def _prepare_negf(op: Operation) -> Fn:
    return _float_unary_prepared(FLOAT_UNARY["arith.negf"], op.results[0].type)


def _float_unary_prepared(fn: Fn, t: Attribute) -> Fn:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
        return OpImplResult((as_value(fn(np.asarray(args[0])), t),), None)

    return run


_PREPARE: dict[str, Prepare] = {
    **{name: _int_binary(fn) for name, fn in INT_BINARY.items()},
    **{name: _uint_binary(fn) for name, fn in UINT_BINARY.items()},
    **{name: _float_binary(fn) for name, fn in FLOAT_BINARY.items() if name.startswith("arith.")},
    **{name: _shift_op(fn) for name, fn in SHIFTS.items()},
    "arith.extf": _cast(_float_convert),
    "arith.truncf": _cast(_float_convert),
    "arith.extsi": _cast(_extsi),
    "arith.extui": _cast(_extui),
    "arith.trunci": _cast(_trunci),
    "arith.sitofp": _cast(_sitofp),
    "arith.uitofp": _cast(_uitofp),
    "arith.fptosi": _cast(_fptosi),
    "arith.fptoui": _cast(_fptoui),
    "arith.bitcast": _cast(bitcast_value),
    "arith.index_cast": _cast(_extsi),
    "arith.cmpi": _prepare_cmpi,
    "arith.cmpf": _prepare_cmpf,
    "arith.select": _prepare_select,
    "arith.negf": _prepare_negf,
}
"""The arith ops whose implementation is specialized to each op (`ArithFunctions.prepare_op`); the xDSL
implementation of each prepares it on every run (`_generic`), so both paths are one code."""


@register_impls
class ArithFunctions(InterpreterFunctions):
    """Functional semantics of the tensor-capable `arith` dialect."""

    for _name, _prepare in _PREPARE.items():
        locals()["run_" + _name.removeprefix("arith.")] = _bind(_name, _generic(_prepare))
    del _name, _prepare

    def prepare_op(self, op: Operation) -> Fn | None:
        """Return the implementation of `op` with its facts read once (see reference._Interpreter), or None.

        None also when `op` lacks a fact (a predicate), so its error stays the generic implementation's,
        raised when it runs."""
        if op.name == "arith.constant":
            return self._prepare_constant(op)
        prepare = _PREPARE.get(op.name)
        if prepare is None:
            return None
        try:
            return prepare(op)
        except InterpretationError:
            return None

    def _prepare_constant(self, op: Operation) -> Fn:
        def run(self: ArithFunctions, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
            return self.run_constant(interpreter, op, args)  # the cached value, as an OpImplResult

        return run

    @impl(_OPS["arith.mulsi_extended"])
    def run_mulsi_extended(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        a, b = (np.asarray(x).astype(object) for x in args)
        return _low_high(op, a * b)

    @impl(_OPS["arith.mului_extended"])
    def run_mului_extended(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        w = int_width(op.operands[0].type)
        a, b = (unsigned(np.asarray(x), w).astype(object) for x in args)
        return _low_high(op, a * b)

    @impl(_OPS["arith.addui_extended"])
    def run_addui_extended(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        w = int_width(op.operands[0].type)
        a, b = (unsigned(np.asarray(x), w).astype(object) for x in args)
        total = a + b
        low = to_signed(total, w)
        return (as_value(low, op.results[0].type), as_value(total >= (1 << w), op.results[1].type))

    def __init__(self) -> None:
        super().__init__()
        self._constants: dict[Operation, Any] = {}
        """Value of each arith.constant run so far (runtime values are never mutated in place)."""

    @impl(_OPS["arith.constant"])
    def run_constant(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        value = self._constants.get(op)
        if value is None:
            attr = _prop(op, "value")
            assert attr is not None, "verified arith.constant has a value"
            value = self._constants[op] = dense_value(attr, op.results[0].type, location_str(op.location))
        return (value,)

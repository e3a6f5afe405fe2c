"""Reference semantics of the `tt` dialect (Triton 3.9 TTIR) on numpy: the meaning every pass preserves.

One program instance, or a batch of them (values with leading batch dimensions, see `values.py`), runs
at a time; its program id, the grid and the global memory are the interpreter's `LaunchState` (see
`set_launch_state`). Pointers are byte addresses (int64); loads and stores go through
`GlobalMemory`, so an unmasked out-of-bounds access raises an error naming the kernel line.

Reductions and scans evaluate the combine region on whole slices at once (the region's scalar-typed
values then hold arrays of lanes). `tt.reduce` combines adjacent pairs in a binary tree, (x0 op x1),
(x2 op x3), ... then again on the results, an odd last element carried up unchanged; `tt.scan` is a
Hillis-Steele inclusive scan (log2 n steps). Common single-op combiners (addf, addi, mulf, maxnumf,
maximumf, minnumf, minimumf, maxsi, minsi, ...) run as numpy ops in the same tree
(`semantics.reduce.combiner_of`), so the fast and the generic path give bitwise equal results.
`tt.dot` (`semantics.dot`) multiplies in float64 (exact for f16/bf16 inputs),
adds the accumulator and rounds once to the result type; inputPrecision tf32 first rounds f32 inputs to
tf32. Atomics apply lanes in row-major order; in a batch, program by program (the batch dimension first),
once per program even when every program passes the same operands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import builtin, ub
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    OpImplResult,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_callable,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects.llvm_intr import AssumeOp
from mtia_xdsl.dialects.tt import TT
from mtia_xdsl.dialects.ttg import BarrierOp
from mtia_xdsl.machine.interpret import arith as arith_semantics
from mtia_xdsl.machine.interpret.values import (
    FP8_BY_NAME,
    GlobalMemory,
    as_value,
    batch_scalar,
    broadcast_batch,
    element_format,
    element_type_of,
    location_str,
    logical_rank,
)
from mtia_xdsl.semantics.atomic import cas_update, rmw_update
from mtia_xdsl.semantics.dot import dot
from mtia_xdsl.semantics.libdevice import LIBDEVICE, libdevice_function
from mtia_xdsl.semantics.reduce import combiner_of
from mtia_xdsl.semantics.scalar import (
    FLOAT_BINARY,
    FLOAT_UNARY,
    ieee_max_min,
    round_toward_zero,
    round_toward_zero_bf16,
)
from mtia_xdsl.utils.fp8 import decode_fp8_np, encode_fp8_np

_OPS: dict[str, type[Operation]] = {op.name: op for op in TT.operations}

Fn = Callable[..., Any]


@dataclass
class LaunchState:
    """What one program instance of a launch sees: its id, the grid, global memory."""

    memory: GlobalMemory
    program_id: tuple[Any, Any, Any]
    """Per axis: an int, or an int32 array (B,) of the batch's program ids along that axis."""
    num_programs: tuple[int, int, int]
    placement: Any = None
    """The launch's `machine.placement.Placement` (which PE runs each program), or an InterpretationError
    to raise when a kernel asks for its PE but the run names no machine (a tt-level run without options)."""
    collective_results: dict[tuple[int, int], Any] | None = None
    """Results of cross-PE reductions already computed in this launch, by (linear program id, call number):
    a batch rerun after a divergence past a reduction reuses them (shared by the batches of a launch)."""
    collective_inputs: dict[tuple[int, int], Any] | None = None
    """Inputs of cross-PE reductions contributed so far, by (linear program id, call number): a program
    that arrives before the rest of its group leaves its input here and waits (shared like the results)."""
    collective_calls: int = 0
    """Cross-PE reductions this batch has run so far (the call number of the next one)."""

    @property
    def batch_size(self) -> int:
        """Number of programs run together (1 outside a batch)."""
        return int(np.size(self.program_id[0]))


def _per_program_shape(interpreter: Interpreter, op: Operation, *values: Any) -> tuple[int, ...]:
    """Broadcast shape of a side effect's operands, with the batch dimension even if they are uniform.

    A non-idempotent side effect (an atomic) with the same operands in every program still happens
    once per program.
    """
    shape = np.broadcast_shapes(*(np.shape(v) for v in values))
    batch = get_launch_state(interpreter).batch_size
    if batch > 1 and len(shape) == logical_rank(op.operands[0].type):
        shape = (batch, *shape)
    return shape


def set_launch_state(interpreter: Interpreter, state: LaunchState) -> None:
    """Make `state` the launch state of the tt ops run by `interpreter`."""
    interpreter.set_data(TtFunctions, "launch", state)


def get_launch_state(interpreter: Interpreter) -> LaunchState:
    """Return the launch state set by `set_launch_state` (error if the kernel runs outside a launch)."""

    def missing() -> LaunchState:
        raise InterpretationError("tt ops need a launch state: run the kernel through run_tt")

    return interpreter.get_data(TtFunctions, "launch", missing)


# ----------------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------------


def _bind(name: str, fn: Fn, terminator: bool = False) -> Fn:
    """Mark `fn` as the implementation of tt op `name` (left unbound if the dialect lacks the op)."""
    op_type = _OPS.get(name)
    if op_type is None:
        return fn
    return (impl_terminator if terminator else impl)(op_type)(fn)


def _op(name: str) -> Callable[[Fn], Fn]:
    """Decorator form of `_bind`."""
    return lambda fn: _bind(name, fn)


def _return(
    self: Any, interpreter: Interpreter, op: Operation, args: PythonValues
) -> tuple[TerminatorValue, PythonValues]:
    return ReturnedValues(args), ()


def _prop(op: Operation, name: str) -> Attribute | None:
    attr = op.properties.get(name)
    return attr if attr is not None else op.attributes.get(name)


def _int_prop(op: Operation, name: str, default: int | None = None) -> int:
    attr = _prop(op, name)
    if attr is None:
        if default is None:
            raise InterpretationError(f"{_where(op)}: error: {op.name} lacks property '{name}'")
        return default
    if isinstance(attr, builtin.UnitAttr):
        return 1
    value = getattr(attr, "value", attr)
    data = getattr(value, "data", value)
    if isinstance(data, str):  # enum attribute printed by name
        raise InterpretationError(f"{_where(op)}: error: {op.name} property '{name}' is {attr}")
    return int(data)


def _operands(op: Operation, args: PythonValues, *names: str) -> list[Any]:
    """Return the runtime values of the named (possibly optional) operands of `op`; None if absent."""
    by_value = {id(v): a for v, a in zip(op.operands, args, strict=True)}
    out: list[Any] = []
    for n in names:
        v = getattr(op, n, None)
        out.append(by_value[id(v)] if isinstance(v, SSAValue) else None)
    return out


def _where(op: Operation) -> str:
    return location_str(op.location)


def pointee_type(t: Attribute) -> Attribute:
    """Return the pointee type of `!tt.ptr<T>` or of a tensor of such pointers."""
    ptr = element_type_of(t)
    for name in ("pointee_type", "pointeeType", "pointee"):
        inner = getattr(ptr, name, None)
        if isinstance(inner, Attribute):
            return inner
    params = getattr(ptr, "parameters", ())
    if params and isinstance(params[0], Attribute):
        return params[0]
    raise InterpretationError(f"{t} is not a tt pointer type")


def _elem_bytes(ptr_type: Attribute) -> int:
    pointee = pointee_type(ptr_type)
    if getattr(pointee, "name", "") == "tt.ptr":
        return 8
    return element_format(pointee).size_bytes


# ----------------------------------------------------------------------------------------------------
# reductions and scans
# ----------------------------------------------------------------------------------------------------


def fast_combiner(region: Region, wide_bf16_add: bool = False) -> Fn | None:
    """Return a numpy function equal to a one-op combine region `(a, b) -> a op b`, else None.

    With `wide_bf16_add`, a bf16 `arith.addf` region gets fp32 addition (no rounding to bf16 between
    steps; the caller rounds the results once), as compiled Triton accumulates a bf16 `tl.cumsum`.
    """
    if wide_bf16_add and _is_bf16_add(region):
        return np.add
    block = region.block
    ops = list(block.ops)
    if len(block.args) != 2 or len(ops) != 2:
        return None
    body, ret = ops
    fn = combiner_of(body.name)
    if fn is None or len(body.operands) != 2 or set(body.operands) != set(block.args):
        return None
    if list(ret.operands) != [body.results[0]] or element_format(block.args[0].type).name in ("i1", "bf16"):
        return None
    if body.name in ("arith.addi", "arith.muli"):
        return lambda a, b: fn(a, b).astype(a.dtype)
    return fn


def _is_bf16_add(region: Region) -> bool:
    block = region.block
    ops = list(block.ops)
    return (
        len(block.args) == 2
        and len(ops) == 2
        and ops[0].name == "arith.addf"
        and set(ops[0].operands) == set(block.args)
        and list(ops[1].operands) == [ops[0].results[0]]
        and element_format(block.args[0].type).name == "bf16"
    )


def _combine(interpreter: Interpreter, op: Operation, fast: Fn | None, lhs: list[Any], rhs: list[Any]) -> list[Any]:
    """Apply the combine region (or its numpy equivalent `fast`) to lanes lhs[i] op rhs[i]."""
    with np.errstate(all="ignore"):
        if fast is not None:
            return [fast(lhs[0], rhs[0])]
        out = interpreter.run_ssacfg_region(op.regions[0], (*lhs, *rhs), op.name)
    return [np.asarray(v) for v in out]


def _tree_reduce(interpreter: Interpreter, op: Operation, xs: list[np.ndarray]) -> list[np.ndarray]:
    """Reduce axis 0 of every array in `xs` together by a pairwise tree."""
    fast = fast_combiner(op.regions[0]) if len(xs) == 1 else None
    while xs[0].shape[0] > 1:
        n = xs[0].shape[0]
        half = n // 2
        evens, odds = [x[0 : 2 * half : 2] for x in xs], [x[1 : 2 * half : 2] for x in xs]
        combined = _combine(interpreter, op, fast, evens, odds)
        combined = [np.broadcast_to(c, x[0 : 2 * half : 2].shape) for c, x in zip(combined, xs, strict=True)]
        xs = [np.concatenate([c, x[2 * half :]]) if n % 2 else c for c, x in zip(combined, xs, strict=True)]
    return [x[0] for x in xs]


def _hillis_steele_scan(interpreter: Interpreter, op: Operation, xs: list[np.ndarray]) -> list[np.ndarray]:
    """Inclusive scan along axis 0 of every array in `xs` together (a bf16 sum accumulates in fp32)."""
    fast = fast_combiner(op.regions[0], wide_bf16_add=True) if len(xs) == 1 else None
    n = xs[0].shape[0]
    step = 1
    while step < n:
        combined = _combine(interpreter, op, fast, [x[:-step] for x in xs], [x[step:] for x in xs])
        xs = [
            np.concatenate([x[:step], np.broadcast_to(c, x[step:].shape).astype(x.dtype)])
            for c, x in zip(combined, xs, strict=True)
        ]
        step *= 2
    return xs


# ----------------------------------------------------------------------------------------------------
# memory ops
# ----------------------------------------------------------------------------------------------------


def _load(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
    ptr, mask, other = _operands(op, args, "ptr", "mask", "other")
    result_type = op.results[0].type
    memory = get_launch_state(interpreter).memory
    value = memory.gather(ptr, element_type_of(result_type), mask, other, _where(op))
    return (as_value(value, result_type),)


def _store(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
    ptr, value, mask = _operands(op, args, "ptr", "value", "mask")
    memory = get_launch_state(interpreter).memory
    memory.scatter(ptr, value, pointee_type(op.operands[0].type), mask, _where(op))
    return ()


def atomic_update(memory: GlobalMemory, ptr: Any, mask: Any, dtype: Attribute, update: Fn, where: str) -> np.ndarray:
    """Apply `update(old, lane_indices) -> new` lane by lane in row-major order; return the old values.

    Lanes with distinct addresses are applied together; a lane whose address repeats an earlier lane's
    waits for the next round, so every lane sees the value left by the lanes before it.
    """
    addrs = np.asarray(ptr, dtype=np.int64)
    active = np.broadcast_to(np.ones((), bool) if mask is None else np.asarray(mask, bool), addrs.shape)
    flat = addrs.reshape(-1)
    fmt = element_format(dtype)
    old_all = np.zeros(flat.shape, dtype=fmt.compute)
    pending = np.flatnonzero(active.reshape(-1))
    while pending.size:
        _, first = np.unique(flat[pending], return_index=True)
        lanes = pending[np.sort(first)]
        old = memory.gather(flat[lanes], dtype, where=where)
        old_all[lanes] = old
        memory.scatter(flat[lanes], update(old, lanes), dtype, where=where)
        pending = np.setdiff1d(pending, lanes, assume_unique=True)
    return old_all.reshape(addrs.shape)


def _atomic_rmw(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
    ptr, val, mask = _operands(op, args, "ptr", "val", "mask")
    kind = _int_prop(op, "atomic_rmw_op")
    fn = rmw_update(kind)
    if fn is None:
        raise InterpretationError(f"{_where(op)}: error: tt.atomic_rmw kind {kind} is not supported")
    dtype = pointee_type(op.operands[0].type)
    shape = _per_program_shape(interpreter, op, ptr, val, mask)
    ptr = np.broadcast_to(np.asarray(ptr), shape)
    flat_val = np.broadcast_to(np.asarray(val), shape).reshape(-1)
    memory = get_launch_state(interpreter).memory

    def update(old: np.ndarray, lanes: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return fn(old, flat_val[lanes].astype(old.dtype)).astype(old.dtype)

    old = atomic_update(memory, ptr, mask, dtype, update, _where(op))
    return (as_value(old, op.results[0].type),)


def _atomic_cas(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
    ptr, cmp, val = _operands(op, args, "ptr", "cmp", "val")
    shape = _per_program_shape(interpreter, op, ptr, cmp, val)
    ptr = np.broadcast_to(np.asarray(ptr), shape)
    flat_cmp = np.broadcast_to(np.asarray(cmp), shape).reshape(-1)
    flat_val = np.broadcast_to(np.asarray(val), shape).reshape(-1)

    def update(old: np.ndarray, lanes: np.ndarray) -> np.ndarray:
        return cas_update(old, flat_cmp[lanes], flat_val[lanes])

    memory = get_launch_state(interpreter).memory
    old = atomic_update(memory, ptr, None, pointee_type(op.operands[0].type), update, _where(op))
    return (as_value(old, op.results[0].type),)


def _extern_elementwise(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
    symbol = _prop(op, "symbol")
    name = symbol.data if isinstance(symbol, builtin.StringAttr) else "?"
    fn = libdevice_function(name)
    if fn is None:
        raise InterpretationError(
            f"{_where(op)}: error: external function '{name}' has no reference semantics; "
            f"known stems: {', '.join(sorted(LIBDEVICE))}"
        )
    with np.errstate(all="ignore"):
        return (as_value(fn(*[np.asarray(a) for a in args]), op.results[0].type),)


# ----------------------------------------------------------------------------------------------------
# the functions
# ----------------------------------------------------------------------------------------------------


def _unary(fn: Fn) -> Fn:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        with np.errstate(all="ignore"):
            return (as_value(fn(np.asarray(args[0]), op), op.results[0].type),)

    return run


def _prepared_unary(fn: Callable[[np.ndarray], Any], t: Attribute) -> Fn:
    """`_unary`'s implementation with the op's facts read once: `fn` maps the operand, `t` is the result type."""

    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
        with np.errstate(all="ignore"):
            return OpImplResult((as_value(fn(np.asarray(args[0])), t),), None)

    return run


def _prepare_splat(op: Operation) -> Callable[[np.ndarray], Any]:
    rank = logical_rank(op.results[0].type)
    return lambda x: batch_scalar(x, rank)


def _prepare_expand_dims(op: Operation) -> Callable[[np.ndarray], Any]:
    axis = _int_prop(op, "axis") - (_in_rank(op) + 1)
    return lambda x: np.expand_dims(x, axis)


def _prepare_trans(op: Operation) -> Callable[[np.ndarray], Any]:
    rank, order = _in_rank(op), _dense_ints(op, "order")

    def trans(x: np.ndarray) -> np.ndarray:
        lead = x.ndim - rank
        return np.transpose(x, tuple(range(lead)) + tuple(lead + d for d in order))

    return trans


_PREPARED_UNARY: dict[str, Callable[[Operation], Callable[[np.ndarray], Any]]] = {
    "tt.splat": _prepare_splat,
    "tt.broadcast": lambda op: lambda x: x,
    "tt.expand_dims": _prepare_expand_dims,
    "tt.trans": _prepare_trans,
}
"""Unary tt ops whose facts `TtFunctions.prepare_op` reads once per op: op -> the operand's mapping (the same
as the op's `_unary` function)."""


def _prepare_addptr(op: Operation) -> Fn:
    size, t = np.int64(_elem_bytes(op.operands[0].type)), op.results[0].type

    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
        ptr, offset = args
        with np.errstate(all="ignore"):
            addr = np.asarray(ptr, dtype=np.int64) + np.asarray(offset).astype(np.int64) * size
        return OpImplResult((as_value(addr, t),), None)

    return run


def _binary(fn: Fn) -> Fn:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        return (as_value(fn(np.asarray(args[0]), np.asarray(args[1]), op), op.results[0].type),)

    return run


def _dense_ints(op: Operation, name: str) -> tuple[int, ...]:
    attr = _prop(op, name)
    if not isinstance(attr, builtin.DenseArrayBase):
        raise InterpretationError(f"{_where(op)}: error: {op.name} lacks dense array property '{name}'")
    return tuple(int(v) for v in attr.get_values())


def _in_rank(op: Operation) -> int:
    return logical_rank(op.operands[0].type)


def _unsplat(x: np.ndarray, op: Operation) -> np.ndarray:
    rank = _in_rank(op)
    return x.reshape((*x.shape[: x.ndim - rank], -1))[..., 0]


def _expand_dims(x: np.ndarray, op: Operation) -> np.ndarray:
    return _prepare_expand_dims(op)(x)


def _reshape(x: np.ndarray, op: Operation) -> np.ndarray:
    rank = _in_rank(op)
    return x.reshape(x.shape[: x.ndim - rank] + tuple(op.results[0].type.get_shape()))  # type: ignore


def _trans(x: np.ndarray, op: Operation) -> np.ndarray:
    return _prepare_trans(op)(x)


def _cat(a: np.ndarray, b: np.ndarray, op: Operation) -> np.ndarray:
    rank = _in_rank(op)
    a, b = broadcast_batch([a, b], [rank, rank])
    return np.concatenate([a, b], axis=-rank)


def _join(a: np.ndarray, b: np.ndarray, op: Operation) -> np.ndarray:
    rank = _in_rank(op)
    a, b = broadcast_batch([a, b], [rank, rank])
    return np.stack([a, b], -1)


def _first_failing_program(pid: tuple[Any, Any, Any], cond: np.ndarray, op: Operation) -> tuple[int, int, int]:
    """The program id of the first program of a batch whose `tt.assert` condition fails somewhere."""
    if not any(isinstance(p, np.ndarray) for p in pid):
        return (int(pid[0]), int(pid[1]), int(pid[2]))
    rank = _in_rank(op)
    n = max(np.size(p) for p in pid)
    per_program = np.broadcast_to(cond.reshape((*cond.shape[: cond.ndim - rank], -1)).all(-1), (n,))
    b = int(np.flatnonzero(~per_program)[0])
    return tuple(int(np.broadcast_to(p, (n,))[b]) for p in pid)  # type: ignore[return-value]


def _fp_to_fp(x: np.ndarray, op: Operation) -> np.ndarray:
    dst = element_type_of(op.results[0].type)
    rounding = _int_prop(op, "rounding", 1)
    if rounding == 1 or element_format(dst).size_bytes >= x.dtype.itemsize:
        return x  # as_value rounds to nearest even
    fp8 = FP8_BY_NAME.get(element_format(dst).name)
    if fp8 is not None:  # toward zero into fp8 (exact, then as_value's rounding keeps it)
        return decode_fp8_np(encode_fp8_np(x, fp8, rtz=True), fp8)
    if isinstance(dst, builtin.BFloat16Type):
        return round_toward_zero_bf16(x)
    return round_toward_zero(x, element_format(dst).compute)


def _bitcast(x: np.ndarray, op: Operation) -> np.ndarray:
    src, dst = element_type_of(op.operands[0].type), element_type_of(op.results[0].type)
    if getattr(src, "name", "") == "tt.ptr" or getattr(dst, "name", "") == "tt.ptr":
        return x
    return arith_semantics.bitcast_value(x, src, dst)


def _mulhiui(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
    width = arith_semantics.int_width(op.results[0].type)
    a, b = (arith_semantics.unsigned(np.asarray(v), width).astype(object) for v in args)
    high = np.vectorize(lambda v: int(v) >> width, otypes=[object])(a * b)
    return (as_value(arith_semantics.to_signed(high, width), op.results[0].type),)


def _clampf(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
    x, lo, hi = (np.asarray(v) for v in args)
    nan = bool(_int_prop(op, "propagateNan", 0))
    with np.errstate(all="ignore"):
        r = ieee_max_min(ieee_max_min(x, lo, nan, is_max=True), hi, nan, is_max=False)
    return (as_value(r, op.results[0].type),)


@register_impls
class TtFunctions(InterpreterFunctions):
    """Functional semantics of the tt dialect (the reference every lowering is checked against)."""

    def prepare_op(self, op: Operation) -> Fn | None:
        """Return an implementation of a shape op or tt.addptr specialized to `op` (its facts read once; see
        reference._Interpreter), or None (the generic one; also when `op` lacks a fact, so the error stays
        the generic implementation's, at run time)."""
        make = _PREPARED_UNARY.get(op.name)
        try:
            if make is not None:
                return _prepared_unary(make(op), op.results[0].type)
            if op.name == "tt.addptr":
                return _prepare_addptr(op)
        except InterpretationError:
            return None
        return None

    # -- program structure ----------------------------------------------------------------------------

    @impl_callable(_OPS["tt.func"])
    def call_func(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        name = op.properties.get("sym_name") or op.attributes.get("sym_name")
        label = name.data if isinstance(name, builtin.StringAttr) else "tt.func"
        return interpreter.run_ssacfg_region(op.regions[0], args, label)

    run_return = _bind("tt.return", _return, terminator=True)
    run_reduce_return = _bind("tt.reduce.return", _return, terminator=True)
    run_scan_return = _bind("tt.scan.return", _return, terminator=True)

    @_op("tt.call")
    def run_call(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        callee = _prop(op, "callee")
        assert isinstance(callee, builtin.SymbolRefAttr), "verified tt.call has a callee"
        return interpreter.call_op(callee, args)

    @_op("tt.get_program_id")
    def run_get_program_id(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        pid = get_launch_state(interpreter).program_id[_int_prop(op, "axis")]
        return (pid if isinstance(pid, np.ndarray) else np.int32(pid),)

    @_op("tt.get_num_programs")
    def run_get_num_programs(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        return (np.int32(get_launch_state(interpreter).num_programs[_int_prop(op, "axis")]),)

    # -- tensor construction and shape ---------------------------------------------------------------

    @_op("tt.make_range")
    def run_make_range(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        return (np.arange(_int_prop(op, "start"), _int_prop(op, "end"), dtype=np.int32),)

    run_splat = _bind("tt.splat", _unary(lambda x, op: _prepare_splat(op)(x)))
    run_broadcast = _bind("tt.broadcast", _unary(lambda x, op: _PREPARED_UNARY["tt.broadcast"](op)(x)))
    run_unsplat = _bind("tt.unsplat", _unary(_unsplat))
    run_expand_dims = _bind("tt.expand_dims", _unary(_expand_dims))
    run_reshape = _bind("tt.reshape", _unary(_reshape))
    run_trans = _bind("tt.trans", _unary(_trans))
    run_cat = _bind("tt.cat", _binary(_cat))
    run_join = _bind("tt.join", _binary(_join))

    @_op("tt.split")
    def run_split(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        x = np.asarray(args[0])
        return (as_value(x[..., 0], op.results[0].type), as_value(x[..., 1], op.results[1].type))

    # -- pointers and elementwise --------------------------------------------------------------------

    @_op("tt.addptr")
    def run_addptr(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        return _prepare_addptr(op)(self, interpreter, op, args).values

    run_int_to_ptr = _bind("tt.int_to_ptr", _unary(lambda x, op: x.astype(np.int64)))
    run_ptr_to_int = _bind("tt.ptr_to_int", _unary(lambda x, op: x.astype(np.int64)))
    run_bitcast = _bind("tt.bitcast", _unary(_bitcast))
    run_fp_to_fp = _bind("tt.fp_to_fp", _unary(_fp_to_fp))
    run_precise_sqrt = _bind("tt.precise_sqrt", _unary(lambda x, op: FLOAT_UNARY["math.sqrt"](x)))
    run_precise_divf = _bind("tt.precise_divf", lambda s, i, op, a: (as_value(_div(a), op.results[0].type),))
    run_approx_divf = _bind("tt.approx_divf", lambda s, i, op, a: (as_value(_div(a), op.results[0].type),))
    run_mulhiui = _bind("tt.mulhiui", _mulhiui)
    run_clampf = _bind("tt.clampf", _clampf)
    run_extern_elementwise = _bind("tt.extern_elementwise", _extern_elementwise)

    # -- memory --------------------------------------------------------------------------------------

    run_load = _bind("tt.load", _load)
    run_store = _bind("tt.store", _store)
    run_atomic_rmw = _bind("tt.atomic_rmw", _atomic_rmw)
    run_atomic_cas = _bind("tt.atomic_cas", _atomic_cas)

    # -- compute -------------------------------------------------------------------------------------

    @_op("tt.dot")
    def run_dot(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        acc = dot(*args, input_precision=_int_prop(op, "inputPrecision", 2))
        return (as_value(acc, op.results[0].type),)

    @_op("tt.reduce")
    def run_reduce(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        rank = logical_rank(op.operands[0].type)
        axis = _int_prop(op, "axis") - rank
        xs = [np.moveaxis(x, axis, 0) for x in broadcast_batch(args, [rank] * len(args))]
        out = _tree_reduce(interpreter, op, xs)
        return tuple(as_value(v, r.type) for v, r in zip(out, op.results, strict=True))

    @_op("tt.scan")
    def run_scan(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        rank = logical_rank(op.operands[0].type)
        axis, reverse = _int_prop(op, "axis") - rank, _int_prop(op, "reverse", 0)
        xs = [np.moveaxis(x, axis, 0) for x in broadcast_batch(args, [rank] * len(args))]
        if reverse:
            xs = [x[::-1] for x in xs]
        out = _hillis_steele_scan(interpreter, op, xs)
        if reverse:
            out = [x[::-1] for x in out]
        return tuple(as_value(np.moveaxis(v, 0, axis), r.type) for v, r in zip(out, op.results, strict=True))

    @_op("tt.histogram")
    def run_histogram(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        src, mask = _operands(op, args, "src", "mask")
        bins = op.results[0].type.get_shape()[0]  # type: ignore
        src, keep = broadcast_batch([src, True if mask is None else np.asarray(mask, bool)], [1, 1])
        batch = src.shape[:-1]
        x = src.astype(np.int64).reshape(-1, src.shape[-1])
        keep = np.broadcast_to(keep, src.shape).reshape(-1, src.shape[-1]) & (x >= 0) & (x < bins)
        which = np.arange(x.shape[0], dtype=np.int64)[:, None] * bins + x
        counts = np.bincount(which[keep], minlength=x.shape[0] * bins).reshape((*batch, bins))
        return (as_value(counts, op.results[0].type),)

    @_op("tt.gather")
    def run_gather(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        rank = logical_rank(op.operands[0].type)
        src, idx = broadcast_batch(args, [rank, rank])
        axis = _int_prop(op, "axis")
        bad = (idx < 0) | (idx >= src.shape[axis - rank])
        if bad.any():
            raise InterpretationError(
                f"{_where(op)}: error: tt.gather index {int(idx[bad].reshape(-1)[0])} is outside "
                f"[0, {src.shape[axis - rank]}) along axis {axis}"
            )
        return (as_value(np.take_along_axis(src, idx.astype(np.int64), axis - rank), op.results[0].type),)

    # -- debugging -----------------------------------------------------------------------------------

    @_op("tt.assert")
    def run_assert(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        cond = np.asarray(args[0], bool)
        if not cond.all():
            msg = _prop(op, "message")
            text = msg.data if isinstance(msg, builtin.StringAttr) else ""
            pid = _first_failing_program(get_launch_state(interpreter).program_id, cond, op)
            raise InterpretationError(f"{_where(op)}: error: assertion failed in program {pid}: {text}")
        return ()

    @_op("tt.print")
    def run_print(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        prefix = _prop(op, "prefix")
        text = prefix.data if isinstance(prefix, builtin.StringAttr) else ""
        pid = get_launch_state(interpreter).program_id
        interpreter.print(f"pid {pid}{text}", *[np.asarray(a) for a in args])
        return ()

    @impl(AssumeOp)
    def run_assume(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        """`tl.assume`: a hint; a false condition is undefined behaviour upstream, so nothing is checked."""
        return ()

    @impl(BarrierOp)
    def run_barrier(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        """`tl.debug_barrier`: a program's ops run in order here, so there is nothing to wait for."""
        return ()

    @impl(ub.PoisonOp)
    def run_poison(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        return (as_value(0, op.results[0].type),)


def _div(args: Sequence[Any]) -> np.ndarray:
    """`tt.precise_divf`/`tt.approx_divf`: `arith.divf`'s semantics (IEEE division in the operand dtype)."""
    with np.errstate(all="ignore"):
        return FLOAT_BINARY["arith.divf"](np.asarray(args[0]), np.asarray(args[1]))


__all__ = ["LaunchState", "TtFunctions", "get_launch_state", "pointee_type", "set_launch_state"]

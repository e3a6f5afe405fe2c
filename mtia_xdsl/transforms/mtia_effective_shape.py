"""mtia-effective-shape: masked tails shrink engine work and DMA fills to the valid region of a tile.

A masked `mtia.dma_load` fills the lanes past its `bounds` (its effective shape) with `other`. This pass
propagates the effective shape forward through elementwise engine ops (the result's extent is the
common extent of its tile operands; scalar and splat-of-scalar operands cover the whole tile) together
with the value the masked lanes hold (the fill, found by evaluating the op's body on the operands'
fills). Then, on the demand side, it finds the lanes nobody observes:

- an elementwise `mtia.se_compute` / `mtia.vec_compute` whose masked lanes reach only elementwise ops
  with the same extent, `mtia.dma_store`s whose bounds are that extent, and reductions that run over the
  extent, gets `valid[...]`: it computes only that region (the rest of its tile stays unwritten);
- an `mtia.re_reduce` whose masked lanes hold its combiner's identity (max with -inf, sum with +0)
  gets `valid[...]`: it reads only the valid lanes;
- an `mtia.dpe_matmul` whose a and b both hold 0 past the same K extent gets `valid[M, N, K]` with that
  K (M and N shrink too when the result's masked rows and columns are not observed);
- a masked `mtia.dma_load` none of whose masked lanes is observed loses its `other` fill.

Extents are SSA index values (i64) or constants; two extents agree when they are the same value or
the same pure computation of the same values. Values carried by loops and branches keep the whole tile
(conservative). The fill evaluation treats scalar operands (and splats of them) and other unmasked tiles
as unknown values of any kind: it evaluates the body on representative values (zeros of both signs,
small, large and extreme finite values, infinities and NaN) and accepts a fill only when every
evaluation gives the same bits. So softmax's `exp(x - max)` keeps its -inf fill (with max = -inf or NaN
the masked lanes would not be 0), while its max reduction and its final division shrink.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mtia_xdsl.dialects import mtia
from mtia_xdsl.semantics.reduce import REDUCE_IDENTITY
from mtia_xdsl.semantics.scalar import FLOAT_BINARY, FLOAT_UNARY, INT_BINARY, round_bf16
from mtia_xdsl.transforms.program_level import require_tensor_level
from mtia_xdsl.utils.walk import ops_of

Dims = tuple[SSAValue | None, ...]
"""An effective shape: per dimension the extent value, or None for the whole dimension."""

_UNKNOWN = object()
"""A fill nothing is known about."""


@dataclass(frozen=True)
class Extent:
    """The effective shape of a tile value and what its masked lanes hold (`fill`, or None if unknown)."""

    dims: Dims
    fill: Any


# ----------------------------------------------------------------------------------------------
# Extent values: normalization and agreement
# ----------------------------------------------------------------------------------------------


def _constant_int(v: SSAValue) -> int | None:
    if isinstance(v, OpResult) and isinstance(v.op, arith.ConstantOp):
        value = v.op.value
        if isinstance(value, IntegerAttr):
            return value.value.data
    return None


def _bound_dims(bounds: Sequence[SSAValue], shape: Sequence[int]) -> Dims:
    """The effective shape of a DMA block: a constant bound covering its dimension is the whole one."""
    dims: list[SSAValue | None] = []
    for b, size in zip(bounds, shape, strict=True):
        c = _constant_int(b)
        dims.append(None if c is not None and c >= size else b)
    return tuple(dims)


_PURE_DIALECTS = ("arith",)
_PURE_OPS = ("tt.get_program_id", "tt.get_num_programs")


def _same_value(x: SSAValue, y: SSAValue, depth: int = 8) -> bool:
    """Whether `x` and `y` are the same value or the same pure computation of the same values."""
    if x is y:
        return True
    if depth == 0 or not (isinstance(x, OpResult) and isinstance(y, OpResult)) or x.index != y.index:
        return False
    a, b = x.op, y.op
    if a.name != b.name or a.regions or b.regions:
        return False
    if a.dialect_name() not in _PURE_DIALECTS and a.name not in _PURE_OPS:
        return False
    if a.properties != b.properties or a.attributes != b.attributes or len(a.operands) != len(b.operands):
        return False
    if [r.type for r in a.results] != [r.type for r in b.results]:
        return False
    return all(_same_value(p, q, depth - 1) for p, q in zip(a.operands, b.operands, strict=True))


def _same_dim(x: SSAValue | None, y: SSAValue | None) -> bool:
    if x is None or y is None:
        return x is y
    return _same_value(x, y)


def _same_dims(x: Dims, y: Dims) -> bool:
    return len(x) == len(y) and all(_same_dim(p, q) for p, q in zip(x, y, strict=True))


def _covers(e: Dims, observed: Dims | None) -> bool:
    """Whether a use reading the box `observed` (None: the whole tile) stays inside effective shape `e`."""
    if observed is None:
        return all(d is None for d in e)
    return len(e) == len(observed) and all(d is None or _same_dim(d, o) for d, o in zip(e, observed, strict=True))


def _masked(dims: Dims) -> bool:
    return any(d is not None for d in dims)


# ----------------------------------------------------------------------------------------------
# Fill evaluation
# ----------------------------------------------------------------------------------------------

_FINITE_SAMPLES = (0.0, -0.0, 1.0, -1.0, 2.5, -3.75, 1e-30, -1e-30, 6e4, -6e4, 3e38, -3e38)
_ANY_SAMPLES = (*_FINITE_SAMPLES, float("inf"), float("-inf"), float("nan"))
_INT_SAMPLES = (0, 1, -1, 7, -9, 2**20, -(2**20))

_LANE_FNS: dict[str, Callable[..., Any]] = {
    **FLOAT_BINARY,
    **FLOAT_UNARY,
    **{name: INT_BINARY[name] for name in ("arith.addi", "arith.subi", "arith.muli", "arith.maxsi", "arith.minsi")},
    "arith.select": lambda c, a, b: a if c else b,
}
"""What a body op computes on one lane: `semantics.scalar`'s table (integers evaluated in int64, whose
wrap-around a fill of a masked lane does not reach in practice)."""
_CASTS = ("arith.extf", "arith.truncf", "tt.splat")


def _np_dtype(t: Attribute) -> Any:
    elem = t.element_type if isinstance(t, TensorType) else t
    if isinstance(elem, IntegerType):
        return np.int64
    if isinstance(elem, AnyFloat):
        return {16: np.float16, 64: np.float64}.get(elem.bitwidth, np.float32) if elem.name != "bf16" else np.float32
    return None


def _round_to(value: Any, dtype: Any, t: Attribute) -> Any:
    """`value` as an element of type `t` holds it (`dtype` from `_np_dtype`; bf16 rounds to nearest even)."""
    elem = t.element_type if isinstance(t, TensorType) else t
    if isinstance(elem, AnyFloat) and elem.name == "bf16":
        return np.float32(round_bf16(np.float32(value)))
    return dtype(value)


def _constant_value(op: arith.ConstantOp) -> Any:
    value = op.value
    if isinstance(value, DenseIntOrFPElementsAttr):
        values = value.get_values()
        if len(set(map(repr, values))) != 1:
            return _UNKNOWN
        return values[0]
    if isinstance(value, FloatAttr | IntegerAttr):
        return value.value.data
    return _UNKNOWN


def _evaluate(body: Block, args: Sequence[Any]) -> list[Any]:
    """Evaluate an elementwise body on one lane (`args` scalars); _UNKNOWN where an op is not known."""
    env: dict[SSAValue, Any] = dict(zip(body.args, args, strict=True))
    with np.errstate(all="ignore"):
        for op in body.ops:
            if isinstance(op, mtia.YieldOp):
                return [env.get(v, _UNKNOWN) for v in op.values]
            dtype = _np_dtype(op.results[0].type) if op.results else None
            if isinstance(op, arith.ConstantOp):
                value = _constant_value(op)
            else:
                ins = [env.get(v, _UNKNOWN) for v in op.operands]
                fn = _LANE_FNS.get(op.name)
                if any(x is _UNKNOWN for x in ins) or dtype is None or (fn is None and op.name not in _CASTS):
                    value = _UNKNOWN
                else:
                    value = ins[0] if fn is None else fn(*ins)
            env[op.results[0]] = _UNKNOWN if value is _UNKNOWN else _round_to(value, dtype, op.results[0].type)
    return [_UNKNOWN]


def _same_bits(a: Any, b: Any) -> bool:
    if a is _UNKNOWN or b is _UNKNOWN:
        return False
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


def _fill_of(op: mtia.EngineComputeOp, arg_fills: Sequence[Any]) -> Any:
    """The value the body yields on the fills (`_FINITE_SAMPLES`/`_ANY_SAMPLES` for unknown operands),
    or None unless every evaluation agrees bit for bit."""
    unknown = [i for i, f in enumerate(arg_fills) if isinstance(f, tuple)]
    trials = max([len(arg_fills[i]) for i in unknown] + [1])
    result: Any = None
    for t in range(trials):
        args = [f[(t + 5 * k) % len(f)] if isinstance(f, tuple) else f for k, f in enumerate(arg_fills)]
        try:
            with np.errstate(all="ignore"):
                args = [_np_dtype(a.type)(x) for a, x in zip(op.body.block.args, args, strict=True)]
                out = _evaluate(op.body.block, args)[0]
        except (ArithmeticError, ValueError, TypeError):  # a value the element type cannot hold
            return None
        if out is _UNKNOWN or (t and not _same_bits(out, result)):
            return None
        result = out
    return result


# ----------------------------------------------------------------------------------------------
# Forward analysis
# ----------------------------------------------------------------------------------------------

_ELEMENTWISE_OPS = ("tt.splat", "tt.clampf", "tt.precise_sqrt", "tt.precise_divf", "tt.fp_to_fp", "tt.bitcast")


def _tile_shape(t: Attribute) -> tuple[int, ...] | None:
    return tuple(t.get_shape()) if isinstance(t, TensorType) else None


def _elementwise_shape(op: Operation) -> tuple[int, ...] | None:
    """The common tile shape of a tensor-level SE/VEC command whose body is lane by lane, else None."""
    if not isinstance(op, mtia.SeComputeOp | mtia.VecComputeOp) or op.outs or not op.res:
        return None
    shapes = {_tile_shape(r.type) for r in op.res}
    shape = next(iter(shapes))
    if len(shapes) != 1 or shape is None:
        return None
    if any(_tile_shape(v.type) not in (None, shape) for v in op.inputs):
        return None
    for body_op in op.body.block.ops:
        if isinstance(body_op, mtia.YieldOp):
            continue
        if body_op.dialect_name() not in ("arith", "math") and body_op.name not in _ELEMENTWISE_OPS:
            return None
        if any(_tile_shape(r.type) not in (None, shape) for r in body_op.results):
            return None
    return shape


def _is_splat_of_scalar(op: Operation) -> bool:
    """A command whose every result is a splat of a scalar input or a constant (uniform over the tile)."""
    if _elementwise_shape(op) is None:
        return False
    assert isinstance(op, mtia.EngineComputeOp)
    return all(_tile_shape(a.type) is None for a in op.body.block.args)


@dataclass
class _Facts:
    """What the forward analysis knows about one function."""

    ext: dict[SSAValue, Extent]
    """Masked tile values: their effective shape and fill."""
    uniform: set[SSAValue]
    """Tiles holding one scalar in every lane."""
    reductions: dict[Operation, Dims]
    """re_reduce ops whose masked lanes hold their combiner's identity, with their input's extent."""
    dots: dict[Operation, Dims]
    """dpe_matmul ops whose a and b hold 0 past one K extent: (M, N, K) with M, N from a and b."""


_FILL_KINDS = ("addf", "maxnumf", "maximumf", "minnumf", "minimumf", "addi")
"""Reduction kinds whose identity (`semantics.reduce.REDUCE_IDENTITY`) the fill analysis compares with a
fill (as a float64: the integer kinds' identities other than addi's 0 depend on the width)."""


def _arg_fill(v: SSAValue, facts: _Facts) -> Any:
    """What a body argument holds in a masked lane: a fill, or a tuple of values to try."""
    integer = _np_dtype(v.type) is np.int64
    if v in facts.ext and facts.ext[v].fill is not None:
        return facts.ext[v].fill
    if integer:
        return _INT_SAMPLES
    return _ANY_SAMPLES  # a scalar argument or a value loaded at run time may be inf or NaN


def _forward_compute(op: mtia.EngineComputeOp, facts: _Facts) -> None:
    if _is_splat_of_scalar(op):
        facts.uniform.update(op.res)
        return
    if _elementwise_shape(op) is None or len(op.res) != 1 or _np_dtype(op.res[0].type) is None:
        return
    masked = [facts.ext[v].dims for v in op.inputs if v in facts.ext]
    if not masked or not all(_same_dims(masked[0], d) for d in masked[1:]):
        return
    fill = _fill_of(op, [_arg_fill(v, facts) for v in op.inputs])
    facts.ext[op.res[0]] = Extent(masked[0], fill)


def _forward_dot(op: mtia.DpeMatmulOp, facts: _Facts) -> None:
    ea, eb = facts.ext.get(op.a), facts.ext.get(op.b)
    if op.out is not None or ea is None or eb is None or len(ea.dims) != 2 or len(eb.dims) != 2:
        return
    (am, ak), (bk, bn) = ea.dims, eb.dims
    zero = all(e.fill is not None and _same_bits(np.float64(e.fill), np.float64(0.0)) for e in (ea, eb))
    if ak is not None and _same_dim(ak, bk) and zero:
        facts.dots[op] = (am, bn, ak)
        if am is not None or bn is not None:
            facts.ext[op.result[0]] = Extent((am, bn), None)


def _forward_reduce(op: mtia.ReReduceOp, facts: _Facts) -> None:
    e = facts.ext.get(op.input)
    kind = op.kind.data
    identity = REDUCE_IDENTITY[kind](np.float64) if kind in _FILL_KINDS else None
    if op.out is not None or e is None or identity is None or e.fill is None:
        return
    if not _same_bits(np.float64(e.fill), np.float64(identity)):
        return
    facts.reductions[op] = e.dims
    axis = op.axis.value.data
    rest = e.dims[:axis] + e.dims[axis + 1 :]
    if op.result and _masked(rest):
        facts.ext[op.result[0]] = Extent(rest, identity)


def analyze(func: Operation) -> _Facts:
    """Propagate effective shapes and fills forward through `func` (program order, a loop after its body)."""
    facts = _Facts({}, set(), {}, {})
    for region in func.regions:
        for block in region.blocks:
            for op in block.ops:
                _forward(op, facts)
    return facts


def _forward(op: Operation, facts: _Facts) -> None:
    for region in op.regions:
        if not isinstance(op, mtia.EngineComputeOp):
            for block in region.blocks:
                for inner in block.ops:
                    _forward(inner, facts)
    if isinstance(op, mtia.DmaLoadOp) and op.out is None and op.result:
        _forward_load(op, facts)
    elif isinstance(op, mtia.SeComputeOp | mtia.VecComputeOp):
        _forward_compute(op, facts)
    elif isinstance(op, mtia.DpeMatmulOp):
        _forward_dot(op, facts)
    elif isinstance(op, mtia.ReReduceOp):
        _forward_reduce(op, facts)
    elif isinstance(op, scf.ForOp):
        _forward_loop(op, facts)


def _forward_load(op: mtia.DmaLoadOp, facts: _Facts) -> None:
    if op.starts:
        return  # leading lanes masked off too: not a prefix box
    dims = _bound_dims(list(op.bounds), op.block_type.get_shape())
    if not _masked(dims):
        return
    other = op.other
    fill = _constant_value(other.op) if isinstance(other, OpResult) and isinstance(other.op, arith.ConstantOp) else None
    facts.ext[op.result[0]] = Extent(dims, None if fill is _UNKNOWN else fill)


def _forward_loop(op: scf.ForOp, facts: _Facts) -> None:
    """A loop result whose yielded value has a loop-invariant extent keeps it (its fill is unknown)."""
    yield_op = op.body.block.last_op
    assert isinstance(yield_op, scf.YieldOp)
    for y, r in zip(yield_op.operands, op.results, strict=True):
        e = facts.ext.get(y)
        if e is not None and all(d is None or _materializable(d, op) for d in e.dims):
            facts.ext[r] = Extent(e.dims, None)


# ----------------------------------------------------------------------------------------------
# Demand: which masked lanes are never observed
# ----------------------------------------------------------------------------------------------


def _observed(use_op: Operation, index: int, shrunk: dict[Operation, Dims], facts: _Facts) -> Dims | None:
    """The box of an operand's tile that `use_op` reads (None: the whole tile)."""
    if isinstance(use_op, mtia.DmaStoreOp) and use_op.value is use_op.operands[index]:
        return tuple(use_op.bounds)
    if use_op in shrunk and isinstance(use_op, mtia.EngineComputeOp):
        return shrunk[use_op]
    if isinstance(use_op, mtia.ReReduceOp) and use_op in facts.reductions:
        return facts.reductions[use_op]
    if isinstance(use_op, mtia.DpeMatmulOp) and use_op in facts.dots:
        m, n, k = shrunk.get(use_op, (None, None, facts.dots[use_op][2]))
        operand = use_op.operands[index]
        if operand is use_op.a and operand is not use_op.b:
            return (m, k)
        if operand is use_op.b and operand is not use_op.a:
            return (k, n)
        if operand is use_op.c and use_op in shrunk:
            return (m, n)
    return None


def _unobserved(
    value: SSAValue, dims: Dims, shrunk: dict[Operation, Dims], facts: _Facts, seen: frozenset[SSAValue] = frozenset()
) -> bool:
    """Whether no use of `value` reads its lanes outside `dims`.

    A value a loop carries is followed into the next iteration (its block argument) and out of the loop
    (its result), provided `dims` does not change between iterations; a cycle of carried values is fine.
    """
    if value in seen:
        return True
    for use in value.uses:
        user = use.operation
        if isinstance(user, scf.YieldOp) and isinstance(user.parent_op(), scf.ForOp):
            loop = user.parent_op()
            assert isinstance(loop, scf.ForOp)
            if not all(d is None or _materializable(d, loop) for d in dims):
                return False
            carried = (loop.body.block.args[1 + use.index], loop.results[use.index])
            if not all(_unobserved(v, dims, shrunk, facts, seen | {value}) for v in carried):
                return False
        elif not _covers(dims, _observed(user, use.index, shrunk, facts)):
            return False
    return True


def plan(func: Operation, facts: _Facts) -> dict[Operation, Dims]:
    """Return the engine ops to shrink, with their effective shape (greatest fixpoint over the uses)."""
    shrunk: dict[Operation, Dims] = {}
    for op in ops_of(func):
        if isinstance(op, mtia.SeComputeOp | mtia.VecComputeOp) and op.res and op.res[0] in facts.ext:
            shrunk[op] = facts.ext[op.res[0]].dims
        elif isinstance(op, mtia.DpeMatmulOp) and op in facts.dots and op.result[0] in facts.ext:
            shrunk[op] = facts.dots[op]
    changed = True
    while changed:
        changed = False
        for op, dims in list(shrunk.items()):
            out_dims = dims[:2] if isinstance(op, mtia.DpeMatmulOp) else dims
            if not all(_unobserved(r, out_dims, shrunk, facts) for r in op.results):
                del shrunk[op]
                changed = True
    _add_demanded(func, shrunk, facts)
    return shrunk


def _dominates(v: SSAValue, op: Operation) -> bool:
    """Whether `v` is defined before `op` in one of `op`'s enclosing blocks."""
    block = v.block if isinstance(v, BlockArgument) else v.op.parent_block()
    ancestor: Operation | None = op
    while ancestor is not None:
        if ancestor.parent_block() is block:
            return isinstance(v, BlockArgument) or _precedes(v.op, ancestor)
        ancestor = ancestor.parent_op()
    return False


def _precedes(a: Operation, b: Operation) -> bool:
    """Whether op `a` comes before op `b` of the same block (a walk from `a` forward, where comparing both
    ops' `Block.get_operation_index`, each a walk from the block's start, took twice as long or more)."""
    op = a.next_op
    while op is not None:
        if op is b:
            return True
        op = op.next_op
    return False


def _materializable(v: SSAValue, op: Operation, depth: int = 8) -> bool:
    """Whether `v` dominates `op` or is a pure computation of values that do (cloned by `_materialize`)."""
    if _dominates(v, op):
        return True
    if depth == 0 or not isinstance(v, OpResult) or v.op.regions:
        return False
    if v.op.dialect_name() not in _PURE_DIALECTS and v.op.name not in _PURE_OPS:
        return False
    return all(_materializable(x, op, depth - 1) for x in v.op.operands)


def _materialize(v: SSAValue, op: Operation, made: dict[SSAValue, SSAValue]) -> SSAValue:
    """`v`, or a copy of its pure computation inserted before `op` (Requires: `_materializable`)."""
    if _dominates(v, op):
        return v
    if v not in made:
        assert isinstance(v, OpResult)
        operands = [_materialize(x, op, made) for x in v.op.operands]
        clone = v.op.clone()
        for i, x in enumerate(operands):
            clone.operands[i] = x
        Rewriter.insert_op(clone, InsertPoint.before(op))
        for old, new in zip(v.op.results, clone.results, strict=True):
            made[old] = new
    return made[v]


def _add_demanded(func: Operation, shrunk: dict[Operation, Dims], facts: _Facts) -> None:
    """Shrink unmasked elementwise ops (splats, ...) whose users all read one effective shape of theirs."""
    ops = [o for o in ops_of(func) if isinstance(o, mtia.SeComputeOp | mtia.VecComputeOp) and o not in shrunk]
    for op in reversed(ops):
        if _elementwise_shape(op) is None or op.res[0] in facts.ext:
            continue
        boxes = [_observed(u.operation, u.index, shrunk, facts) for r in op.res for u in r.uses]
        if not boxes or any(b is None for b in boxes):
            continue
        first = boxes[0]
        assert first is not None
        if not _masked(first) or not all(b is not None and _same_dims(first, b) for b in boxes[1:]):
            continue
        if all(d is None or _dominates(d, op) for d in first):
            shrunk[op] = first


# ----------------------------------------------------------------------------------------------
# Mechanism
# ----------------------------------------------------------------------------------------------


def _extent_values(dims: Dims, shape: Sequence[int], before: Operation) -> list[SSAValue]:
    """The `valid` operands of `dims`: a whole dimension becomes a constant of its size."""
    values: list[SSAValue] = []
    sizes: dict[int, SSAValue] = {}
    made: dict[SSAValue, SSAValue] = {}
    for d, size in zip(dims, shape, strict=True):
        if d is None and size not in sizes:
            const = arith.ConstantOp(IntegerAttr(size, i64))
            const.location = before.location
            Rewriter.insert_op(const, InsertPoint.before(before))
            sizes[size] = const.result
        values.append(sizes[size] if d is None else _materialize(d, before, made))
    return values


def _with_valid(op: Operation, dims: Dims) -> Operation:
    """A copy of tensor-level engine op `op` carrying the effective shape `dims` (not inserted)."""
    if isinstance(op, mtia.DpeMatmulOp):
        shape = [*op.result[0].type.get_shape(), op.a.type.get_shape()[-1]]  # type: ignore[attr-defined]
        valid = _extent_values(dims, shape, op)
        new: Operation = mtia.DpeMatmulOp(
            op.a, op.b, op.c, op.input_precision.value.data, op.result[0].type, valid=valid
        )
    elif isinstance(op, mtia.ReReduceOp):
        valid = _extent_values(dims, op.input.type.get_shape(), op)  # type: ignore[attr-defined]
        new = mtia.ReReduceOp(op.input, op.axis.value.data, op.kind.data, op.result[0].type, valid=valid)
    else:
        assert isinstance(op, mtia.EngineComputeOp)
        valid = _extent_values(dims, op.res[0].type.get_shape(), op)  # type: ignore[attr-defined]
        body = op.detach_region(op.body)
        new = type(op)(list(op.inputs), [r.type for r in op.res], body, valid=valid)
    new.attributes.update(op.attributes)
    new.location = op.location
    return new


def _drop_fill(op: mtia.DmaLoadOp) -> Operation:
    new = mtia.DmaLoadOp(op.base, list(op.strides), list(op.bounds), None, op.result[0].type, starts=list(op.starts))
    new.attributes.update(op.attributes)
    new.location = op.location
    return new


def _functions(module: ModuleOp) -> Iterator[Operation]:
    for op in module.ops:
        if op.regions and op.name.endswith(".func"):
            yield op


def shrink_function(func: Operation) -> None:
    """Apply effective shapes to one function: `valid` extents on engine ops, fills dropped from loads."""
    facts = analyze(func)
    shrunk = plan(func, facts)
    loads = [
        o
        for o in ops_of(func)
        if isinstance(o, mtia.DmaLoadOp)
        and o.other is not None
        and o.result
        and o.result[0] in facts.ext
        and _unobserved(o.result[0], facts.ext[o.result[0]].dims, shrunk, facts)
    ]
    for op in ops_of(func):
        if op in shrunk:
            Rewriter.replace_op(op, _with_valid(op, shrunk[op]))
        elif isinstance(op, mtia.ReReduceOp) and op in facts.reductions:
            Rewriter.replace_op(op, _with_valid(op, facts.reductions[op]))
        elif isinstance(op, mtia.DpeMatmulOp) and op in facts.dots:
            Rewriter.replace_op(op, _with_valid(op, (None, None, facts.dots[op][2])))
        elif op in loads:
            assert isinstance(op, mtia.DmaLoadOp) and op.other is not None
            fill = op.other
            Rewriter.replace_op(op, _drop_fill(op))
            if isinstance(fill, OpResult) and isinstance(fill.op, arith.ConstantOp) and not fill.uses:
                Rewriter.erase_op(fill.op)


@dataclass(frozen=True)
class MtiaEffectiveShapePass(ModulePass):
    """Shrink engine work and DMA fills to the effective shape of masked tiles (see the module docstring).

    Requires: tensor-level mtia program (convert-tt-to-mtia; runs before mtia-cb-bufferize).
    Example: mtia-opt k.mlir -p mtia-effective-shape
    """

    name = "mtia-effective-shape"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op, self.name)
        for func in _functions(op):
            shrink_function(func)

"""SE, VEC and MLU commands in LLVM IR: the engine body as a loop nest over the output tile, one element per trip.

The body (ops of `mtia.ENGINE_BODY_OPS`) is evaluated element by element: the value of a tensor op at a
multi-index is computed from its operands at the indices the op reads (`_Element`), so a fused body keeps
every intermediate in registers and never materialises a tile. Operand forms (tt.splat, tt.broadcast,
tt.expand_dims, tt.trans, tt.reshape, mtia.extract_slice, tt.make_range, uniform dense constants) only
change the index; elementwise arith / math / tt ops compute one element (backend/llvm_scalar.py); scalar
(0-d) values are computed once before the loops. Input tiles are read from their CB's front slot in LS
(`@mtia_cb_front`), results written to the output CB's reserved slot (`@mtia_cb_back`; an `inplace`
command's accumulator is the front tile it reads), lanes past the `valid` extents are neither computed nor
written. Then `@mtia_<engine>_compute(site, valid)` records the command.

Not handled (an error naming the kernel line): reductions, scans, gathers, histograms, tt.dot, tt.cat /
tt.join / tt.split, printing, atomics and control flow inside a body; non-uniform dense constants; an
inplace command reading its accumulator at another element than the one it writes; results of different
shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import llvm
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from mtia_xdsl.backend.llvm_scalar import I32, I64, PTR, emit_scalar, not_handled, register_type, storage_type
from mtia_xdsl.dialects import mtia

if TYPE_CHECKING:
    from mtia_xdsl.backend.llvm import _KernelEmitter

_ENGINE_CALLS = {
    mtia.SeComputeOp: "mtia_se_compute",
    mtia.VecComputeOp: "mtia_vec_compute",
    mtia.MluComputeOp: "mtia_mlu_compute",
}

Index = tuple[SSAValue, ...]


def _shape(t: object) -> list[int]:
    return list(t.get_shape()) if isinstance(t, TensorType) else []


def _strides(shape: Sequence[int]) -> list[int]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


class _Element:
    """Evaluates body values at a multi-index of i64 registers, memoised per (value, index)."""

    def __init__(self, em: _KernelEmitter, op: mtia.EngineComputeOp, tiles: dict[BlockArgument, SSAValue]) -> None:
        self.em = em
        self.op = op
        self.tiles = tiles
        """Tensor block arguments -> LS address of their tile."""
        self.memo: dict[tuple[SSAValue, tuple[int, ...]], SSAValue] = {}
        self.inplace_args: set[BlockArgument] = set()
        self.out_index: Index = ()

    def at(self, v: SSAValue, idx: Index) -> SSAValue:
        key = (v, tuple(id(i) for i in idx))
        got = self.memo.get(key)
        if got is None:
            got = self.memo[key] = self._eval(v, idx)
        return got

    def _eval(self, v: SSAValue, idx: Index) -> SSAValue:
        b = self.em.b
        if isinstance(v, BlockArgument) and v in self.tiles:
            if v in self.inplace_args and tuple(map(id, idx)) != tuple(map(id, self.out_index)):
                raise not_handled(self.op, "an inplace command reading its accumulator at another element")
            t = v.type
            lin = self.linear(idx, _shape(t))
            elem = storage_type(t)
            nbytes = mtia.element_bytes(t.element_type)  # type: ignore[attr-defined]
            off = b.add(llvm.MulOp(lin, b.const(nbytes, I64))) if nbytes != 1 else lin
            raw = b.add(llvm.LoadOp(b.byte_ptr(self.tiles[v], off), elem))
            return b.from_storage(raw, t)
        if not isinstance(v.owner, Operation) or v.owner.parent_op() is not self.op:
            return self.em.value(v)  # a scalar computed outside the body, or a scalar block argument
        op = v.owner
        rule = _INDEX_RULES.get(op.name)
        if rule is not None:
            return rule(self, op, idx)
        args = [self.at(o, idx if isinstance(o.type, TensorType) else ()) for o in op.operands]
        return emit_scalar(b, op, args)

    def linear(self, idx: Index, shape: Sequence[int]) -> SSAValue:
        """Row-major linear index of `idx` in a tile of `shape` (i64)."""
        b = self.em.b
        total: SSAValue | None = None
        for i, s in zip(idx, _strides(shape), strict=True):
            term = i if s == 1 else b.add(llvm.MulOp(i, b.const(s, I64)))
            total = term if total is None else b.add(llvm.AddOp(total, term))
        return total if total is not None else b.const(0, I64)


def _splat(e: _Element, op: Operation, idx: Index) -> SSAValue:
    return e.at(op.operands[0], ())


def _make_range(e: _Element, op: Operation, idx: Index) -> SSAValue:
    b = e.em.b
    start = op.properties["start"].value.data  # type: ignore[attr-defined]
    i = b.add(llvm.TruncOp(idx[0], I32))
    return b.add(llvm.AddOp(i, b.const(start, I32))) if start else i


def _expand_dims(e: _Element, op: Operation, idx: Index) -> SSAValue:
    axis = op.properties["axis"].value.data  # type: ignore[attr-defined]
    return e.at(op.operands[0], idx[:axis] + idx[axis + 1 :])


def _broadcast(e: _Element, op: Operation, idx: Index) -> SSAValue:
    src, dst = _shape(op.operands[0].type), _shape(op.results[0].type)
    zero = e.em.b.const(0, I64) if any(s == 1 and d != 1 for s, d in zip(src, dst, strict=True)) else None
    return e.at(op.operands[0], tuple(zero if s == 1 and d != 1 else i for i, s, d in zip(idx, src, dst, strict=True)))  # type: ignore[misc]


def _trans(e: _Element, op: Operation, idx: Index) -> SSAValue:
    order = list(op.properties["order"].get_values())  # type: ignore[attr-defined]
    src: list[SSAValue | None] = [None] * len(order)
    for i, o in enumerate(order):
        src[o] = idx[i]
    return e.at(op.operands[0], tuple(src))  # type: ignore[arg-type]


def _reshape(e: _Element, op: Operation, idx: Index) -> SSAValue:
    b = e.em.b
    src = _shape(op.operands[0].type)
    lin = e.linear(idx, _shape(op.results[0].type))
    out: list[SSAValue] = []
    for s in _strides(src):
        out.append(b.add(llvm.SDivOp(lin, b.const(s, I64))) if s != 1 else lin)
        lin = b.add(llvm.SRemOp(lin, b.const(s, I64))) if s != 1 else lin
    for k, extent in enumerate(src):  # the outermost quotient is in range; the others need a remainder
        if k:
            out[k] = b.add(llvm.SRemOp(out[k], b.const(extent, I64)))
    return e.at(op.operands[0], tuple(out))


def _extract_slice(e: _Element, op: Operation, idx: Index) -> SSAValue:
    b = e.em.b
    offsets = op.offsets_per_dim()  # type: ignore[attr-defined]
    shifted = []
    for i, off in zip(idx, offsets, strict=True):
        o = b.const(off, I64) if isinstance(off, int) else b.int_cast(e.at(off, ()), I64)
        shifted.append(i if isinstance(off, int) and off == 0 else b.add(llvm.AddOp(i, o)))
    return e.at(op.operands[0], tuple(shifted))


def _unrealized_cast(e: _Element, op: Operation, idx: Index) -> SSAValue:
    if register_type(op.operands[0].type) != register_type(op.results[0].type):
        raise not_handled(op, "a cast between different element types")
    return e.at(op.operands[0], idx)


def _poison(e: _Element, op: Operation, idx: Index) -> SSAValue:
    return e.em.b.add(llvm.UndefOp(register_type(op.results[0].type)))


_INDEX_RULES = {
    "tt.splat": _splat,
    "tt.make_range": _make_range,
    "tt.expand_dims": _expand_dims,
    "tt.broadcast": _broadcast,
    "tt.trans": _trans,
    "tt.reshape": _reshape,
    "mtia.extract_slice": _extract_slice,
    "builtin.unrealized_conversion_cast": _unrealized_cast,
    "ub.poison": _poison,
}
"""Body ops that pick the element their operand holds (operand forms and index generators)."""


def emit_engine_command(em: _KernelEmitter, op: mtia.EngineComputeOp) -> None:
    """Emit one SE/VEC/MLU command: tile addresses, the loop nest over its output tile, the recording call.

    Raises: NotHandled naming the kernel line for a body the emitter does not translate.
    """
    if not op.outs:
        raise not_handled(op, "a tensor-level command (run the buffer-level program)")
    block = op.body.block
    yields = list(block.last_op.operands)  # type: ignore[union-attr]
    out_tiles = [mtia.tile_type(o.type) for o in op.outs]
    shapes = {tuple(_shape(t)) for t in out_tiles}
    if len(shapes) != 1:
        raise not_handled(op, "results of different shapes")
    shape = list(next(iter(shapes)))
    for inner in block.ops:
        if inner.regions:
            raise not_handled(inner, "a region inside an engine command body")
    site = em.site_of(op)
    tiles: dict[BlockArgument, SSAValue] = {}
    front: dict[SSAValue, SSAValue] = {}
    for arg, operand in zip(block.args, op.inputs, strict=True):
        if mtia.is_cb(operand):
            ptr = em.call("mtia_cb_front", site, em.value(operand))
            ptr.name_hint = f"in{len(front)}"
            front[operand] = ptr
            if isinstance(arg.type, TensorType):
                tiles[arg] = ptr
            else:  # a scalar tile: one element
                raw = em.b.add(llvm.LoadOp(ptr, storage_type(arg.type)))
                em.values[arg] = em.b.from_storage(raw, arg.type)
        else:
            em.values[arg] = em.value(operand)
    outs = [front[o] if op.inplace is not None else em.call("mtia_cb_back", site, em.value(o)) for o in op.outs]
    for k, ptr in enumerate(outs):
        if op.inplace is None:
            ptr.name_hint = f"out{k}"
    e = _Element(em, op, tiles)
    if op.inplace is not None:
        e.inplace_args = {a for a, o in zip(block.args, op.inputs, strict=True) if o in op.outs and a in tiles}
    for inner in block.ops:  # scalar values once, before the loops
        if inner is not block.last_op and not any(isinstance(r.type, TensorType) for r in inner.results):
            for r in inner.results:
                em.values[r] = e.at(r, ())
    valid = [em.value(v) for v in op.valid]
    bounds = [_bound(em, extent, valid[d] if valid else None) for d, extent in enumerate(shape)]
    _loop_nest(em, e, bounds, shape, yields, out_tiles, outs)
    valid_ptr: SSAValue
    if valid:
        valid_ptr = em.alloca(len(valid))
        for k, v in enumerate(valid):
            slot = em.b.add(llvm.GEPOp(valid_ptr, [k], I64))
            em.b.add(llvm.StoreOp(v, slot))
    else:
        valid_ptr = em.b.add(llvm.ZeroOp(result_types=[PTR]))
    em.call(_ENGINE_CALLS[type(op)], site, valid_ptr)


def _bound(em: _KernelEmitter, extent: int, valid: SSAValue | None) -> SSAValue:
    """The trip count of one dimension: its extent, or the valid extent clamped to [0, extent]."""
    b = em.b
    if valid is None:
        return b.const(extent, I64)
    clamped = b.intrinsic("llvm.smin", [valid, b.const(extent, I64)], I64)
    return b.intrinsic("llvm.smax", [clamped, b.const(0, I64)], I64)


def _loop_nest(
    em: _KernelEmitter,
    e: _Element,
    bounds: list[SSAValue],
    shape: list[int],
    yields: list[SSAValue],
    out_tiles: list[object],
    outs: list[SSAValue],
) -> None:
    """Loops over every dimension (outermost first); the innermost body stores each yielded element."""
    b = em.b
    ivs: list[SSAValue] = []
    latches: list[tuple[Block, Block, SSAValue]] = []
    kind = "tile"
    for d, bound in enumerate(bounds):
        header, body = em.new_block(f"{kind}.d{d}", [I64]), em.new_block(f"{kind}.d{d}.body")
        exit_ = em.new_block(f"{kind}.d{d}.end", attach=False)
        header.args[0].name_hint = f"i{d}"
        b.add(llvm.BrOp(header, b.const(0, I64)))
        b.block = header
        iv = header.args[0]
        b.add(llvm.CondBrOp(b.icmp("slt", iv, bound), body, [], exit_, []))
        b.block = body
        ivs.append(iv)
        latches.append((header, exit_, iv))
    idx = tuple(ivs)
    e.out_index = idx
    e.memo = {k: v for k, v in e.memo.items() if not k[1]}  # keep scalars only
    lin = e.linear(idx, shape)
    for value, t, ptr in zip(yields, out_tiles, outs, strict=True):
        v = e.at(value, idx if isinstance(value.type, TensorType) else ())
        nbytes = mtia.element_bytes(t.element_type if isinstance(t, TensorType) else t)  # type: ignore[arg-type]
        off = b.add(llvm.MulOp(lin, b.const(nbytes, I64))) if nbytes != 1 else lin
        b.add(llvm.StoreOp(b.to_storage(v, t), b.byte_ptr(ptr, off)))  # type: ignore[arg-type]
    for header, exit_, iv in reversed(latches):
        b.add(llvm.BrOp(header, b.add(llvm.AddOp(iv, b.const(1, I64)))))
        em.attach(exit_)
        b.block = exit_

"""Engine compute commands in LLVM IR: SE/VEC/MLU bodies, the DPE matmul and the RE reduction as loops over LS tiles.

Each command is issued as mtia_runtime.h describes: `mtia_cmd_begin`, the LS addresses of the tiles it reads
(`mtia_cmd_in`, front tiles) and writes (`mtia_cmd_out`, reserved slots; `mtia_cmd_inout` for an `inplace`
accumulator), the work on LS, then the recording call with the command's static work (`mtia_compute_end`
with an `mtia_work`, `mtia_dpe_end`, `mtia_re_end`).

SE, VEC and MLU: the engine body as a loop nest over the output tile, one element per trip.

The body (ops of `mtia.ENGINE_BODY_OPS`) is evaluated element by element: the value of a tensor op at a
multi-index is computed from its operands at the indices the op reads (`_Element`), so a fused body keeps
every intermediate in registers and never materialises a tile. Operand forms (tt.splat, tt.broadcast,
tt.expand_dims, tt.trans, tt.reshape, mtia.extract_slice, tt.make_range, uniform dense constants) only
change the index; elementwise arith / math / tt ops compute one element (backend/llvm_scalar.py); scalar
(0-d) values are computed once before the loops. Input tiles are read from their CB's front slot in LS
(`mtia_cmd_in`), results written to the output CB's slot, lanes past the `valid` extents are neither
computed nor written.

DPE: D = A @ B + C per element of D inside the valid M x N, accumulated exactly (f64, i64 for integers;
tf32-rounded f32 inputs for input precision tf32) over the valid K and rounded once (semantics/dot.py).
RE: each output element the combination of the input lanes along the axis, lanes outside the valid extents
counting as the kind's identity (semantics/reduce.py). A float sum adds in the model's order, numpy's: pairwise
(8 accumulators per block of 128 lanes, f16 and bf16 in f32, rounded once) along the last axis, lane by lane
along another; the other kinds do not depend on the order.

tt.reduce and tt.scan inside a body: the lanes of their operands along the axis are copied into stack arrays
by a loop, then combined in the model's order (machine/interpret/tt.py: a pairwise tree for a reduce,
Hillis-Steele steps for a scan), the combine region lowered op by op like any body op. A reduce does this at
each element it is read at; a scan of the output's shape once per command, each row before the loop nest
(`scan_once`), its results held in a stack tile the loop nest reads.

tt.gather reads the source at the gathered index (an index outside the source stops the program with an error
at the kernel line, as the model raises); tt.histogram counts the matching source lanes per bin in a loop.

Not handled (an error naming the kernel line): tt.dot, printing, atomics and control flow inside a body;
libdevice functions without semantics here; non-uniform dense
constants of bf16 or i1; an inplace command reading its accumulator at another element than the one it writes;
results of different shapes; effective shapes of rank above MTIA_MAX_RANK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.traits import IsTerminator

from mtia_xdsl.backend.llvm_scalar import (
    F32,
    I32,
    I64,
    PTR,
    Builder,
    element_type,
    emit_scalar,
    int_width,
    is_bf16,
    is_int,
    is_tensor,
    not_handled,
    register_type,
    shape_of,
    storage_type,
)
from mtia_xdsl.backend.runtime_api import MAX_RANK
from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.commands import command_kind
from mtia_xdsl.machine.interpret.command_work import ComputeInfo, dpe_ls_bytes, re_ls_bytes
from mtia_xdsl.machine.interpret.formats import dtype_name
from mtia_xdsl.machine.work import elem_count
from mtia_xdsl.semantics.reduce import PAIRWISE_ACCUMULATORS, PAIRWISE_BLOCK
from mtia_xdsl.semantics.scalar import MAX_MIN, TF32_DROPPED_BITS

F64 = Float64Type()

WORK = {"elems": 0, "dtype": 8, "lut": 16, "out_rank": 20, "out_shape": 24, "nvalid": 56, "valid": 64,
        "ls_bytes": 96, "size": 104}  # fmt: skip
"""Byte offsets of the fields of `mtia_work` (mtia_runtime.h) on an LP64 host; "size" its size."""

ENGINES = {"dma": 1, "dpe": 2, "se": 3, "re": 4, "mlu": 5, "vec": 6}
"""`enum mtia_engine` of mtia_runtime.h by engine name."""


class KernelEmitter(Protocol):
    """What these functions use of backend/llvm.py's kernel emitter (the builder, runtime calls, values)."""

    b: Builder
    values: dict[SSAValue, SSAValue]

    def call(self, name: str, *args: SSAValue) -> SSAValue: ...
    def string(self, text: str, prefix: str = "") -> SSAValue: ...
    def loc(self, op: Operation) -> SSAValue: ...
    def value(self, v: SSAValue) -> SSAValue: ...
    def alloca(self, n: int, elem: Attribute = ..., name: str = "") -> SSAValue: ...
    def store_at(self, base: SSAValue, offset: int, value: SSAValue) -> None: ...
    def i64_array(self, values: Sequence[SSAValue | int], n: int | None = None) -> SSAValue: ...
    def new_block(self, name: str, arg_types: Sequence[Attribute] = (), attach: bool = True) -> Block: ...
    def attach(self, block: Block) -> None: ...
    def constant_array(self, values: Sequence[int | float], elem: Attribute) -> str: ...
    def printf(self, fmt: str, *args: SSAValue) -> None: ...


_ENGINES: dict[type[Operation], str] = {mtia.SeComputeOp: "se", mtia.VecComputeOp: "vec", mtia.MluComputeOp: "mlu"}

Index = tuple[SSAValue, ...]


_shape = shape_of


def _strides(shape: Sequence[int]) -> list[int]:
    out: list[int] = []
    acc = 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


class _Element:
    """Evaluates body values at a multi-index of i64 registers, memoised per (value, index)."""

    def __init__(self, em: KernelEmitter, op: mtia.EngineComputeOp | None, tiles: Mapping[SSAValue, SSAValue]) -> None:
        self.em = em
        self.op = op
        """The engine command whose body is evaluated; None for tensor values on the scalar core."""
        self.tiles = tiles
        """Tensor values held in memory (storage format) -> their address: a body's tile arguments (LS), the
        tiles the scalar core read (mtia.cb_read, a stack copy)."""
        self.memo: dict[tuple[SSAValue, tuple[int, ...]], SSAValue] = {}
        self.inplace_args: set[BlockArgument] = set()
        """Tile arguments that are also the command's output (an inplace accumulator)."""
        self.out_index: Index = ()

    def at(self, v: SSAValue, idx: Index) -> SSAValue:
        key = (v, tuple(id(i) for i in idx))
        got = self.memo.get(key)
        if got is None:
            got = self.memo[key] = self._eval(v, idx)
            if got.name_hint is None:
                got.name_hint = v.name_hint  # the kernel's `output`, `acc` (llvmlite uniquifies clashes)
        return got

    def _eval(self, v: SSAValue, idx: Index) -> SSAValue:
        b = self.em.b
        if v in self.tiles:
            if self.op is not None and v in self.inplace_args and tuple(map(id, idx)) != tuple(map(id, self.out_index)):
                raise not_handled(self.op, "an inplace command reading its accumulator at another element")
            t = v.type
            lin = self.linear(idx, _shape(t))
            elem = storage_type(t)
            nbytes = mtia.element_bytes(t.element_type)  # type: ignore[attr-defined]
            off = b.add(llvm.MulOp(lin, b.const(nbytes, I64))) if nbytes != 1 else lin
            raw = b.add(llvm.LoadOp(b.byte_ptr(self.tiles[v], off), elem))
            return b.from_storage(raw, t)
        if not self._computed_here(v):
            return self.em.value(v)  # a scalar computed outside the body (or before), or a scalar block argument
        op = cast(Operation, v.owner)
        if op.name == "arith.constant" and isinstance(v.type, TensorType):
            return self.dense_constant(op, idx)
        if op.name == "tt.split":
            return _split(self, op, idx, v)
        region_rule = _REGION_RULES.get(op.name)
        if region_rule is not None:  # every result at once (a multi-operand reduce or scan)
            for r, value in zip(op.results, region_rule(self, op, idx), strict=True):
                self.memo[(r, tuple(id(i) for i in idx))] = value
            return self.memo[(v, tuple(id(i) for i in idx))]
        rule = _INDEX_RULES.get(op.name)
        if rule is not None:
            return rule(self, op, idx)
        shape = _shape(op.results[0].type) if op.results else []
        if any(is_tensor(o.type) and _shape(o.type) != shape for o in op.operands):
            raise not_handled(op, "an op whose operand and result shapes differ")
        args = [self.at(o, idx if isinstance(o.type, TensorType) else ()) for o in op.operands]
        return emit_scalar(b, op, args)

    def _computed_here(self, v: SSAValue) -> bool:
        """Whether `v` is computed by this evaluator: a body op's result, or on the scalar core a tensor value
        (its ops are evaluated where a consumer reads them) or a scalar not computed yet (a reduction's)."""
        owner = v.owner
        if not isinstance(owner, Operation):
            return False
        if self.op is None:
            return is_tensor(v.type) or v not in self.em.values
        return owner.parent_op() is self.op

    def loop(self, bound: SSAValue, name: str, body: Callable[[SSAValue], None]) -> None:
        """`_loop` for code evaluating body values inside it: what the loop computes stays in it (the memo is
        restored afterwards, so no value defined in the loop is used after it)."""
        saved = dict(self.memo)
        _loop(self.em, bound, name, body)
        self.memo = saved

    def dense_constant(self, op: Operation, idx: Index) -> SSAValue:
        """Element `idx` of a dense tensor constant: its value if uniform, else a load from a constant global."""
        value = op.properties.get("value")
        if not isinstance(value, DenseIntOrFPElementsAttr):
            raise not_handled(op, f"constant {value}")
        values = cast(list[int | float], list(value.get_values()))
        t = op.results[0].type
        b = self.em.b
        if len(set(values)) == 1:
            return b.const(values[0], register_type(t))
        elem = element_type(t)
        if is_bf16(elem) or storage_type(elem) != register_type(elem):
            raise not_handled(op, f"a non-uniform dense constant of {elem}")
        name = self.em.constant_array(values, storage_type(elem))
        ptr = b.add(llvm.AddressOfOp(name, PTR))
        return _load(b, ptr, self.linear(idx, _shape(t)), elem)

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
    start = cast(IntegerAttr, op.properties["start"]).value.data
    i = b.add(llvm.TruncOp(idx[0], I32))
    return b.add(llvm.AddOp(i, b.const(start, I32))) if start else i


def _expand_dims(e: _Element, op: Operation, idx: Index) -> SSAValue:
    axis = cast(IntegerAttr, op.properties["axis"]).value.data
    return e.at(op.operands[0], idx[:axis] + idx[axis + 1 :])


def _broadcast(e: _Element, op: Operation, idx: Index) -> SSAValue:
    src, dst = _shape(op.operands[0].type), _shape(op.results[0].type)
    zero = e.em.b.const(0, I64) if any(s == 1 and d != 1 for s, d in zip(src, dst, strict=True)) else None
    return e.at(op.operands[0], tuple(zero if s == 1 and d != 1 else i for i, s, d in zip(idx, src, dst, strict=True)))  # type: ignore[misc]


def _trans(e: _Element, op: Operation, idx: Index) -> SSAValue:
    order = list(cast(DenseArrayBase[IntegerType], op.properties["order"]).get_values())
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
    offsets = cast(mtia.ExtractSliceOp, op).offsets_per_dim()
    shifted: list[SSAValue] = []
    for i, off in zip(idx, offsets, strict=True):
        o = b.const(off, I64) if isinstance(off, int) else b.int_cast(e.at(off, ()), I64)
        shifted.append(i if isinstance(off, int) and off == 0 else b.add(llvm.AddOp(i, o)))
    return e.at(op.operands[0], tuple(shifted))


def _join(e: _Element, op: Operation, idx: Index) -> SSAValue:
    """tt.join: element (.., k) is element (..) of operand k (a new minor dimension of 2)."""
    b = e.em.b
    first = b.icmp("eq", idx[-1], b.const(0, I64))
    return b.add(llvm.SelectOp(first, e.at(op.operands[0], idx[:-1]), e.at(op.operands[1], idx[:-1])))


def _split(e: _Element, op: Operation, idx: Index, v: SSAValue) -> SSAValue:
    """tt.split: result k at (..) is the operand's element (.., k)."""
    k = list(op.results).index(v)  # type: ignore[arg-type]
    return e.at(op.operands[0], (*idx, e.em.b.const(k, I64)))


def _cat(e: _Element, op: Operation, idx: Index) -> SSAValue:
    """tt.cat along dimension 0; each operand is read at an index clamped into it (the other one is selected)."""
    b = e.em.b
    n0 = _shape(op.operands[0].type)[0]
    first = b.icmp("slt", idx[0], b.const(n0, I64))
    in_a = b.intrinsic("llvm.smin", [idx[0], b.const(n0 - 1, I64)], I64)
    in_b = b.intrinsic("llvm.smax", [b.add(llvm.SubOp(idx[0], b.const(n0, I64))), b.const(0, I64)], I64)
    return b.add(llvm.SelectOp(first, e.at(op.operands[0], (in_a, *idx[1:])), e.at(op.operands[1], (in_b, *idx[1:]))))


def _fail_unless(em: KernelEmitter, ok: SSAValue, message: str, op: Operation) -> None:
    """Continue where `ok` (i1) holds; elsewhere stop the program with `message` at `op`'s kernel line
    (`mtia_assert_fail` does not return: the launch fails with that error, as the model raises one)."""
    b = em.b
    cont, bad = em.new_block("check.ok", attach=False), em.new_block("check.fail")
    b.add(llvm.CondBrOp(ok, cont, [], bad, []))
    b.block = bad
    em.call("mtia_assert_fail", em.string(message, "msg."), em.loc(op))
    b.add(llvm.UnreachableOp())
    em.attach(cont)
    b.block = cont


def _gather(e: _Element, op: Operation, idx: Index) -> SSAValue:
    """tt.gather: element `idx` of the source with its `axis` index replaced by the index operand's element
    `idx`; an index outside the source stops the program, as the model raises (machine/interpret/tt.py)."""
    b = e.em.b
    axis = cast(IntegerAttr, op.properties["axis"]).value.data
    extent = _shape(op.operands[0].type)[axis]
    i = b.int_cast(e.at(op.operands[1], idx), I64)
    inside = b.add(llvm.AndOp(b.icmp("sge", i, b.const(0, I64)), b.icmp("slt", i, b.const(extent, I64))))
    _fail_unless(e.em, inside, f"tt.gather index outside [0, {extent}) along axis {axis}", op)
    return e.at(op.operands[0], (*idx[:axis], i, *idx[axis + 1 :]))


def _histogram(e: _Element, op: Operation, idx: Index) -> SSAValue:
    """tt.histogram: the count of bin `idx` (1-D), the source lanes equal to it (and not masked off)."""
    b = e.em.b
    src_shape = _shape(op.operands[0].type)
    if len(src_shape) != 1:
        raise not_handled(op, f"a histogram of a rank-{len(src_shape)} tensor")
    reg = register_type(op.results[0].type)
    slot = e.em.alloca(1, reg, "count")
    b.add(llvm.StoreOp(b.const(0, reg), slot))
    mask = cast(SSAValue | None, getattr(op, "mask", None))

    def lane(j: SSAValue) -> None:
        hit = b.icmp("eq", b.int_cast(e.at(op.operands[0], (j,)), I64), idx[0])
        if mask is not None:
            hit = b.add(llvm.AndOp(hit, e.at(mask, (j,))))
        count = b.add(llvm.LoadOp(slot, reg))
        b.add(llvm.StoreOp(b.add(llvm.AddOp(count, b.add(llvm.ZExtOp(hit, reg)))), slot))

    e.loop(b.const(src_shape[0], I64), "histogram.lanes", lane)
    return b.add(llvm.LoadOp(slot, reg))


def _unrealized_cast(e: _Element, op: Operation, idx: Index) -> SSAValue:
    if register_type(op.operands[0].type) != register_type(op.results[0].type):
        raise not_handled(op, "a cast between different element types")
    return e.at(op.operands[0], idx)


def _poison(e: _Element, op: Operation, idx: Index) -> SSAValue:
    """ub.poison reads as 0, as in the machine model (machine/interpret/tt.py)."""
    return e.em.b.const(0, register_type(op.results[0].type))


def _combine_region(e: _Element, op: Operation, args: Sequence[SSAValue]) -> list[SSAValue]:
    """The values the combine region of tt.reduce / tt.scan `op` yields for register values `args` (its block
    arguments: the left operands' lanes, then the right ones'), each op lowered as a body op (emit_scalar)."""
    block = op.regions[0].block
    local: dict[SSAValue, SSAValue] = dict(zip(block.args, args, strict=True))
    for inner in block.ops:
        if inner is block.last_op:
            return [local[v] if v in local else e.at(v, ()) for v in inner.operands]
        if inner.regions or len(inner.results) != 1 or is_tensor(inner.results[0].type):
            raise not_handled(inner, f"this op in the combine region of {op.name}")
        operands = [local[v] if v in local else e.at(v, ()) for v in inner.operands]
        local[inner.results[0]] = emit_scalar(e.em.b, inner, operands)
    raise not_handled(op, "a combine region without a terminator")


def _lanes_into(e: _Element, op: Operation, idx: Index, axis: int, reverse: bool) -> tuple[list[SSAValue], int]:
    """Stack arrays holding every operand of `op` along `axis` at the other indices `idx` (the lanes in reverse
    order for `reverse`), and the number of lanes."""
    b = e.em.b
    n = _shape(op.operands[0].type)[axis]
    regs = [register_type(o.type) for o in op.operands]
    bufs = [e.em.alloca(n, r, f"lanes{k}") for k, r in enumerate(regs)]

    def fill(i: SSAValue) -> None:
        lane = b.add(llvm.SubOp(b.const(n - 1, I64), i)) if reverse else i
        at = (*idx[:axis], lane, *idx[axis:])
        for o, buf, r in zip(op.operands, bufs, regs, strict=True):
            b.add(llvm.StoreOp(e.at(o, at), _slot(b, buf, i, r)))

    e.loop(b.const(n, I64), f"{op.name.split('.')[-1]}.lanes", fill)
    return bufs, n


def _slot(b: Builder, buf: SSAValue, i: SSAValue, reg: Attribute) -> SSAValue:
    """The address of element `i` (i64) of the stack array `buf` of registers of type `reg`."""
    return b.add(llvm.GEPOp(buf, [llvm.GEP_USE_SSA_VAL], reg, ssa_indices=[i]))


def _reduce(e: _Element, op: Operation, idx: Index) -> list[SSAValue]:
    """tt.reduce at output index `idx`: the model's pairwise tree (machine/interpret/tt.py `_tree_reduce`): each
    level combines lanes (2i, 2i+1) into lane i, an odd last lane moving up unchanged, until one lane is left."""
    b = e.em.b
    axis = cast(IntegerAttr, op.properties["axis"]).value.data
    bufs, n = _lanes_into(e, op, idx, axis, False)
    regs = [register_type(o.type) for o in op.operands]
    count = n
    while count > 1:
        half = count // 2

        def pair(i: SSAValue) -> None:
            two = b.add(llvm.MulOp(i, b.const(2, I64)))
            nxt = b.add(llvm.AddOp(two, b.const(1, I64)))
            lhs = [b.add(llvm.LoadOp(_slot(b, buf, two, r), r)) for buf, r in zip(bufs, regs, strict=True)]
            rhs = [b.add(llvm.LoadOp(_slot(b, buf, nxt, r), r)) for buf, r in zip(bufs, regs, strict=True)]
            for buf, r, v in zip(bufs, regs, _combine_region(e, op, [*lhs, *rhs]), strict=True):
                b.add(llvm.StoreOp(v, _slot(b, buf, i, r)))

        e.loop(b.const(half, I64), "reduce.level", pair)
        if count % 2:
            for buf, r in zip(bufs, regs, strict=True):
                last = b.add(llvm.LoadOp(_slot(b, buf, b.const(count - 1, I64), r), r))
                b.add(llvm.StoreOp(last, _slot(b, buf, b.const(half, I64), r)))
        count = half + count % 2
    return [b.add(llvm.LoadOp(buf, r)) for buf, r in zip(bufs, regs, strict=True)]


def _is_bf16_add(op: Operation) -> bool:
    """Whether the combine region of `op` is a bf16 sum the model accumulates in f32 (a bf16 tl.cumsum): the
    region machine/interpret/tt.py `fast_combiner` maps to numpy's add only when asked for that widening."""
    from mtia_xdsl.machine.interpret.tt import fast_combiner

    region = op.regions[0]
    return fast_combiner(region, wide_bf16_add=True) is not None and fast_combiner(region) is None


@dataclass(frozen=True)
class _ScanLanes:
    """The lanes of one tt.scan row after its Hillis-Steele steps (`_scan_lanes`)."""

    bufs: list[SSAValue]
    """One stack array per operand: the scanned lanes, in reverse lane order for a reverse scan."""
    regs: list[Attribute]
    n: int
    reverse: bool
    wide: bool
    """A bf16 sum accumulated in f32: each lane is rounded to bf16 when read (`result`)."""

    def result(self, b: Builder, lane: SSAValue) -> list[SSAValue]:
        """The scan's results at `lane` (i64) of the row."""
        pos = b.add(llvm.SubOp(b.const(self.n - 1, I64), lane)) if self.reverse else lane
        out = [b.add(llvm.LoadOp(_slot(b, buf, pos, r), r)) for buf, r in zip(self.bufs, self.regs, strict=True)]
        return [b.round_bf16(out[0])] if self.wide else out


def _scan_lanes(e: _Element, op: Operation, row: Index) -> _ScanLanes:
    """The model's Hillis-Steele scan (machine/interpret/tt.py `_hillis_steele_scan`) of tt.scan `op` along its
    axis at the other indices `row`: step s = 1, 2, 4, ... combining lane i - s into lane i; a reverse scan runs
    on the reversed lanes. A bf16 sum accumulates in f32 and is rounded once, as the model (and compiled
    Triton) does."""
    b = e.em.b
    axis = cast(IntegerAttr, op.properties["axis"]).value.data
    reverse = cast(IntegerAttr, op.properties.get("reverse", IntegerAttr(0, 1))).value.data != 0
    bufs, n = _lanes_into(e, op, row, axis, reverse)
    regs = [register_type(o.type) for o in op.operands]
    wide = _is_bf16_add(op)
    step = 1
    while step < n:

        def lane(j: SSAValue, s: int = step) -> None:  # i = n - 1 - j, from the top down (in place)
            i = b.add(llvm.SubOp(b.const(n - 1, I64), j))
            lo = b.add(llvm.SubOp(i, b.const(s, I64)))
            lhs = [b.add(llvm.LoadOp(_slot(b, buf, lo, r), r)) for buf, r in zip(bufs, regs, strict=True)]
            rhs = [b.add(llvm.LoadOp(_slot(b, buf, i, r), r)) for buf, r in zip(bufs, regs, strict=True)]
            out = [b.add(llvm.FAddOp(lhs[0], rhs[0]))] if wide else _combine_region(e, op, [*lhs, *rhs])
            for buf, r, v in zip(bufs, regs, out, strict=True):
                b.add(llvm.StoreOp(v, _slot(b, buf, i, r)))

        e.loop(b.const(n - step, I64), "scan.step", lane)
        step *= 2
    return _ScanLanes(bufs, regs, n, reverse, wide)


def _scan(e: _Element, op: Operation, idx: Index) -> list[SSAValue]:
    """tt.scan at index `idx`, its row scanned where it is read (`_scan_lanes`): a scan on the scalar core, or
    one of another shape than its command's output (an engine body's others are `scan_once` before the loops)."""
    axis = cast(IntegerAttr, op.properties["axis"]).value.data
    return _scan_lanes(e, op, idx[:axis] + idx[axis + 1 :]).result(e.em.b, idx[axis])


def scan_once(e: _Element, op: Operation, bounds: Sequence[SSAValue], tiles: dict[SSAValue, SSAValue]) -> None:
    """Compute tt.scan `op` of an engine body once for the command, before the loop nest over the output tile:
    each row (its other indices within `bounds`, the loop nest's trip counts) scanned once (`_scan_lanes`, so
    the same order and bits as `_scan`) into a stack tile per result, recorded in `tiles` for the loop nest to
    read; O(n log n) per row instead of per output element.

    Shapes: `op`'s results have the command's output shape (`bounds` has one count per dimension)."""
    b = e.em.b
    axis = cast(IntegerAttr, op.properties["axis"]).value.data
    shape = _shape(op.results[0].type)
    arrays = [e.em.alloca((mtia.tile_bytes(r.type) + 7) // 8, I64, "scan") for r in op.results]

    def nest(d: int, row: Index) -> None:
        if d == axis:
            d += 1
        if d < len(shape):
            e.loop(bounds[d], f"scan.d{d}", lambda i: nest(d + 1, (*row, i)))
            return
        lanes = _scan_lanes(e, op, row)

        def store(j: SSAValue) -> None:
            lin = e.linear((*row[:axis], j, *row[axis:]), shape)
            for arr, r, v in zip(arrays, op.results, lanes.result(b, j), strict=True):
                _store(b, arr, lin, element_type(r.type), v)

        e.loop(b.const(lanes.n, I64), "scan.out", store)

    nest(0, ())
    tiles.update(zip(op.results, arrays, strict=True))


_REGION_RULES: dict[str, Callable[[_Element, Operation, Index], list[SSAValue]]] = {
    "tt.reduce": _reduce,
    "tt.scan": _scan,
}
"""Body ops with a combine region, evaluated as loops over the lanes of their operands (all results at once)."""


_INDEX_RULES = {
    "tt.splat": _splat,
    "tt.make_range": _make_range,
    "tt.expand_dims": _expand_dims,
    "tt.broadcast": _broadcast,
    "tt.trans": _trans,
    "tt.reshape": _reshape,
    "mtia.extract_slice": _extract_slice,
    "tt.join": _join,
    "tt.cat": _cat,
    "tt.gather": _gather,
    "tt.histogram": _histogram,
    "builtin.unrealized_conversion_cast": _unrealized_cast,
    "ub.poison": _poison,
}
"""Body ops that pick the element their operand holds (operand forms and index generators)."""


def scalar_core_values(em: KernelEmitter, op: Operation, tiles: Mapping[SSAValue, SSAValue]) -> list[SSAValue]:
    """The scalar results of scalar-core op `op` reading tensor values (a tt.reduce of tiles the scalar core
    read, `tiles`: value -> its stack copy), each tensor operand evaluated element by element."""
    e = _Element(em, None, tiles)
    return [e.at(r, ()) for r in op.results]


def scalar_core_tile(em: KernelEmitter, v: SSAValue, tiles: dict[SSAValue, SSAValue]) -> SSAValue:
    """The address of tensor value `v` of the scalar core in memory (storage format, row-major): its copy in
    `tiles`, or a new stack array its elements are computed into (then recorded in `tiles`)."""
    got = tiles.get(v)
    if got is not None:
        return got
    t = v.type
    shape, elem = _shape(t), element_type(t)
    arr = em.alloca((mtia.tile_bytes(t) + 7) // 8, I64, "tile")
    e = _Element(em, None, tiles)

    def nest(d: int, idx: Index) -> None:
        if d < len(shape):
            e.loop(em.b.const(shape[d], I64), f"tile.d{d}", lambda i: nest(d + 1, (*idx, i)))
            return
        _store(em.b, arr, e.linear(idx, shape), elem, e.at(v, idx))

    nest(0, ())
    tiles[v] = arr
    return arr


def scalar_core_assert(em: KernelEmitter, op: Operation, tiles: Mapping[SSAValue, SSAValue]) -> None:
    """tt.assert on the scalar core: every element of its condition (a scalar, or a tensor evaluated element by
    element) must hold, else the program stops with its message at the kernel line (`mtia_assert_fail`)."""
    e = _Element(em, None, tiles)
    cond = op.operands[0]
    message = cast(StringAttr, op.properties["message"]).data
    shape = _shape(cond.type)

    def nest(d: int, idx: Index) -> None:
        if d < len(shape):
            e.loop(em.b.const(shape[d], I64), f"assert.d{d}", lambda i: nest(d + 1, (*idx, i)))
            return
        _fail_unless(em, e.at(cond, idx), message, op)

    nest(0, ())


def combine_region_instrs(op: Operation) -> int:
    """The scalar-core instructions the machine model counts for running the combine region of tt.reduce /
    tt.scan `op` outside an engine body: every op of the region (its terminator too) once per tree level or
    scan step, as the model applies the region to all lanes of a level at once; none when it applies a numpy
    combiner instead (machine/interpret/tt.py `fast_combiner`)."""
    from mtia_xdsl.machine.interpret.tt import fast_combiner

    if op.name not in _REGION_RULES:
        return 0
    scan = op.name == "tt.scan"
    if len(op.operands) == 1 and fast_combiner(op.regions[0], wide_bf16_add=scan) is not None:
        return 0
    n = _shape(op.operands[0].type)[cast(IntegerAttr, op.properties["axis"]).value.data]
    rounds = 0
    while n > 1:  # a reduce's tree levels; a scan's steps 1, 2, 4, ... below n are as many
        n, rounds = (n + 1) // 2, rounds + 1
    return rounds * len(list(op.regions[0].block.ops))


def _begin(em: KernelEmitter, op: Operation, engine: str) -> None:
    kind = em.string(command_kind(op.name), "kind.")
    em.call("mtia_cmd_begin", em.b.const(ENGINES[engine], I32), kind, em.loc(op))


def _tile_in(em: KernelEmitter, cb: SSAValue, name: str) -> SSAValue:
    ptr = em.call("mtia_cmd_in", em.value(cb))
    ptr.name_hint = name
    return ptr


def _tile_out(em: KernelEmitter, cb: SSAValue, inplace: bool, name: str) -> SSAValue:
    ptr = em.call("mtia_cmd_inout" if inplace else "mtia_cmd_out", em.value(cb))
    ptr.name_hint = name
    return ptr


def _clamped(em: KernelEmitter, valid: Sequence[SSAValue], shape: Sequence[int]) -> list[SSAValue]:
    """Trip counts per dimension: the extents, or the valid extents clamped to [0, extent]."""
    return [_bound(em, extent, valid[d] if valid else None) for d, extent in enumerate(shape)]


def _output_shape(op: mtia.EngineComputeOp) -> list[int]:
    """The shape of every output tile of `op`. Raises: NotHandled for what the loop nest cannot cover."""
    if not op.outs:
        raise not_handled(op, "a tensor-level command (run the buffer-level program)")
    shapes = {tuple(_shape(mtia.tile_type(o.type))) for o in op.outs}
    if len(shapes) != 1:
        raise not_handled(op, "results of different shapes")
    shape = list(next(iter(shapes)))
    if len(shape) > MAX_RANK and op.valid:  # only an effective shape needs the shape in the record
        raise not_handled(op, f"an effective shape of rank {len(shape)} (at most {MAX_RANK})")
    for inner in op.body.block.walk():
        if inner.regions and inner is not op and inner.name not in _REGION_RULES:
            raise not_handled(inner, "a region inside an engine command body")
        if not inner.results and not inner.has_trait(IsTerminator):  # its effect would be lost (tt.print)
            raise not_handled(inner, "an op without results inside an engine command body")
    return shape


def _bind_inputs(
    em: KernelEmitter, op: mtia.EngineComputeOp, inplace: Sequence[SSAValue] = ()
) -> dict[SSAValue, SSAValue]:
    """Bind the body's arguments: tensor tiles to their LS address (returned), scalars to registers; the tiles
    of `inplace` CBs (read where the command writes them, `mtia_cmd_inout`) are left to the caller."""
    tiles: dict[SSAValue, SSAValue] = {}
    count = 0
    for arg, operand in zip(op.body.block.args, op.inputs, strict=True):
        if operand in inplace and isinstance(arg.type, TensorType):
            continue
        if mtia.is_cb(operand):
            ptr = _tile_in(em, operand, f"{arg.name_hint}.tile" if arg.name_hint else f"in{count}")  # `x.tile`
            count += 1
            if isinstance(arg.type, TensorType):
                tiles[arg] = ptr
            else:  # a scalar tile: one element
                em.values[arg] = em.b.from_storage(em.b.add(llvm.LoadOp(ptr, storage_type(arg.type))), arg.type)
        elif isinstance(operand.type, TensorType):
            raise not_handled(op, "an engine command reading a tensor outside a CB")
        else:
            em.values[arg] = em.value(operand)
    return tiles


def emit_engine_command(em: KernelEmitter, op: mtia.EngineComputeOp) -> None:
    """Emit one SE/VEC/MLU command: tile addresses, the loop nest over its output tile, the recording call.

    Raises: NotHandled naming the kernel line for a body the emitter does not translate.
    """
    block = op.body.block
    if not op.outs and all(inner.name == "tt.print" for inner in block.ops if inner is not block.last_op):
        _print_only(em, op)
        return
    shape = _output_shape(op)
    _begin(em, op, _ENGINES[type(op)])
    inplace = op.inplace is not None
    tiles = _bind_inputs(em, op, list(op.outs) if inplace else [])
    outs = [_tile_out(em, o, inplace, f"out{k}") for k, o in enumerate(op.outs)]
    e = _Element(em, op, tiles)
    if inplace:  # the body reads the accumulator where the command writes it (mtia_cmd_inout waits for it)
        for arg, operand in zip(block.args, op.inputs, strict=True):
            if operand in op.outs and isinstance(arg.type, TensorType):
                tiles[arg] = outs[list(op.outs).index(operand)]
                e.inplace_args.add(arg)
    for inner in block.ops:  # scalar values once, before the loops
        if inner is not block.last_op and not any(isinstance(r.type, TensorType) for r in inner.results):
            for r in inner.results:
                em.values[r] = e.at(r, ())
    valid = [em.value(v) for v in op.valid]
    bounds = _clamped(em, valid, shape)
    for inner in block.ops:  # each scan of the output's shape once, before the loops
        if inner.name == "tt.scan" and _shape(inner.results[0].type) == shape:
            scan_once(e, inner, bounds, tiles)
    yields = list(block.last_op.operands)  # type: ignore[union-attr]
    out_tiles = [mtia.tile_type(o.type) for o in op.outs]
    _loop_nest(em, e, bounds, shape, yields, out_tiles, outs)
    # the record's output shape only scales the work of an effective shape (none past MTIA_MAX_RANK)
    _compute_end(em, ComputeInfo.of(op), shape if len(shape) <= MAX_RANK else [], valid)


def _print_only(em: KernelEmitter, op: mtia.EngineComputeOp) -> None:
    """A body that only prints the tiles it reads (tl.device_print): the model records no command for it, so
    neither does this; each tt.print writes `pid (x, y, z)<prefix>` and the tile's elements on one line
    (printf, as the C++ emitter's code does)."""
    b = em.b
    tiles = dict(zip(op.body.block.args, op.inputs, strict=True))
    pid = [em.call("mtia_program_id", b.const(axis, I32)) for axis in range(3)]
    for pr in op.body.block.ops:
        if pr.name != "tt.print":
            continue
        prefix = pr.properties.get("prefix", pr.attributes.get("prefix"))
        text = prefix.data if isinstance(prefix, StringAttr) else ""
        em.printf(f"pid (%d, %d, %d){text}", *pid)
        for v in pr.operands:
            cb = tiles.get(v)  # type: ignore[call-overload]
            if cb is None or not mtia.is_cb(cb):
                raise not_handled(pr, "a print of a value other than a tile the command reads from a CB")
            t = mtia.tile_type(cb.type)
            ptr = em.call("mtia_cb_front_ptr", em.value(cb), em.loc(pr))
            et = element_type(t)

            def element(q: SSAValue, ptr: SSAValue = ptr, et: Attribute = et) -> None:
                x = _load(b, ptr, q, et)
                if is_int(x.type):
                    em.printf(" %lld", b.int_cast(x, I64, signed=int_width(x.type) > 1))
                else:
                    em.printf(" %.9g", x if isinstance(x.type, Float64Type) else b.add(llvm.FPExtOp(x, F64)))

            _loop(em, b.const(elem_count(t), I64), "print", element)
        em.printf("\n")


def _compute_end(em: KernelEmitter, info: ComputeInfo, shape: list[int], valid: list[SSAValue]) -> None:
    """`mtia_compute_end` with the command's `mtia_work`: static work (machine/work.py) and effective shape."""
    b = em.b
    w = em.alloca(WORK["size"] // 8, name="work")
    em.store_at(w, WORK["elems"], b.const(info.elems, I64))
    em.store_at(w, WORK["dtype"], em.string(info.dtype, "dtype."))
    em.store_at(w, WORK["lut"], b.const(int(info.lut), I32))
    em.store_at(w, WORK["out_rank"], b.const(len(shape), I32))
    for k in range(MAX_RANK):
        em.store_at(w, WORK["out_shape"] + 8 * k, b.const(shape[k] if k < len(shape) else 0, I64))
        em.store_at(w, WORK["valid"] + 8 * k, valid[k] if k < len(valid) else b.const(0, I64))
    em.store_at(w, WORK["nvalid"], b.const(len(valid), I32))
    em.store_at(w, WORK["ls_bytes"], b.const(info.ls_bytes, I64))
    em.call("mtia_compute_end", w)


def _loop(em: KernelEmitter, bound: SSAValue, name: str, body: Callable[[SSAValue], None]) -> None:
    """`for (i = 0; i < bound; ++i) body(i)` with i64 `i`; `body` emits at the builder's block."""
    b = em.b
    header, inner = em.new_block(name, [I64]), em.new_block(f"{name}.body")
    exit_ = em.new_block(f"{name}.end", attach=False)
    b.add(llvm.BrOp(header, b.const(0, I64)))
    b.block = header
    iv = header.args[0]
    iv.name_hint = name.rsplit(".", 1)[-1]
    b.add(llvm.CondBrOp(b.icmp("slt", iv, bound), inner, [], exit_, []))
    b.block = inner
    body(iv)
    b.add(llvm.BrOp(header, b.add(llvm.AddOp(iv, b.const(1, I64)))))
    em.attach(exit_)
    b.block = exit_


def _load(b: Builder, base: SSAValue, index: SSAValue, t: Attribute) -> SSAValue:
    """Element `index` (i64) of the LS tile at `base` with elements of type `t`, as a register."""
    nbytes = mtia.element_bytes(t)
    off = b.add(llvm.MulOp(index, b.const(nbytes, I64))) if nbytes != 1 else index
    return b.from_storage(b.add(llvm.LoadOp(b.byte_ptr(base, off), storage_type(t))), t)


def _store(b: Builder, base: SSAValue, index: SSAValue, t: Attribute, v: SSAValue) -> None:
    nbytes = mtia.element_bytes(t)
    off = b.add(llvm.MulOp(index, b.const(nbytes, I64))) if nbytes != 1 else index
    b.add(llvm.StoreOp(b.to_storage(v, t), b.byte_ptr(base, off)))


def _lin(b: Builder, terms: Sequence[tuple[SSAValue, int]]) -> SSAValue:
    """sum(i * stride) over `terms` (i64)."""
    total: SSAValue | None = None
    for i, s in terms:
        t = i if s == 1 else b.add(llvm.MulOp(i, b.const(s, I64)))
        total = t if total is None else b.add(llvm.AddOp(total, t))
    return total if total is not None else b.const(0, I64)


@dataclass(frozen=True)
class _Dpe:
    """One DPE matmul's tiles (LS addresses), shapes and element types, for `_dpe_element`."""

    a: SSAValue
    b: SSAValue
    c: SSAValue | None
    """The accumulator tile, or None when `c` is a scalar (`c_scalar`)."""
    c_scalar: SSAValue | None
    d: SSAValue
    mnk: tuple[int, int, int]
    types: tuple[Attribute, Attribute, Attribute, Attribute]
    """Element types of A, B, C and D."""
    tf32: bool


def emit_dpe(em: KernelEmitter, op: mtia.DpeMatmulOp) -> None:
    """Emit one DPE matmul (see the module docstring). Raises: NotHandled for a tensor-level one, one of
    more than one batch dimension, or a bf16 accumulator."""
    if op.out is None:
        raise not_handled(op, "a tensor-level DPE matmul (run the buffer-level program)")
    t_a, t_b, out_t = mtia.tile_type(op.a.type), mtia.tile_type(op.b.type), mtia.tile_type(op.out.type)
    *batch, m, k = _shape(t_a)
    n = _shape(t_b)[-1]
    if len(batch) > 1:
        raise not_handled(op, "a DPE matmul with more than one batch dimension")
    ea, ed = element_type(t_a), element_type(out_t)
    if is_bf16(ed):
        raise not_handled(op, "a bf16 accumulator (a double rounding through f32)")
    ec = mtia.tile_type(op.c.type)
    inplace = op.inplace is not None
    _begin(em, op, "dpe")
    a, bp = _tile_in(em, op.a, "a"), _tile_in(em, op.b, "b")
    c_ptr = _tile_in(em, op.c, "c") if mtia.is_cb(op.c) and not inplace else None
    d = _tile_out(em, op.out, inplace, "d")  # inplace: mtia_cmd_inout waits for the accumulator and fills it
    tf32 = op.input_precision.value.data == 0 and isinstance(ea, Float32Type)
    dpe = _Dpe(
        a, bp, d if inplace else c_ptr, em.value(op.c) if c_ptr is None and not inplace else None, d, (m, n, k),
        (ea, element_type(t_b), element_type(ec), ed), tf32,
    )  # fmt: skip
    valid = [em.value(v) for v in op.valid]
    vm, vn, vk = _clamped(em, valid, [m, n, k])
    b = em.b

    def rows(bb: SSAValue) -> None:
        def row(mm: SSAValue) -> None:
            def element(nn: SSAValue) -> None:
                _dpe_element(em, dpe, vk, bb, mm, nn)

            _loop(em, vn, "dpe.n", element)

        _loop(em, vm, "dpe.m", row)

    _loop(em, b.const(batch[0] if batch else 1, I64), "dpe.batch", rows)
    vals = em.i64_array(valid or [0], 3)
    em.call(
        "mtia_dpe_end", b.const(batch[0] if batch else 1, I64), b.const(m, I64), b.const(n, I64), b.const(k, I64),
        em.string(dtype_name(t_a), "dtype."), b.const(op.input_precision.value.data, I32),
        b.const(dpe_ls_bytes(op), I64), b.const(len(valid), I32), vals,
    )  # fmt: skip


def _dpe_element(em: KernelEmitter, p: _Dpe, vk: SSAValue, bb: SSAValue, mm: SSAValue, nn: SSAValue) -> None:
    """D[bb, mm, nn] = C[bb, mm, nn] + sum over the valid K of A[bb, mm, kk] * B[bb, kk, nn], exact, rounded once."""
    b = em.b
    m, n, k = p.mnk
    ea, eb, ec, ed = p.types
    integer = isinstance(register_type(ea), IntegerType)
    acc_t = I64 if integer else F64

    def widen(v: SSAValue) -> SSAValue:
        if integer:
            return b.int_cast(v, I64)
        return b.add(llvm.FPExtOp(_round_tf32(b, v) if p.tf32 else v, F64))

    ci = _lin(b, [(bb, m * n), (mm, n), (nn, 1)])
    c0 = _load(b, p.c, ci, ec) if p.c is not None else p.c_scalar
    assert c0 is not None
    slot = em.alloca(1, acc_t, "acc")
    b.add(llvm.StoreOp(b.int_cast(c0, I64) if integer else b.add(llvm.FPExtOp(c0, F64)), slot))

    def step(kk: SSAValue) -> None:
        x = widen(_load(b, p.a, _lin(b, [(bb, m * k), (mm, k), (kk, 1)]), ea))
        y = widen(_load(b, p.b, _lin(b, [(bb, k * n), (kk, n), (nn, 1)]), eb))
        acc = b.add(llvm.LoadOp(slot, acc_t))
        prod = b.add(llvm.MulOp(x, y) if integer else llvm.FMulOp(x, y))
        b.add(llvm.StoreOp(b.add(llvm.AddOp(acc, prod) if integer else llvm.FAddOp(acc, prod)), slot))

    _loop(em, vk, "dpe.k", step)
    acc = b.add(llvm.LoadOp(slot, acc_t))
    res = b.int_cast(acc, register_type(ed)) if integer else b.add(llvm.FPTruncOp(acc, register_type(ed)))
    _store(b, p.d, ci, ed, res)


def _round_tf32(b: Builder, v: SSAValue) -> SSAValue:
    """f32 `v` rounded to tf32 (10 mantissa bits, nearest even; inf and NaN kept), semantics.scalar.round_tf32."""
    u = b.add(llvm.BitcastOp(v, I32))
    lsb = b.add(llvm.AndOp(b.add(llvm.LShrOp(u, b.const(TF32_DROPPED_BITS, I32))), b.const(1, I32)))
    r = b.add(llvm.AddOp(u, b.add(llvm.AddOp(lsb, b.const((1 << (TF32_DROPPED_BITS - 1)) - 1, I32)))))
    r = b.add(llvm.AndOp(r, b.const(~((1 << TF32_DROPPED_BITS) - 1), I32)))
    special = b.icmp("uge", b.add(llvm.AndOp(u, b.const(0x7FFFFFFF, I32))), b.const(0x7F800000, I32))
    return b.add(llvm.BitcastOp(b.add(llvm.SelectOp(special, u, r)), F32))


_RE_INIT = {"addf": 0.0, "maxnumf": float("-inf"), "maximumf": float("-inf"), "minnumf": float("inf"),
            "minimumf": float("inf"), "addi": 0}  # fmt: skip
_RE_COMBINE: dict[str, Callable[[Builder, SSAValue, SSAValue], SSAValue]] = {
    "addf": lambda b, x, y: b.add(llvm.FAddOp(x, y)),
    "addi": lambda b, x, y: b.add(llvm.AddOp(x, y)),
    **{
        kind: (lambda name: lambda b, x, y: b.intrinsic(name, [x, y], x.type))(name)
        for kind, name in (*((op[len("arith.") :], rule.llvm_intrinsic) for op, rule in MAX_MIN.items()),
                           ("maxsi", "llvm.smax"), ("minsi", "llvm.smin"),
                           ("maxui", "llvm.umax"), ("minui", "llvm.umin"))
    },
}  # fmt: skip
"""The combiner of each RE reduction kind on two registers (the `arith` op of its name, backend/llvm_scalar.py)."""


def _re_init(b: Builder, kind: str, t: Attribute) -> SSAValue:
    r = register_type(t)
    if kind in _RE_INIT:
        return b.const(_RE_INIT[kind], r)
    width = int_width(r)
    return b.const({"maxsi": -(1 << (width - 1)), "minsi": (1 << (width - 1)) - 1, "maxui": 0, "minui": -1}[kind], r)


@dataclass(frozen=True)
class _ReTile:
    """The lanes one output element of an RE reduction combines: along `axis` of the input tile at `x`."""

    x: SSAValue
    elem: Attribute
    strides: list[int]
    idx: dict[int, SSAValue]
    """The output element's index in the other dimensions."""
    axis: int
    inside: SSAValue | None
    """Whether the output element is inside the valid extents of the other dimensions (None: always)."""
    extent: SSAValue
    """The valid extent along the axis, clamped to the tile."""

    def lane(self, b: Builder, i: SSAValue, identity: SSAValue) -> SSAValue:
        """Lane `i` along the axis, or `identity` outside the valid extents (what the model reads there)."""
        lanes = {**self.idx, self.axis: i}
        v = _load(b, self.x, _lin(b, [(lanes[d], s) for d, s in enumerate(self.strides)]), self.elem)
        ok = b.icmp("slt", i, self.extent)
        ok = ok if self.inside is None else b.add(llvm.AndOp(ok, self.inside))
        return b.add(llvm.SelectOp(ok, v, identity))


def _sum_pairwise(em: KernelEmitter, tile: _ReTile, n: int) -> SSAValue:
    """The float sum of the `n` lanes in numpy's pairwise order, accumulated in f32 (f64 for f64) and rounded
    once to the element type, as numpy's float add.reduce along a contiguous axis (f16 accumulates in f32);
    the order is semantics.reduce.pairwise_sum's (PAIRWISE_BLOCK, PAIRWISE_ACCUMULATORS)."""
    b = em.b
    acc_t = F64 if isinstance(tile.elem, Float64Type) else F32
    zero = b.const(0.0, acc_t)
    reg = register_type(tile.elem)

    def lane(i: SSAValue) -> SSAValue:
        v = tile.lane(b, i, b.const(0.0, reg))
        return v if reg == acc_t else b.add(llvm.FPExtOp(v, acc_t))

    def block(lo: int, count: int) -> SSAValue:
        if count < PAIRWISE_ACCUMULATORS:
            res = zero
            for k in range(count):
                res = b.add(llvm.FAddOp(res, lane(b.const(lo + k, I64))))
            return res
        if count <= PAIRWISE_BLOCK:
            return _pairwise_block(em, lo, count, acc_t, lane)
        half = count // 2
        half -= half % PAIRWISE_ACCUMULATORS
        return b.add(llvm.FAddOp(block(lo, half), block(lo + half, count - half)))

    total = block(0, n)
    if reg == acc_t:
        return total
    res = b.add(llvm.FPTruncOp(total, reg)) if not is_bf16(tile.elem) else total
    return b.round_bf16(res) if is_bf16(tile.elem) else res


def _pairwise_block(
    em: KernelEmitter, lo: int, count: int, acc_t: Attribute, lane: Callable[[SSAValue], SSAValue]
) -> SSAValue:
    """numpy's PAIRWISE_ACCUMULATORS-accumulator sum of lanes [lo, lo + count), PAIRWISE_ACCUMULATORS <= count
    <= PAIRWISE_BLOCK; the accumulators are combined in adjacent pairs."""
    b = em.b
    k = PAIRWISE_ACCUMULATORS
    slots = [em.alloca(1, acc_t, "pw") for _ in range(k)]
    for j, slot in enumerate(slots):
        b.add(llvm.StoreOp(lane(b.const(lo + j, I64)), slot))
    rounds = (count - count % k) // k - 1

    def step(r: SSAValue) -> None:
        base = b.add(llvm.AddOp(b.add(llvm.MulOp(r, b.const(k, I64))), b.const(lo + k, I64)))
        for j, slot in enumerate(slots):
            v = lane(b.add(llvm.AddOp(base, b.const(j, I64))))
            b.add(llvm.StoreOp(b.add(llvm.FAddOp(b.add(llvm.LoadOp(slot, acc_t)), v)), slot))

    _loop(em, b.const(rounds, I64), "re.pairwise", step)
    r = [b.add(llvm.LoadOp(slot, acc_t)) for slot in slots]
    while len(r) > 1:  # ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        r = [b.add(llvm.FAddOp(r[2 * j], r[2 * j + 1])) for j in range(len(r) // 2)]
    res = r[0]
    for j in range(count - count % k, count):
        res = b.add(llvm.FAddOp(res, lane(b.const(lo + j, I64))))
    return res


def _sum_in_order(em: KernelEmitter, tile: _ReTile, n: int) -> SSAValue:
    """The float sum of the `n` lanes in lane order from the first, rounding each add to the element type, as
    numpy's add.reduce along a non-contiguous axis."""
    b = em.b
    reg = register_type(tile.elem)
    zero = b.const(0.0, reg)
    slot = em.alloca(1, reg, "acc")
    b.add(llvm.StoreOp(tile.lane(b, b.const(0, I64), zero), slot))

    def step(i: SSAValue) -> None:
        new = b.add(
            llvm.FAddOp(b.add(llvm.LoadOp(slot, reg)), tile.lane(b, b.add(llvm.AddOp(i, b.const(1, I64))), zero))
        )
        b.add(llvm.StoreOp(b.round_bf16(new) if is_bf16(tile.elem) else new, slot))

    _loop(em, b.const(n - 1, I64), "re.lanes", step)
    return b.add(llvm.LoadOp(slot, reg))


def _reduce_loop(em: KernelEmitter, tile: _ReTile, kind: str, n: int) -> SSAValue:
    """The reduction `kind` (not a float sum: its order does not change the result) over the valid lanes of
    the `n` along the axis. The lanes past the valid extent count as the kind's identity; for maxnumf / minnumf
    that lane matters when every valid lane is NaN (numpy's fmax of NaNs is NaN, of NaN and -inf is -inf), so
    the accumulator starts at NaN, which any number replaces, when no lane is past the valid extent."""
    b = em.b
    reg = register_type(tile.elem)
    slot = em.alloca(1, reg, "acc")
    init = _re_init(b, kind, tile.elem)
    if kind in ("maxnumf", "minnumf"):
        padded = b.icmp("slt", tile.extent, b.const(n, I64))
        init = b.add(llvm.SelectOp(padded, init, b.const(float("nan"), reg)))
    b.add(llvm.StoreOp(init, slot))
    combine = _RE_COMBINE[kind]

    def step(i: SSAValue) -> None:
        acc = b.add(llvm.LoadOp(slot, reg))
        lanes = {**tile.idx, tile.axis: i}
        v = _load(b, tile.x, _lin(b, [(lanes[d], s) for d, s in enumerate(tile.strides)]), tile.elem)
        new = combine(b, acc, v)
        if tile.inside is not None:
            new = b.add(llvm.SelectOp(tile.inside, new, acc))
        b.add(llvm.StoreOp(new, slot))

    _loop(em, tile.extent, f"re.d{tile.axis}", step)
    return b.add(llvm.LoadOp(slot, reg))


def emit_re(em: KernelEmitter, op: mtia.ReReduceOp) -> None:
    """Emit one RE reduction (see the module docstring)."""
    if op.out is None:
        raise not_handled(op, "a tensor-level RE reduce (run the buffer-level program)")
    t_in, out_t = mtia.tile_type(op.input.type), mtia.tile_type(op.out.type)
    shape, axis, kind = _shape(t_in), op.axis.value.data, op.kind.data
    et = element_type(t_in)
    _begin(em, op, "re")
    x, y = _tile_in(em, op.input, "x"), _tile_out(em, op.out, False, "y")
    valid = [em.value(v) for v in op.valid]
    ext = _clamped(em, valid, shape)
    b = em.b
    if kind not in _RE_COMBINE:
        raise not_handled(op, f"an RE reduction of kind {kind}")
    outer = [d for d in range(len(shape)) if d != axis]
    strides = _strides(shape)
    out_strides = _strides([shape[d] for d in outer])

    def nest(level: int, idx: dict[int, SSAValue]) -> None:
        if level < len(outer):
            d = outer[level]

            def deeper(i: SSAValue) -> None:
                nest(level + 1, {**idx, d: i})

            _loop(em, b.const(shape[d], I64), f"re.d{d}", deeper)
            return
        inside: SSAValue | None = None
        if valid:
            for d in outer:
                c = b.icmp("slt", idx[d], ext[d])
                inside = c if inside is None else b.add(llvm.AndOp(inside, c))
        tile = _ReTile(x, et, strides, idx, axis, inside, ext[axis])
        if kind == "addf":
            result = (
                _sum_pairwise(em, tile, shape[axis]) if axis == len(shape) - 1 else _sum_in_order(em, tile, shape[axis])
            )
        else:
            result = _reduce_loop(em, tile, kind, shape[axis])
        _store(
            b,
            y,
            _lin(b, [(idx[d], s) for d, s in zip(outer, out_strides, strict=True)]),
            et,
            result,
        )

    nest(0, {})
    shp = em.i64_array([b.const(s, I64) for s in shape], len(shape))
    vals = em.i64_array(valid, max(len(valid), 1))
    em.call(
        "mtia_re_end", b.const(len(shape), I32), shp, em.string(dtype_name(out_t), "dtype."),
        b.const(re_ls_bytes(op), I64), b.const(len(valid), I32), vals,
    )  # fmt: skip


def _bound(em: KernelEmitter, extent: int, valid: SSAValue | None) -> SSAValue:
    """The trip count of one dimension: its extent, or the valid extent clamped to [0, extent]."""
    b = em.b
    if valid is None:
        return b.const(extent, I64)
    clamped = b.intrinsic("llvm.smin", [valid, b.const(extent, I64)], I64)
    return b.intrinsic("llvm.smax", [clamped, b.const(0, I64)], I64)


def _loop_nest(
    em: KernelEmitter,
    e: _Element,
    bounds: list[SSAValue],
    shape: list[int],
    yields: list[SSAValue],
    out_tiles: list[Attribute],
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


emit_loop = _loop
"""`for (i = 0; i < bound; ++i) body(i)` (i64 `i`) for the scalar core's code (backend/llvm.py)."""
load_element = _load
"""Element `index` (i64) of the tile at an address, as a register (storage_type -> register_type)."""
store_element = _store
"""Store a register as element `index` (i64) of the tile at an address (register -> storage_type)."""

"""mtia-cb-bufferize: place every engine-produced value in a circular buffer (CB) in local storage.

Tensor-level engine ops become buffer-level commands: a producer is bracketed by
`mtia.cb_reserve`/`mtia.cb_push` of its output CB; a consumer is preceded by `mtia.cb_wait` of each
input CB and reads the front tile; the front tile is released by `mtia.cb_pop` after its last
consumer in the block that defines it. The scalar core reads an engine-produced scalar with the
blocking `mtia.cb_read`. Values carried around an `scf.for` or out of an `scf.if` share one CB with
the values that feed them (which values live in CBs: `transforms/analysis/cb_residency.py`, the rule
convert-tt-to-mtia maps engines by; an identity copy command is inserted where a feeding value is not exclusively
the carried one), and drop out of the loop's or branch's SSA values. An `scf.while` carries a tile the
same way: its init, before-region argument and after-region yield share one CB, and so do the value
its `scf.condition` forwards, the after-region argument and the result; a before-region argument the
condition forwards whole is read there without being popped (its tile moves on to the after region or
the result).

A loop-carried accumulator whose current tile is read only by the DPE or SE/VEC command making the next
one (`acc = tl.dot(a, b, acc)`, `acc = acc * s + x`; same tile type), or by a chain of such commands each
reading only the one before (`acc = tl.dot(p, v, acc * alpha)`), is updated in place: each command is
marked `inplace`, names the CB as input and output, and is preceded by a `mtia.cb_wait` only (no
reserve, push or pop), so the CB keeps one slot (the DPE accumulates in the RE/LS).

Every CB starts at depth 1, except any other loop-carried CB whose next value is produced while the
current one is still read (depth 2). The CBs alive at the same time (transforms/analysis/cb_liveness.py)
must fit `MachineConfig.ls_bytes`; mtia-cb-allocate later lets CBs never alive together share bytes.

Requires: convert-tt-to-mtia.
Raises: LocalStorageOverflow (a PassFailedException) when the CBs alive at once exceed local storage (the
largest of them listed).
Example: mtia-opt k.mlir -p convert-tt-to-mtia,mtia-cb-bufferize
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import AnyFloat, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.dialects import mtia, tt
from mtia_xdsl.transforms.analysis.cb_residency import cb_resident_values
from mtia_xdsl.transforms.errors import LocalStorageOverflow
from mtia_xdsl.transforms.program_level import is_buffer_level
from mtia_xdsl.transforms.scf_utils import rebuild_for
from mtia_xdsl.transforms.target import machine_config_for
from mtia_xdsl.utils.isa import isa
from mtia_xdsl.utils.locations import location_str, with_loc
from mtia_xdsl.utils.walk import ops_of


def _loc(op: Operation | None) -> str:
    return location_str(op.location if op is not None else None)


# ----------------------------------------------------------------------------------------------
# Step 1: make every carried value exclusively owned (insert identity copies)
# ----------------------------------------------------------------------------------------------


def _copy(value: SSAValue, before: Operation) -> SSAValue:
    """Insert an identity engine command copying `value` (a tile or scalar) before `before`."""
    block = Block(arg_types=[value.type])
    block.add_op(with_loc(mtia.YieldOp(block.args[0]), before))
    engine = mtia.SeComputeOp if _is_float(value.type) else mtia.VecComputeOp
    op = engine([value], [value.type], Region(block))
    op.location = before.location
    Rewriter.insert_op(op, InsertPoint.before(before))
    return op.results[0]


def _is_float(t: Attribute) -> bool:
    return isa(t.element_type if isinstance(t, TensorType) else t, AnyFloat)


def _ancestor_in(op: Operation, block: Block) -> Operation | None:
    """Return the ancestor of `op` (or op) whose parent block is `block`, or None."""
    cur: Operation | None = op
    while cur is not None and cur.parent is not block:
        cur = cur.parent_op()
    return cur


def _owned_producer(value: SSAValue, block: Block) -> bool:
    """True if `value` is produced by an engine op directly in `block` and used exactly once."""
    return (
        isinstance(value, OpResult)
        and isa(value.op, mtia.ENGINE_OPS)
        and value.op.parent is block
        and value.has_one_use()
    )


def make_carried_values_exclusive(func: Operation, resident: set[SSAValue]) -> set[SSAValue]:
    """Insert copies so each carried CB value has one producer; returns the updated resident set."""
    for op in ops_of(func):
        if isinstance(op, scf.ForOp):
            _exclusive_for(op, resident)
        elif isinstance(op, scf.IfOp):
            _exclusive_if(op, resident)
        elif isinstance(op, scf.WhileOp):
            _exclusive_while(op, resident)
    return cb_resident_values(func)


def _exclusive_for(loop: scf.ForOp, resident: set[SSAValue]) -> None:
    body = loop.body.block
    yield_op = body.last_op
    assert isinstance(yield_op, scf.YieldOp)
    for i, arg in enumerate(body.args[1:]):
        if arg not in resident:
            continue
        init = loop.iter_args[i]
        if not _owned_producer(init, loop.parent):  # type: ignore[arg-type]
            loop.operands[3 + i] = _copy(init, loop)
        y = yield_op.operands[i]
        producer_pos = _position(y.op) if _owned_producer(y, body) else None  # type: ignore[union-attr]
        last_use = max((_position(_ancestor_in(u.operation, body)) for u in arg.uses), default=-1)
        if producer_pos is None or last_use > producer_pos:
            yield_op.operands[i] = _copy(y, yield_op)


def _exclusive_if(op: scf.IfOp, resident: set[SSAValue]) -> None:
    for i, res in enumerate(op.results):
        if res not in resident:
            continue
        for region in op.regions:
            if not region.blocks:
                continue
            y_op = region.block.last_op
            assert y_op is not None
            y = y_op.operands[i]
            if not _owned_producer(y, region.block):
                y_op.operands[i] = _copy(y, y_op)


def forwarded_args(op: scf.WhileOp) -> dict[int, int]:
    """Map after-region position j -> before-region position i where `scf.condition` forwards the
    before-region argument i whole, and only there (what Triton's code generator always builds)."""
    before = op.before_region.block
    cond_args = list(before.last_op.operands[1:])  # type: ignore[union-attr]
    out: dict[int, int] = {}
    for j, v in enumerate(cond_args):
        if isinstance(v, BlockArgument) and v.block is before and cond_args.count(v) == 1:
            out[j] = v.index
    return out


def _exclusive_while(op: scf.WhileOp, resident: set[SSAValue]) -> None:
    before, after = op.before_region.block, op.after_region.block
    cond, yield_op = before.last_op, after.last_op
    assert isinstance(cond, scf.ConditionOp) and isinstance(yield_op, scf.YieldOp)
    forwarded = forwarded_args(op)
    to_after = {i: j for j, i in forwarded.items()}
    for i, arg in enumerate(before.args):
        if arg not in resident:
            continue
        init = op.arguments[i]
        if not _owned_producer(init, op.parent):  # type: ignore[arg-type]
            op.operands[i] = _copy(init, op)
        y = yield_op.operands[i]
        producer_pos = _position(y.op) if _owned_producer(y, after) else None  # type: ignore[union-attr]
        last_use = -1
        if i in to_after:  # the current tile is still read in the after region as argument j
            uses = after.args[to_after[i]].uses
            last_use = max((_position(_ancestor_in(u.operation, after)) for u in uses), default=-1)
        if producer_pos is None or last_use > producer_pos:
            yield_op.operands[i] = _copy(y, yield_op)
    for j, arg in enumerate(after.args):
        if arg in resident and j not in forwarded and not _owned_producer(cond.operands[1 + j], before):
            cond.operands[1 + j] = _copy(cond.operands[1 + j], cond)


def _position(op: Operation | None) -> int:
    assert op is not None and op.parent is not None
    return op.parent.get_operation_index(op)


# ----------------------------------------------------------------------------------------------
# Step 2: classes of values sharing a CB, and the CBs
# ----------------------------------------------------------------------------------------------


@dataclass
class CbPlan:
    """Which CB holds each resident value, and the CB allocation ops."""

    cb_of: dict[SSAValue, SSAValue] = field(default_factory=dict)
    allocs: list[mtia.CbAllocOp] = field(default_factory=list)
    origin: dict[SSAValue, str] = field(default_factory=dict)
    """CB -> kernel location of the first value placed in it."""
    transfers: set[tuple[Operation, int]] = field(default_factory=set)
    """(op, operand index) pairs that hand a tile to a carried value instead of consuming it."""
    forwarded: set[SSAValue] = field(default_factory=set)
    """scf.while before-region arguments whose tile the condition hands on: read there, never popped."""
    inplace_ops: set[Operation] = field(default_factory=set)
    """Tensor-level engine ops that update a carried accumulator in place (lowered `inplace`)."""
    inplace_args: set[SSAValue] = field(default_factory=set)
    """Loop-carried values, and values between the ops of an in-place chain, whose tile an op of
    `inplace_ops` overwrites: never popped."""


class _Classes:
    """Union-find over resident values: the members of a class share one CB."""

    def __init__(self, values: set[SSAValue]) -> None:
        self.parent: dict[SSAValue, SSAValue] = {v: v for v in values}

    def find(self, v: SSAValue) -> SSAValue:
        while self.parent[v] is not v:
            self.parent[v] = self.parent[self.parent[v]]
            v = self.parent[v]
        return v

    def union(self, a: SSAValue, b: SSAValue) -> None:
        self.parent[self.find(a)] = self.find(b)


_INPLACE_ENGINES = (mtia.DpeMatmulOp, mtia.SeComputeOp, mtia.VecComputeOp)
"""Engines that may overwrite the tile they read: the DPE's accumulator and elementwise SE/VEC commands."""


def _inplace_chain(arg: SSAValue, next_value: SSAValue, block: Block) -> list[Operation]:
    """Return the engine ops making `next_value` from carried `arg` in place, in order, or [].

    Each op of the chain sits directly in `block`, has one result of `arg`'s type, and is the only reader
    of the value before it (`arg` first; as the accumulator `c` for the DPE): `acc = tl.dot(a, b, acc)`
    is a chain of one, `acc = tl.dot(p, v, acc * alpha)` a chain of two.
    """
    chain: list[Operation] = []
    cur = arg
    while cur is not next_value:
        users = {u.operation for u in cur.uses}
        if len(users) != 1:
            return []
        op = users.pop()
        if op.parent is not block or not isinstance(op, _INPLACE_ENGINES) or len(op.results) != 1:
            return []
        if op.results[0].type != arg.type:
            return []
        if isinstance(op, mtia.DpeMatmulOp) and any(u.index != 2 for u in cur.uses):
            return []
        chain.append(op)
        cur = op.results[0]
    return chain


def _plan_inplace(arg: SSAValue, chain: list[Operation], classes: _Classes, plan: CbPlan) -> None:
    """Record an in-place chain: its ops update `arg`'s CB; the values between them join that CB."""
    plan.inplace_ops.update(chain)
    plan.inplace_args.add(arg)
    for op in chain[:-1]:
        classes.union(arg, op.results[0])
        plan.inplace_args.add(op.results[0])


def _join_loop(loop: scf.ForOp, resident: set[SSAValue], classes: _Classes, plan: CbPlan) -> set[SSAValue]:
    """Put each carried value's init, iter_arg, yield and result in one class; return the iter_args
    still read at or after the op producing their next value (their CB needs two slots)."""
    body = loop.body.block
    yield_op = body.last_op
    assert yield_op is not None
    self_chained: set[SSAValue] = set()
    for i, arg in enumerate(body.args[1:]):
        if arg not in resident:
            continue
        y = yield_op.operands[i]
        for other in (loop.iter_args[i], y, loop.results[i]):
            classes.union(arg, other)
        plan.transfers.update({(loop, 3 + i), (yield_op, i)})
        chain = _inplace_chain(arg, y, body)
        if chain:
            _plan_inplace(arg, chain, classes, plan)
            continue
        # the next value is produced while the current one is still to be read: two slots
        producer = _position(y.owner) if isinstance(y, OpResult) else -1
        if any(_position(_ancestor_in(u.operation, body)) >= producer for u in arg.uses):
            self_chained.add(arg)
    return self_chained


def _join_if(op: scf.IfOp, resident: set[SSAValue], classes: _Classes, plan: CbPlan) -> None:
    """Put each resident result of an scf.if in one class with the values its branches yield."""
    for i, res in enumerate(op.results):
        if res not in resident:
            continue
        for region in op.regions:
            if region.blocks:
                yield_op = region.block.last_op
                assert yield_op is not None
                classes.union(res, yield_op.operands[i])
                plan.transfers.add((yield_op, i))


def _join_while(op: scf.WhileOp, resident: set[SSAValue], classes: _Classes, plan: CbPlan) -> set[SSAValue]:
    """Join the values an scf.while carries into CB classes (see the module docstring); return the
    after-region arguments still read at or after the op producing the next tile of their CB."""
    before, after = op.before_region.block, op.after_region.block
    cond, yield_op = before.last_op, after.last_op
    assert cond is not None and yield_op is not None
    forwarded = forwarded_args(op)
    self_chained: set[SSAValue] = set()
    for i, arg in enumerate(before.args):
        if arg not in resident:
            continue
        classes.union(arg, op.arguments[i])
        classes.union(arg, yield_op.operands[i])
        plan.transfers.update({(op, i), (yield_op, i)})
    for j, arg in enumerate(after.args):
        if arg not in resident:
            continue
        classes.union(arg, cond.operands[1 + j])
        classes.union(arg, op.res[j])
        plan.transfers.add((cond, 1 + j))
        if j in forwarded:
            i = forwarded[j]
            plan.forwarded.add(before.args[i])
            y = yield_op.operands[i]
            chain = _inplace_chain(arg, y, after)
            if chain:
                _plan_inplace(arg, chain, classes, plan)
                continue
            producer = _position(y.owner) if isinstance(y, OpResult) and y.owner.parent is after else -1
            if any(_position(_ancestor_in(u.operation, after)) >= producer for u in arg.uses):
                self_chained.add(arg)
    return self_chained


def plan_cbs(func: tt.FuncOp, resident: set[SSAValue]) -> CbPlan:
    """Group resident values into CB classes and create one `mtia.cb_alloc` per class at the entry."""
    classes = _Classes(resident)
    plan = CbPlan()
    self_chained: set[SSAValue] = set()
    for op in ops_of(func):
        if isinstance(op, scf.ForOp):
            self_chained |= _join_loop(op, resident, classes, plan)
        elif isinstance(op, scf.IfOp):
            _join_if(op, resident, classes, plan)
        elif isinstance(op, scf.WhileOp):
            self_chained |= _join_while(op, resident, classes, plan)
    deep = {classes.find(v) for v in self_chained}
    roots: dict[SSAValue, SSAValue] = {}
    for v in _in_program_order(resident):
        root = classes.find(v)
        if root in roots and roots[root].name_hint is None and v.name_hint:
            roots[root].name_hint = f"{v.name_hint}_cb"
        if root not in roots:
            alloc = mtia.CbAllocOp(mtia.CircularBufferType(2 if root in deep else 1, v.type))
            alloc.location = func.location
            plan.allocs.append(alloc)
            roots[root] = alloc.result
            if v.name_hint:
                alloc.result.name_hint = f"{v.name_hint}_cb"  # the CB of the kernel's `x` is `%x_cb`
            plan.origin[alloc.result] = _loc(v.op) if isinstance(v, OpResult) else _loc(v.block.parent_op())
        plan.cb_of[v] = roots[root]
    Rewriter.insert_op(plan.allocs, InsertPoint.at_start(func.body.blocks[0]))
    return plan


def _in_program_order(values: Iterable[SSAValue]) -> list[SSAValue]:
    """`values` sorted by a deterministic program-order key (path of op indices, then result/arg index)."""
    index: dict[Operation, int] = {}

    def position(op: Operation) -> int:
        if op not in index:  # number the whole block once instead of scanning it per op
            index.update((o, i) for i, o in enumerate(op.parent.ops))  # type: ignore[union-attr]
        return index[op]

    def key(v: SSAValue) -> tuple[int, ...]:
        op = v.op if isinstance(v, OpResult) else v.block.parent_op()
        path: list[int] = []
        while op is not None and op.parent is not None:
            path.append(position(op))
            op = op.parent_op()
        idx = v.index if isinstance(v, OpResult) else -1 - v.index
        return (*reversed(path), 1 if isinstance(v, OpResult) else 0, idx)

    return sorted(values, key=key)


# ----------------------------------------------------------------------------------------------
# Step 3: pops, reads, commands
# ----------------------------------------------------------------------------------------------


def _defining_block(v: SSAValue) -> Block:
    if isinstance(v, BlockArgument):
        return v.block
    assert v.op.parent is not None
    return v.op.parent


def insert_pops(resident: set[SSAValue], plan: CbPlan, reads: dict[SSAValue, list[Operation]]) -> None:
    """Insert `mtia.cb_pop` after the last consumer of each resident value in its defining block.

    Consumers are the engine ops reading the value and the `mtia.cb_read` ops made for it (`reads`).
    When the first consumer sits inside a region (an scf.if branch, a loop body that may run zero
    times), a `mtia.cb_wait` also goes before the op holding it, so that every path reaching the pop
    has waited for the tile.
    """
    for v in _in_program_order(resident):
        if v in plan.forwarded:
            continue  # its tile moves on whole to the after region or the result, which pop it
        if v in plan.inplace_args:
            continue  # updated in place: the tile stays as the next value, which the carried value pops
        block = _defining_block(v)
        consumers = [u.operation for u in v.uses if (u.operation, u.index) not in plan.transfers]
        consumers += reads.get(v, [])
        if not consumers and any((u.operation, u.index) in plan.transfers for u in v.uses):
            continue  # handed on whole (loop init, yield): the carried value pops it
        ancestors = sorted(
            {a for a in (_ancestor_in(user, block) for user in consumers) if a is not None}, key=_position
        )
        cb = plan.cb_of[v]
        if ancestors:
            first, last = ancestors[0], ancestors[-1]
            if first not in consumers:  # the first read is nested: wait on every path
                wait = mtia.CbWaitOp(cb, 1)
                wait.location = first.location
                Rewriter.insert_op(wait, InsertPoint.before(first))
            pop = mtia.CbPopOp(cb, 1)
            pop.location = last.location
            Rewriter.insert_op(pop, InsertPoint.after(last))
            continue
        # nobody reads the value: wait for it, then release it (the producer still runs)
        where = v.op if isinstance(v, OpResult) else block.parent_op()
        dead = [mtia.CbWaitOp(cb, 1), mtia.CbPopOp(cb, 1)]
        for op in dead:
            op.location = where.location if where is not None else op.location
        point = InsertPoint.after(v.op) if isinstance(v, OpResult) else InsertPoint.at_start(block)
        Rewriter.insert_op(dead, point)


def _scalar_core_operands(op: Operation) -> list[int]:
    """Indices of the operands of `op` that the scalar core itself needs as values.

    All operands of ordinary ops; the immediates of DMA and gather commands (base, strides, bounds, starts,
    `other`), which the scalar core puts into the command; none of other engine ops, which read CBs.
    """
    if isinstance(op, mtia.DmaLoadOp | mtia.DmaStoreOp):
        immediates = {
            op.base,
            *op.strides,
            *op.bounds,
            *op.starts,
            *([op.other] if isinstance(op, mtia.DmaLoadOp) and op.other else []),
        }
        return [i for i, v in enumerate(op.operands) if v in immediates]
    if isinstance(op, mtia.GatherOp):
        return [i for i, v in enumerate(op.operands) if v is op.other]
    if isinstance(op, mtia.DmaGatherRowsOp):  # the index tile is read from its CB by the DMA engine
        immediates = {op.base, op.row_stride, *op.strides, *op.bounds, *([op.other] if op.other else [])}
        return [i for i, v in enumerate(op.operands) if v in immediates and v is not op.index]
    if isa(op, mtia.ENGINE_OPS):
        return []
    if isinstance(op, mtia.ScalarStoreOp):
        return [0]  # an engine-made stored value goes out by a 0-d DMA instead (lower_commands)
    return list(range(len(op.operands)))


def insert_scalar_reads(func: Operation, resident: set[SSAValue], plan: CbPlan) -> dict[SSAValue, list[Operation]]:
    """Give scalar-core users of engine-produced scalars a blocking `mtia.cb_read`; return the reads."""
    reads: dict[SSAValue, list[Operation]] = {}
    for op in ops_of(func):
        for i in _scalar_core_operands(op):
            v = op.operands[i]
            if v in resident and (op, i) not in plan.transfers:
                wait = mtia.CbWaitOp(plan.cb_of[v], 1)
                read = mtia.CbReadOp(plan.cb_of[v])
                wait.location = read.location = op.location
                Rewriter.insert_op([wait, read], InsertPoint.before(op))
                op.operands[i] = read.result
                reads.setdefault(v, []).append(read)
    return reads


def to_buffer_level(op: Operation, plan: CbPlan) -> Operation:
    """Return the buffer-level form of tensor-level engine op `op` (not inserted); `inplace` if planned."""

    def cb(v: SSAValue) -> SSAValue:
        return plan.cb_of.get(v, v)

    outs = [plan.cb_of[r] for r in op.results]
    if isinstance(op, mtia.DmaLoadOp):
        return mtia.DmaLoadOp(
            op.base, list(op.strides), list(op.bounds), op.other, None, out=outs[0], starts=list(op.starts)
        )
    if isinstance(op, mtia.DmaStoreOp):
        return mtia.DmaStoreOp(op.base, list(op.strides), list(op.bounds), cb(op.value), list(op.starts))
    if isinstance(op, mtia.DmaGatherRowsOp):
        strides, bounds = list(op.strides), list(op.bounds)
        return mtia.DmaGatherRowsOp(op.base, cb(op.index), op.row_stride, strides, bounds, op.other, None, outs[0])
    if isinstance(op, mtia.GatherOp):
        mask = cb(op.mask) if op.mask is not None else None
        gather = mtia.GatherOp(cb(op.ptrs), mask, op.other, None, out=outs[0])
        gather.attributes.update(op.attributes)  # mtia.OUTSIDE_BOX_ATTR
        return gather
    if isinstance(op, mtia.AtomicRmwOp):
        kind, sem, scope = (p.value.data for p in (op.atomic_rmw_op, op.sem, op.scope))
        mask = cb(op.mask) if op.mask is not None else None
        return mtia.AtomicRmwOp(cb(op.ptr), cb(op.val), mask, kind, sem, scope, None, out=outs[0])
    if isinstance(op, mtia.AtomicCasOp):
        sem, scope = op.sem.value.data, op.scope.value.data
        return mtia.AtomicCasOp(cb(op.ptr), cb(op.cmp), cb(op.val), sem, scope, None, out=outs[0])
    if isinstance(op, mtia.ScatterOp):
        return mtia.ScatterOp(cb(op.ptrs), cb(op.value), cb(op.mask) if op.mask is not None else None)
    if isinstance(op, mtia.DpeMatmulOp):
        precision = op.input_precision.value.data
        return mtia.DpeMatmulOp(
            cb(op.a), cb(op.b), cb(op.c), precision, None, out=outs[0], inplace=op in plan.inplace_ops,
            valid=list(op.valid),
        )  # fmt: skip
    if isinstance(op, mtia.ReReduceOp):
        return mtia.ReReduceOp(cb(op.input), op.axis.value.data, op.kind.data, None, out=outs[0], valid=list(op.valid))
    assert isinstance(op, mtia.EngineComputeOp)
    body = op.detach_region(op.body)
    inplace = op in plan.inplace_ops
    return type(op)([cb(v) for v in op.inputs], [], body, outs=outs, inplace=inplace, valid=list(op.valid))


_LOWERED = (*mtia.ENGINE_OPS, mtia.ScalarStoreOp)
"""Ops `lower_commands` replaces by their buffer-level commands."""


def lower_commands(func: Operation, resident: set[SSAValue], plan: CbPlan) -> list[Operation]:
    """Replace every engine op by its buffer-level command with waits, reserves and pushes (waits only
    for an in-place update).

    Returns the old ops, still in place, for `erase_old`.
    """
    old_ops: list[Operation] = []
    for op in [o for o in ops_of(func) if isa(o, _LOWERED)]:
        if isinstance(op, mtia.ScalarStoreOp):
            if op.value not in resident:
                continue
            op_new: Operation = mtia.DmaStoreOp(op.ptr, [], [], plan.cb_of[op.value])
            ins = [op.value]
        else:
            op_new = to_buffer_level(op, plan)
            ins = [v for v in op.operands if v in resident]
        op_new.location = op.location
        for v in dict.fromkeys(ins):
            w = mtia.CbWaitOp(plan.cb_of[v], 1)
            w.location = op.location
            Rewriter.insert_op(w, InsertPoint.before(op))
        outs = [] if op in plan.inplace_ops else op.results
        for r in outs:
            rsv = mtia.CbReserveOp(plan.cb_of[r], 1)
            rsv.location = op.location
            Rewriter.insert_op(rsv, InsertPoint.before(op))
        Rewriter.insert_op(op_new, InsertPoint.before(op))
        for r in reversed(outs):
            push = mtia.CbPushOp(plan.cb_of[r], 1)
            push.location = op.location
            Rewriter.insert_op(push, InsertPoint.after(op))
        old_ops.append(op)
    return old_ops


# ----------------------------------------------------------------------------------------------
# Step 4: drop carried values from loops and branches
# ----------------------------------------------------------------------------------------------


def drop_carried(func: Operation, resident: set[SSAValue]) -> None:
    """Rebuild scf.for/scf.if without the values that now live in CBs (innermost first)."""
    ops = [o for o in ops_of(func) if isinstance(o, scf.ForOp | scf.IfOp | scf.WhileOp)]
    for op in reversed(ops):
        if isinstance(op, scf.ForOp):
            _drop_for(op, resident)
        elif isinstance(op, scf.WhileOp):
            _drop_while(op, resident)
        else:
            _drop_if(op, resident)


def _drop_for(loop: scf.ForOp, resident: set[SSAValue]) -> None:
    keep = [i for i, a in enumerate(loop.body.block.args[1:]) if a not in resident]
    if len(keep) < len(loop.iter_args):
        rebuild_for(loop, list(loop.iter_args), keep)


def _drop_if(op: scf.IfOp, resident: set[SSAValue]) -> None:
    keep = [i for i, r in enumerate(op.results) if r not in resident]
    if len(keep) == len(op.results):
        return
    regions = []
    for region in op.regions:
        if region.blocks:
            y = region.block.last_op
            Rewriter.replace_op(y, with_loc(scf.YieldOp(*[y.operands[i] for i in keep]), y))
        regions.append(op.detach_region(region))
    new = scf.IfOp(op.cond, [op.results[i].type for i in keep], regions[0], regions[1] if len(regions) > 1 else None)
    new.location = op.location
    Rewriter.insert_op(new, InsertPoint.before(op))
    for j, i in enumerate(keep):
        op.results[i].replace_all_uses_with(new.results[j])
    Rewriter.erase_op(op, safe_erase=False)


def _drop_while(op: scf.WhileOp, resident: set[SSAValue]) -> None:
    before, after = op.before_region.block, op.after_region.block
    keep_before = [i for i, a in enumerate(before.args) if a not in resident]
    keep_after = [j for j, a in enumerate(after.args) if a not in resident]
    if len(keep_before) == len(before.args) and len(keep_after) == len(after.args):
        return
    cond, yield_op = before.last_op, after.last_op
    assert isinstance(cond, scf.ConditionOp) and isinstance(yield_op, scf.YieldOp)
    new_cond = scf.ConditionOp(cond.condition, *[cond.args[j] for j in keep_after])
    Rewriter.replace_op(cond, with_loc(new_cond, cond))
    Rewriter.replace_op(yield_op, with_loc(scf.YieldOp(*[yield_op.operands[i] for i in keep_before]), yield_op))
    for block, keep in ((before, keep_before), (after, keep_after)):
        for i in reversed(range(len(block.args))):
            if i not in keep:
                block.erase_arg(block.args[i], safe_erase=False)
    before_region, after_region = op.before_region, op.after_region
    regions = [op.detach_region(before_region), op.detach_region(after_region)]
    new = scf.WhileOp([op.arguments[i] for i in keep_before], [op.res[j].type for j in keep_after], *regions)
    new.location = op.location
    Rewriter.insert_op(new, InsertPoint.before(op))
    for k, j in enumerate(keep_after):
        op.res[j].replace_all_uses_with(new.res[k])
    Rewriter.erase_op(op, safe_erase=False)


def erase_old(old_ops: list[Operation]) -> None:
    """Erase the tensor-level engine ops replaced by commands (last first).

    Their results may still feed carried values (loop inits, yields); `drop_carried` removes those.
    """
    for op in reversed(old_ops):
        Rewriter.erase_op(op, safe_erase=False)


_LISTED_CBS = 8
"""How many of the largest CBs an LS overflow message lists."""


def check_ls_budget(func: tt.FuncOp, plan: CbPlan, ls_bytes: int) -> None:
    """Raise LocalStorageOverflow if the CBs of `func` alive at the same time need more than `ls_bytes`.

    Run on the bufferized kernel: CBs never alive together may share bytes (mtia-cb-allocate places them),
    so the bytes alive at the peak of the CB liveness analysis are what no allocation can go below.
    """
    from mtia_xdsl.transforms.analysis.cb_liveness import analyze_cb_liveness

    peak = analyze_cb_liveness(func).peak(by_bytes=True)
    total = peak.size_bytes
    if total <= ls_bytes:
        return
    largest = sorted(peak.ranges, key=lambda r: (-r.size_bytes, r.index))
    lines = [
        f"  {r.cb.type}: {r.size_bytes} bytes, for the value made at {plan.origin.get(r.cb, r.value_loc)}"
        for r in largest[:_LISTED_CBS]
    ]
    rest = largest[_LISTED_CBS:]
    if rest:
        lines.append(f"  ... and {len(rest)} more CBs with {sum(r.size_bytes for r in rest)} bytes")
    raise LocalStorageOverflow(
        f"{_loc(func)}: error: the kernel's {len(largest)} circular buffers alive at once at {peak.loc} need "
        f"{total} bytes of local storage but a PE has {ls_bytes}; lower the block sizes (BLOCK_*) (every tensor "
        f"value an engine makes has its own CB while it is alive). Largest CBs:\n" + "\n".join(lines),
        total,
        ls_bytes,
    )


@dataclass(frozen=True)
class MtiaCbBufferizePass(ModulePass):
    """Bufferize engine values into CBs with explicit reserve/push/wait/pop; see module docstring.

    Requires: convert-tt-to-mtia. Raises: PassFailedException if the CBs exceed LS.
    Example: mtia-opt k.mlir -p convert-tt-to-mtia,mtia-cb-bufferize
    """

    name = "mtia-cb-bufferize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if is_buffer_level(op):
            raise PassFailedException(f"{self.name}: the module is already bufferized (it allocates CBs)")
        config = machine_config_for(op, self.name)
        for func in [f for f in op.ops if isinstance(f, tt.FuncOp)]:
            bufferize_function(func, config.ls_bytes)


def bufferize_function(func: tt.FuncOp, ls_bytes: int) -> None:
    """Run the four steps of the pass on one kernel."""
    resident = cb_resident_values(func)
    resident = make_carried_values_exclusive(func, resident)
    plan = plan_cbs(func, resident)
    reads = insert_scalar_reads(func, resident, plan)
    insert_pops(resident, plan, reads)
    old = lower_commands(func, resident, plan)
    erase_old(old)
    drop_carried(func, resident)
    check_ls_budget(func, plan, ls_bytes)

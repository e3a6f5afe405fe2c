"""mtia-software-pipeline: let the loads of later loop iterations run while the current one computes.

For every `scf.for` body (and `scf.while` after-region) the pass finds the streamed CBs: CBs used only
inside the loop, whose first operation in an iteration is a `mtia.cb_reserve` directly in the body and
whose tiles are all popped in the same iteration (one tile per reserve). It marks the loop and each
streamed CB's `mtia.cb_alloc` with `mtia.pipeline_stages = N`: such a CB may get up to N slots, so the
producers of iterations i+1 .. i+N-1 can fill slots while iteration i still reads its own. The depth
itself is decided by mtia-cb-sizing, which reads the attribute.

Each streamed DMA load (`cb_reserve; mtia.dma_load; cb_push`) is hoisted to the earliest point of the
body its operands allow (after the ops defining its operands, after any op that may write global memory,
and after the loads hoisted before it), so the DMA queue receives an iteration's loads before its
compute commands.

No prologue/epilogue rotation is needed on MTIA: the scalar core issues commands in program order and
runs ahead of the engines (it stalls only on a full engine queue or a blocking command such as
`mtia.cb_read`), and the CP releases a command only when the slots it reads are filled and, for each slot
it fills, the slot's previous occupant (seq - depth) has been read and popped. So with d slots, the loads
of iteration i+d-1 are issued while iteration i computes and start as soon as their slot is free: the
hardware's slot tracking is the pipeline's steady state, its first iterations are the prologue and the
missing loads after the last iteration the epilogue.

Requires: mtia-cb-bufferize.
Raises: PassFailedException for num-stages below 1.
Example: mtia-opt k.mlir -p mtia-software-pipeline{num-stages=3}
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.dialects import mtia
from mtia_xdsl.transforms.program_level import require_buffer_level
from mtia_xdsl.utils.isa import isa
from mtia_xdsl.utils.walk import block_ops_of, ops_of

"""Attribute on a pipelined loop and on its streamed CBs' cb_alloc: the most slots a streamed CB may get."""

_GLOBAL_WRITERS = (mtia.DmaStoreOp, mtia.ScatterOp, mtia.AtomicRmwOp, mtia.AtomicCasOp, mtia.ScalarStoreOp)
_PURE_TT = frozenset(
    {"tt.addptr", "tt.get_program_id", "tt.get_num_programs", "tt.int_to_ptr", "tt.ptr_to_int", "tt.bitcast"}
)
_BARRIER_NAMES = frozenset({"tt.store", "tt.atomic_rmw", "tt.atomic_cas", "tt.print", "tt.assert", "tt.call"})


def _ancestor_in(op: Operation, block: Block) -> Operation | None:
    """The ancestor of `op` (or op itself) directly in `block`, or None."""
    cur: Operation | None = op
    while cur is not None and cur.parent is not block:
        cur = cur.parent_op()
    return cur


def loop_bodies(func: Operation) -> list[tuple[Operation, Block]]:
    """Every (loop, body block) of `func` in program order: scf.for bodies and scf.while after-regions."""
    out: list[tuple[Operation, Block]] = []
    for op in ops_of(func):
        if isinstance(op, scf.ForOp):
            out.append((op, op.body.block))
        elif isinstance(op, scf.WhileOp):
            out.append((op, op.after_region.block))
    return out


def streamed_cbs(loop: Operation, body: Block) -> list[SSAValue]:
    """The CBs `body` fills and drains within each iteration, in the order of their first reserve."""
    position = {op: i for i, op in enumerate(body.ops)}
    seen: dict[SSAValue, int] = {}
    for op in block_ops_of(body):
        for v in op.operands:
            if mtia.is_cb(v) and v not in seen:
                seen[v] = len(seen)
    out: list[tuple[int, SSAValue]] = []
    for cb in seen:
        first = _first_reserve(cb, loop, body, position)
        if first is not None:
            out.append((first, cb))
    return [cb for _, cb in sorted(out, key=lambda pc: pc[0])]


def _first_reserve(cb: SSAValue, loop: Operation, body: Block, position: dict[Operation, int]) -> int | None:
    """Position of `cb`'s first reserve in `body` if `cb` is streamed there (see module docstring), else None."""
    reserves = pops = 0
    first: tuple[int, Operation] | None = None
    for use in cb.uses:
        user = use.operation
        top = _ancestor_in(user, body)
        if top is None:
            return None  # used outside the loop body
        if isinstance(user, mtia.CbReserveOp | mtia.CbPushOp | mtia.CbPopOp) and top is not user:
            return None  # slots claimed or released in a nested region: not one tile per iteration
        if isinstance(user, mtia.CbReserveOp):
            reserves += user.count.value.data
        elif isinstance(user, mtia.CbPopOp):
            pops += user.count.value.data
        p = position[top]
        if first is None or p < first[0] or (p == first[0] and not isinstance(first[1], mtia.CbReserveOp)):
            first = (p, user)
    if first is None or not isinstance(first[1], mtia.CbReserveOp) or reserves != pops or reserves == 0:
        return None
    return first[0]


def _is_barrier(op: Operation) -> bool:
    """Whether a load may not move above `op`: it may write global memory (or print, assert, call)."""
    return any(isa(o, _GLOBAL_WRITERS) or o.name in _BARRIER_NAMES for o in ops_of(op))


def _load_group(cb: SSAValue, body: Block) -> list[Operation] | None:
    """The `cb_reserve; dma_load; cb_push` ops filling `cb` in `body`, if they are consecutive."""
    for op in body.ops:
        if isa(op, mtia.CbReserveOp) and op.cb is cb:  # type: ignore[union-attr]
            load, push = op.next_op, op.next_op.next_op if op.next_op is not None else None
            if isa(load, mtia.DmaLoadOp) and load.out is cb and isa(push, mtia.CbPushOp):  # type: ignore[union-attr]
                return [op, load, push] if push.cb is cb else None
            return None
    return None


def _is_pure(op: Operation) -> bool:
    """Whether `op` is scalar-core arithmetic that may move freely (no region, no memory, no CB)."""
    return not op.regions and (op.name.startswith(("arith.", "math.")) or op.name in _PURE_TT)


def _movable_deps(group: list[Operation], body: Block, floor: int, position: dict[Operation, int]) -> tuple[int, list]:
    """The latest op the group must stay after, and the pure ops after `floor` it needs (moved with it)."""
    anchor, deps = floor, set[Operation]()
    work = [v for op in group for v in op.operands]
    while work:
        v = work.pop()
        owner = v.owner if isinstance(v.owner, Operation) else None
        top = _ancestor_in(owner, body) if owner is not None else None
        if top is None or top in group or top in deps or position[top] <= floor:
            continue
        if _is_pure(top):
            deps.add(top)
            work.extend(top.operands)
        else:
            anchor = max(anchor, position[top])
    return anchor, sorted((d for d in deps if position[d] > anchor), key=position.__getitem__)


def hoist_loads(body: Block, cbs: list[SSAValue]) -> None:
    """Move each streamed DMA load group of `body`, with the pure arithmetic computing its operands, to
    the earliest point allowed (see module docstring)."""
    floor_op: Operation | None = None  # the loads keep their relative order
    for cb in cbs:
        group = _load_group(cb, body)
        if group is None:
            continue
        ops = list(body.ops)
        position = {op: i for i, op in enumerate(ops)}
        start = position[group[0]]
        floor = position[floor_op] if floor_op is not None else -1
        for i in range(floor + 1, start):
            if _is_barrier(ops[i]):
                floor = i
        anchor, deps = _movable_deps(group, body, floor, position)
        moved = [*deps, *group]
        if any(position[op] != anchor + 1 + k for k, op in enumerate(moved)):
            for op in moved:
                op.detach()
            if anchor >= 0:
                body.insert_ops_after(moved, ops[anchor])
            else:
                body.insert_ops_before(moved, ops[0] if ops[0] not in moved else _first_kept(ops, moved))
        floor_op = group[-1]


def _first_kept(ops: list[Operation], moved: list[Operation]) -> Operation:
    return next(op for op in ops if op not in moved)


@dataclass(frozen=True)
class MtiaSoftwarePipelinePass(ModulePass):
    """Mark streamed CBs of loops for up to `num_stages` slots and hoist their loads; see module docstring.

    Requires: mtia-cb-bufferize. Raises: PassFailedException if num-stages < 1.
    Example: mtia-opt k.mlir -p mtia-software-pipeline{num-stages=3}
    """

    name = "mtia-software-pipeline"
    num_stages: int = 3
    """Most slots a streamed CB may get (1: no pipelining, the pass changes nothing)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.num_stages < 1:
            raise PassFailedException(
                f"{self.name}: num-stages must be at least 1 (1 turns pipelining off), got {self.num_stages}"
            )
        require_buffer_level(op, self.name, before_sizing=True)
        if self.num_stages == 1:
            return
        stages = IntegerAttr(self.num_stages, 64)
        allocs = {a.result: a for a in ops_of(op) if isinstance(a, mtia.CbAllocOp)}
        for loop, body in loop_bodies(op):
            cbs = streamed_cbs(loop, body)
            if not cbs:
                continue
            loop.attributes[mtia.PIPELINE_STAGES_ATTR] = stages
            for cb in cbs:
                if cb in allocs:
                    allocs[cb].attributes[mtia.PIPELINE_STAGES_ATTR] = stages
            hoist_loads(body, cbs)

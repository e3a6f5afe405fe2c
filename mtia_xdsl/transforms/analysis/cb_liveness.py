"""Liveness of circular buffers (CBs) over the buffer-level program: when each CB holds tiles still needed.

Program points: the ops of a kernel numbered in program order (pre-order; the bodies of engine commands are
not numbered), so a region op (`scf.for`, `scf.if`, `scf.while`) spans the points of its regions, the
before region of an `scf.while` ahead of its after region. A CB's live range is the interval of points
from its first use (usually the `mtia.cb_reserve` of the command making its first tile) to its last
(usually a `mtia.cb_pop`), widened to the whole of a loop when the CB is alive across the loop's back edge:

- it is used inside the loop and before or after it: a loop-invariant value read in every iteration, or
  a loop-carried value (an in-place accumulator) set up before the loop and read after it;
- its first use in an iteration reads a tile (`cb_wait`, `cb_pop`, `cb_read`, a command reading it)
  rather than reserving a slot: the tile was made by the previous iteration;
- mtia-software-pipeline marked it as streamed (`mtia.pipeline_stages`) and it has more than one slot:
  the loads of iteration i+1 fill a slot while iteration i still reads its own tile.

Widening repeats until no range changes, so a range that enters a loop covers all of it. The branches of an
`scf.if` take consecutive points, so CBs used only in different branches do not overlap. A kernel with
unstructured control flow (a region of more than one block) gets every CB alive over the whole kernel.
Two CBs interfere (may not share a CB ID or LS bytes) exactly when their ranges intersect.

Pure: reads the IR, returns dataclasses. Used by mtia-cb-allocate, mtia-cb-bufferize's LS check and the
check of an allocation (`verify_cb_allocation`: mtia-cb-allocate's input and output, mtia-run's input);
printed by `test-mtia-cb-liveness`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.dialects import mtia
from mtia_xdsl.utils.isa import isa
from mtia_xdsl.utils.locations import location_str
from mtia_xdsl.utils.walk import ops_of

_LOOPS = (scf.ForOp, scf.WhileOp)
_READS_FIRST = (mtia.CbWaitOp, mtia.CbPopOp, mtia.CbReadOp)


@dataclass(frozen=True)
class CbLiveRange:
    """The live range of one CB: program points [start, end], both inclusive.

    `size_bytes` is depth x tile bytes; `value_loc` the kernel line ("file:line:col") of the first engine
    command using the CB (the command making the value it holds); `widened` says which loops the range
    covers whole, and why.
    """

    alloc: mtia.CbAllocOp
    index: int
    """Position of the cb_alloc among the kernel's cb_allocs (program order)."""
    start: int
    end: int
    size_bytes: int
    value_loc: str
    widened: tuple[str, ...] = ()

    @property
    def cb(self) -> SSAValue:
        """The CB value."""
        return self.alloc.result

    def overlaps(self, other: CbLiveRange) -> bool:
        """Whether both CBs are alive at some program point (then they may share neither ID nor bytes)."""
        return self.start <= other.end and other.start <= self.end


@dataclass(frozen=True)
class CbPeak:
    """The program point where the most CBs (or CB bytes) are alive at once, and those CBs."""

    point: int
    loc: str
    """Kernel line of the op at `point`."""
    ranges: tuple[CbLiveRange, ...]

    @property
    def count(self) -> int:
        """CBs alive at the point (CB IDs the kernel needs at least)."""
        return len(self.ranges)

    @property
    def size_bytes(self) -> int:
        """Bytes of the CBs alive at the point (LS bytes any allocation needs at least)."""
        return sum(r.size_bytes for r in self.ranges)


@dataclass(frozen=True)
class CbLiveness:
    """Live ranges of every CB of one kernel, in cb_alloc order, over `points` program points."""

    ranges: tuple[CbLiveRange, ...]
    ops: tuple[Operation, ...]
    """The op at each program point."""

    @property
    def points(self) -> int:
        """Number of program points."""
        return len(self.ops)

    def alive_at(self, point: int) -> tuple[CbLiveRange, ...]:
        """The CBs alive at `point`."""
        return tuple(r for r in self.ranges if r.start <= point <= r.end)

    def peak(self, by_bytes: bool = False) -> CbPeak:
        """The first point with the most CBs alive (or, `by_bytes`, the most CB bytes alive)."""
        best, best_key = 0, -1
        for point in sorted({r.start for r in self.ranges}):  # a maximum is reached where some range starts
            alive = self.alive_at(point)
            key = sum(r.size_bytes for r in alive) if by_bytes else len(alive)
            if key > best_key:
                best, best_key = point, key
        loc = location_str(self.ops[best].location) if self.ops else "<unknown location>"
        return CbPeak(best, loc, self.alive_at(best) if self.ranges else ())

    def range_of(self, cb: SSAValue) -> CbLiveRange:
        """The live range of CB `cb`. Raises: KeyError if `cb` is not a CB of this kernel."""
        for r in self.ranges:
            if r.cb is cb:
                return r
        raise KeyError(cb)


def _number(block: Block, ops: list[Operation], spans: dict[Operation, tuple[int, int]]) -> bool:
    """Number the ops of `block` (pre-order); record each op's span. Return whether some region nested in
    it has more than one block (unstructured control flow)."""
    unstructured = False
    for op in block.ops:
        start = len(ops)
        ops.append(op)
        if not isa(op, mtia.EngineComputeOp):
            for region in op.regions:
                unstructured |= len(region.blocks) > 1
                for b in region.blocks:
                    unstructured |= _number(b, ops, spans)
        spans[op] = (start, len(ops) - 1)
    return unstructured


def _short_loc(op: Operation) -> str:
    text = location_str(op.location)
    head = text.split(":", 1)[0]
    return text[text.rfind("/", 0, len(head)) + 1 :] if "/" in head else text


def analyze_cb_liveness(func: Operation, depths: Mapping[mtia.CbAllocOp, int] | None = None) -> CbLiveness:
    """Return the live range of every CB allocated in `func` (a tt.func at buffer level); see module doc.

    `depths`: CB -> the depth to assume instead of its type's (mtia-cb-sizing measures a choice of depths
    before making it): a range's bytes follow the depth, and so does the widening of a streamed CB, which
    covers its loop only with more than one slot."""
    ops: list[Operation] = []
    spans: dict[Operation, tuple[int, int]] = {}
    unstructured = False
    for region in func.regions:
        unstructured |= len(region.blocks) > 1
        for block in region.blocks:
            unstructured |= _number(block, ops, spans)
    point = {op: i for i, op in enumerate(ops)}
    loops = [(op, *spans[op]) for op in ops if isa(op, _LOOPS)]
    allocs = [op for op in ops if isinstance(op, mtia.CbAllocOp)]
    ranges: list[CbLiveRange] = []
    for index, alloc in enumerate(allocs):
        cb = alloc.result
        uses = sorted({point[u.operation] for u in cb.uses if u.operation in point})
        depth = depths.get(alloc, cb.type.depth.data) if depths is not None else cb.type.depth.data
        size = depth * mtia.tile_bytes(cb.type.tile)
        if not uses:
            at = point[alloc]
            ranges.append(CbLiveRange(alloc, index, at, at, size, location_str(alloc.location)))
            continue
        start, end = uses[0], uses[-1]
        why: list[str] = []
        if unstructured:
            start, end = 0, len(ops) - 1
            why.append("alive in the whole kernel: unstructured control flow (a region with several blocks)")
        pipelined = (
            mtia.PIPELINE_STAGES_ATTR in alloc.attributes
            and depth > 1
            and any(isinstance(u.operation, mtia.DmaLoadOp) and u.operation.out is cb for u in cb.uses)
        )
        changed = True
        while changed:
            changed = False
            for loop, lo, hi in loops:
                inside = [p for p in uses if lo < p <= hi]
                if not inside or (start <= lo and hi <= end):
                    continue
                reason = _back_edge_reason(loop, cb, lo, hi, start, end, inside, ops, pipelined, loops)
                if reason:
                    start, end = min(start, lo), max(end, hi)
                    why.append(f"{reason} at {_short_loc(loop)}")
                    changed = True
        made_by = next((ops[p] for p in uses if isa(ops[p], mtia.ENGINE_OPS)), ops[uses[0]])
        ranges.append(CbLiveRange(alloc, index, start, end, size, location_str(made_by.location), tuple(why)))
    return CbLiveness(tuple(ranges), tuple(ops))


def _back_edge_reason(
    loop: Operation,
    cb: SSAValue,
    lo: int,
    hi: int,
    start: int,
    end: int,
    inside: Sequence[int],
    ops: Sequence[Operation],
    pipelined: bool,
    loops: Sequence[tuple[Operation, int, int]],
) -> str:
    """Why `cb` (used at `inside`, points of `loop` = [lo, hi]) is alive across the loop's back edge, or ''."""
    if start < lo or end > hi:
        return "alive across the loop (used before or after it too)"
    first = ops[inside[0]]
    if isinstance(first, (*_READS_FIRST, *mtia.ENGINE_OPS)):  # a command's first use of a CB reads it
        return "carried around the loop (an iteration reads a tile the previous one made)"
    innermost = min((lp for lp in loops if lp[1] < inside[0] <= lp[2] and all(lp[1] < p <= lp[2] for p in inside)),
                    key=lambda lp: lp[2] - lp[1], default=None)  # fmt: skip
    if pipelined and innermost is not None and innermost[0] is loop:
        return "pipelined (the next iteration's load fills a slot while this one reads)"
    return ""


def kernels(module: ModuleOp) -> list[Operation]:
    """The kernels of `module` that allocate CBs (tt.func ops holding cb_alloc), in order."""
    return [f for f in module.ops if any(isinstance(o, mtia.CbAllocOp) for o in ops_of(f))]


def describe_range(r: CbLiveRange) -> str:
    """`[start, end] N bytes, value at LOC; widened: ...` (the text test-mtia-cb-liveness prints)."""
    text = f"[{r.start}, {r.end}] {r.size_bytes} bytes, value at {r.value_loc}"
    if r.widened:
        text += "; " + "; ".join(r.widened)
    return text


@dataclass(frozen=True)
class TestMtiaCbLivenessPass(ModulePass):
    """Print CB liveness: `mtia.liveness` on each cb_alloc (its range), `mtia.cb_peak` on each kernel.

    Requires: mtia-cb-bufferize. Example: mtia-opt k.mlir -p test-mtia-cb-liveness
    """

    name = "test-mtia-cb-liveness"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in kernels(op):
            live = analyze_cb_liveness(func)
            for r in live.ranges:
                r.alloc.attributes[mtia.LIVENESS_ATTR] = StringAttr(describe_range(r))
            ids, by_bytes = live.peak(), live.peak(by_bytes=True)
            func.attributes["mtia.cb_peak"] = StringAttr(
                f"{ids.count} CBs alive at point {ids.point} ({ids.loc}); {by_bytes.size_bytes} bytes alive at "
                f"point {by_bytes.point} ({by_bytes.loc})"
            )


def _cb_text(r: CbLiveRange) -> str:
    return f"the CB #{r.index} {r.cb.type} holding the value at {r.value_loc} (alive at points {r.start}-{r.end})"


def allocation_conflicts(func: Operation, live: CbLiveness | None = None) -> list[str]:
    """Messages for each pair of CBs of `func` alive at the same time that share a CB ID or LS bytes.

    Only CBs placed by mtia-cb-allocate (`cb_id`, `ls_offset` on their cb_alloc) take part. Each message
    starts with the kernel line of the later CB's value and names both values' kernel lines. `live`: the
    liveness of `func` if already computed (the IR unchanged since but for the cb_alloc properties).
    """
    live = live if live is not None else analyze_cb_liveness(func)
    placed = [r for r in live.ranges if r.alloc.cb_id is not None and r.alloc.ls_offset is not None]
    out: list[str] = []
    for i, a in enumerate(placed):
        for b in placed[i + 1 :]:
            if not a.overlaps(b):
                continue
            id_a, id_b = a.alloc.cb_id.value.data, b.alloc.cb_id.value.data  # type: ignore[union-attr]
            off_a, off_b = a.alloc.ls_offset.value.data, b.alloc.ls_offset.value.data  # type: ignore[union-attr]
            if id_a == id_b:
                out.append(f"{b.value_loc}: error: CB ID {id_a} is given to two CBs alive at the same time: "
                           f"{_cb_text(a)} and {_cb_text(b)}")  # fmt: skip
            if off_a < off_b + b.size_bytes and off_b < off_a + a.size_bytes:
                out.append(
                    f"{b.value_loc}: error: LS bytes [{off_a}, {off_a + a.size_bytes}) and [{off_b}, "
                    f"{off_b + b.size_bytes}) overlap but their CBs are alive at the same time: {_cb_text(a)} and "
                    f"{_cb_text(b)}"
                )
    return out


def verify_cb_allocation(module: ModuleOp) -> None:
    """Check the CB allocation of every kernel of `module`: no two CBs alive at the same time share a CB ID
    or LS bytes (a whole-kernel fact, so a check over the program, not a cb_alloc verifier).

    Kernels without an allocation (no cb_alloc with `cb_id`) pass. Raises: PassFailedException with the
    first conflict, located at the kernel line of the later CB's value and naming both values' lines.
    """
    for func in kernels(module):
        if not any(isinstance(o, mtia.CbAllocOp) and o.cb_id is not None for o in ops_of(func)):
            continue
        conflicts = allocation_conflicts(func)
        if conflicts:
            raise PassFailedException(conflicts[0])

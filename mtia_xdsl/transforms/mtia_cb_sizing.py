"""mtia-cb-sizing: choose every circular buffer's depth and record why (`mtia.depth_reason` on cb_alloc).

The depth mtia-cb-bufferize gave a CB is its minimum (1 for a straight-line value, 2 for a loop-carried
value whose next tile is written while the current one is read). Strategies:

- "greedy": a CB that mtia-software-pipeline marked as streamed (`mtia.pipeline_stages = S` on its
  cb_alloc) gets the smallest depth d >= 1 with d x iteration >= read + fill, capped at min(S, max-depth),
  where `iteration` is the loop's steady-state period (the busiest engine's work per iteration), `read`
  how long the longest reader holds a tile, and `fill` the producer's latency (DMA: issue, memory latency
  and NoC hops, its own bytes and those of the loads issued after it in the iteration, which follow it on
  the read port, over the PE's bandwidth share of the placement's level), all from the cost model in
  transforms/analysis/cb_cost.py; every other CB keeps its minimum. One slot is enough when a tile is
  read and refilled within one iteration: then the loop's busiest engine, not this CB, sets the pace. A
  DMA load gets at least 2 (`DMA_LEAST_DEPTH`): its refill time rests on the memory latency and on the
  PE's share of bandwidth, which the pass cannot know (how many PEs run, which reads hit the LLC), and
  with 1 slot every iteration would wait out the latency the loop ran faster than its estimate; an
  engine's refill is its own occupancy, known exactly.
- "uniform": every CB gets max(minimum, max-depth): uniform N-fold buffering, the baseline.

If the CBs then exceed `MachineConfig.ls_bytes` as mtia-cb-allocate would place them (CBs never alive
together share bytes; a CB's live range measured at the depth it would get, since a streamed CB with more
than one slot is alive over its whole loop), slots are taken back one at a time, first from CBs that
are not streamed (their extra slots save nothing), then from the CB where the last slot saves the least
modelled stall per byte, never below a CB's minimum (mtia-cb-bufferize already
refused kernels whose minimum does not fit).

Requires: mtia-cb-bufferize (and mtia-software-pipeline for greedy depths above the minimum).
Raises: PassFailedException for an unknown strategy or max-depth below 1.
Example: mtia-opt k.mlir -p mtia-cb-sizing{strategy=greedy max-depth=3}
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.dialects import mtia, tt
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.transforms.analysis import cb_cost
from mtia_xdsl.transforms.analysis.cb_liveness import analyze_cb_liveness
from mtia_xdsl.transforms.analysis.cb_placement import aligned, place_best
from mtia_xdsl.transforms.program_level import require_buffer_level
from mtia_xdsl.transforms.target import machine_config_for
from mtia_xdsl.utils.isa import isa
from mtia_xdsl.utils.locations import location_str
from mtia_xdsl.utils.walk import ops_of

STRATEGIES = ("greedy", "uniform")
DMA_LEAST_DEPTH = 2
"""Fewest slots greedy gives a CB a streamed DMA load fills (its next tile's load overlaps this one's read).
With 1 slot the matmul example at 256^3 (64x64x32 blocks, 16 programs: each PE gets more than its 1/64
share of DRAM, so the K loop runs faster than estimated) took 5,078 cycles instead of 3,936."""


@dataclass
class CbChoice:
    """The sizing decision for one CB."""

    alloc: mtia.CbAllocOp
    min_depth: int
    depth: int
    tile_bytes: int
    reason: str
    busy_cycles: float = 0.0
    period_cycles: float = 0.0
    streamed: bool = False
    reduced_from: int = 0
    """Depth before slots were taken back to fit LS (0: none taken)."""

    @property
    def bytes(self) -> int:
        """LS bytes the CB takes at its depth."""
        return self.depth * self.tile_bytes

    def saving_per_byte(self) -> float:
        """Modelled stall cycles per iteration its last slot saves, per LS byte of that slot."""
        if not self.streamed:
            return 0.0
        lose = cb_cost.stall_cycles(self.busy_cycles, self.period_cycles, self.depth - 1)
        keep = cb_cost.stall_cycles(self.busy_cycles, self.period_cycles, self.depth)
        return (lose - keep) / max(self.tile_bytes, 1)


def _writers(func: Operation) -> dict[SSAValue, Operation]:
    """CB -> the first engine command (in program order) writing it."""
    out: dict[SSAValue, Operation] = {}
    for op in ops_of(func):
        if isa(op, mtia.EngineComputeOp):
            written = list(op.outs)
        else:
            out_cb = getattr(op, "out", None) if isa(op, mtia.ENGINE_OPS) else None
            written = [out_cb] if isa(out_cb, SSAValue) else []
        for cb in written:
            out.setdefault(cb, op)
    return out


_LOOP_OPS = scf.ForOp | scf.WhileOp


def _loop_of(op: Operation) -> Operation | None:
    """The innermost scf.for / scf.while holding `op`, or None."""
    parent = op.parent_op()
    while parent is not None and not isa(parent, _LOOP_OPS):
        parent = parent.parent_op()
    return parent


def _min_reason(cb: SSAValue, depth: int, writers: dict[SSAValue, Operation]) -> str:
    """Why `cb` has its minimum depth: a straight-line value, a value read (not written) inside a loop, or a
    value carried around a loop (updated in place, or its next tile written while the current one is read)."""
    loops = {_loop_of(use.operation) for use in cb.uses}
    carried = [loop for loop in loops if loop is not None]
    if len(loops) > 1 and carried:
        innermost = carried[0] if len(carried) == 1 else min(carried, key=lambda lp: len(ops_of(lp)))
        where = _short_loc(innermost)
        writer = writers.get(cb)
        written_in_loop = any(_writes_in_loop(use.operation, cb) for use in cb.uses)
        if not written_in_loop and writer is not None and _loop_of(writer) is None:
            return f"loop-invariant value read in the loop at {where}: {depth} slot" + ("s" if depth > 1 else "")
        if depth == 1:
            return f"value carried around the loop at {where}, updated in place: 1 slot"
        return f"value carried around the loop at {where}, next one written while it is read: {depth} slots"
    return "straight-line value: 1 slot" if depth == 1 else f"minimum set by mtia-cb-bufferize: {depth} slots"


def _writes_in_loop(op: Operation, cb: SSAValue) -> bool:
    """Whether `op` sits in a loop and writes `cb` (reserves a slot of it, or updates it in place)."""
    if _loop_of(op) is None:
        return False
    if isinstance(op, mtia.CbReserveOp):
        return True
    outs = list(op.outs) if isinstance(op, mtia.EngineComputeOp) else [getattr(op, "out", None)]
    return getattr(op, "inplace", None) is not None and cb in outs


def _reader_cycles(
    cb: SSAValue, body: Block, config: MachineConfig, costs: dict[Operation, cb_cost.CommandCost | None] | None = None
) -> float:
    """Occupancy of the longest engine command in `body` reading `cb` (how long a tile is held).
    `costs`: command costs already estimated (a command reads several CBs)."""
    longest = 0.0
    costs = costs if costs is not None else {}
    for use in cb.uses:
        op = use.operation
        written = list(op.outs) if isinstance(op, mtia.EngineComputeOp) else [getattr(op, "out", None)]
        if op.parent is body and cb not in written:
            c = costs[op] if op in costs else costs.setdefault(op, cb_cost.command_cost(op, config))
            longest = max(longest, c.occupancy_cycles + c.latency_cycles if c is not None else 0.0)
    return longest


def _streamed_choice(
    choice: CbChoice,
    producer: Operation,
    config: MachineConfig,
    cap: int,
    periods: dict[Block, cb_cost.IterationCost] | None = None,
    costs: dict[Operation, cb_cost.CommandCost | None] | None = None,
) -> None:
    """Size a streamed CB of the loop holding `producer` (greedy). `periods`, `costs`: the iteration costs
    of loop bodies and the command costs already estimated (the CBs of one loop share its body's; nothing
    changes the IR meanwhile)."""
    loop = producer.parent_op()
    body = producer.parent
    assert loop is not None and isinstance(body, Block)
    periods = periods if periods is not None else {}
    period = periods.get(body)
    if period is None:
        period = periods[body] = cb_cost.iteration_cost(body, config)
    trailing, seen = 0, False
    for op in body.ops:  # the loads issued after it in the iteration follow it on the read port
        seen = seen or op is producer
        if seen and op is not producer and isa(op, mtia.DmaLoadOp) and op.out is not None:
            trailing += mtia.tile_bytes(mtia.tile_type(op.out.type))
    fill = cb_cost.fill_latency_cycles(producer, config, trailing)
    held = _reader_cycles(choice.alloc.result, body, config, costs)
    dma = isinstance(producer, mtia.DmaLoadOp)
    least = DMA_LEAST_DEPTH if dma else 1
    need = cb_cost.depth_to_hide(held + fill, period.period_cycles, least)
    depth = max(choice.min_depth, min(need, cap))
    text = (
        f"streamed by {'DMA' if dma else producer.name} in the loop at {_short_loc(loop)}: read {held:.0f} + "
        f"refill {fill:.0f} cycles vs iteration {period.period_cycles:.0f} cycles ({period.limiter.value}-bound) "
        f"-> {need} slot" + ("s" if need > 1 else "")
    )
    if need == least > cb_cost.depth_to_hide(held + fill, period.period_cycles):
        text += " (a DMA refill's latency and bandwidth share are estimates: at least 2)"
    if need > cap:
        text += f", capped at {cap}"
    choice.depth, choice.reason, choice.streamed = depth, text, True
    choice.busy_cycles, choice.period_cycles = held + fill, period.period_cycles


def _short_loc(op: Operation) -> str:
    """`file:line:col` of `op` with the file's directory left out."""
    text = location_str(op.location)
    return os.path.basename(text.split(":", 1)[0]) + text[len(text.split(":", 1)[0]) :] if "/" in text else text


def plan_depths(func: Operation, config: MachineConfig, strategy: str, max_depth: int) -> list[CbChoice]:
    """Decide the depth of every CB of `func` (see module docstring); change nothing."""
    choices: list[CbChoice] = []
    writers = _writers(func)
    periods: dict[Block, cb_cost.IterationCost] = {}
    costs: dict[Operation, cb_cost.CommandCost | None] = {}
    for alloc in [o for o in ops_of(func) if isinstance(o, mtia.CbAllocOp)]:
        t = alloc.result.type
        min_depth = t.depth.data
        reason = _min_reason(alloc.result, min_depth, writers)
        choice = CbChoice(alloc, min_depth, min_depth, mtia.tile_bytes(t.tile), reason)
        stages = alloc.attributes.get(mtia.PIPELINE_STAGES_ATTR)
        producer = writers.get(alloc.result)
        if isinstance(stages, IntegerAttr) and producer is not None and isinstance(producer.parent, Block):
            cap = min(stages.value.data, max_depth)
            if cap >= 2 and producer.parent_op() is not None:
                _streamed_choice(choice, producer, config, cap, periods, costs)
        if strategy == "uniform":
            choice.depth = max(min_depth, max_depth)
            choice.reason = f"uniform {max_depth}-fold buffering" + (
                f" (its minimum is {min_depth})" if min_depth > max_depth else ""
            )
        choices.append(choice)
    if sum(aligned(c.bytes, config.cb_align_bytes) for c in choices) > config.ls_bytes:
        # (else they fit even unshared: placing each CB at the lowest aligned offset clear of the others alive
        # with it never puts its end above the aligned bytes of all CBs placed so far, so the high-water
        # mark is at most this sum and fit_local_storage would take no slot back; the two liveness analyses
        # it needs were 2-3 % of a compile)
        fit_local_storage(choices, config.ls_bytes, _allocated_bytes(func, config, choices))
    return choices


def _allocated_bytes(
    func: Operation, config: MachineConfig, choices: list[CbChoice]
) -> Callable[[list[CbChoice]], int]:
    """The LS high-water mark mtia-cb-allocate would give `choices` (every CB of `func`) at their depths: CBs
    never alive together share bytes. A CB's live range depends on its depth only through whether it has
    more than one slot (a streamed CB with several covers its whole loop: `cb_liveness`), so the liveness is
    analysed twice, every CB at one slot and at two, and each CB takes its range from the one that matches."""
    one = analyze_cb_liveness(func, {c.alloc: 1 for c in choices}).ranges
    two = analyze_cb_liveness(func, {c.alloc: 2 for c in choices}).ranges
    index = {c.alloc: i for i, c in enumerate(choices)}
    assert [r.alloc for r in one] == [c.alloc for c in choices], "mtia-cb-sizing: CBs differ from the liveness's"

    def measure(now: list[CbChoice]) -> int:
        sized = [replace(two[index[c.alloc]] if c.depth > 1 else one[index[c.alloc]], size_bytes=c.bytes) for c in now]
        return place_best(sized, config.cb_align_bytes)[1]

    return measure


def fit_local_storage(
    choices: list[CbChoice], ls_bytes: int, footprint: Callable[[list[CbChoice]], int] | None = None
) -> None:
    """Take slots back, least stall saved per byte first, until the CBs fit `ls_bytes` (or all are minimal).

    `footprint(choices)`: the LS bytes the CBs take (default their sum; the pass gives the allocation's
    high-water mark, where CBs never alive together share bytes). A slot whose loss would not lower it (its
    CB is not at the peak) is kept while another's would. Slots of CBs that are not streamed (straight-line
    values, in-place accumulators) save no stall at all, so they go first, before any streamed CB loses a
    slot whose modelled saving happens to be 0 too."""
    measure = footprint or (lambda cs: sum(c.bytes for c in cs))
    total = measure(choices)
    while total > ls_bytes:
        candidates = [c for c in choices if c.depth > c.min_depth]
        if not candidates:
            return  # the minimum does not fit: mtia-cb-bufferize reports it
        candidates.sort(key=lambda c: (c.streamed, c.saving_per_byte(), -c.tile_bytes, -choices.index(c)))
        for worst in candidates:
            worst.depth -= 1
            lower = measure(choices)
            if lower < total:
                break
            worst.depth += 1
        else:
            worst = candidates[0]
            worst.depth -= 1
            lower = measure(choices)
        worst.reduced_from = worst.reduced_from or worst.depth + 1
        total = lower


def reason_text(choice: CbChoice, ls_bytes: int) -> str:
    """The reason recorded on the CB's cb_alloc."""
    if not choice.reduced_from:
        return choice.reason
    return (
        f"{choice.reason}; {choice.reduced_from} -> {choice.depth} slots to fit {ls_bytes} bytes of LS "
        "(least stall saved per byte)"
    )


def apply_depths(choices: list[CbChoice], ls_bytes: int) -> None:
    """Give every CB its chosen depth (all uses see the new type) and its reason attribute."""
    for c in choices:
        old = c.alloc.result.type
        if c.depth != old.depth.data:
            Rewriter.replace_value_with_new_type(c.alloc.result, mtia.CircularBufferType(c.depth, old.tile))
        c.alloc.attributes[mtia.DEPTH_REASON_ATTR] = StringAttr(reason_text(c, ls_bytes))


@dataclass(frozen=True)
class MtiaCbSizingPass(ModulePass):
    """Set each CB's depth by `strategy` within `max_depth` and the LS budget; see module docstring.

    Requires: mtia-cb-bufferize. Raises: PassFailedException for a bad option.
    Example: mtia-opt k.mlir -p mtia-cb-sizing{strategy=uniform max-depth=3}
    """

    name = "mtia-cb-sizing"
    strategy: str = "greedy"
    """"greedy" (smallest depth that keeps each pipelined CB full) or "uniform" (every CB max-depth)."""
    max_depth: int = 3
    """Most slots any CB gets beyond its minimum (num_stages)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.strategy not in STRATEGIES:
            raise PassFailedException(
                f"{self.name}: unknown strategy '{self.strategy}'; expected one of {', '.join(STRATEGIES)}"
            )
        if self.max_depth < 1:
            raise PassFailedException(f"{self.name}: max-depth must be at least 1, got {self.max_depth}")
        require_buffer_level(op, self.name)
        config = machine_config_for(op, self.name)
        for func in [f for f in op.ops if isinstance(f, tt.FuncOp)]:
            apply_depths(plan_depths(func, config, self.strategy, self.max_depth), config.ls_bytes)

"""Static cost model of buffer-level commands: per-engine cycles of a loop iteration, fill latency of a CB.

Used by mtia-cb-sizing to pick the smallest CB depth that keeps a software pipeline full. A command's work
is `machine/work.py`'s and its cost on an engine or DMA port `machine/cost.py`'s, the same the timing model
charges; this module only says which command costs what (no formula of its own). The estimates are per PE
and assume the launch fills the chip (`cost.dma_estimate`). Masked tails are not known statically: a DMA
moves its whole block.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir import Block, Operation

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine import cost
from mtia_xdsl.machine.commands import DmaPort, Engine, Unit
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.work import COMPUTE_ENGINES, body_work, dpe_work, elem_count


@dataclass(frozen=True)
class CommandCost:
    """What one buffer-level command costs: the unit it occupies and for how long.

    Units: cycles, bytes (global memory, one direction).
    """

    engine: Unit
    """The compute engine or scalar core running it, or the DMA port a DMA command's bytes cross."""
    occupancy_cycles: float
    """Cycles the engine (or DMA port) is busy with the command."""
    latency_cycles: float
    """Cycles from the command's start to its result being usable, beyond the occupancy."""


@dataclass
class IterationCost:
    """Busy cycles per engine of one loop iteration; the busiest engine sets the steady-state period."""

    engine_cycles: dict[Unit, float] = field(default_factory=dict)

    @property
    def period_cycles(self) -> float:
        """Steady-state cycles of one iteration: the busiest engine's work (at least 1)."""
        return max([1.0, *self.engine_cycles.values()])

    @property
    def limiter(self) -> Unit:
        """The engine (or DMA port) setting the period."""
        return max(self.engine_cycles, key=lambda e: self.engine_cycles[e]) if self.engine_cycles else Engine.SCALAR


def command_cost(op: Operation, config: MachineConfig) -> CommandCost | None:
    """Return the cost of buffer-level command `op`, or None if `op` is no engine command."""
    if isinstance(op, mtia.DmaLoadOp | mtia.DmaStoreOp):
        write = isinstance(op, mtia.DmaStoreOp)
        cb = op.value if isinstance(op, mtia.DmaStoreOp) else op.out
        nbytes = mtia.tile_bytes(mtia.tile_type(cb.type)) if cb is not None else 0
        return CommandCost(DmaPort.WRITE if write else DmaPort.READ, *cost.dma_estimate(nbytes, write, config))
    if isinstance(op, mtia.GatherOp | mtia.ScatterOp | mtia.AtomicRmwOp | mtia.AtomicCasOp):
        t = mtia.tile_type((op.ptrs if isinstance(op, mtia.GatherOp | mtia.ScatterOp) else op.ptr).type)
        latency = cost.global_latency_cycles(cost.streaming_level(config), cost.mean_noc_hops(config), config)
        return CommandCost(Engine.SCALAR, cost.scalar_access_cycles(elem_count(t), latency, config), 0.0)
    if isinstance(op, mtia.DpeMatmulOp):
        w = dpe_work(op)
        passes = cost.dpe_passes(w.dtype, w.input_precision, config)
        dpe = cost.dpe_cycles(w.macs, w.dtype, passes, config)
        return CommandCost(Engine.DPE, dpe, float(config.dpe_fill_cycles))
    if isinstance(op, mtia.ReReduceOp):
        n = elem_count(mtia.tile_type(op.input.type))
        re_cycles = cost.compute_cycles(Engine.RE, n, "", config)
        return CommandCost(Engine.RE, re_cycles, cost.latency_cycles(Engine.RE, config))
    if isinstance(op, mtia.EngineComputeOp) and op.outs:
        w = body_work(op)
        engine = COMPUTE_ENGINES[type(op)]
        return CommandCost(
            engine,
            cost.compute_cycles(engine, w.elems, w.dtype, config),
            float(cost.latency_cycles(engine, config, w.lut)),
        )
    return None


def iteration_cost(body: Block, config: MachineConfig) -> IterationCost:
    """Estimate the busy cycles per engine of one run of `body` (nested regions counted once).

    The scalar core spends `scalar_issue_cycles` per command and `scalar_cycles_per_instr` per other op;
    the DMA engine the issue of each DMA command (`cost.dma_issue_cycles`), its ports the transfer cycles.
    """
    iteration = IterationCost()
    cycles = iteration.engine_cycles

    def add(unit: Unit, n: float) -> None:
        cycles[unit] = cycles.get(unit, 0.0) + n

    for op in body.walk():
        c = command_cost(op, config)
        if c is None:
            if not isinstance(op, mtia.YieldOp) and not _inside_engine_body(op, body):
                add(Engine.SCALAR, config.scalar_cycles_per_instr)
            continue
        add(c.engine, c.occupancy_cycles)
        add(Engine.SCALAR, config.scalar_issue_cycles)
        if isinstance(c.engine, DmaPort):
            add(Engine.DMA, cost.dma_issue_cycles(0, config))
    return iteration


def _inside_engine_body(op: Operation, body: Block) -> bool:
    parent = op.parent_op()
    while parent is not None and parent.parent is not None and parent is not body.parent_op():
        if isinstance(parent, mtia.EngineComputeOp):
            return True
        parent = parent.parent_op()
    return False


def fill_latency_cycles(producer: Operation, config: MachineConfig, trailing_read_bytes: int = 0) -> float:
    """Cycles from `producer`'s release until the iteration's tiles it leads are complete.

    A DMA load is followed on the PE's read port, in issue order, by the loads issued after it in the
    same iteration (`trailing_read_bytes`): the iteration's data is complete only once they crossed too.
    """
    c = command_cost(producer, config)
    if c is None:
        return 0.0
    extra = trailing_read_bytes / cost.dma_share_bytes_per_cycle(False, config) if c.engine is DmaPort.READ else 0.0
    return c.latency_cycles + c.occupancy_cycles + extra


def stall_cycles(busy_cycles: float, period_cycles: float, depth: int) -> float:
    """Modelled stall per iteration of a streamed CB of `depth` slots.

    `busy_cycles` is how long a slot is held from its reader's start: the reader's occupancy, then the
    refill's latency (`fill_latency_cycles`). In steady state the slot's next tile is needed `depth`
    iterations after the reader started, so the stall is what exceeds depth x period.
    """
    return max(0.0, busy_cycles - depth * period_cycles)


def depth_to_hide(busy_cycles: float, period_cycles: float, least: int = 1) -> int:
    """Smallest depth d >= `least` with d x period >= busy (see `stall_cycles`). One slot is enough when a
    tile is read and refilled within one iteration: the loop's busiest engine, not this CB, sets the pace."""
    d = least
    while d * period_cycles < busy_cycles:
        d += 1
    return d

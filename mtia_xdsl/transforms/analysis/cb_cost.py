"""Static cost model of buffer-level commands: per-engine cycles of a loop iteration, fill latency of a CB.

Used by mtia-cb-sizing to pick the smallest CB depth that keeps a software pipeline full. Every number
comes from `MachineConfig`; the estimates are per PE and assume the launch fills the chip (a PE's share
of the global-memory bandwidth is the level's chip bandwidth over the PE count, at most its DMA port).
Masked tails are not known statically: a DMA moves its whole block.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects.builtin import AnyFloat, IntegerType, TensorType
from xdsl.ir import Attribute, Block, Operation

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.config import MachineConfig

_LUT_OPS = frozenset({"math.exp", "math.exp2", "math.rsqrt", "math.sqrt", "math.tanh", "math.log", "math.log2"})


@dataclass(frozen=True)
class CommandCost:
    """What one buffer-level command costs: the unit it occupies and for how long.

    Units: cycles, bytes (global memory, one direction).
    """

    engine: str
    """"dma_read", "dma_write", "dpe", "se", "vec", "re", "mlu" or "scalar"."""
    occupancy_cycles: float
    """Cycles the engine (or DMA port) is busy with the command."""
    latency_cycles: float
    """Cycles from the command's start to its result being usable, beyond the occupancy."""


@dataclass
class IterationCost:
    """Busy cycles per engine of one loop iteration; the busiest engine sets the steady-state period."""

    engine_cycles: dict[str, float] = field(default_factory=dict)

    @property
    def period_cycles(self) -> float:
        """Steady-state cycles of one iteration: the busiest engine's work (at least 1)."""
        return max([1.0, *self.engine_cycles.values()])

    @property
    def limiter(self) -> str:
        """The engine setting the period."""
        return max(self.engine_cycles, key=lambda e: self.engine_cycles[e]) if self.engine_cycles else "scalar"


def memory_level(config: MachineConfig) -> str:
    """The global level ("dram" or "sram") whose bandwidth and latency the estimates use.

    Tensors behind the LLC (placement "llc") are costed at DRAM: a streaming loop reads each tile for the
    first time, and a loop whose tiles hit the cache is faster than estimated, which needs no more
    slots than a slower one as long as the loop stays bandwidth-bound. Costing them at SRAM gave layer
    norm's DRAM-bound loops 3 slots where 2 run as fast."""
    return "sram" if config.global_placement == "sram" else "dram"


def dma_bytes_per_cycle(config: MachineConfig, write: bool = False) -> float:
    """A PE's share of the global level's bandwidth when every PE streams, capped by its DMA port."""
    port = config.dma_write_bytes_per_cycle if write else config.dma_read_bytes_per_cycle
    return min(float(port), config.level_bytes_per_cycle(memory_level(config)) / config.n_pes)


def dma_latency_cycles(config: MachineConfig) -> float:
    """Cycles from a DMA's start to its first byte: issue, level latency and the mean NoC hops."""
    hops = sum(config.noc_hops(pe) for pe in range(config.n_pes)) / config.n_pes
    level = memory_level(config)
    return config.dma_issue_cycles + config.level_latency_cycles(level) + hops * config.noc_hop_cycles


def _elems(t: Attribute) -> int:
    if isinstance(t, TensorType):
        n = 1
        for d in t.get_shape():
            n *= d
        return n
    return 1


def _dtype(t: Attribute) -> str:
    """MachineConfig's dtype name ("f32", "bf16", "i8", ...) of a tile's element type."""
    elem = t.element_type if isinstance(t, TensorType) else t
    if isinstance(elem, AnyFloat | IntegerType):
        return str(elem)
    return "i64"  # pointers


def _body_elems(op: mtia.EngineComputeOp) -> tuple[int, bool]:
    """Elements of work of an engine body (output elements of each op) and whether it uses a LUT."""
    work, lut = 0, False
    for inner in op.body.walk():
        if inner is op or isinstance(inner, mtia.YieldOp):
            continue
        work += sum(_elems(r.type) for r in inner.results)
        lut = lut or inner.name in _LUT_OPS
    return max(work, 1), lut


def command_cost(op: Operation, config: MachineConfig) -> CommandCost | None:
    """Return the cost of buffer-level command `op`, or None if `op` is no engine command."""
    if isinstance(op, mtia.DmaLoadOp | mtia.DmaStoreOp):
        write = isinstance(op, mtia.DmaStoreOp)
        cb = op.value if isinstance(op, mtia.DmaStoreOp) else op.out
        nbytes = mtia.tile_bytes(mtia.tile_type(cb.type)) if cb is not None else 0
        cycles = nbytes / dma_bytes_per_cycle(config, write)
        return CommandCost("dma_write" if write else "dma_read", cycles, dma_latency_cycles(config))
    if isinstance(op, mtia.GatherOp | mtia.ScatterOp | mtia.AtomicRmwOp | mtia.AtomicCasOp):
        t = mtia.tile_type((op.ptrs if isinstance(op, mtia.GatherOp | mtia.ScatterOp) else op.ptr).type)
        latency = config.level_latency_cycles(memory_level(config))
        return CommandCost("scalar", _elems(t) * latency / config.scalar_outstanding_loads, 0.0)
    if isinstance(op, mtia.DpeMatmulOp):
        a, b = mtia.tile_type(op.a.type), mtia.tile_type(op.b.type)
        macs = _elems(a) * b.get_shape()[-1]  # type: ignore[union-attr]  # [B x] M x K x N
        dtype = _dtype(a)
        passes = config.dpe_fp32_ieee_passes if dtype == "f32" and op.input_precision.value.data == 2 else 1
        try:
            rate = config.dpe_macs_per_cycle(dtype)
        except ValueError:
            rate = config.dpe_bf16_macs_per_cycle
        return CommandCost("dpe", macs * passes / rate, float(config.dpe_fill_cycles))
    if isinstance(op, mtia.ReReduceOp):
        n = _elems(mtia.tile_type(op.input.type))
        return CommandCost("re", n / config.re_elems_per_cycle, float(config.re_latency_cycles))
    if isinstance(op, mtia.EngineComputeOp) and op.outs:
        work, lut = _body_elems(op)
        if isinstance(op, mtia.SeComputeOp):
            latency = config.se_lut_latency_cycles if lut else config.se_alu_latency_cycles
            return CommandCost("se", work / config.se_elems_per_cycle, float(latency))
        if isinstance(op, mtia.MluComputeOp):
            return CommandCost("mlu", work / config.mlu_elems_per_cycle, float(config.mlu_latency_cycles))
        rate = config.vec_elems_per_cycle(_dtype(mtia.tile_type(op.outs[0].type)))
        return CommandCost("vec", work / rate, float(config.vec_latency_cycles))
    return None


def iteration_cost(body: Block, config: MachineConfig) -> IterationCost:
    """Estimate the busy cycles per engine of one run of `body` (nested regions counted once).

    The scalar core spends `scalar_issue_cycles` per command and `scalar_cycles_per_instr` per other op;
    the DMA engine `dma_issue_cycles` per command, its ports the transfer cycles.
    """
    cost = IterationCost()
    cycles = cost.engine_cycles

    def add(engine: str, n: float) -> None:
        cycles[engine] = cycles.get(engine, 0.0) + n

    for op in body.walk():
        c = command_cost(op, config)
        if c is None:
            if not isinstance(op, mtia.YieldOp) and not _inside_engine_body(op, body):
                add("scalar", config.scalar_cycles_per_instr)
            continue
        add(c.engine, c.occupancy_cycles)
        add("scalar", config.scalar_issue_cycles)
        if c.engine.startswith("dma"):
            add("dma_issue", config.dma_issue_cycles)
    return cost


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
    extra = trailing_read_bytes / dma_bytes_per_cycle(config) if c.engine == "dma_read" else 0.0
    return c.latency_cycles + c.occupancy_cycles + extra


def stall_cycles(busy_cycles: float, period_cycles: float, depth: int) -> float:
    """Modelled stall per iteration of a streamed CB of `depth` slots.

    `busy_cycles` is how long a slot is held from its reader's start: the reader's occupancy, then the
    refill's latency (`fill_latency_cycles`). In steady state the slot's next tile is needed `depth`
    iterations after the reader started, so the stall is what exceeds depth x period.
    """
    return max(0.0, busy_cycles - depth * period_cycles)


def depth_to_hide(busy_cycles: float, period_cycles: float) -> int:
    """Smallest depth d >= 2 with d x period >= busy (see `stall_cycles`)."""
    d = 2
    while d * period_cycles < busy_cycles:
        d += 1
    return d

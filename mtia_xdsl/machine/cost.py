"""What work costs on each engine of a PE: the one cost function per engine, called by the timing model
(`program_shape.compute_cost`, `memory.MemorySystem`, the DMA of `timing._Simulator`) and by CB sizing
(`transforms/analysis/cb_cost`). Reads only `MachineConfig`; the work comes from `machine/work.py`.

DMA: a command costs its issue on the DMA engine (`dma_issue_cycles`), the global level's latency plus
NoC hops (`global_latency_cycles`), then its bytes on the PE's read or write port. The timing model
charges the issue and latency per command and PE and moves the bytes through the chip-wide bandwidth
pools (`machine/memory.py`, the fluid model: the rate depends on what else is in flight); CB sizing,
which knows no run, assumes every PE streams: each gets `dma_share_bytes_per_cycle` of the level
(`dma_estimate`).

Units: cycles of the PE clock. `*_cycles` is the ideal occupancy of the engine (work / peak rate; the
timing model rounds a command up to whole cycles, at least 1), `*_latency_cycles` the extra cycles until a
result is visible. A dtype an engine does not take is an error (`MachineConfig.dpe_macs_per_cycle`), never
a silent fallback to another rate. Sources of every rate: `MachineConfig`'s field comments.
"""

from __future__ import annotations

from mtia_xdsl.machine.commands import Engine
from mtia_xdsl.machine.config import MachineConfig


def dpe_passes(dtype: str, input_precision: int, config: MachineConfig) -> int:
    """DPE passes of a matmul: fp32 with input precision "ieee" (code 2) takes
    `dpe_fp32_ieee_passes` bf16 passes, anything else one."""
    return config.dpe_fp32_ieee_passes if dtype == "f32" and input_precision == 2 else 1


def dpe_cycles(macs: float, dtype: str, passes: int, config: MachineConfig) -> float:
    """Ideal DPE cycles of `macs` MACs of `dtype` inputs in `passes` passes (pipeline fill excluded).

    Raises: ValueError for a dtype the DPE does not take."""
    return macs * passes / config.dpe_macs_per_cycle(dtype)


def compute_cycles(engine: Engine, elems: float, dtype: str, config: MachineConfig) -> float:
    """Ideal occupancy of `elems` elements of work on the SE, VEC, RE or MLU (VEC's rate depends on `dtype`).

    Raises: ValueError for another engine."""
    if engine is Engine.SE:
        return elems / config.se_elems_per_cycle
    if engine is Engine.VEC:
        return elems / config.vec_elems_per_cycle(dtype)
    if engine is Engine.RE:
        return elems / config.re_elems_per_cycle
    if engine is Engine.MLU:
        return elems / config.mlu_elems_per_cycle
    raise ValueError(f"compute_cycles: {engine} does not count elements")


def latency_cycles(engine: Engine, config: MachineConfig, lut: bool = False, re_hops: int = 0) -> float:
    """Cycles from a compute command's end until its result is visible: the SE's LUT or ALU latency
    (`lut`: the body uses the lookup table, see work.LUT_OPS), the RE's latency plus `re_hops` neighbour
    hops, the VEC's or MLU's latency; the DPE's fill is paid at its start instead (0 here)."""
    if engine is Engine.SE:
        return config.se_lut_latency_cycles if lut else config.se_alu_latency_cycles
    if engine is Engine.VEC:
        return config.vec_latency_cycles
    if engine is Engine.RE:
        return config.re_latency_cycles + re_hops * config.re_hop_cycles
    if engine is Engine.MLU:
        return config.mlu_latency_cycles
    return 0.0


def scalar_access_cycles(elems: int, latency: float, config: MachineConfig) -> float:
    """Cycles the scalar core spends on `elems` element accesses of `latency` cycles each (gathers,
    scatters, atomics, scalar loads): the first pays the full latency, the rest overlap
    `scalar_outstanding_loads` at a time (at least one cycle each)."""
    if elems <= 0:
        return 0.0
    return latency + (elems - 1) * max(1.0, latency / config.scalar_outstanding_loads)


# ---------------------------------------------------------------------------------------------------
# DMA and global memory
# ---------------------------------------------------------------------------------------------------


def dma_issue_cycles(descriptors: int, config: MachineConfig) -> float:
    """Cycles the DMA engine spends issuing one command of `descriptors` contiguous runs:
    `dma_issue_cycles` plus `dma_descriptor_cycles` per run."""
    return config.dma_issue_cycles + descriptors * config.dma_descriptor_cycles


def global_latency_cycles(level: str, hops: float, config: MachineConfig) -> float:
    """Cycles from a global-memory request to its first byte: the latency of `level` ("dram" or "sram")
    plus `hops` NoC hops of `noc_hop_cycles` (`MachineConfig.noc_hops` of the requesting PE)."""
    return config.level_latency_cycles(level) + hops * config.noc_hop_cycles


def dma_port_bytes_per_cycle(write: bool, config: MachineConfig) -> float:
    """Bytes per cycle of a PE's DMA write port (`write`) or read port: the most one transfer gets."""
    return float(config.dma_write_bytes_per_cycle if write else config.dma_read_bytes_per_cycle)


def streaming_level(config: MachineConfig) -> str:
    """The global level ("dram" or "sram") a static estimate charges a kernel's accesses to.

    Tensors behind the LLC (placement "llc") are costed at DRAM: a streaming loop reads each tile for the
    first time, and a loop whose tiles hit the cache is faster than estimated, which needs no more
    slots than a slower one as long as the loop stays bandwidth-bound. Costing them at SRAM gave layer
    norm's DRAM-bound loops 3 slots where 2 run as fast."""
    return "sram" if config.global_placement == "sram" else "dram"


def mean_noc_hops(config: MachineConfig) -> float:
    """Mean NoC hops from a PE to its memory edge over the chip's PEs (`MachineConfig.noc_hops`)."""
    return sum(config.noc_hops(pe) for pe in range(config.n_pes)) / config.n_pes


def dma_share_bytes_per_cycle(write: bool, config: MachineConfig) -> float:
    """A PE's share of the streaming level's bandwidth when every PE streams, capped by its DMA port."""
    level_share = config.level_bytes_per_cycle(streaming_level(config)) / config.n_pes
    return min(dma_port_bytes_per_cycle(write, config), level_share)


def dma_estimate(nbytes: float, write: bool, config: MachineConfig) -> tuple[float, float]:
    """Static (port occupancy, latency) of a DMA command moving `nbytes` when every PE streams.

    Occupancy: `nbytes` at `dma_share_bytes_per_cycle`. Latency, from the command's start to its first
    byte: the issue and the streaming level's latency over the mean NoC hops. The contiguous runs of a
    block depend on its strides, known at run time only, so the estimate charges no per-run descriptor
    cycles (the timing model does, `dma_descriptor_cycles` each), nor granule rounding. A store is charged
    at the streaming level too: behind the LLC (`llc_write_behind`) its PE hands it to SRAM sooner, but its
    DRAM bytes take the same share of DRAM later, so a streaming loop moves its iterations no faster.
    Units: cycles."""
    memory = global_latency_cycles(streaming_level(config), mean_noc_hops(config), config)
    return nbytes / dma_share_bytes_per_cycle(write, config), dma_issue_cycles(0, config) + memory


def ls_gather_box_ratio(elem_bytes: int, config: MachineConfig) -> float:
    """The most elements an element gather's DMA box may hold per gathered element while moving the box
    costs the DMA no more than gathering the elements costs the scalar core (the compiler then moves the
    box and gathers inside LS: `memory_access._ls_gather_access`). Units: box elements per tile element,
    both of `elem_bytes` bytes.

    Per gathered element past the first, the scalar core spends `scalar_access_cycles` of the streaming
    level's latency over the mean NoC hops (the latency `dma_estimate` charges): max(1, latency /
    `scalar_outstanding_loads`); the DMA moves ratio x `elem_bytes` at `dma_share_bytes_per_cycle` (every PE
    streaming). They are equal at ratio = share x max(1, latency / outstanding) / `elem_bytes`: for MTIA2I's
    f32 with tensors behind the LLC (costed at DRAM), 17 (tests/machine/test_cost_agreement.py). Left out:
    the first element's latency (both pay one), the box's per-row descriptors and the LS gather on the
    vector core (small next to the bytes of a row)."""
    latency = global_latency_cycles(streaming_level(config), mean_noc_hops(config), config)
    per_element = scalar_access_cycles(2, latency, config) - scalar_access_cycles(1, latency, config)
    return dma_share_bytes_per_cycle(False, config) * per_element / elem_bytes

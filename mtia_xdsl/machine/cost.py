"""What work costs on each engine of a PE: the one cost function per engine, called by the timing model
(`program_shape.compute_cost`, `memory.MemorySystem.scalar_access_cycles`) and by CB sizing
(`transforms/analysis/cb_cost`). Reads only `MachineConfig`; the work comes from `machine/work.py`.

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

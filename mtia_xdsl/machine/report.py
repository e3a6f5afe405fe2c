"""Report: what a simulated kernel run cost, against the roofline of the memory level its data lives in.

Built from a `Timeline` (machine/timing.py). Busy fractions are given over the PEs the launch used and
over the whole chip. The roofline bound is the largest of: DPE work at peak, SE work at peak, vector-core
work at peak (each spread over all PEs of the chip), and the DMA bytes of each global level over that
level's chip bandwidth (sustained DRAM bandwidth, i.e. with the ECC cost). The timing model can never beat
any of these terms, so the achieved fraction is at most 1; `from_timeline` asserts it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from mtia_xdsl.machine.commands import Engine
from mtia_xdsl.machine.timing import Timeline

_ROOFLINE_SLACK = 1e-9


@dataclass
class Report:
    """Cycles, utilisation, traffic and roofline of one kernel launch on the machine model.

    Units: cycles and bytes are chip totals unless the name says per PE.
    """

    kernel: str
    chip: str
    mapping: str
    placement: str
    """Where kernel tensors live: "dram", "sram" or "llc" (DRAM behind the SRAM cache)."""
    total_cycles: int
    time_us: float
    launch_us: float
    """Kernel launch overhead (upper bound), not included in `total_cycles`."""
    programs: int
    pes_used: int
    n_pes: int
    commands: int
    engine_busy_used: dict[str, float]
    """Engine -> busy fraction averaged over the PEs used ("scalar": instructions, issue and gathers)."""
    engine_busy_chip: dict[str, float]
    """Engine -> busy fraction averaged over all PEs of the chip."""
    dram_read_bytes: float
    dram_write_bytes: float
    sram_read_bytes: float
    sram_write_bytes: float
    ls_bytes: float
    dram_transferred_bytes: float
    """DRAM bytes moved by DMA including 32-byte granule rounding (scalar-core accesses excluded)."""
    sram_transferred_bytes: float
    ls_high_water_bytes: int
    """Largest LS footprint of any PE (sum of depth x tile bytes of its CBs, plus extra)."""
    ls_high_water_per_pe: dict[int, int]
    ls_capacity_bytes: int
    dpe_flops: float
    se_elems: int
    vec_elems: int
    roofline_terms_cycles: dict[str, float]
    """Lower bounds on the kernel's cycles: "dpe", "se", "vec", "dram", "sram"."""
    roofline_bound_cycles: float
    roofline_limiter: str
    """The term setting the bound."""
    achieved_fraction: float
    """roofline_bound_cycles / total cycles, at most 1."""
    achieved_tflops: float
    achieved_dram_gb_per_s: float
    achieved_sram_gb_per_s: float
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def from_timeline(cls, timeline: Timeline, kernel: str = "") -> Report:
        """Summarise a simulated launch.

        Raises: AssertionError (internal invariant) if the simulation beat its roofline.
        """
        cfg, traffic, work = timeline.config, timeline.traffic, timeline.work
        total = timeline.total_cycles
        terms = _roofline_terms(timeline)
        limiter = max(terms, key=lambda k: terms[k]) if terms else "none"
        bound = terms.get(limiter, 0.0)
        achieved = bound / total if total > 0 else 0.0
        assert achieved <= 1.0 + _ROOFLINE_SLACK, f"simulated {total} cycles beat the roofline {bound} ({limiter})"
        seconds = total / cfg.clock_hz
        used = timeline.pes_used
        busy_used, busy_chip = _busy_fractions(timeline, used)
        high_water = max(timeline.ls_high_water_bytes.values(), default=0)
        warnings = []
        if high_water > cfg.ls_bytes:
            warnings.append(f"LS high-water mark {high_water} B exceeds the {cfg.ls_bytes} B of local storage")
        if timeline.llc_overflowed:
            warnings.append("tensors exceed the LLC; accesses beyond its capacity were modelled as DRAM misses")
        return cls(
            kernel=kernel,
            chip=cfg.name,
            mapping=timeline.mapping,
            placement=cfg.global_placement,
            total_cycles=math.ceil(total),
            time_us=cfg.cycles_to_us(total),
            launch_us=cfg.cycles_to_us(cfg.kernel_launch_cycles),
            programs=len(timeline.pe_of_program),
            pes_used=len(used),
            n_pes=cfg.n_pes,
            commands=len(timeline.spans),
            engine_busy_used=busy_used,
            engine_busy_chip=busy_chip,
            dram_read_bytes=traffic.dram_read_bytes,
            dram_write_bytes=traffic.dram_write_bytes,
            sram_read_bytes=traffic.sram_read_bytes,
            sram_write_bytes=traffic.sram_write_bytes,
            ls_bytes=traffic.ls_bytes,
            dram_transferred_bytes=traffic.dram_transferred_bytes,
            sram_transferred_bytes=traffic.sram_transferred_bytes,
            ls_high_water_bytes=high_water,
            ls_high_water_per_pe=dict(sorted(timeline.ls_high_water_bytes.items())),
            ls_capacity_bytes=cfg.ls_bytes,
            dpe_flops=work.dpe_flops,
            se_elems=work.se_elems,
            vec_elems=work.vec_elems,
            roofline_terms_cycles=terms,
            roofline_bound_cycles=bound,
            roofline_limiter=limiter,
            achieved_fraction=achieved,
            achieved_tflops=work.dpe_flops / seconds / 1e12 if seconds > 0 else 0.0,
            achieved_dram_gb_per_s=traffic.dma_dram_bytes / seconds / 1e9 if seconds > 0 else 0.0,
            achieved_sram_gb_per_s=traffic.dma_sram_bytes / seconds / 1e9 if seconds > 0 else 0.0,
            warnings=warnings,
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the report as plain JSON-serialisable data."""
        data = dataclasses.asdict(self)
        data["ls_high_water_per_pe"] = {str(k): v for k, v in self.ls_high_water_per_pe.items()}
        return data

    def format(self) -> str:
        """Return a readable text table."""
        title = f"{self.kernel} on " if self.kernel else ""
        lines = [
            f"{title}{self.chip} ({self.n_pes} PEs), mapping {self.mapping}, tensors in {self.placement}",
            f"  time        {self.total_cycles:>14,} cycles  {self.time_us:10.3f} us"
            f"  (launch <= {self.launch_us:.2f} us not included)",
            f"  programs    {self.programs:>14,} on {self.pes_used} PEs, {self.commands:,} engine commands",
            f"  roofline    {self.roofline_bound_cycles:>14,.0f} cycles ({self.roofline_limiter}-bound)"
            f"  achieved {100 * self.achieved_fraction:5.1f} %",
            "              terms: " + "  ".join(f"{k} {v:,.0f}" for k, v in self.roofline_terms_cycles.items()),
            f"  throughput  {self.achieved_tflops:10.2f} TFLOP/s (DPE)"
            f"  DRAM {self.achieved_dram_gb_per_s:8.1f} GB/s"
            f"  SRAM {self.achieved_sram_gb_per_s:8.1f} GB/s",
            "",
            f"  {'engine':<8}{'busy (PEs used)':>17}{f'busy (all {self.n_pes})':>16}",
        ]
        for name, frac in self.engine_busy_used.items():
            lines.append(f"  {name:<8}{100 * frac:>16.1f}%{100 * self.engine_busy_chip[name]:>15.1f}%")
        lines += [
            "",
            f"  {'memory':<8}{'read':>16}{'written':>16}{'DMA moved (32 B units)':>24}",
            f"  {'DRAM':<8}{_bytes(self.dram_read_bytes):>16}{_bytes(self.dram_write_bytes):>16}"
            f"{_bytes(self.dram_transferred_bytes):>24}",
            f"  {'SRAM':<8}{_bytes(self.sram_read_bytes):>16}{_bytes(self.sram_write_bytes):>16}"
            f"{_bytes(self.sram_transferred_bytes):>24}",
            f"  {'LS':<8}{_bytes(self.ls_bytes):>16} (read + written)",
            f"  LS high-water {_bytes(self.ls_high_water_bytes)} of {_bytes(self.ls_capacity_bytes)} per PE",
        ]
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def build_report(timeline: Timeline, kernel: str = "") -> Report:
    """Summarise a simulated launch; see `Report.from_timeline`."""
    return Report.from_timeline(timeline, kernel)


def _roofline_terms(timeline: Timeline) -> dict[str, float]:
    cfg, work, traffic = timeline.config, timeline.work, timeline.traffic
    n = cfg.n_pes
    terms = {
        "dpe": work.dpe_cycles / n,
        "se": work.se_cycles / n,
        "vec": work.vec_cycles / n,
        "dram": traffic.dma_dram_bytes / cfg.dram_bytes_per_cycle,
        "sram": traffic.dma_sram_bytes / cfg.sram_bytes_per_cycle,
    }
    return terms


def _busy_fractions(timeline: Timeline, used: list[int]) -> tuple[dict[str, float], dict[str, float]]:
    total = timeline.total_cycles
    n_chip = timeline.config.n_pes
    busy_used: dict[str, float] = {}
    busy_chip: dict[str, float] = {}
    for engine in Engine:
        cycles = sum(timeline.engine_busy_cycles.get((pe, engine), 0.0) for pe in used)
        if engine is Engine.SCALAR:
            cycles += sum(timeline.scalar_issue_cycles.get(pe, 0.0) for pe in used)
        busy_used[engine.value] = cycles / (total * len(used)) if total > 0 and used else 0.0
        busy_chip[engine.value] = cycles / (total * n_chip) if total > 0 else 0.0
    return busy_used, busy_chip


def _bytes(n: float) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} B"

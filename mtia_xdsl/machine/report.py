"""Report: what a simulated kernel run cost, against the roofline of the memory level its data lives in.

Built from a `Timeline` (machine/timing.py). Busy fractions are given over the PEs the launch used and
over the whole chip. The roofline bound is the largest of: DPE work at peak, SE work at peak, vector-core
work at peak (each spread over all PEs of the chip), the DMA bytes of each global level over that
level's chip bandwidth (sustained DRAM bandwidth, i.e. with the ECC cost), and two per-PE bounds of the
busiest PE: its DMA ("dma": issue cycles, or bytes through a port at the per-PE port rate) and its
scalar core's instructions and command issue ("scalar"). The timing model can never beat
any of these terms, so the achieved fraction is at most 1; `build_report` refuses a timeline that does
(`RooflineViolation`, an internal error of the model), so every kernel run checks the invariant.
"""

from __future__ import annotations

import dataclasses
import functools
import linecache
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mtia_xdsl.machine.commands import Engine
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.timeline import LineCost
from mtia_xdsl.machine.timing import Timeline

HOT_LINES = 10
"""Source lines the report's text lists (all are in `Report.hot_lines`)."""

ROOFLINE_TOLERANCE = 1e-6
"""Relative slack on the roofline invariant, for float rounding in the fluid bandwidth model."""

_PLACEMENT_TEXT = {
    "dram": "DRAM, no cache",
    "sram": "SRAM scratch",
    "llc": "DRAM behind the SRAM cache",
}
_TERM_TEXT = {
    Engine.DPE.value: "DPE work at peak",
    Engine.SE.value: "SE work at peak",
    Engine.VEC.value: "vector-core work at peak",
    "dram": "DRAM DMA bytes / sustained bandwidth",
    "sram": "SRAM DMA bytes / bandwidth",
    Engine.DMA.value: "the busiest PE's DMA: issue cycles, or port bytes / per-PE port rate",
    Engine.SCALAR.value: "the busiest PE's scalar core: instructions and command issue",
}


@dataclass(frozen=True)
class CbInfo:
    """One circular buffer of the compiled kernel, as mtia-cb-sizing left it.

    Units: bytes per PE.
    """

    index: int
    """Position of its `mtia.cb_alloc` in the kernel (CB number of the machine model)."""
    loc: str
    """Kernel `file:line:col` of the first command writing it (of the kernel if none does)."""
    tile: str
    """Tile type, e.g. `tensor<128x64xbf16>`."""
    depth: int
    tile_bytes: int
    reason: str
    """Why it has `depth` slots (`mtia.depth_reason`; empty if mtia-cb-sizing did not run)."""
    cb_id: int | None = None
    """CB ID mtia-cb-allocate gave it (None: not allocated)."""
    ls_offset: int | None = None
    """Byte offset of its slots in LS from mtia-cb-allocate (None: not allocated)."""

    @property
    def bytes(self) -> int:
        """LS bytes the CB holds: depth x tile bytes."""
        return self.depth * self.tile_bytes


@dataclass(frozen=True)
class CbSummary:
    """What a kernel's CBs take of a PE, before and after mtia-cb-allocate shares IDs and bytes.

    Units: bytes per PE.
    """

    count: int
    """CBs of the kernel (the CB IDs it would need if none shared one)."""
    total_bytes: int
    """Sum of every CB's depth x tile bytes (the LS it would need if none shared bytes)."""
    ids_in_use: int
    """CB IDs the allocation uses (the most CBs alive at once); `count` if the program is not allocated."""
    ls_high_water_bytes: int
    """End of the highest CB in LS after allocation; `total_bytes` if the program is not allocated."""


def cb_summary(cbs: list[CbInfo]) -> CbSummary:
    """Summarise `cbs` (from `cb_report`): CB count and bytes, and the CB IDs and LS bytes the allocation uses."""
    total = sum(c.bytes for c in cbs)
    if any(c.cb_id is None or c.ls_offset is None for c in cbs):
        return CbSummary(len(cbs), total, len(cbs), total)
    ids = len({c.cb_id for c in cbs})
    top = max((c.ls_offset + c.bytes for c in cbs if c.ls_offset is not None), default=0)
    return CbSummary(len(cbs), total, ids, top)


def cb_report(module: Any) -> list[CbInfo]:
    """Return every CB of the buffer-level `module`'s kernels, in allocation order, read from the IR."""
    from mtia_xdsl.dialects import mtia
    from mtia_xdsl.utils.locations import location_str

    out: list[CbInfo] = []
    allocs = [op for op in module.walk() if isinstance(op, mtia.CbAllocOp)]
    first_writer: dict[Any, Any] = {}
    for op in module.walk():
        written = list(op.outs) if isinstance(op, mtia.EngineComputeOp) else [getattr(op, "out", None)]
        for cb in written:
            if cb is not None and isinstance(op, mtia.ENGINE_OPS):
                first_writer.setdefault(cb, op)
    for i, alloc in enumerate(allocs):
        t = alloc.result.type
        writer = first_writer.get(alloc.result, alloc)
        reason = alloc.attributes.get(mtia.DEPTH_REASON_ATTR)
        out.append(
            CbInfo(
                index=i,
                loc=location_str(writer.location),
                tile=str(t.tile),
                depth=t.depth.data,
                tile_bytes=mtia.tile_bytes(t.tile),
                reason=reason.data if reason is not None else "",  # type: ignore[union-attr]
                cb_id=alloc.cb_id.value.data if alloc.cb_id is not None else None,
                ls_offset=alloc.ls_offset.value.data if alloc.ls_offset is not None else None,
            )
        )
    return out


class RooflineViolation(RuntimeError):
    """Internal machine-model error: a simulated kernel ran faster than its roofline allows."""


@dataclass
class Report:
    """Cycles, utilisation, traffic and roofline of one kernel launch on the machine model.

    Units: cycles and bytes are chip totals unless the name says per PE. In a report from `from_timeline`,
    `engine_busy_used`, `engine_busy_chip` and `hot_lines` are computed when first read (the same values;
    the report keeps its timeline until then).
    """

    kernel: str
    chip: str
    config_overrides: dict[str, Any]
    """MachineConfig fields that differ from the preset named `chip` (field -> value used)."""
    clock_hz: float
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
    dma_dram_bytes: float
    """Useful DRAM bytes moved by DMA (read + written, no granule rounding): the roofline's DRAM term."""
    dma_sram_bytes: float
    """Useful SRAM bytes moved by DMA: the roofline's SRAM term."""
    dram_transferred_bytes: float
    """DRAM bytes moved by DMA including 32-byte granule rounding (scalar-core accesses excluded)."""
    sram_transferred_bytes: float
    granule_bytes: int
    """DMA granule: every contiguous run moves a whole number of these."""
    ls_high_water_bytes: int
    """Largest LS footprint of any PE (sum of depth x tile bytes of its CBs, plus extra)."""
    ls_high_water_per_pe: dict[int, int]
    ls_capacity_bytes: int
    cb_ids: int
    """CB IDs a PE's CP tracks (MachineConfig.cb_ids)."""
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
    peak_dpe_tflops: float
    """Chip BF16 DPE peak of the config, TFLOP/s."""
    sustained_dram_gb_per_s: float
    """Chip DRAM bandwidth with the ECC cost, GB/s."""
    peak_sram_gb_per_s: float
    warnings: list[str] = field(default_factory=list)
    hot_lines: list[LineCost] = field(default_factory=list)
    """Every kernel source line that issued commands, with what they cost, most command cycles first."""
    cbs: list[CbInfo] = field(default_factory=list)
    """The kernel's CBs (depth, bytes, why), when the runtime knows the compiled program (`cb_report`)."""
    gather_dram_bytes: float = 0.0
    """DRAM bytes of scalar-core gathers and scatters (in the roofline and the intensity with DMA's)."""
    gather_sram_bytes: float = 0.0
    """SRAM bytes of scalar-core gathers and scatters."""
    fit: list[str] = field(default_factory=list)
    """How the compiler made the kernel's CBs fit (`mtia_xdsl.fit`): what was tried, what was applied and
    why; empty when the kernel fitted as written."""

    @classmethod
    def from_timeline(cls, timeline: Timeline, kernel: str = "") -> Report:
        """Summarise a simulated launch.

        Raises: RooflineViolation (an internal model error) if the simulation beat its roofline.
        """
        cfg, traffic, work = timeline.config, timeline.traffic, timeline.work
        total = timeline.total_cycles
        terms = _roofline_terms(timeline)
        limiter = max(terms, key=lambda k: terms[k]) if terms else "none"
        bound = terms.get(limiter, 0.0)
        achieved = bound / total if total > 0 else 0.0
        check_roofline(kernel, total, bound, limiter)
        seconds = total / cfg.clock_hz
        used = timeline.pes_used
        high_water = max(timeline.ls_high_water_bytes.values(), default=0)
        warnings = []
        if high_water > cfg.ls_bytes:
            warnings.append(f"LS high-water mark {high_water} B exceeds the {cfg.ls_bytes} B of local storage")
        if timeline.llc_overflowed:
            warnings.append("tensors exceed the LLC; accesses beyond its capacity were modelled as DRAM misses")
        report = cls(
            kernel=kernel,
            chip=cfg.name,
            config_overrides=config_overrides(cfg),
            clock_hz=cfg.clock_hz,
            mapping=timeline.mapping,
            placement=cfg.global_placement,
            total_cycles=math.ceil(total),
            time_us=cfg.cycles_to_us(total),
            launch_us=cfg.cycles_to_us(cfg.kernel_launch_cycles),
            programs=len(timeline.pe_of_program),
            pes_used=len(used),
            n_pes=cfg.n_pes,
            commands=timeline.command_count,
            engine_busy_used={},
            engine_busy_chip={},
            dram_read_bytes=traffic.dram_read_bytes,
            dram_write_bytes=traffic.dram_write_bytes,
            sram_read_bytes=traffic.sram_read_bytes,
            sram_write_bytes=traffic.sram_write_bytes,
            ls_bytes=traffic.ls_bytes,
            dma_dram_bytes=traffic.dma_dram_bytes,
            dma_sram_bytes=traffic.dma_sram_bytes,
            gather_dram_bytes=traffic.scalar_dram_bytes,
            gather_sram_bytes=traffic.scalar_sram_bytes,
            dram_transferred_bytes=traffic.dram_transferred_bytes,
            sram_transferred_bytes=traffic.sram_transferred_bytes,
            granule_bytes=cfg.dma_granule_bytes,
            ls_high_water_bytes=high_water,
            ls_high_water_per_pe=dict(sorted(timeline.ls_high_water_bytes.items())),
            ls_capacity_bytes=cfg.ls_bytes,
            cb_ids=cfg.cb_ids,
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
            peak_dpe_tflops=cfg.peak_dpe_bf16_flops_per_cycle * cfg.clock_hz / 1e12,
            sustained_dram_gb_per_s=cfg.dram_bytes_per_cycle * cfg.clock_hz / 1e9,
            peak_sram_gb_per_s=cfg.sram_bytes_per_cycle * cfg.clock_hz / 1e9,
            warnings=warnings,
        )
        # computed when first read: most launches never read them, and they cost a pass over every command
        fractions = functools.cache(lambda: _busy_fractions(timeline, used))
        _defer(report, "engine_busy_used", lambda: fractions()[0])
        _defer(report, "engine_busy_chip", lambda: fractions()[1])
        _defer(report, "hot_lines", timeline.line_costs)
        return report

    # ---- derived figures (the roofline plot's coordinates) ----

    @property
    def ops(self) -> float:
        """Operations of the kernel: DPE FLOPs (2 per MAC and pass) plus SE and vector-core elements."""
        return self.dpe_flops + self.se_elems + self.vec_elems

    @property
    def memory_level(self) -> str:
        """The global level ("dram" or "sram") whose DMA traffic takes longest at its bandwidth."""
        terms = self.roofline_terms_cycles
        return "sram" if terms.get("sram", 0.0) > terms.get("dram", 0.0) else "dram"

    @property
    def intensity_ops_per_byte(self) -> float:
        """Arithmetic intensity: `ops` per byte of `memory_level` moved by DMA or scalar-core gathers and
        scatters (inf when it moved no bytes)."""
        if self.memory_level == "sram":
            nbytes = self.dma_sram_bytes + self.gather_sram_bytes
        else:
            nbytes = self.dma_dram_bytes + self.gather_dram_bytes
        return self.ops / nbytes if nbytes > 0 else math.inf

    @property
    def achieved_ops_per_s(self) -> float:
        """`ops` per second of simulated time."""
        seconds = self.total_cycles / self.clock_hz
        return self.ops / seconds if seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Return the report as plain JSON-serialisable data."""
        data = dataclasses.asdict(self)
        data["ls_high_water_per_pe"] = {str(k): v for k, v in self.ls_high_water_per_pe.items()}
        return data

    def format(self) -> str:
        """Return a readable text table that explains its own figures."""
        return "\n".join(
            self._format_header() + self._format_engines() + self._format_memory() + self._format_lines()
            + self._format_cbs()
            + self._format_fit()
            + self._format_legend()
        )  # fmt: skip

    def _format_header(self) -> list[str]:
        title = f"{self.kernel} on " if self.kernel else ""
        overrides = ", ".join(f"{k}={v!r}" for k, v in self.config_overrides.items()) or "none"
        terms = self.roofline_terms_cycles
        lines = [
            f"{title}{self.chip} ({self.n_pes} PEs at {self.clock_hz / 1e9:.2f} GHz), mapping {self.mapping}, "
            f"tensors in {self.placement} ({_PLACEMENT_TEXT.get(self.placement, self.placement)})",
            f"  config      preset {self.chip}, overridden fields: {overrides}",
            f"  time        {self.total_cycles:>14,} cycles = {self.time_us:.3f} us"
            f"  (kernel launch <= {self.launch_us:.2f} us not included)",
            f"  programs    {self.programs:>14,} on {self.pes_used} of {self.n_pes} PEs, "
            f"{self.commands:,} engine commands",
            f"  roofline    {self.roofline_bound_cycles:>14,.0f} cycles, {self.roofline_limiter}-bound "
            f"({_TERM_TEXT.get(self.roofline_limiter, self.roofline_limiter)})",
            f"              achieved {100 * self.achieved_fraction:.1f} % of the roofline; lower bounds in cycles: "
            + "  ".join(f"{k}{'*' if k == self.roofline_limiter else ''} {v:,.0f}" for k, v in terms.items()),
            f"  throughput  DPE {self.achieved_tflops:.2f} of {self.peak_dpe_tflops:.0f} TFLOP/s, "
            f"DRAM {self.achieved_dram_gb_per_s:.1f} of {self.sustained_dram_gb_per_s:.1f} GB/s, "
            f"SRAM {self.achieved_sram_gb_per_s:.1f} of {self.peak_sram_gb_per_s:.0f} GB/s (DMA)",
            f"  intensity   {self.ops:,.0f} ops (DPE FLOPs + SE and vector elements), "
            f"{_intensity(self.intensity_ops_per_byte)} ops per {self.memory_level.upper()} byte",
        ]
        return lines

    def _format_engines(self) -> list[str]:
        lines = ["", f"  {'engine':<8}{f'busy ({self.pes_used} PEs used)':>20}{f'busy (all {self.n_pes})':>16}"]
        for name, frac in self.engine_busy_used.items():
            lines.append(f"  {name:<8}{100 * frac:>19.1f}%{100 * self.engine_busy_chip[name]:>15.1f}%")
        return lines

    def _format_memory(self) -> list[str]:
        g = self.granule_bytes
        head = f"DMA moved ({g} B granules)"
        lines = [
            "",
            f"  {'memory':<8}{'read':>14}{'written':>14}   {head}",
            f"  {'DRAM':<8}{_bytes(self.dram_read_bytes):>14}{_bytes(self.dram_write_bytes):>14}   "
            f"{_bytes(self.dram_transferred_bytes)} = {self.dram_transferred_bytes / g:,.0f} granules",
            f"  {'SRAM':<8}{_bytes(self.sram_read_bytes):>14}{_bytes(self.sram_write_bytes):>14}   "
            f"{_bytes(self.sram_transferred_bytes)} = {self.sram_transferred_bytes / g:,.0f} granules",
            f"  {'LS':<8}{_bytes(self.ls_bytes):>14} read + written by engines",
            f"  LS high-water {_bytes(self.ls_high_water_bytes)} of {_bytes(self.ls_capacity_bytes)} per PE "
            f"({100 * self.ls_high_water_bytes / self.ls_capacity_bytes:.1f} %, largest PE)",
        ]
        return lines + [f"  warning: {w}" for w in self.warnings]

    def _format_lines(self, top: int = HOT_LINES) -> list[str]:
        if not self.hot_lines:
            return []
        total = sum(x.cycles for x in self.hot_lines) or 1.0
        lines = ["", f"  {'hot lines':<28}{'cmd cycles':>14}{'share':>7}{'commands':>10}{'global':>12}{'LS':>12}  "
                 "engines   source"]  # fmt: skip
        for x in self.hot_lines[:top]:
            where = x.loc.rsplit("/", 1)[-1]
            source = _source_line(x.loc)
            lines.append(
                f"  {where:<28}{x.cycles:>14,.0f}{100 * x.cycles / total:>6.1f}%{x.commands:>10,}"
                f"{_bytes(x.global_bytes):>12}{_bytes(x.ls_bytes):>12}  {','.join(x.engines):<9} {source}"
            )
        if len(self.hot_lines) > top:
            lines.append(f"  ... {len(self.hot_lines) - top} more lines (Report.hot_lines)")
        return lines

    def _format_cbs(self) -> list[str]:
        if not self.cbs:
            return []
        summary = cb_summary(self.cbs)
        wheres = [c.loc.rsplit("/", 1)[-1] for c in self.cbs]
        tile_w = max([len(c.tile) for c in self.cbs] + [24]) + 2
        where_w = max([len(w) for w in wheres] + [26]) + 2
        lines = [
            "",
            f"  {'CB':<4}{'ID':>4}{'LS offset':>11}{'depth':>6}{'bytes':>12}  "
            f"{'tile':<{tile_w}}{'value at':<{where_w}}why",
        ]
        for c, where in zip(self.cbs, wheres, strict=True):
            cb_id = "-" if c.cb_id is None else str(c.cb_id)
            offset = "-" if c.ls_offset is None else str(c.ls_offset)
            lines.append(
                f"  {c.index:<4}{cb_id:>4}{offset:>11}{c.depth:>6}{_bytes(c.bytes):>12}  {c.tile:<{tile_w}}"
                f"{where:<{where_w}}{c.reason}"
            )
        cap = self.ls_capacity_bytes
        lines.append(
            f"  {summary.count} CBs use {summary.ids_in_use} CB IDs at the peak (of {self.cb_ids}); LS high-water "
            f"mark of the allocation {_bytes(summary.ls_high_water_bytes)} of {_bytes(cap)} per PE "
            f"({100 * summary.ls_high_water_bytes / cap:.1f} %; {_bytes(summary.total_bytes)} without sharing)"
        )
        return lines

    def _format_fit(self) -> list[str]:
        if not self.fit:
            return []
        forced = len(self.fit) == 1 and self.fit[0].startswith("applied sub_block=")
        heading = "sub-tiled (compile option sub_block):" if forced else "made to fit (the CBs did not fit as written):"
        return ["", f"  {heading}"] + [f"    {line}" for line in self.fit]

    def _format_legend(self) -> list[str]:
        return [
            "",
            "  roofline = the largest lower bound: each engine's work at chip peak, each level's DMA bytes at",
            "  chip bandwidth (DRAM sustained = peak x ECC efficiency), the busiest PE's DMA (issue, or port bytes",
            "  at the per-PE rate) and scalar core (issue); achieved = roofline / simulated cycles.",
            "  busy = share of the kernel's cycles with a command of that engine in flight.",
            "  hot lines: per kernel source line, its commands' cycles (end - start, summed over PEs and engines,",
            "  so they overlap in time) and share of all command cycles, and the global and LS bytes they moved.",
        ]


class _Deferred:
    """The value of a `Report` field not computed yet: `_DeferredField` computes it on the first read and keeps
    it. Pickled and copied as that value."""

    __slots__ = ("compute",)

    def __init__(self, compute: Callable[[], Any]) -> None:
        self.compute = compute

    def __reduce__(self) -> tuple[Callable[[Any], Any], tuple[Any]]:
        return _identity, (self.compute(),)


def _identity(value: Any) -> Any:
    return value


class _DeferredField:
    """Data descriptor of a `Report` field whose stored value may be a `_Deferred` (`_defer`): a read returns
    the value, computing it the first time."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        try:
            value = obj.__dict__[self.name]
        except KeyError:
            raise AttributeError(self.name) from None
        if type(value) is _Deferred:
            value = obj.__dict__[self.name] = value.compute()
        return value

    def __set__(self, obj: object, value: Any) -> None:
        obj.__dict__[self.name] = value


_DEFERRED_FIELDS = ("engine_busy_used", "engine_busy_chip", "hot_lines")
"""Fields of `Report.from_timeline` computed when first read (the same values, later)."""
for _name in _DEFERRED_FIELDS:
    setattr(Report, _name, _DeferredField(_name))


def _defer(report: Report, name: str, compute: Callable[[], Any]) -> None:
    """Make field `name` (one of `_DEFERRED_FIELDS`) of `report` take `compute()` when first read."""
    report.__dict__[name] = _Deferred(compute)


def build_report(timeline: Timeline, kernel: str = "") -> Report:
    """Summarise a simulated launch; see `Report.from_timeline`.

    Raises: RooflineViolation if the simulated cycles beat the roofline (a bug of the timing model).
    """
    return Report.from_timeline(timeline, kernel)


def check_roofline(kernel: str, total_cycles: float, bound_cycles: float, limiter: str) -> None:
    """Refuse a simulated time below the roofline bound (beyond float rounding).

    Raises: RooflineViolation naming the kernel, the limiting level and both cycle counts.
    """
    if bound_cycles <= total_cycles * (1.0 + ROOFLINE_TOLERANCE):
        return
    name = kernel or "<unnamed kernel>"
    raise RooflineViolation(
        f"internal machine-model error: kernel {name} simulated in {total_cycles:,.1f} cycles, faster than its "
        f"{limiter} roofline of {bound_cycles:,.1f} cycles (achieved {bound_cycles / max(total_cycles, 1e-30):.4f} "
        "> 1); the timing model broke an invariant, please report this kernel"
    )


def config_overrides(config: MachineConfig) -> dict[str, Any]:
    """Return the fields of `config` that differ from the preset of its name (all of them if none)."""
    try:
        base = MachineConfig.preset(config.name)
    except ValueError:
        base = MachineConfig(name=config.name)
    return {
        f.name: getattr(config, f.name)
        for f in dataclasses.fields(config)
        if getattr(config, f.name) != getattr(base, f.name)
    }


def _roofline_terms(timeline: Timeline) -> dict[str, float]:
    cfg, work, traffic = timeline.config, timeline.work, timeline.traffic
    n = cfg.n_pes
    terms = {
        Engine.DPE.value: work.dpe_cycles / n,
        Engine.SE.value: work.se_cycles / n,
        Engine.VEC.value: work.vec_cycles / n,
        # gathers and scatters of the scalar core move bytes too (a kernel with non-box masks has no DMA)
        "dram": (traffic.dma_dram_bytes + traffic.scalar_dram_bytes) / cfg.dram_bytes_per_cycle,
        "sram": (traffic.dma_sram_bytes + traffic.scalar_sram_bytes) / cfg.sram_bytes_per_cycle,
        Engine.DMA.value: max(timeline.dma_bound_cycles.values(), default=0.0),
        Engine.SCALAR.value: max(timeline.scalar_issue_cycles.values(), default=0.0),
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


def _source_line(loc: str) -> str:
    """The stripped source text at "file:line" (empty when the file cannot be read)."""
    path, _, line = loc.rpartition(":")
    if not line.isdigit():
        return ""
    return linecache.getline(path, int(line)).strip()[:60]


def _intensity(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.3g}"


def _bytes(n: float) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} B"

"""Roofline plot: simulated kernels as points under the MTIA-2i memory roofs and engine ceilings.

Two panels, since FLOPs and elements are different units: DPE FLOPs under the BF16 DPE peak, and SE plus
vector-core elements under the SE peak. x is a kernel's intensity in the panel's unit (per byte of the
global level that bounds it, DMA and gathers), y its achieved rate in simulated time; a kernel doing both
kinds of work (attention) appears on both. Roofs are the chip bandwidths of DRAM (sustained, with the ECC
cost), SRAM and LS (all PEs); the
ceilings are the BF16 DPE peak and the SE peak, all from `MachineConfig`. matplotlib is an optional
dependency (extra `plot`), imported only when a plot is drawn; no pyplot global state is touched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mtia_xdsl.machine.commands import Engine
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.report import Report

PANELS = (Engine.DPE.value, "elements")
"""The two panels: DPE FLOPs (ceiling: the BF16 DPE peak) and SE + vector-core elements (ceiling: the SE
peak). FLOPs and elements are different units, so each has its own axes."""


@dataclass(frozen=True)
class RooflinePoint:
    """One kernel on one panel: its intensity and achieved rate in that panel's unit."""

    label: str
    panel: str
    """"dpe" (FLOPs) or "elements" (SE and vector-core elements)."""
    intensity_ops_per_byte: float
    """The panel's ops per byte of the global level that bounds the kernel (DMA and gathers)."""
    achieved_ops_per_s: float
    achieved_fraction: float
    """Of the kernel's own roofline (Report.achieved_fraction)."""


@dataclass(frozen=True)
class RooflinePlot:
    """What `plot_roofline` drew: the figure, the kernel points, the roofs and where it was written."""

    figure: Any
    """matplotlib.figure.Figure with one axes per panel that has points (DPE first)."""
    points: list[RooflinePoint]
    roofs_bytes_per_s: dict[str, float]
    """Level ("DRAM", "SRAM", "LS") -> chip bandwidth used as a roof."""
    ceilings_ops_per_s: dict[str, float]
    """Engine ("DPE bf16", "SE") -> chip peak."""
    path: Path | None


def _panel_ops(report: Report, panel: str) -> float:
    return report.dpe_flops if panel == Engine.DPE.value else report.se_elems + report.vec_elems


def roofline_points(reports: Sequence[Report], labels: Sequence[str] | None = None) -> list[RooflinePoint]:
    """Return the plot coordinates of each report on each panel where it has ops (DPE FLOPs, elements).

    Kernels with no ops or no global traffic are skipped.
    """
    names = list(labels) if labels is not None else [r.kernel or f"kernel {k}" for k, r in enumerate(reports)]
    points = []
    for panel in PANELS:
        for name, report in zip(names, reports, strict=True):
            ops, total = _panel_ops(report, panel), report.ops
            x, y = report.intensity_ops_per_byte, report.achieved_ops_per_s
            if ops > 0 and math.isfinite(x) and x > 0 and y > 0:
                share = ops / total
                points.append(RooflinePoint(name, panel, x * share, y * share, report.achieved_fraction))
    return points


def roofs(config: MachineConfig) -> tuple[dict[str, float], dict[str, float]]:
    """Return (memory roofs in bytes/s, engine ceilings in ops/s) of the whole chip."""
    hz = config.clock_hz
    memory = {
        "DRAM": config.dram_bytes_per_cycle * hz,
        "SRAM": config.sram_bytes_per_cycle * hz,
        "LS": config.ls_bytes_per_cycle * config.n_pes * hz,
    }
    engines = {
        "DPE bf16": config.peak_dpe_bf16_flops_per_cycle * hz,
        "SE": config.peak_se_elems_per_cycle * hz,
    }
    return memory, engines


_PANEL_TEXT = {
    Engine.DPE.value: ("DPE bf16", "FLOP per byte", "achieved FLOP/s (DPE)"),
    "elements": ("SE", "elements per byte", "achieved elements/s (SE + vector core)"),
}


def plot_roofline(
    reports: Sequence[Report],
    config: MachineConfig,
    path: str | Path | None = None,
    labels: Sequence[str] | None = None,
) -> RooflinePlot:
    """Draw the roofline of `config`: a DPE panel (FLOPs) and an SE/vector panel (elements), one point
    per kernel and panel where it has ops, named in each panel's legend; write a PNG to `path` if given.

    Raises: ImportError naming the `plot` extra if matplotlib is not installed.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError("plot_roofline needs matplotlib: pip install 'mtia_xdsl[plot]'") from e

    points = roofline_points(reports, labels)
    memory, engines = roofs(config)
    panels = [p for p in PANELS if any(q.panel == p for q in points)] or [Engine.DPE.value]
    figure = Figure(figsize=(7 * len(panels), 6), dpi=110)
    FigureCanvasAgg(figure)
    markers = "osD^v<>ph*"
    for k, panel in enumerate(panels):
        ax = figure.add_subplot(1, len(panels), k + 1)
        engine, xlabel, ylabel = _PANEL_TEXT[panel]
        mine = [q for q in points if q.panel == panel]
        peak = engines[engine]
        lo, hi = _x_range(mine, memory, {engine: peak})
        xs = [lo * (hi / lo) ** (j / 200) for j in range(201)]
        for (level, bandwidth), style in zip(memory.items(), ("-", "--", ":"), strict=True):
            ax.plot(xs, [min(x * bandwidth, peak) for x in xs], style, color="gray", lw=1.2,
                    label=f"{level} {bandwidth / 1e9:,.0f} GB/s")  # fmt: skip
        ax.axhline(peak, color="tab:red", lw=1.0, ls="-.", label=f"{engine} peak {peak / 1e12:.2f} T/s")
        for j, point in enumerate(mine):
            ax.plot(point.intensity_ops_per_byte, point.achieved_ops_per_s, markers[j % len(markers)], ms=7,
                    label=f"{point.label} ({100 * point.achieved_fraction:.0f} % of roofline)")  # fmt: skip
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_xlabel(f"arithmetic intensity ({xlabel} of the bounding global level)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{config.name}: {engine} roofline")
        ax.grid(True, which="both", lw=0.3)
        ax.legend(fontsize=7, loc="lower right")
    figure.tight_layout()
    written = None
    if path is not None:
        written = Path(path)
        figure.savefig(written, format="png")
    return RooflinePlot(figure, points, memory, engines, written)


def _x_range(
    points: Sequence[RooflinePoint], memory: dict[str, float], engines: dict[str, float]
) -> tuple[float, float]:
    """Span the kernels' intensities and every ridge point (where a roof meets a ceiling), in decades."""
    xs = [p.intensity_ops_per_byte for p in points]
    if not points:
        xs += [1.0]
    xs += [peak / bw for peak in engines.values() for bw in memory.values()]
    lo = 10 ** math.floor(math.log10(min(xs)) - 0.5)
    hi = 10 ** math.ceil(math.log10(max(xs)) + 0.5)
    return lo, hi

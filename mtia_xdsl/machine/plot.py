"""Roofline plot: simulated kernels as points under the MTIA-2i memory roofs and engine ceilings.

x is a kernel's arithmetic intensity (`Report.intensity_ops_per_byte`: DPE FLOPs plus SE and vector-core
elements, per DMA byte of the global level that bounds it), y its achieved ops per second of simulated
time. Roofs are the chip bandwidths of DRAM (sustained, with the ECC cost), SRAM and LS (all PEs); the
ceilings are the BF16 DPE peak and the SE peak, all from `MachineConfig`. matplotlib is an optional
dependency (extra `plot`), imported only when a plot is drawn; no pyplot global state is touched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.report import Report


@dataclass(frozen=True)
class RooflinePoint:
    """One kernel on the plot."""

    label: str
    intensity_ops_per_byte: float
    achieved_ops_per_s: float
    achieved_fraction: float
    """Of the kernel's own roofline (Report.achieved_fraction)."""


@dataclass(frozen=True)
class RooflinePlot:
    """What `plot_roofline` drew: the figure, the kernel points, the roofs and where it was written."""

    figure: Any
    """matplotlib.figure.Figure."""
    points: list[RooflinePoint]
    roofs_bytes_per_s: dict[str, float]
    """Level ("DRAM", "SRAM", "LS") -> chip bandwidth used as a roof."""
    ceilings_ops_per_s: dict[str, float]
    """Engine ("DPE bf16", "SE") -> chip peak."""
    path: Path | None


def roofline_points(reports: Sequence[Report], labels: Sequence[str] | None = None) -> list[RooflinePoint]:
    """Return the plot coordinates of each report; kernels with no ops or no global traffic are skipped."""
    names = list(labels) if labels is not None else [r.kernel or f"kernel {k}" for k, r in enumerate(reports)]
    points = []
    for name, report in zip(names, reports, strict=True):
        x, y = report.intensity_ops_per_byte, report.achieved_ops_per_s
        if math.isfinite(x) and x > 0 and y > 0:
            points.append(RooflinePoint(name, x, y, report.achieved_fraction))
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


def plot_roofline(
    reports: Sequence[Report],
    config: MachineConfig,
    path: str | Path | None = None,
    labels: Sequence[str] | None = None,
) -> RooflinePlot:
    """Draw the roofline of `config` with one point per report; write a PNG to `path` if given.

    Raises: ImportError naming the `plot` extra if matplotlib is not installed.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError("plot_roofline needs matplotlib: pip install 'mtia_xdsl[plot]'") from e

    points = roofline_points(reports, labels)
    memory, engines = roofs(config)
    figure = Figure(figsize=(9, 6), dpi=110)
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    lo, hi = _x_range(points, memory, engines)
    xs = [lo * (hi / lo) ** (k / 200) for k in range(201)]
    top = max(engines.values())
    for (level, bandwidth), style in zip(memory.items(), ("-", "--", ":"), strict=True):
        ax.plot(xs, [min(x * bandwidth, top) for x in xs], style, color="gray", lw=1.2)
        ax.annotate(f"{level} {bandwidth / 1e9:,.0f} GB/s", (lo, lo * bandwidth), fontsize=8, color="gray")
    for (engine, peak), color in zip(engines.items(), ("tab:red", "tab:orange"), strict=True):
        ax.axhline(peak, color=color, lw=1.0, ls="-.")
        ax.annotate(f"{engine} peak {peak / 1e12:.2f} Tops/s", (lo, peak * 1.08), fontsize=8, color=color)
    for point in points:
        ax.plot(point.intensity_ops_per_byte, point.achieved_ops_per_s, "o", ms=7)
        ax.annotate(
            f"{point.label} ({100 * point.achieved_fraction:.0f} %)",
            (point.intensity_ops_per_byte, point.achieved_ops_per_s),
            textcoords="offset points",
            xytext=(6, -10),
            fontsize=8,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("arithmetic intensity (ops per byte of the bounding global level)")
    ax.set_ylabel("achieved ops/s (DPE FLOPs + SE/vector elements)")
    ax.set_title(f"Roofline of {config.name}: example kernels on the machine model (% of own roofline)")
    ax.grid(True, which="both", lw=0.3)
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
    xs += [peak / bw for peak in engines.values() for bw in memory.values()]
    lo = 10 ** math.floor(math.log10(min(xs)) - 0.5)
    hi = 10 ** math.ceil(math.log10(max(xs)) + 0.5)
    return lo, hi

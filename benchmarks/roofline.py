"""Roofline plot of the example kernels on the MTIA-2i machine model, written as a PNG.

Runs the example launches of `examples/run_all.py` (its --small sizes by default, to stay fast; --full
for the main job's sizes), collects each machine-model report and draws them under the DRAM/SRAM/LS
roofs and the DPE/SE ceilings of `MachineConfig` (`mtia_xdsl.machine.plot.plot_roofline`).

The PNG goes to the system's temporary directory unless --out names a path (never into the working tree).
Example: python3 benchmarks/roofline.py [--full] [--out /tmp/roofline.png]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import mtia_xdsl  # noqa: E402
from examples.run_all import cases  # noqa: E402
from mtia_xdsl.machine.config import MachineConfig  # noqa: E402
from mtia_xdsl.machine.plot import plot_roofline  # noqa: E402


def main() -> int:
    """Run the examples, plot them, print each point and the PNG's path."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="the main job's sizes (slower) instead of --small")
    default_out = Path(tempfile.gettempdir()) / "mtia_xdsl_roofline.png"
    parser.add_argument("--out", default=str(default_out), help=f"PNG to write (default: {default_out})")
    args = parser.parse_args()
    reports, labels = [], []
    for case in cases(small=not args.full):
        case.run()
        report = mtia_xdsl.last_report()
        reports.append(report)
        labels.append(f"{case.name} {case.shape.split()[0]}")
    plot = plot_roofline(reports, MachineConfig.preset(reports[0].chip), args.out, labels)
    print(f"{'kernel':<28} {'panel':<9} {'ops/byte':>10} {'Gops/s':>10} {'roofline':>9}  bound")
    by_label = dict(zip(labels, reports, strict=True))
    for point in plot.points:  # panel dpe: FLOPs; panel elements: SE + vector-core elements
        report = by_label[point.label]
        print(
            f"{point.label:<28} {point.panel:<9} {point.intensity_ops_per_byte:10.3g} "
            f"{point.achieved_ops_per_s / 1e9:10.1f} {point.achieved_fraction:9.1%}  {report.roofline_limiter}"
        )
    skipped = sorted(set(labels) - {p.label for p in plot.points})
    if skipped:
        print(f"not plotted (no ops or no global traffic): {', '.join(skipped)}")
    print(f"roofline plot written to {Path(args.out).resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

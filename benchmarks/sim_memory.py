"""Peak memory of one machine-model launch: the example matmul (fp16, 64x64x32 blocks) at N^3.

Each size and timeline mode (the launch option `timeline`: "full" keeps every command's cycles,
"totals" only the report) runs in a child process of its own, which prints its peak resident set size
(ru_maxrss) before and after the launch, the bytes of its tensors, how many commands the launch
scheduled and its simulated cycles (the same in both modes); the growth over the RSS before the launch is
what the machine model holds (traces, schedule state, working copies of memory, the output tensor).

Example: python benchmarks/sim_memory.py [--sizes 1024 2048] [--timelines full totals]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mtia_xdsl.machine.config import TIMELINES  # noqa: E402


def _matmul(a, b, timeline: str):
    """examples/matmul.py's launch with the launch option `timeline`."""
    import torch
    import triton

    from examples.matmul import matmul_kernel

    (m, k), n = a.shape, b.shape[1]
    c = torch.empty((m, n), dtype=torch.float16)
    grid = (triton.cdiv(m, 64) * triton.cdiv(n, 64),)
    matmul_kernel[grid](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, GROUP_SIZE_M=8, timeline=timeline,
    )  # fmt: skip
    return c


def _child(n: int, timeline: str) -> None:
    import torch

    import mtia_xdsl

    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(n, n, generator=g).half(), torch.randn(n, n, generator=g).half()
    small = torch.randn(64, 64, generator=g).half()
    _matmul(small, small, timeline)  # compile (and warm the model) outside the measured launch
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.process_time()
    c = _matmul(a, b, timeline)
    seconds = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = mtia_xdsl.last_report()
    tensors = sum(t.numel() * t.element_size() for t in (a, b, c))
    print(
        f"{n}^3 {timeline} {tensors / 2**20:.0f} {before / 1024:.0f} {peak / 1024:.0f} {report.commands} "
        f"{report.total_cycles} {seconds:.1f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048])
    parser.add_argument("--timelines", nargs="+", choices=TIMELINES, default=list(TIMELINES))
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        _child(int(opts.child[0]), opts.child[1])
        return 0
    print(f"{'matmul':8} {'timeline':8} {'tensors MiB':>12} {'RSS before MiB':>15} {'peak MiB':>9} {'growth MiB':>11} "
          f"{'commands':>9} {'cycles':>10} {'CPU s':>6}")  # fmt: skip
    for n in opts.sizes:
        for mode in opts.timelines:
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(n), mode], capture_output=True, text=True, check=True
            )
            name, mode, tensors, before, peak, commands, cycles, seconds = out.stdout.split()[-8:]
            growth = int(peak) - int(before)
            print(f"{name:8} {mode:8} {tensors:>12} {before:>15} {peak:>9} {growth:>11} {commands:>9} {cycles:>10} "
                  f"{seconds:>6}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

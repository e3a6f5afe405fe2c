"""Peak memory of one machine-model launch: the example matmul (fp16, 64x64x32 blocks) at N^3.

Each size runs in a child process of its own, which prints its peak resident set size (ru_maxrss) before
and after the launch, the bytes of its tensors, and how many commands the launch recorded; the growth
over the tensors is what the machine model keeps (traces, schedule state, working copies of memory).

Example: python benchmarks/sim_memory.py [--sizes 1024 2048]
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


def _child(n: int) -> None:
    import torch

    import mtia_xdsl
    from examples import matmul

    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(n, n, generator=g).half(), torch.randn(n, n, generator=g).half()
    small = torch.randn(64, 64, generator=g).half()
    matmul.matmul(small, small)  # compile (and warm the model) outside the measured launch
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.process_time()
    c = matmul.matmul(a, b)
    seconds = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run = mtia_xdsl.last_run()
    commands = sum(len(p.commands) for p in run.traces)
    tensors = sum(t.numel() * t.element_size() for t in (a, b, c))
    print(f"{n}^3 {tensors / 2**20:.0f} {before / 1024:.0f} {peak / 1024:.0f} {commands} {seconds:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048])
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        _child(opts.child)
        return 0
    print(f"{'matmul':10} {'tensors MiB':>12} {'RSS before MiB':>15} {'peak MiB':>9} {'growth MiB':>11} "
          f"{'commands':>9} {'CPU s':>6}")  # fmt: skip
    for n in opts.sizes:
        out = subprocess.run([sys.executable, __file__, "--child", str(n)], capture_output=True, text=True, check=True)
        name, tensors, before, peak, commands, seconds = out.stdout.split()[-6:]
        growth = int(peak) - int(before)
        print(f"{name:10} {tensors:>12} {before:>15} {peak:>9} {growth:>11} {commands:>9} {seconds:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

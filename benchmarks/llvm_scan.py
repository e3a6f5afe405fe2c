"""Run time of a row scan (tl.cumsum along the last axis of a 16 x C tile, inside one engine body) on the LLVM IR
executor, for growing C: the scan's cost per row is O(C log C) (backend/llvm_engines.py `scan_once`).

Each figure is the median of 3 launches (seconds, host wall clock, after one untimed launch); the LLVM IR path
JIT-compiles on every launch (backend/llvm_jit.py), so the figures include the JIT, which does not grow with C.

Usage: python benchmarks/llvm_scan.py [C ...]   (default 128 512 2048)
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch
import triton
import triton.language as tl


@triton.jit
def row_cumsum(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(y_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), 1))


def seconds(c: int) -> float:
    """Median launch time of `row_cumsum` on a 16 x `c` tile with the LLVM IR executor."""
    x, y = torch.randn(16, c), torch.empty(16, c)
    row_cumsum[(1,)](x, y, R=16, C=c, executor="llvm")
    times = []
    for _ in range(3):
        start = time.perf_counter()
        row_cumsum[(1,)](x, y, R=16, C=c, executor="llvm")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str]) -> None:
    print(f"{'C':>6} {'llvm s':>8}")
    for c in [int(a) for a in argv] or [128, 512, 2048]:
        print(f"{c:>6} {seconds(c):>8.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])

"""Wall time of the machine model (results and timing) next to Triton's interpreter, per kernel.

Each kernel runs with the same inputs on the machine model (this process: `kernel[grid](...)` through the
`cpu` backend of mtia_xdsl) and on Triton's interpreter (a subprocess with TRITON_INTERPRET=1, since
Triton reads it at import). Times exclude compilation: each side runs once to warm up, then the median
of `--repeats` runs is reported. Results of both sides are checked against each other.

Example: python benchmarks/sim_speed.py [--repeats 3] [--only softmax]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _inputs(name: str) -> tuple[Callable[..., torch.Tensor], tuple[torch.Tensor, ...], float]:
    """Return (launch function, its tensor inputs, tolerance for comparing the two sides)."""
    from examples import attention, layer_norm, matmul, softmax, vector_add

    g = torch.Generator().manual_seed(0)
    if name == "vector_add":
        n = 1 << 20
        return vector_add.add, (torch.rand(n, generator=g), torch.rand(n, generator=g)), 0.0
    if name == "softmax":
        return softmax.softmax, (torch.randn(4096, 781, generator=g),), 1e-6
    if name == "matmul":
        a, b = torch.randn(512, 512, generator=g).half(), torch.randn(512, 512, generator=g).half()
        return matmul.matmul, (a, b), 1e-2
    if name == "layer_norm":
        x = torch.randn(4096, 1024, generator=g)
        w, b = torch.rand(1024, generator=g), torch.randn(1024, generator=g)
        return (lambda x, w, b: layer_norm.layer_norm(x, w, b, 1e-5)[0]), (x, w, b), 1e-4
    if name == "attention":
        q, k, v = (torch.randn(1, 4, 512, 64, generator=g).half() for _ in range(3))
        return attention.attention, (q, k, v), 1e-2
    raise ValueError(f"unknown kernel {name}")


KERNELS = {
    "vector_add": "vector add 2^20 fp32",
    "softmax": "softmax 4096x781 fp32",
    "matmul": "matmul 512^3 fp16",
    "layer_norm": "layer norm 4096x1024 fp32",
    "attention": "causal attention 4x512x64 fp16",
}


def time_kernel(name: str, repeats: int) -> tuple[float, torch.Tensor]:
    """Warm up once, then return (median wall seconds of `repeats` runs, the output)."""
    fn, args, _ = _inputs(name)
    out = fn(*args)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def _child(names: list[str], repeats: int, out_path: str) -> None:
    """Run under TRITON_INTERPRET=1: time each kernel on Triton's interpreter, save times and outputs."""
    results = {}
    for name in names:
        seconds, out = time_kernel(name, repeats)
        results[name] = (seconds, out)
    torch.save(results, out_path)


def _triton_interpreter(names: list[str], repeats: int) -> dict[str, tuple[float, torch.Tensor]]:
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "triton.pt")
        env = {**os.environ, "TRITON_INTERPRET": "1"}
        cmd = [sys.executable, __file__, "--child", out_path, "--repeats", str(repeats), "--only", *names]
        subprocess.run(cmd, env=env, check=True)
        return torch.load(out_path)


def main() -> int:
    """Print the table; exit 1 if the two sides disagree on a result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per side (median reported)")
    parser.add_argument("--only", nargs="+", choices=list(KERNELS), default=list(KERNELS))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        _child(opts.only, opts.repeats, opts.child)
        return 0
    theirs = _triton_interpreter(opts.only, opts.repeats)
    print(f"{'kernel':34} {'machine model s':>16} {'triton interp s':>16} {'speedup':>8}  agree")
    ratios, ok = [], True
    for name in opts.only:
        ours_s, ours = time_kernel(name, opts.repeats)
        their_s, their = theirs[name]
        tol = _inputs(name)[2]
        agree = torch.allclose(ours.float(), their.float(), rtol=tol, atol=tol)
        ok &= agree
        ratios.append(their_s / ours_s)
        print(f"{KERNELS[name]:34} {ours_s:16.3f} {their_s:16.3f} {their_s / ours_s:7.1f}x  {'yes' if agree else 'NO'}")
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"{'geometric mean':34} {'':16} {'':16} {geomean:7.1f}x")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Wall time of the machine model (results and timing) next to Triton's interpreter, per kernel.

Each kernel runs with the same inputs on the machine model (this process: `kernel[grid](...)` through the
`cpu` backend of mtia_xdsl) and on Triton's interpreter (a child process with TRITON_INTERPRET=1, since
Triton reads it at import). Times are CPU seconds of each process (time.process_time), which a loaded
machine disturbs less than wall time, and exclude compilation: each side runs once to warm up, then the
two sides alternate run by run (so a change of load hits both alike) and the median of `--repeats` runs
per side is reported. Results of both sides are checked against each other.

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


def _timed(fn: Callable[..., torch.Tensor], args: tuple[torch.Tensor, ...]) -> tuple[float, torch.Tensor]:
    """Run `fn(*args)` once; return (CPU seconds of this process, the output)."""
    start = time.process_time()
    out = fn(*args)
    return time.process_time() - start, out


def _child() -> None:
    """Run under TRITON_INTERPRET=1, serving the parent: per line `NAME` on stdin, run kernel NAME once on
    Triton's interpreter and answer its CPU seconds on stdout; on `SAVE PATH`, save the last outputs there."""
    outputs: dict[str, torch.Tensor] = {}
    inputs: dict[str, tuple] = {}
    for line in sys.stdin:
        cmd, _, arg = line.strip().partition(" ")
        if cmd == "SAVE":
            torch.save(outputs, arg)
            print("ok", flush=True)
            continue
        if cmd not in inputs:
            inputs[cmd] = _inputs(cmd)[:2]
        seconds, outputs[cmd] = _timed(*inputs[cmd])
        print(seconds, flush=True)


class _Interpreter:
    """Triton's interpreter in a child process (Triton reads TRITON_INTERPRET at import), one run per call."""

    def __init__(self) -> None:
        env = {**os.environ, "TRITON_INTERPRET": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--child"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def ask(self, line: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError("the Triton interpreter process ended early")
        return answer.strip()

    def run(self, name: str) -> float:
        """CPU seconds of one run of kernel `name` on Triton's interpreter."""
        return float(self.ask(name))

    def outputs(self) -> dict[str, torch.Tensor]:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "triton.pt")
            self.ask(f"SAVE {path}")
            return torch.load(path)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def main() -> int:
    """Print the table; exit 1 if the two sides disagree on a result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per side (median reported)")
    parser.add_argument("--only", nargs="+", choices=list(KERNELS), default=list(KERNELS))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        _child()
        return 0
    theirs = _Interpreter()
    try:
        ours_s: dict[str, list[float]] = {name: [] for name in opts.only}
        their_s: dict[str, list[float]] = {name: [] for name in opts.only}
        ours: dict[str, torch.Tensor] = {}
        for name in opts.only:
            fn, args, _ = _inputs(name)
            theirs.run(name)  # warm-up of both sides (compilation, caches)
            fn(*args)
            for _ in range(opts.repeats):  # interleaved: a change of load hits both sides alike
                their_s[name].append(theirs.run(name))
                seconds, ours[name] = _timed(fn, args)
                ours_s[name].append(seconds)
        their_out = theirs.outputs()
    finally:
        theirs.close()
    print(f"{'kernel':34} {'machine model s':>16} {'triton interp s':>16} {'speedup':>8}  agree")
    ratios, ok = [], True
    for name in opts.only:
        mine, other = statistics.median(ours_s[name]), statistics.median(their_s[name])
        tol = _inputs(name)[2]
        agree = torch.allclose(ours[name].float(), their_out[name].float(), rtol=tol, atol=tol)
        ok &= agree
        ratios.append(other / mine)
        print(f"{KERNELS[name]:34} {mine:16.3f} {other:16.3f} {other / mine:7.1f}x  {'yes' if agree else 'NO'}")
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"{'geometric mean':34} {'':16} {'':16} {geomean:7.1f}x")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

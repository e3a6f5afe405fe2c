"""Examples through RISC-V: each example's emitted C++ cross-built for rv64gcv and run under qemu-riscv64.

Per example launch of examples/launches.py (summed over the example's kernel launches), this prints:
- rvv: how many strip-mined engine-body loops of the C++ got an RVV form (backend/rvv.py), of all of them;
- build s: clang 14 cross-compiling and linking the kernel at -O2 (the runtime objects built beforehand, once);
- qemu s: the qemu-riscv64 process running every program (vlen = MachineConfig.vec_register_bits);
- model s: the machine model running the same launches;
- cycles: "equal" when every launch took exactly the model's cycles;
- results: "equal" when every output is bit for bit the model's, else the largest relative difference.
A kernel the C++ emitter refuses, or that fails, is named with the first line of its error.

Usage: python benchmarks/riscv.py [NAME ...]   (example launch names; default all)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codegen import KernelLaunch, launches_of  # benchmarks/codegen.py (this directory)

from examples.launches import LAUNCHES
from mtia_xdsl.backend import executor, riscv
from mtia_xdsl.machine.config import DEFAULT_CHIP, MachineConfig


def _copy(args: list[Any]) -> list[Any]:
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]


def _difference(a: list[Any], b: list[Any]) -> float:
    """Return 0.0 if the tensors of `a` and `b` are equal bit for bit, else the largest relative difference."""
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        if isinstance(x, torch.Tensor) and not torch.equal(x, y):
            xf, yf = x.double(), y.double()
            worst = max(worst, ((xf - yf).abs() / yf.abs().clamp_min(1e-30)).nan_to_num(float("inf")).max().item())
    return worst


def run_example(kernels: list[KernelLaunch], cache: Path) -> dict[str, Any]:
    """Run every kernel launch on the model and through RISC-V; return the row's figures."""
    from mtia_xdsl.backend.cpp import emit_cpp

    row: dict[str, Any] = dict(rvv=0, loops=0, build=0.0, qemu=0.0, model=0.0, cycles=True, diff=0.0, error=None)
    for k in kernels:
        source = emit_cpp(k.module)
        guards = sum(ln.startswith("#if") and "__riscv_vector" in ln for ln in source.splitlines())
        row["rvv"] += guards - source.count("#include <riscv_vector.h>")
        row["loops"] += source.count("mtia_vsetvl(") - 1  # minus the prelude's definition
        model_args, rv_args = _copy(k.args), _copy(k.args)
        start = time.perf_counter()
        model = executor.run("model", k.module, k.grid, model_args, k.options)
        row["model"] += time.perf_counter() - start
        stats: dict[str, float] = {}
        result = riscv.run_riscv(source, k.grid, rv_args, stats=stats, cache_dir=cache)
        row["build"] += stats["compile_s"]
        row["qemu"] += stats["run_s"]
        row["cycles"] &= result.report.total_cycles == model.report.total_cycles
        row["diff"] = max(row["diff"], _difference(rv_args, model_args))
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="example launches (default: all)")
    args = parser.parse_args()
    chosen = [launch for launch in LAUNCHES if not args.names or launch.name in args.names]
    header = f"{'example':<24} {'rvv':>7} {'build s':>8} {'qemu s':>7} {'model s':>8} {'cycles':>7}  results"
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        riscv.build_runtime_objects(cache_dir=cache)
        for launch in chosen:
            kernels = launches_of(launch.run)
            try:
                row = run_example(kernels, cache)
            except Exception as e:  # a refused or failing kernel: name it and go on
                print(f"{launch.name:<24} error: {str(e).splitlines()[0][:150]}", flush=True)
                continue
            results = "equal" if row["diff"] == 0.0 else f"rel diff {row['diff']:.1e}"
            print(
                f"{launch.name:<24} {row['rvv']:>3}/{row['loops']:<3} {row['build']:8.2f} {row['qemu']:7.2f} "
                f"{row['model']:8.2f} {'equal' if row['cycles'] else 'DIFFER':>7}  {results}",
                flush=True,
            )
    cpu = riscv.qemu_cpu(MachineConfig.preset(DEFAULT_CHIP))
    print(f"\nseconds of host wall clock, summed over each example's kernel launches; qemu -cpu {cpu}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

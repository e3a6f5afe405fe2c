"""Where one call of a torch.compile suite model spends its simulated time, command by command.

Compiles a model of `benchmarks/inductor.py`'s suite as that script does (our backend, Inductor's caches off),
runs it once to compile and autotune, then runs the timed call and prints, per kernel launch, its simulated
cycles and the command spans of the chosen programs (default program 0): engine, command kind, issue /
start / end cycle and the kernel source line (`mtia_xdsl.last_run().timeline.spans`). A launch's critical
path reads off these spans: which DRAM load, gather or store each step waits for.

Example: PYTHONPATH=$PWD python benchmarks/inductor_spans.py jagged_sum [--programs 0,3]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

import torch


def _suite() -> Any:
    """benchmarks/inductor.py as a module (it sets Inductor's configuration when loaded)."""
    path = Path(__file__).resolve().with_name("inductor.py")
    spec = importlib.util.spec_from_file_location("inductor_suite", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["inductor_suite"] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a model name of benchmarks/inductor.py's suite (two_tower, jagged_sum, ...)")
    parser.add_argument("--programs", default="0", help="comma-separated program indices to print (default 0)")
    args = parser.parse_args()
    suite = _suite()
    from mtia_xdsl.runtime import toolchain
    from mtia_xdsl.runtime.triton_backend.compiler import kernel_name

    case = next((c for c in suite.CASES if c.name == args.model), None)
    if case is None:
        parser.error(f"no model {args.model!r}; the suite has {', '.join(c.name for c in suite.CASES)}")
    torch.manual_seed(0)
    model = case.make()
    torch.manual_seed(1)
    inputs = case.inputs()
    compiled = torch.compile(model)
    compiled(*inputs)  # compiles and autotunes
    runs: list[tuple[str, Any]] = []
    run_kernel = toolchain.run_kernel

    def recording_run(module: Any, grid: Any, kernel_args: Any, options: Any) -> Any:
        result = run_kernel(module, grid, kernel_args, options)
        runs.append((kernel_name(module), result))
        return result

    toolchain.run_kernel = recording_run
    compiled(*inputs)
    toolchain.run_kernel = run_kernel
    programs = {int(p) for p in args.programs.split(",")}
    total, total_us = 0.0, 0.0
    for name, result in runs:
        report = result.report
        total += report.total_cycles
        total_us += report.time_us
        print(f"{name}: {report.total_cycles:.0f} cycles ({report.time_us:.2f} us)")
        for s in result.timeline.spans:
            if s.program in programs:
                print(f"  program {s.program} pe {s.pe} #{s.index:<3d} {s.engine.name:<6s} {s.kind:<16s} issue "
                      f"{s.issue_cycle:6.0f} start {s.start_cycle:6.0f} end {s.end_cycle:6.0f}  "
                      f"{s.loc.rsplit('/', 1)[-1]}")  # fmt: skip
    print(f"{args.model}: {len(runs)} launches, {total:.0f} cycles ({total_us:.2f} us)")


if __name__ == "__main__":
    main()

"""Code generation costs per example: emit time (C++, LLVM IR), C++ compile time at -O2, and the run time of each
executor next to the machine model's wall time.

Each example launch of examples/launches.py runs once on the model (compiling its kernels); then, for every kernel
launch it made, this times (seconds, host wall clock, summed over the example's kernel launches):
- model: the machine model running the buffer-level program (`executor.run("model", ...)`);
- emit cpp / emit llvm: printing the program as C++ (`mtia-opt -t mtia-cpp`) and as LLVM IR;
- cc -O2: building the C++ (with the host runtime, as the cpp executor does) with the system compiler at -O2,
  in an empty cache (the cpp executor itself builds at its own level, cached by content);
- cpp, riscv, llvm: the executor running the program after one untimed run: cpp and riscv then reuse their
  cached build (the figure is the run: the library or qemu process and the timing model over the recorded
  commands); llvm JIT-compiles its IR on every run (backend/llvm_jit.py keeps no engine), so its figure
  includes the JIT.
A column of an executor not in this build, or whose toolchain is missing, prints "-" and the reason below.

Usage: python benchmarks/codegen.py [NAME ...]   (example launch names; default all)
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.launches import LAUNCHES
from mtia_xdsl.backend import executor
from mtia_xdsl.backend.executor import ExecutorUnavailableError


@dataclass
class KernelLaunch:
    """One kernel launch an example made: what the executor receives."""

    module: Any
    grid: tuple[int, int, int]
    args: list[Any]
    options: Any


def launches_of(run: Callable[[], Any]) -> list[KernelLaunch]:
    """Run an example on the model and return its kernel launches (the programs and their arguments)."""
    from mtia_xdsl.runtime import toolchain

    seen: list[KernelLaunch] = []
    real = toolchain.run_kernel

    def spy(module: Any, grid: Any, args: Any, options: Any) -> Any:
        seen.append(KernelLaunch(module, grid, list(args), options))
        return real(module, grid, args, options)

    toolchain.run_kernel = spy
    try:
        run()
    finally:
        toolchain.run_kernel = real
    return seen


def timed(step: Callable[[KernelLaunch], Any], launches: list[KernelLaunch]) -> float:
    """Return the seconds `step` takes over all launches."""
    start = time.perf_counter()
    for launch in launches:
        step(launch)
    return time.perf_counter() - start


def _run_on(name: str) -> Callable[[KernelLaunch], Any]:
    return lambda k: executor.run(name, k.module, k.grid, k.args, k.options)


def _need(module_name: str) -> Any:
    """Import a backend module; ExecutorUnavailableError (the column prints "-") when it is not in this build."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name != module_name:
            raise
        raise ExecutorUnavailableError(f"{module_name} is not in this build") from None


def _emit_cpp(k: KernelLaunch) -> str:
    return _need("mtia_xdsl.backend.cpp").emit_cpp(k.module)


def _emit_llvm(k: KernelLaunch) -> str:
    return _need("mtia_xdsl.backend.llvm").emit_llvm_ir(k.module)


def _compile_cpp(k: KernelLaunch) -> Any:
    """Build the kernel's C++ (with the host runtime, as the cpp executor does) at -O2 in an empty cache."""
    host = _need("mtia_xdsl.backend.host")
    source = _emit_cpp(k)
    saved = os.environ.get("MTIA_CACHE_DIR")
    with tempfile.TemporaryDirectory() as empty:
        os.environ["MTIA_CACHE_DIR"] = empty
        try:
            try:
                return host.build_kernel(source, "-O2")
            except host.CompilerMissingError as e:
                raise ExecutorUnavailableError(str(e)) from None
        finally:
            if saved is None:
                del os.environ["MTIA_CACHE_DIR"]
            else:
                os.environ["MTIA_CACHE_DIR"] = saved


COLUMNS: dict[str, Callable[[KernelLaunch], Any]] = {
    "model": _run_on("model"),
    "emit cpp": _emit_cpp,
    "emit llvm": _emit_llvm,
    "cc -O2": _compile_cpp,
    "cpp": _run_on("cpp"),
    "riscv": _run_on("riscv"),
    "llvm": _run_on("llvm"),
}
"""Timed column -> what it does to one kernel launch (raises ExecutorUnavailableError when it cannot run here)."""

WARM = ("emit cpp", "emit llvm", "cpp", "llvm", "riscv")
"""Columns run once untimed first: the executors (their build is cached, so the figure is the run alone) and the
emitters (the first call imports them)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="example launches (default: all)")
    args = parser.parse_args()
    chosen = [launch for launch in LAUNCHES if not args.names or launch.name in args.names]
    header = f"{'example':<24} {'kernels':>7} " + " ".join(f"{c:>9}" for c in COLUMNS)
    print(header)
    print("-" * len(header))
    unavailable: dict[str, str] = {}
    failed: list[str] = []
    kernels = {launch.name: launches_of(launch.run) for launch in chosen}
    cells: dict[str, list[str]] = {name: [] for name in kernels}
    # column by column: each executor's builds and loads happen together
    for column, step in COLUMNS.items():
        for name, launches in kernels.items():
            if column in unavailable:
                cells[name].append(f"{'-':>9}")
                continue
            try:
                if column in WARM:
                    timed(step, launches)
                cells[name].append(f"{timed(step, launches):9.3f}")
            except ExecutorUnavailableError as e:
                unavailable[column] = str(e)
                cells[name].append(f"{'-':>9}")
            except Exception as e:  # this example fails on this path: a known gap (tests/conformance/executor_gaps.py)
                failed.append(f"{name} {column}: {type(e).__name__}: {(str(e).splitlines() or [''])[0][:150]}")
                cells[name].append(f"{'fail':>9}")
    for name, launches in kernels.items():
        print(f"{name:<24} {len(launches):>7} " + " ".join(cells[name]), flush=True)
    print("\nseconds of host wall clock per example, summed over its kernel launches")
    for column, reason in unavailable.items():
        print(f"-: {column}: {reason}")
    for line in failed:
        print(f"fail: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The differential check of one launch: run it on the machine model and on another executor, compare.

Results must equal the model's bit for bit, except float outputs of programs calling a transcendental function,
which may differ by that function's bound (executor_tolerance.py); every launch's cycles must be the model's
exactly (the same timing model times the same commands). Used by test_executors.py and by
scripts/executor_matrix.py (the full matrix).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from executor_tolerance import program_bound
from runners import clone_args
from spec import Case, Tol, mismatch

from mtia_xdsl.backend.executor import ENV_VAR

Run = Callable[[], list[torch.Tensor]]
"""Launches one or more kernels on fresh inputs and returns the output tensors."""


@dataclass
class Outcome:
    """What one executor produced for a launch: the outputs, and each kernel launch's program and RunResult."""

    outputs: list[torch.Tensor]
    launches: list[tuple[Any, Any]] = field(default_factory=list[tuple[Any, Any]])


@contextmanager
def executor_env(name: str) -> Iterator[None]:
    """Set MTIA_EXECUTOR to `name` for the duration (plain launches then run on that executor)."""
    saved = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = name
    try:
        yield
    finally:
        if saved is None:
            del os.environ[ENV_VAR]
        else:
            os.environ[ENV_VAR] = saved


def capture(run: Run, executor: str) -> Outcome:
    """Run `run` with MTIA_EXECUTOR=`executor`, recording the program and result of each kernel launch."""
    from mtia_xdsl.runtime import toolchain

    launches: list[tuple[Any, Any]] = []
    real = toolchain.run_kernel

    def spy(module: Any, grid: Any, args: Any, options: Any) -> Any:
        result = real(module, grid, args, options)
        launches.append((module, result))
        return result

    toolchain.run_kernel = spy
    try:
        with executor_env(executor):
            outputs = run()
    finally:
        toolchain.run_kernel = real
    return Outcome(outputs, launches)


def difference(model: Outcome, other: Outcome) -> str | None:
    """Return the first way `other` differs from the model beyond the allowed bound, or None."""
    if len(model.launches) != len(other.launches):
        return f"{len(other.launches)} kernel launches, the model made {len(model.launches)}"
    ulp, functions = program_bound([m for m, _ in model.launches])
    for i, (want, got) in enumerate(zip(model.outputs, other.outputs, strict=True)):
        tol = Tol(ulp=ulp) if want.dtype.is_floating_point else Tol()
        bad = mismatch(got, want, tol)
        if bad is not None:
            allowed = f" (bound {ulp} ulp from {', '.join(functions)})" if functions else " (must be bit-exact)"
            return f"output {i}: {bad}{allowed}"
    for i, ((_, want), (_, got)) in enumerate(zip(model.launches, other.launches)):
        if got.report.total_cycles != want.report.total_cycles:
            return f"launch {i}: {got.report.total_cycles} cycles, the model {want.report.total_cycles}"
    return None


def check(run: Run, executor: str, model: Outcome | None = None) -> str | None:
    """Run `run` on `executor` (and on the model, unless its `model` outcome is given); return the first
    difference from the model, or None."""
    return difference(model or capture(run, "model"), capture(run, executor))


def corpus_run(case: Case, launch: Any) -> Run:
    """Return a Run launching corpus `case` (plain `kernel[grid](...)`) on copies of `launch`'s arguments."""

    def run() -> list[torch.Tensor]:
        args = clone_args(launch.args)
        options = {"debug": True} if case.debug else {}
        case.kernel[launch.grid](*args, **case.constexprs, **options)
        return [args[i] for i in case.outputs]

    return run

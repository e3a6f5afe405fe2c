"""The three checks per corpus kernel; each raises `CheckFailed(stage, first line)` when it fails.

- `check_ttir`: op for op against libtriton's TTIR (stage "frontend" on a build error or a difference).
- `check_tt`: the tt reference interpreter against the oracle (stage "frontend" or "tt-interpreter").
- `check_machine`: `kernel[grid](...)` through our backend against the oracle (stage "frontend", "lowering"
  or "machine", from where the error was raised; a wrong result is "machine").
"""

from __future__ import annotations

import random
from typing import Any

from runners import build_for, first_line, run_machine, run_oracle, run_reference_tt, stage_of
from spec import Case, Launch, RandomDraw, mismatch, signature_of
from ttir_compare import our_ttir, ttir_difference, upstream_ttir

CHECKS = ("ttir", "tt", "machine")
SEEDS = (0,)
"""Seeds of the deterministic launches every run check takes (the tests and refresh_gaps.py)."""


class CheckFailed(AssertionError):
    """A check failed in `stage` with `line` as the error's first line."""

    def __init__(self, stage: str, line: str, detail: str = "") -> None:
        super().__init__(f"[{stage}] {line}" + (f"\n{detail}" if detail else ""))
        self.stage = stage
        self.line = line


def example_launch(case: Case, seed: int = 0) -> Launch:
    """Return a deterministic launch of `case` (seeded draws)."""
    return case.build(RandomDraw(random.Random(seed)))


def check_ttir(case: Case) -> None:
    sig = signature_of(case, example_launch(case))
    want = upstream_ttir(case.kernel, sig, case.constexprs, debug=case.debug)
    try:
        got = our_ttir(case.kernel, sig, case.constexprs, debug=case.debug)
    except Exception as e:
        raise CheckFailed("frontend", first_line(e)) from e
    diff = ttir_difference(got, want)
    if diff is not None:
        first = next((ln for ln in diff.splitlines()[2:] if ln[:1] in "+-"), "")
        raise CheckFailed("frontend", f"TTIR differs from upstream: {first.strip()}"[:200], diff)


def compare_outputs(case: Case, launch: Launch, got: list[Any], want: list[Any], stage: str) -> None:
    names = [n for n in case.kernel.arg_names if n not in case.constexprs]
    for i in case.outputs:
        bad = mismatch(got[i], want[i], case.tol)
        if bad is not None:
            raise CheckFailed(stage, f"wrong {names[i]}: {bad}"[:200], f"grid {launch.grid}")


def check_tt(case: Case, launch: Launch) -> None:
    want = run_oracle(case, launch)
    try:
        module = build_for(case, launch)
    except Exception as e:
        raise CheckFailed("frontend", first_line(e)) from e
    try:
        got = run_reference_tt(case, launch, module)
    except Exception as e:
        raise CheckFailed("tt-interpreter", first_line(e)) from e
    compare_outputs(case, launch, got, want, "tt-interpreter")


def check_machine(case: Case, launch: Launch) -> None:
    want = run_oracle(case, launch)
    try:
        got = run_machine(case, launch)
    except Exception as e:
        raise CheckFailed(stage_of(e), first_line(e)) from e
    compare_outputs(case, launch, got, want, "machine")

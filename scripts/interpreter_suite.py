"""benchmarks/inductor.py's models under torch.compile, every kernel launch checked against Triton's interpreter.

Compiles each model of the suite with our backend (`cpu_backend="triton"`, no caches) and calls it once inside
`interpreter_check()` (tests/runtime/interpret_check.py): every kernel launched through mtia_xdsl's driver,
autotuning's runs of each choice included, runs again under Triton's interpreter on copies of its arguments, and
each buffer it writes must agree with the machine model's (`torch.testing.assert_close`, the dtype's tolerances
unless --rtol/--atol). Prints one row per model: launches checked, distinct kernels, and OK or the first failure.
The test suite checks one small training step this way (tests/runtime/test_interpret_check.py); this is the suite.

Usage: python scripts/interpreter_suite.py [--models dlrm,gpt2] [--rtol R --atol A]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "runtime"), str(ROOT / "benchmarks"), str(ROOT)]

import torch  # noqa: E402
import torch._inductor.config as inductor_config  # noqa: E402
from inductor import CASES  # noqa: E402
from interpret_check import interpreter_check  # noqa: E402

from mtia_xdsl.runtime import inductor  # noqa: E402


def run(case: object, rtol: float | None, atol: float | None) -> tuple[int, int, str]:
    """(launches checked, distinct kernels, "OK" or the first line of the failure) for one model of the suite."""
    torch._dynamo.reset()  # pyright: ignore[reportPrivateUsage]
    torch.manual_seed(0)
    model = case.make()  # type: ignore[attr-defined]
    torch.manual_seed(1)
    inputs = case.inputs()  # type: ignore[attr-defined]
    checked: list = []
    try:
        with interpreter_check(rtol, atol) as checked:
            torch.compile(model)(*inputs)
    except Exception as e:  # the check's failure, or the model's (Inductor wraps both)
        lines = [line for line in str(e).splitlines() if "interpreter" in line or "differ" in line]
        return len(checked), len({c.kernel for c in checked}), (lines or [f"{type(e).__name__}: {e}"])[0][:300]
    return len(checked), len({c.kernel for c in checked}), "OK"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", help="comma-separated model names (default: all)")
    parser.add_argument("--rtol", type=float)
    parser.add_argument("--atol", type=float)
    args = parser.parse_args()
    names = args.models.split(",") if args.models else [c.name for c in CASES]
    failed = 0
    with inductor_config.patch(cpu_backend="triton", force_disable_caches=True):
        from triton.runtime import driver

        _ = driver.active  # creates our driver, which installs the hooks
        inductor.install()
        print(f"{'model':<14} {'launches':>8} {'kernels':>7} {'wall s':>6}  result")
        for case in (c for c in CASES if c.name in names):
            start = time.time()
            launches, kernels, result = run(case, args.rtol, args.atol)
            failed += result != "OK"
            print(f"{case.name:<14} {launches:>8} {kernels:>7} {time.time() - start:>6.0f}  {result}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Run upstream Triton's tutorials unchanged with mtia_xdsl active (or under Triton's interpreter).

Usage: python scripts/upstream_tutorials.py DIR [--interpret] [--timeout S] [NN ...]
  DIR: the python/ directory of a checkout of Triton's release/3.8.x (README, "Upstream tests");
  NN: tutorial numbers (default 01 02 03 04 05 06 08).

Each tutorial runs in its own process as `python tutorials/NN-*.py` would, from a scratch directory,
except that `triton.testing` benchmark sweeps (`Mark.run`) are skipped: they time dozens of shapes and
measure nothing about correctness. 06 keeps its checks in `test_op`, which its script never calls; it is
called with the arguments listed below. Prints one line per tutorial: ok, or FAIL with the tutorial line
that failed and the last line of the error.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TEST_CALLS = {
    "06": [
        'test_op(1, 2, 128, 64, False, False, "bwd", "triton-fp16")',  # checks forward and backward
        'test_op(1, 2, 128, 64, True, False, "bwd", "triton-fp16")',
        'test_op(1, 2, 128, 128, False, False, "bwd", "triton-fp16")',  # upstream's other HEAD_DIM
        'test_op(1, 2, 128, 128, True, False, "bwd", "triton-fp16")',
    ],
}
"""Checks a tutorial keeps in a test function, called after it ran (small shapes: the model is a simulator)."""

_RUNNER = """
import runpy, sys, torch, triton.testing
triton.testing.Mark.run = lambda self, *a, **k: print("(benchmark sweep skipped)")
sys.argv = [{path!r}]
env = runpy.run_path({path!r}, run_name="__main__")
for call in {calls!r}:
    print("calling", call, flush=True)
    eval(call, env)
"""


def run_tutorial(path: Path, interpret: bool, timeout_s: float) -> tuple[bool, str, float]:
    """Run one tutorial; return (passed, last output line or error, wall seconds)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env['PYTHONPATH']}" if env.get("PYTHONPATH") else str(ROOT)
    env["MPLBACKEND"] = "Agg"
    env.pop("TRITON_INTERPRET", None)
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    code = _RUNNER.format(path=str(path), calls=TEST_CALLS.get(path.name[:2], []))
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        try:
            proc = subprocess.run(
                [sys.executable, "-c", code], cwd=scratch, env=env, capture_output=True, text=True, timeout=timeout_s
            )
        except subprocess.TimeoutExpired:
            return False, f"timed out after {timeout_s:g} s", time.monotonic() - start
    wall = time.monotonic() - start
    lines = [line for line in (proc.stderr if proc.returncode else proc.stdout).splitlines() if line.strip()]
    failed = "❌" in proc.stdout  # tutorial 03 prints a mismatch instead of raising
    last = lines[-1] if lines else ""
    if proc.returncode:
        at = [line.strip() for line in lines if line.strip().startswith(f'File "{path}"')]
        if at:
            last = f"{at[-1].split(', ', 1)[1]}: {last}"
    return proc.returncode == 0 and not failed, last, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("numbers", nargs="*", default=["01", "02", "03", "04", "05", "06", "08"])
    parser.add_argument("--interpret", action="store_true", help="run under Triton's interpreter instead")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per tutorial")
    args = parser.parse_args()
    if not (args.dir / "tutorials").is_dir():
        hint = next((f"; did you mean {d}?" for d in [args.dir / "python"] if (d / "tutorials").is_dir()), "")
        parser.error(
            f"{args.dir} has no tutorials/ directory: give the python/ directory of a Triton checkout "
            f"(it holds tutorials/ and test/unit/){hint}"
        )
    mode = "Triton's interpreter" if args.interpret else "mtia_xdsl"
    print(f"tutorials of {args.dir} with {mode}")
    for number in args.numbers:
        paths = sorted((args.dir / "tutorials").glob(f"{number}-*.py"))
        if not paths:
            print(f"{number}  missing")
            continue
        ok, last, wall = run_tutorial(paths[0], args.interpret, args.timeout)
        print(f"{paths[0].name:32} {'ok  ' if ok else 'FAIL'} {wall:7.1f} s  {'' if ok else last[:160]}", flush=True)


if __name__ == "__main__":
    main()

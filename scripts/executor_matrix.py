"""The full executor matrix: every corpus kernel and every example through every executor, held to the model.

Prints, per executor, each kernel that does not pass (with the first difference or error) and the counts:
pass, known gap (listed in tests/conformance/executor_gaps.py and failing), fixed gap (listed but passing: delete
the entry), new failure (not listed), and whether the executor was skipped (not in this build, or its toolchain
missing). The test suite runs the same check on all of it except most of the corpus through riscv
(tests/conformance/test_executors.py); this script is the whole matrix. `--refresh` rewrites executor_gaps.py
with the failures found (reason: the first line of the difference or error); review the diff.

Usage: python scripts/executor_matrix.py [--paths cpp,llvm,riscv] [--only corpus|examples] [--refresh] [NAME ...]
"""

from __future__ import annotations

import argparse
import pprint
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "conformance"), str(ROOT)]

from checks import example_launch  # noqa: E402
from corpus import all_cases  # noqa: E402
from differential import Run, check, corpus_run  # noqa: E402
from executor_gaps import CORPUS_GAPS, EXAMPLE_GAPS  # noqa: E402
from known_gaps import GAPS  # noqa: E402

from examples.launches import LAUNCHES  # noqa: E402
from mtia_xdsl.backend.executor import EXECUTORS, ExecutorUnavailableError  # noqa: E402

_NOISE = (
    (r"/\S*/(kernel\.cpp:)", r"\1"),  # the build directory of a cached compile
    (r" \(/\S*c\+\+ [^)]*\)", ""),  # the compiler command line
    (r"; run (this|the) kernel on the machine model[^\n]*", ""),  # the emitters' advice, the same for every gap
    ("[\u2018\u2019]", "'"),  # gcc's typographic quotes
)


def first_line(text: str) -> str:
    """The first line of an error, paths relative to the repository; for a compiler's output, its first error."""
    for pattern, replacement in _NOISE:
        text = re.sub(pattern, replacement, text)
    lines = [line.strip() for line in text.replace(f"{ROOT}/", "").strip().splitlines() if line.strip()]
    errors = [line for line in lines[1:] if "error:" in line]
    return " ".join([lines[0], errors[0]] if errors and "error:" not in lines[0] else lines[:1])[:200]


def outcome(run: Run, path: str) -> str | None:
    """Return None if `run` on `path` matches the model, else the first line of its difference or error."""
    try:
        return check(run, path)
    except ExecutorUnavailableError:
        raise
    except Exception as e:  # a failing kernel on the path: its error is the outcome
        return first_line(f"{type(e).__name__}: {e}")


def matrix(path: str, runs: dict[str, tuple[Run, dict[str, str]]]) -> tuple[dict[str, int], dict[str, str]]:
    """Run every entry of `runs` (name -> (run, gaps of its kind)) on `path`; return counts and failures."""
    counts = {"pass": 0, "known gap": 0, "fixed gap": 0, "new failure": 0}
    failures: dict[str, str] = {}
    for name, (run, gaps) in runs.items():
        start = time.perf_counter()
        found = outcome(run, path)
        listed = name in gaps.get(path, {})
        kind = ("known gap" if listed else "new failure") if found else ("fixed gap" if listed else "pass")
        counts[kind] += 1
        if found:
            failures[name] = found
        if kind != "pass":
            print(f"  {path:<6} {name:<32} {kind:<12} {found or ''}", flush=True)
        else:
            print(f"  {path:<6} {name:<32} pass ({time.perf_counter() - start:.1f} s)", flush=True)
    return counts, failures


def collect(only: str | None, names: list[str]) -> dict[str, tuple[Run, dict[str, str]]]:
    """Return name -> (run, gap table) of the corpus kernels and example launches to check."""
    runs: dict[str, tuple[Run, dict[str, str]]] = {}
    if only != "examples":
        for name, case in sorted(all_cases().items()):
            if "machine" not in GAPS.get(name, {}):  # the model itself cannot run it: nothing to compare with
                runs[name] = (corpus_run(case, example_launch(case, 0)), CORPUS_GAPS)  # type: ignore[assignment]
    if only != "corpus":
        example_gaps = {p: {f"example:{k}": v for k, v in g.items()} for p, g in EXAMPLE_GAPS.items()}
        for launch in LAUNCHES:
            runs[f"example:{launch.name}"] = (launch.run, example_gaps)
    return {k: v for k, v in runs.items() if not names or k.removeprefix("example:") in names}


def refresh(path_failures: dict[str, dict[str, str]]) -> None:
    """Rewrite executor_gaps.py with the failures found for the executors that ran (others kept)."""
    corpus = {p: dict(CORPUS_GAPS.get(p, {})) for p in EXECUTORS if p != "model"}
    examples = {p: dict(EXAMPLE_GAPS.get(p, {})) for p in EXECUTORS if p != "model"}
    for path, failures in path_failures.items():
        corpus[path] = {k: v for k, v in sorted(failures.items()) if not k.startswith("example:")}
        examples[path] = {
            k.removeprefix("example:"): v for k, v in sorted(failures.items()) if k.startswith("example:")
        }
    target = ROOT / "tests" / "conformance" / "executor_gaps.py"
    head = target.read_text().split("CORPUS_GAPS: dict")[0]
    fmt = lambda d: pprint.pformat(d, width=116, sort_dicts=True)  # noqa: E731
    target.write_text(
        f"{head}CORPUS_GAPS: dict[str, dict[str, str]] = {fmt(corpus)}\n\n"
        f"EXAMPLE_GAPS: dict[str, dict[str, str]] = {fmt(examples)}\n"
    )
    print(f"rewrote {target.relative_to(ROOT)}; run `ruff format` on it and review the diff")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", default="cpp,llvm,riscv", help="executors to check against the model")
    parser.add_argument("--only", choices=("corpus", "examples"), help="check only the corpus or the examples")
    parser.add_argument("--refresh", action="store_true", help="rewrite executor_gaps.py with the failures found")
    parser.add_argument("names", nargs="*", help="corpus kernels or example launches (default: all)")
    args = parser.parse_args()
    runs = collect(args.only, args.names)
    summary: list[str] = []
    found: dict[str, dict[str, str]] = {}
    for path in args.paths.split(","):
        start = time.perf_counter()
        try:
            counts, failures = matrix(path, runs)
        except ExecutorUnavailableError as e:
            summary.append(f"{path:<6} skipped: {e}")
            continue
        found[path] = failures
        summary.append(
            f"{path:<6} {len(runs)} kernels: " + ", ".join(f"{v} {k}" for k, v in counts.items())
            + f" ({time.perf_counter() - start:.0f} s)"
        )  # fmt: skip
    print("\n".join(["", *summary]))
    if args.refresh:
        refresh(found)
    return 0


if __name__ == "__main__":
    sys.exit(main())

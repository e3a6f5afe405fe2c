"""Speed of the timing model (`machine/timing.py` `simulate`): microseconds of CPU per recorded command.

Records the command traces of a kernel set once (`--kernels examples`: the sizes of examples/run_all.py,
or their `--small` sizes; `--kernels sim_speed`: the launches of benchmarks/sim_speed.py), keeps them in a
pickle file, then times `simulate` on them (CPU time, best of `--repeat`).

Checking that a change keeps the cycles:
- `--save-expected` stores what the current `simulate` computes (every command's issue/start/end cycle,
  program cycles, busy cycles, traffic, work) next to the traces; a later run with `--check` compares
  against it (equal up to float rounding: relative 1e-9).
- `--baseline REV` runs the timing model as it was at git revision REV (timing.py and the modules it
  imports from machine/, loaded from `git show`) on the same traces, alternating with the current one so a
  busy machine slows both alike, and compares the two the same way.

Example: python3 benchmarks/timing_speed.py --kernels sim_speed --baseline 21c4730 [--save-expected | --check]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

Recorded = dict[str, tuple[list[Any], Any, str, tuple[int, int, int]]]
"""Case name -> (program traces, MachineConfig, mapping, grid)."""

_MACHINE_MODULES = ("memory", "timeline", "program_shape", "timing")
"""machine/ modules of the timing model, each importing only earlier ones (and commands/config)."""


def _examples(small: bool) -> list[tuple[str, Any]]:
    from examples import run_all

    return [(f"{case.name} {case.shape}", case.run) for case in run_all.cases(small)]


def _sim_speed(small: bool) -> list[tuple[str, Any]]:
    sys.path.insert(0, str(ROOT / "benchmarks"))  # a `benchmarks` package in site-packages would shadow ours
    import sim_speed

    def launch(name: str) -> Any:
        fn, args, _ = sim_speed._inputs(name)
        return lambda: fn(*args)

    return [(title, launch(name)) for name, title in sim_speed.KERNELS.items()]


KERNEL_SETS = {"examples": _examples, "sim_speed": _sim_speed}


def record(kernels: str, small: bool) -> Recorded:
    """Run every launch of the kernel set once and keep the traces of its (last) launch."""
    import mtia_xdsl

    recorded: Recorded = {}
    for name, launch in KERNEL_SETS[kernels](small):
        start = time.perf_counter()
        launch()
        run = mtia_xdsl.last_run()
        timeline = run.timeline
        recorded[name] = (run.traces, timeline.config, timeline.mapping, timeline.grid)
        print(f"recorded {name}: {len(run.traces)} programs in {time.perf_counter() - start:.1f} s")
    return recorded


def load_traces(path: Path, kernels: str, small: bool) -> Recorded:
    """Return the recorded traces from `path`, recording them first if it does not exist."""
    if path.exists():
        with path.open("rb") as f:
            return pickle.load(f)
    recorded = record(kernels, small)
    with path.open("wb") as f:
        pickle.dump(recorded, f)
    return recorded


def baseline_module(rev: str) -> ModuleType:
    """Import the timing model as it was at git revision `rev` (under other module names)."""
    directory = Path(tempfile.mkdtemp())
    renames: list[tuple[str, str]] = []
    module = None
    for name in _MACHINE_MODULES:
        shown = subprocess.run(
            ["git", "show", f"{rev}:mtia_xdsl/machine/{name}.py"], cwd=ROOT, capture_output=True, text=True
        )
        if shown.returncode != 0:
            continue  # not at that revision (split off later)
        source = shown.stdout
        for old, new in renames:
            source = source.replace(f"from mtia_xdsl.machine.{old} import", f"from {new} import")
        alias = f"baseline_{name}"
        renames.append((name, alias))
        path = directory / f"{alias}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(alias, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[alias] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    assert module is not None, f"no machine/timing.py at {rev}"
    return module


def fingerprint(timeline: Any) -> dict[str, Any]:
    """What a change of the timing model's speed must keep: every cycle and total it reports."""
    rows = sorted((prog, i, issue, start, end) for _, prog, i, _, issue, start, end in timeline.span_rows)
    return {
        "total cycles": timeline.total_cycles,
        "program cycles": list(timeline.program_cycles),
        "command cycles": rows,
        "busy cycles": {(pe, engine.value): v for (pe, engine), v in timeline.engine_busy_cycles.items()},
        "traffic": dataclasses.asdict(timeline.traffic),
        "work": dataclasses.asdict(timeline.work),
        "scalar issue": dict(timeline.scalar_issue_cycles),
        "LS high water": dict(timeline.ls_high_water_bytes),
        "LLC": (timeline.llc_resident_bytes, timeline.llc_overflowed),
    }


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return a == b


def differences(expected: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """Names of the fingerprint entries that differ beyond float rounding."""
    return [key for key in expected if not _close(expected[key], got.get(key))]


def best_cpu_seconds(simulate: Any, args: tuple) -> tuple[float, Any]:
    """CPU time of one call of simulate(*args), and its result."""
    start = time.process_time()
    result = simulate(*args)
    return time.process_time() - start, result


def main() -> int:
    """Print microseconds per command (and the speed-up over --baseline); exit 1 if cycles differ."""
    from mtia_xdsl.machine import timing

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", choices=list(KERNEL_SETS), default="examples", help="which launches to record")
    parser.add_argument("--baseline", help="git revision whose timing model to compare against")
    parser.add_argument("--small", action="store_true", help="the --small sizes of examples/run_all.py")
    parser.add_argument("--cache", help="pickle file of recorded traces (default: a file in the temp dir)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per kernel (best is kept)")
    parser.add_argument("--save-expected", action="store_true", help="store the current cycles for --check")
    parser.add_argument("--check", action="store_true", help="compare with the cycles of --save-expected")
    args = parser.parse_args()
    suffix = "_small" if args.small and args.kernels == "examples" else ""
    cache = Path(args.cache or Path(tempfile.gettempdir()) / f"mtia_timing_traces_{args.kernels}{suffix}.pkl")
    expected_path = cache.with_suffix(".expected.pkl")
    recorded = load_traces(cache, args.kernels, args.small)
    old = baseline_module(args.baseline) if args.baseline else None
    expected = pickle.loads(expected_path.read_bytes()) if args.check else {}
    header = f"{'kernel':<40} {'programs':>8} {'commands':>9} {'us/cmd':>8}"
    if old is not None:
        header += f" {'before':>8} {'speed-up':>9} {'cycles':>6}"
    if args.check:
        header += "  expected"
    print(header)
    print("-" * len(header))
    ok = True
    for name, (traces, config, mapping, grid) in recorded.items():
        n = sum(len(p.commands) for p in traces)
        sim_args = (traces, config, mapping, grid)
        new_s = old_s = float("inf")
        for _ in range(args.repeat):  # alternate, so a busy machine slows both alike
            t, new = best_cpu_seconds(timing.simulate, sim_args)
            new_s = min(new_s, t)
            if old is not None:
                t, before = best_cpu_seconds(old.simulate, sim_args)
                old_s = min(old_s, t)
        row = f"{name:<40} {len(traces):>8} {n:>9} {new_s / n * 1e6:>8.1f}"
        got = fingerprint(new)
        if old is not None:
            same = not differences(fingerprint(before), got)
            ok &= same
            row += f" {old_s / n * 1e6:>8.1f} {old_s / new_s:>8.2f}x {'same' if same else 'DIFFER':>6}"
        if args.check:
            diff = differences(expected[name], got)
            ok &= not diff
            row += "  same" if not diff else f"  DIFFER: {', '.join(diff)}"
        expected[name] = got
        print(row, flush=True)
    if args.save_expected:
        expected_path.write_bytes(pickle.dumps(expected))
        print(f"expected cycles saved to {expected_path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

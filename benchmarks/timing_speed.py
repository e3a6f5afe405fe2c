"""Speed of the timing model (`machine/timing.py` `simulate`): microseconds of CPU per recorded command.

Records the command traces of the example kernels once (at the sizes of examples/run_all.py, through
the Triton backend; `mtia_xdsl.last_run().traces`), keeps them in a pickle file, then times `simulate` on
them. With `--baseline REV`, the `simulate` of machine/timing.py at git revision REV (loaded from
`git show`, with the current commands.py/config.py) runs on the same traces, the two are timed
alternately (CPU time, best of `--repeat`) and their cycles compared: "same" means equal total cycles
and equal start/end of every program.

Example: python3 benchmarks/timing_speed.py --baseline f7522d0 [--small] [--cache /tmp/traces.pkl]
"""

from __future__ import annotations

import argparse
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


def record(small: bool) -> Recorded:
    """Run every example case once and keep the traces of its (last) launch."""
    import mtia_xdsl
    from examples import run_all

    recorded: Recorded = {}
    for case in run_all.cases(small):
        start = time.perf_counter()
        case.run()
        run = mtia_xdsl.last_run()
        timeline = run.timeline
        recorded[f"{case.name} {case.shape}"] = (run.traces, timeline.config, timeline.mapping, timeline.grid)
        print(f"recorded {case.name} {case.shape}: {len(run.traces)} programs in {time.perf_counter() - start:.1f} s")
    return recorded


def load_traces(path: Path, small: bool) -> Recorded:
    """Return the recorded traces from `path`, recording them first if it does not exist."""
    if path.exists():
        with path.open("rb") as f:
            return pickle.load(f)
    recorded = record(small)
    with path.open("wb") as f:
        pickle.dump(recorded, f)
    return recorded


def baseline_module(rev: str) -> ModuleType:
    """Import machine/timing.py as it was at git revision `rev` (under another module name)."""
    source = subprocess.run(
        ["git", "show", f"{rev}:mtia_xdsl/machine/timing.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / "timing_baseline.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("timing_baseline", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["timing_baseline"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def best_cpu_seconds(simulate: Any, args: tuple, repeat: int) -> tuple[float, Any]:
    """Best CPU time of `repeat` calls of simulate(*args), and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = simulate(*args)
        best = min(best, time.process_time() - start)
    return best, result


def main() -> None:
    """Print microseconds per command (and the speed-up over --baseline) for each recorded example."""
    from mtia_xdsl.machine import timing

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="git revision whose timing.py to compare against")
    parser.add_argument("--small", action="store_true", help="the --small sizes of examples/run_all.py")
    parser.add_argument("--cache", help="pickle file of recorded traces (default: a file in the temp dir)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per kernel (best is kept)")
    args = parser.parse_args()
    cache = Path(args.cache or Path(tempfile.gettempdir()) / f"mtia_timing_traces{'_small' if args.small else ''}.pkl")
    recorded = load_traces(cache, args.small)
    old = baseline_module(args.baseline) if args.baseline else None
    header = f"{'kernel':<40} {'programs':>8} {'commands':>9} {'us/cmd':>8}"
    if old is not None:
        header += f" {'before':>8} {'speed-up':>9} {'cycles':>6}"
    print(header)
    print("-" * len(header))
    for name, (traces, config, mapping, grid) in recorded.items():
        n = sum(len(p.commands) for p in traces)
        sim_args = (traces, config, mapping, grid)
        new_s, new = 0.0, None
        old_s, before = 0.0, None
        for _ in range(args.repeat):  # alternate, so a busy machine slows both alike
            t, new = best_cpu_seconds(timing.simulate, sim_args, 1)
            new_s = t if new_s == 0.0 else min(new_s, t)
            if old is not None:
                t, before = best_cpu_seconds(old.simulate, sim_args, 1)
                old_s = t if old_s == 0.0 else min(old_s, t)
        row = f"{name:<40} {len(traces):>8} {n:>9} {new_s / n * 1e6:>8.1f}"
        if old is not None and before is not None and new is not None:
            same = before.total_cycles == new.total_cycles and before.program_cycles == new.program_cycles
            row += f" {old_s / n * 1e6:>8.1f} {old_s / new_s:>8.2f}x {'same' if same else 'DIFFER':>6}"
        print(row, flush=True)


if __name__ == "__main__":
    main()

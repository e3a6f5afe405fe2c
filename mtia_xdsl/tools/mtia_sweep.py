"""mtia-sweep: run a sweep (kernels x configurations x machine overrides) on the machine model, in parallel.

The sweep is declared in a Python spec file defining `SWEEP = mtia_xdsl.sweep.Sweep(...)` (see
mtia_xdsl/sweep.py and examples/sweep_matmul.py). Each point runs in a worker: on Ray when it is installed
(`pip install 'mtia-xdsl[sweep]'`; a cluster with --address, else local workers), otherwise in local
processes. Rows go to one table (.csv or .parquet) as points finish; running the same command again after
an interruption skips the points already in the table. --plot draws a metric against a parameter.

Example: mtia-sweep examples/sweep_matmul.py -o sweep.csv --machine dma_read_bytes_per_cycle=32,64 --plot s.png
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path


def main(argv: Sequence[str] | None = None) -> int:
    """Run mtia-sweep on the command line; returns the exit status (1 if a point failed, 2 for bad input)."""
    parser = argparse.ArgumentParser(prog="mtia-sweep", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)  # fmt: skip
    parser.add_argument("spec", help="a Python file defining SWEEP = mtia_xdsl.sweep.Sweep(...)")
    parser.add_argument(
        "-o", "--output", default="sweep.csv", help="result table, .csv or .parquet (default sweep.csv)"
    )
    parser.add_argument("--machine", action="append", default=[], metavar="FIELD=V1,V2",
                        help="sweep a MachineConfig field over these values (repeatable: cartesian product; "
                        "replaces the spec's machines)")  # fmt: skip
    parser.add_argument("--address", help="Ray cluster address (e.g. auto, ray://head:10001); default: local")
    parser.add_argument("--workers", type=int, help="local worker processes (default: the CPU count)")
    parser.add_argument("--backend", choices=("auto", "ray", "processes"), default="auto",
                        help="auto: Ray if installed, else local processes")  # fmt: skip
    parser.add_argument("--plot", metavar="PNG", help="plot the table to this image")
    parser.add_argument("--x", help="parameter on the plot's x axis (default: the first that varies)")
    parser.add_argument("--y", default="time_us", help="table column on the plot's y axis (default time_us)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    opts = parser.parse_args(argv)

    from mtia_xdsl import sweep

    spec = Path(opts.spec)
    if not spec.is_file():
        print(f"mtia-sweep: error: {spec}: no such file", file=sys.stderr)
        return 2
    try:
        machines = sweep.machine_axes(opts.machine) if opts.machine else None
        rows = sweep.run_sweep(
            str(spec), Path(opts.output), machines=machines, address=opts.address, workers=opts.workers,
            backend=opts.backend, progress=not opts.no_progress,
        )  # fmt: skip
        failed = [r for r in rows if r["status"] != "ok"]
        print(f"{len(rows)} points in {opts.output} ({len(failed)} failed)")
        for r in failed[:10]:
            print(f"  {r['kernel']} config={r['config']} machine={r['machine']}: {r['error']}")
        if opts.plot:
            x = sweep.plot(rows, Path(opts.plot), opts.x, opts.y)
            print(f"plot of {opts.y} against {x} in {opts.plot}")
    except (ValueError, RuntimeError, ImportError) as e:
        print(f"mtia-sweep: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return _interrupted(spec, Path(opts.output), opts.machine)
    return 1 if failed else 0


def _interrupted(spec: Path, out: Path, machine_specs: list[str]) -> int:
    """Say how many points the table holds after Ctrl-C and how to resume; return 130 (SIGINT's status)."""
    from mtia_xdsl import sweep

    swept = sweep.load_spec(str(spec))
    machines = sweep.machine_axes(machine_specs) if machine_specs else swept.machines
    total = len(sweep.Sweep(swept.kernels, swept.configs, machines).points())
    done = len(sweep.finished_keys(out))
    print(f"mtia-sweep: interrupted: {done} of {total} points in {sweep.journal_path(out)}; run the same command "
          "again to run the rest", file=sys.stderr)  # fmt: skip
    return 130


if __name__ == "__main__":
    sys.exit(main())

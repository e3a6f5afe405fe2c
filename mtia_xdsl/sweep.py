"""Sweeps on the machine model: kernels x configurations x machine overrides, run on a pool of processes.

A sweep is declared in a Python file (the *spec*) that defines `SWEEP = Sweep(...)`:

    from mtia_xdsl.sweep import Sweep

    def matmul(machine_overrides, BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K):
        ...  # launch the kernel once: kernel[grid](..., machine_overrides=machine_overrides, ...)

    SWEEP = Sweep(
        kernels={"matmul": matmul},
        configs={"matmul": [dict(BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32), ...]},
        machines=[{}, {"dram_bytes_per_cycle_override": 1000.0}],
    )

Every point (kernel, configuration, machine overrides) runs in a worker process: the kernel's case
function is called with the configuration as keyword arguments and `machine_overrides` (a dict of
`MachineConfig` fields), and the report of its last launch (`mtia_xdsl.last_report()`) becomes one row
of the result table. The pool is Ray when it is installed (`pip install mtia-xdsl[sweep]`; a cluster when
`address` is given, else local worker processes), otherwise `concurrent.futures` processes on this
machine. Rows are appended to the table as points finish, so an interrupted sweep resumes where it
stopped: points already in the table (by kernel, config and machine) are not run again. Interrupting it
(Ctrl-C) ends the local workers at once; the point each was running is lost and runs again on resume. A point that
fails (e.g. its CBs do not fit local storage) is a row too, with its error.

`autotune_in_pool` lets a `@triton.autotune` kernel time its configurations on the same pool.
The command-line tool is `mtia-sweep` (mtia_xdsl/tools/mtia_sweep.py).
"""

from __future__ import annotations

import contextlib
import csv
import importlib
import importlib.util
import itertools
import json
import multiprocessing
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

IDENTITY = ("kernel", "config", "machine")
"""Columns naming a point; `config` and `machine` are JSON objects with sorted keys."""
RESULTS = (
    "status", "cycles", "time_us", "roofline", "bound", "busiest", "dram_bytes", "sram_bytes", "pes_used",
    "programs", "error", "cpu_s",
)  # fmt: skip
"""Columns of a point's outcome: status "ok" or "error"; simulated cycles and microseconds; achieved fraction
of the roofline and its limiter; the busiest engine; useful DMA bytes per level; the error text; the CPU
seconds the worker spent on the point (compile + simulation)."""
COLUMNS = IDENTITY + RESULTS


@dataclass
class Sweep:
    """What a sweep runs: every kernel with each of its configurations on each machine.

    `kernels`: name -> case function `f(machine_overrides: dict, **config)` launching the kernel once.
    `configs`: name -> list of configurations (keyword arguments of the case); a kernel without an entry
    runs once with no arguments. `machines`: list of `MachineConfig` overrides (field -> value).
    """

    kernels: dict[str, Callable[..., Any]]
    configs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    machines: list[dict[str, Any]] = field(default_factory=lambda: [{}])

    def points(self) -> list[Point]:
        """Every (kernel, configuration, machine) point, kernels in declaration order."""
        return [
            Point(name, config, machine)
            for name in self.kernels
            for config in self.configs.get(name, [{}])
            for machine in self.machines
        ]


@dataclass(frozen=True)
class Point:
    """One run of a sweep: a kernel, its configuration and the machine overrides."""

    kernel: str
    config: dict[str, Any]
    machine: dict[str, Any]

    def key(self) -> tuple[str, str, str]:
        """(kernel, config JSON, machine JSON): the point's identity in the table."""
        return (self.kernel, _canonical(self.config), _canonical(self.machine))


def _canonical(d: dict[str, Any]) -> str:
    return json.dumps(d, sort_keys=True, separators=(",", ":"))


def machine_axes(specs: Iterable[str]) -> list[dict[str, Any]]:
    """Machine overrides of `FIELD=V1,V2,...` specs (their cartesian product); values parse as JSON
    numbers/booleans, else stay strings. Field names and that each value parses to its field's type are
    checked here, once (`MachineConfig.parse_override`); whether a machine makes sense, when a point runs.

    Raises: ValueError for a spec without "=", an unknown field or a value that does not parse.
    """
    from mtia_xdsl.machine.config import MachineConfig

    axes: list[list[tuple[str, Any]]] = []
    for spec in specs:
        name, sep, values = spec.partition("=")
        if not sep or not name or not values:
            raise ValueError(f"machine override {spec!r}: expected FIELD=V1,V2,... (e.g. ls_bytes=262144,393216)")
        axis = [(name.strip(), _parse_value(v)) for v in values.split(",")]
        for field_name, value in axis:
            try:
                MachineConfig.parse_override(field_name, value)
            except ValueError as e:
                raise ValueError(f"--machine {spec}: {e}") from None
        axes.append(axis)
    return [dict(combo) for combo in itertools.product(*axes)]


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text.strip()


# ---------------------------------------------------------------------------------------------------
# Running one point (in a worker process)
# ---------------------------------------------------------------------------------------------------

_SPECS: dict[str, Sweep] = {}


def load_spec(path: str) -> Sweep:
    """Import the spec file at `path` (once per process) and return its `SWEEP`.

    Its folder and the current folder are put on sys.path first, so a spec next to a package can import it.
    Raises: ValueError naming the file (and line) if importing it fails or it defines no `SWEEP` of type
    `Sweep`.
    """
    path = str(Path(path).resolve())
    sweep = _SPECS.get(path)
    if sweep is not None:
        return sweep
    for folder in (str(Path(path).parent), os.getcwd()):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(f"mtia_sweep_spec_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        line = getattr(e, "lineno", None) if isinstance(e, SyntaxError) else None
        for frame in traceback.extract_tb(e.__traceback__):
            if line is None and Path(frame.filename).resolve() == Path(path):
                line = frame.lineno
        raise ValueError(f"{path}:{line or 1}: the sweep spec does not import: {type(e).__name__}: {e}") from e
    sweep = getattr(module, "SWEEP", None)
    if not isinstance(sweep, Sweep):
        raise ValueError(f"{path}: defines no SWEEP = mtia_xdsl.sweep.Sweep(...)")
    _SPECS[path] = sweep
    return sweep


def run_point(spec_path: str, point: Point, paths: tuple[str, ...] = ()) -> dict[str, Any]:
    """Run one point in this process and return its table row (see COLUMNS); errors become rows."""
    sys.path[:0] = [folder for folder in paths if folder not in sys.path]
    start = time.process_time()
    row: dict[str, Any] = dict(zip(IDENTITY, point.key(), strict=True))
    try:
        import mtia_xdsl

        case = load_spec(spec_path).kernels[point.kernel]
        case(machine_overrides=dict(point.machine), **point.config)
        report = mtia_xdsl.last_report()
        if report is None:
            raise RuntimeError(f"kernel {point.kernel!r} launched nothing on the machine model")
        busiest = max(report.engine_busy_used.items(), key=lambda kv: kv[1], default=("", 0.0))
        row.update(
            status="ok",
            cycles=report.total_cycles,
            time_us=report.time_us,
            roofline=report.achieved_fraction,
            bound=report.roofline_limiter,
            busiest=busiest[0],
            dram_bytes=report.dma_dram_bytes,
            sram_bytes=report.dma_sram_bytes,
            pes_used=report.pes_used,
            programs=report.programs,
        )
    except Exception as e:  # a failing point is a result of the sweep (e.g. a configuration that does not fit)
        row.update(status="error", error=f"{type(e).__name__}: {e}".splitlines()[0][:500])
    row["cpu_s"] = round(time.process_time() - start, 4)
    return row


# ---------------------------------------------------------------------------------------------------
# Pools
# ---------------------------------------------------------------------------------------------------


def have_ray() -> bool:
    """Whether Ray is importable (the `sweep` extra)."""
    return importlib.util.find_spec("ray") is not None


def run_points(
    spec_path: str,
    points: list[Point],
    *,
    address: str | None = None,
    workers: int | None = None,
    backend: str = "auto",
) -> Iterator[dict[str, Any]]:
    """Run `points` on a pool and yield their rows as they finish (in finishing order).

    `backend`: "ray", "processes" or "auto" (Ray when installed or when `address` is given, else processes).
    `address`: a Ray cluster ("auto", "ray://host:10001", ...); without it Ray starts local workers.
    `workers`: local worker processes (default: the CPU count).
    Raises: ValueError for an unknown backend; RuntimeError if Ray is asked for and not installed.
    """
    use_ray = _use_ray(backend, address)
    paths = tuple(sys.path)
    if not points:
        return
    if use_ray:
        yield from _run_on_ray(spec_path, points, paths, address, workers)
        return
    workers_started: list[multiprocessing.process.BaseProcess] = []
    stopped = False
    try:
        with ProcessPoolExecutor(max_workers=workers, initializer=_ignore_sigint) as pool:
            futures = [pool.submit(run_point, spec_path, p, paths) for p in points]
            workers_started.extend(_pool_workers(pool))
            try:
                for future in as_completed(futures):
                    yield future.result()
            except BaseException:  # Ctrl-C, a closed iterator or a failed point: stop now, not after every point
                stopped = True
                pool.shutdown(wait=False, cancel_futures=True)
                _end_workers(workers_started)
                raise
    finally:
        if stopped:  # once more after the pool's exit: its manager thread no longer touches the workers
            _end_workers(workers_started)


def _pool_workers(pool: ProcessPoolExecutor) -> list[multiprocessing.process.BaseProcess]:
    """The worker processes of `pool` (ProcessPoolExecutor's `_processes`, pid -> process; it has no public view of
    them). Only these are ended: other child processes of the caller (another library's pool) are not ours."""
    processes: dict[int, multiprocessing.process.BaseProcess] | None = getattr(pool, "_processes", None)
    return list(processes.values()) if processes else []


def _end_workers(workers: list[multiprocessing.process.BaseProcess]) -> None:
    """Terminate and join `workers` (the local pool's)."""
    for worker in workers:
        worker.terminate()
        worker.join()


def _ignore_sigint() -> None:
    """Pool initializer: Ctrl-C reaches the whole process group; only the parent handles it (and ends the
    workers), so a worker idle between points does not die with a traceback of its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _use_ray(backend: str, address: str | None) -> bool:
    """Whether `backend` means Ray (see `run_points`). Raises: ValueError, RuntimeError as `run_points`."""
    if backend not in ("auto", "ray", "processes"):
        raise ValueError(f"unknown backend {backend!r}; expected auto, ray or processes")
    use_ray = backend == "ray" or (backend == "auto" and (address is not None or have_ray()))
    if use_ray and not have_ray():
        raise RuntimeError("Ray is not installed: pip install 'mtia-xdsl[sweep]', or use backend 'processes'")
    return use_ray


@contextlib.contextmanager
def _ray_session(address: str | None, workers: int | None) -> Iterator[Any]:
    """Ray, connected to `address` (else started with `workers` local CPUs) unless already initialised."""
    import ray

    started = not ray.is_initialized()
    if started:
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address is None:  # local workers import what this process imports (e.g. a source checkout)
            options["num_cpus"] = workers or os.cpu_count() or 1
            path = os.pathsep.join(p for p in sys.path if p)
            options["runtime_env"] = {"env_vars": {"PYTHONPATH": path}}
        ray.init(address=address, **options)
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


def _run_on_ray(
    spec_path: str, points: list[Point], paths: tuple[str, ...], address: str | None, workers: int | None
) -> Iterator[dict[str, Any]]:
    with _ray_session(address, workers) as ray:
        task = ray.remote(num_cpus=1)(run_point)
        pending = [task.remote(spec_path, p, paths) for p in points]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield ray.get(ref)


# ---------------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------------


def journal_path(out: Path) -> Path:
    """Where rows are appended while a sweep runs: the table itself for CSV, else `<out>.partial.csv`."""
    return out if out.suffix == ".csv" else out.with_name(out.name + ".partial.csv")


def read_table(path: Path) -> list[dict[str, Any]]:
    """Rows of a sweep table (CSV or Parquet); [] if the file does not exist.

    Raises: ValueError for another extension; ImportError (naming the extra) for Parquet without pyarrow.
    """
    if not path.exists():
        return []
    if path.suffix == ".csv":
        with path.open(newline="") as f:
            return [_typed(row) for row in csv.DictReader(f)]
    if path.suffix == ".parquet":
        _need_pyarrow(path)
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    raise ValueError(f"{path}: a sweep table is .csv or .parquet")


def _need_pyarrow(path: Path) -> None:
    """Raises: ImportError naming the extra if pyarrow, which a .parquet table needs, does not import."""
    try:
        import pyarrow.parquet  # noqa: F401  # pyright: ignore[reportUnusedImport]
    except ImportError as e:
        raise ImportError(
            f"{path}: a .parquet table needs pyarrow (pip install 'mtia-xdsl[sweep]', or pyarrow), or write a .csv"
            f" table ({e})"
        ) from e


def _typed(row: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in row.items():
        if k in ("cycles", "pes_used", "programs"):
            out[k] = int(v) if v else None
        elif k in ("time_us", "roofline", "dram_bytes", "sram_bytes", "cpu_s"):
            out[k] = float(v) if v else None
        else:
            out[k] = v
    return out


def write_table(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write `rows` as the whole table at `path` (CSV, or Parquet through pyarrow)."""
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        columns = {c: [r.get(c) for r in rows] for c in COLUMNS}
        pq.write_table(pa.table(columns), path)
        return
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def finished_keys(out: Path) -> set[tuple[str, str, str]]:
    """Identities of the points already in the table at `out` or its journal."""
    rows = read_table(out) if out.exists() and out != journal_path(out) else []
    rows += read_table(journal_path(out))
    return {(r["kernel"], r["config"], r["machine"]) for r in rows}


def run_sweep(
    spec_path: str,
    out: Path,
    *,
    machines: list[dict[str, Any]] | None = None,
    address: str | None = None,
    workers: int | None = None,
    backend: str = "auto",
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Run the sweep of `spec_path` into the table `out` (.csv or .parquet), skipping finished points.

    `machines`, if given, replaces the spec's machine overrides. Rows are appended to the journal (see
    `journal_path`) as points finish; a Parquet table is written from it at the end. Returns every row of
    the table. A tqdm bar on stderr shows the points done when `progress`.
    Raises: ValueError for a bad spec or table extension; ImportError (naming the extra) for a .parquet table
    without pyarrow.
    """
    if out.suffix not in (".csv", ".parquet"):
        raise ValueError(f"{out}: the sweep table must end in .csv or .parquet")
    if out.suffix == ".parquet":
        _need_pyarrow(out)  # before any point runs, not when the table is written at the end
    sweep = load_spec(spec_path)
    if machines is not None:
        sweep = Sweep(sweep.kernels, sweep.configs, machines)
    done = finished_keys(out)
    todo = [p for p in sweep.points() if p.key() not in done]
    journal = journal_path(out)
    fresh = not journal.exists()
    if out.suffix == ".parquet" and out.exists() and fresh:  # resume from a finished Parquet table
        write_table(journal, read_table(out))
        fresh = False
    from tqdm import tqdm

    with (
        journal.open("a", newline="") as f,
        tqdm(total=len(todo), unit="point", desc="mtia-sweep", disable=not progress, file=sys.stderr) as bar,
    ):
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        if fresh:
            writer.writeheader()
        for row in run_points(str(Path(spec_path).resolve()), todo, address=address, workers=workers, backend=backend):
            writer.writerow(row)
            f.flush()
            bar.update(1)
    rows = read_table(journal)
    if journal != out:
        write_table(out, rows)
        journal.unlink()
    return rows


# ---------------------------------------------------------------------------------------------------
# Plot
# ---------------------------------------------------------------------------------------------------


def plot(rows: list[dict[str, Any]], path: Path, x: str | None = None, y: str = "time_us") -> str:
    """Plot `y` of the successful rows against parameter `x` (a configuration or machine field; default:
    the first machine field that varies, else the first configuration field that varies), one line per
    kernel and the remaining parameters. Returns the x parameter used.

    Raises: ValueError if no parameter varies or `x` is no parameter of the rows.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if r.get("status") == "ok"]
    params = [{**json.loads(r["config"]), **json.loads(r["machine"])} for r in ok]
    if x is None:
        machine_fields = sorted({k for r in ok for k in json.loads(r["machine"])})
        config_fields = sorted({k for r in ok for k in json.loads(r["config"])})
        varying = [k for k in machine_fields + config_fields if len({json.dumps(p.get(k)) for p in params}) > 1]
        if not varying:
            raise ValueError("no configuration or machine field varies in the sweep: give --x")
        x = varying[0]
    if not any(x in p for p in params):
        raise ValueError(f"{x!r} is neither a configuration nor a machine field of the sweep")
    lines: dict[str, list[tuple[Any, float]]] = {}
    for r, p in zip(ok, params, strict=True):
        rest = ", ".join(f"{k}={v}" for k, v in sorted(p.items()) if k != x)
        label = r["kernel"] + (f" ({rest})" if rest else "")
        lines.setdefault(label, []).append((p.get(x), float(r[y])))
    fig, ax = plt.subplots(figsize=(8, 5))
    for label, pts in sorted(lines.items()):
        pts.sort(key=lambda t: (str(type(t[0])), t[0]))
        ax.plot([str(a) if isinstance(a, str) else a for a, _ in pts], [b for _, b in pts], marker="o", label=label)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return x


# ---------------------------------------------------------------------------------------------------
# @triton.autotune on the pool
# ---------------------------------------------------------------------------------------------------


def _bench_config(module: str, name: str, args: tuple, grid: tuple[int, ...], kwargs: dict[str, Any]) -> float:
    """Run the autotuned kernel `module.name` once with a fixed configuration; return its simulated ms
    (inf if it does not fit, as Triton's autotuner scores such a configuration)."""
    from triton.runtime.errors import OutOfResources

    import mtia_xdsl

    tuner = getattr(importlib.import_module(module), name)
    try:
        tuner.fn[grid](*args, **kwargs)
    except OutOfResources:
        return float("inf")
    return float(mtia_xdsl.last_report().time_us) / 1000.0


def autotune_in_pool(
    kernel: Any,
    *args: Any,
    grid: Any,
    address: str | None = None,
    workers: int | None = None,
    backend: str = "auto",
    **kwargs: Any,
) -> Any:
    """Launch a `@triton.autotune` kernel like `kernel[grid](*args, **kwargs)`, timing its configurations
    on the sweep pool (one point per configuration, in parallel) instead of one after another here.

    Triton's own autotuner then picks the fastest (its key, cache and pruning apply unchanged) and
    launches it in this process. The kernel must be a module-level attribute (workers import it by
    name); the arguments are shipped to the workers (the pool's inputs are copies: outputs written by the
    timing runs are discarded). Returns what the launch returns.
    Raises: TypeError if `kernel` is not a `@triton.autotune` kernel.
    """
    from triton.runtime.autotuner import Autotuner

    if not isinstance(kernel, Autotuner):
        raise TypeError("autotune_in_pool takes a @triton.autotune kernel")
    kernel.nargs = dict(zip(kernel.arg_names, args, strict=False))
    configs = kernel.prune_configs(kwargs)
    base = kernel.base_fn
    jobs = []
    for config in configs:
        meta = {**kernel.nargs, **kwargs, **config.all_kwargs()}
        launch_grid = tuple(grid(meta) if callable(grid) else grid)
        jobs.append((base.__module__, base.__name__, args, launch_grid, {**kwargs, **config.all_kwargs()}))
    timings = dict(zip(configs, _map(_bench_config, jobs, address, workers, backend), strict=True))
    original = kernel._bench
    kernel._bench = lambda *a, config, **m: [timings[config]] * 3
    try:
        return kernel[grid](*args, **kwargs)
    finally:
        kernel._bench = original


def _map(fn: Callable[..., Any], jobs: list[tuple], address: str | None, workers: int | None, backend: str) -> list:
    """`[fn(*job) for job in jobs]` on the sweep pool, in order."""
    if _use_ray(backend, address):
        with _ray_session(address, workers) as ray:
            task = ray.remote(num_cpus=1)(fn)
            return ray.get([task.remote(*job) for job in jobs])
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, *zip(*jobs, strict=True)))

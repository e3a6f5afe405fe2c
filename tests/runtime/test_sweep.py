"""mtia-sweep: points, the table, resuming, plotting, Ray and process pools, autotuning on the pool."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
import triton
import triton.language as tl

from mtia_xdsl import sweep
from mtia_xdsl.tools.mtia_sweep import main as sweep_main

SPEC = str(Path(__file__).with_name("sweep_spec.py"))


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_points_are_the_product_of_kernels_configs_and_machines() -> None:
    points = sweep.load_spec(SPEC).points()
    assert [(p.kernel, p.config.get("BLOCK"), p.machine["dram_ecc_efficiency"]) for p in points] == [
        ("add", 256, 0.5), ("add", 256, 1.0), ("add", 1024, 0.5), ("add", 1024, 1.0),
        ("broken", None, 0.5), ("broken", None, 1.0),
    ]  # fmt: skip


def test_machine_axes_are_a_cartesian_product() -> None:
    assert sweep.machine_axes(["ls_bytes=1,2", "global_placement=dram"]) == [
        {"ls_bytes": 1, "global_placement": "dram"},
        {"ls_bytes": 2, "global_placement": "dram"},
    ]
    with pytest.raises(ValueError, match="FIELD=V1,V2"):
        sweep.machine_axes(["ls_bytes"])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("dram_latency_cycles=a,b", r"'dram_latency_cycles' expects an integer .*got 'a'"),
        ("dram_latncy_cycles=1", "no field 'dram_latncy_cycles'; did you mean 'dram_latency_cycles'"),
    ],
)
def test_a_bad_machine_override_is_refused_once_before_any_point_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str, message: str
) -> None:
    out = tmp_path / "s.csv"
    assert sweep_main([SPEC, "-o", str(out), "--backend", "processes", "--no-progress", "--machine", spec]) == 2
    err = capsys.readouterr().err
    assert err.count("mtia-sweep: error:") == 1
    assert re.search(message, err), err
    assert not out.exists() and not sweep.journal_path(out).exists()


def test_sweep_in_processes_resumes_without_redoing_points(tmp_path: Path) -> None:
    out = tmp_path / "s.csv"
    # An interrupted earlier run finished one point (its cycles marked so a rerun would show).
    done = sweep.run_point(SPEC, sweep.Point("add", {"BLOCK": 256}, {"dram_ecc_efficiency": 0.5}))
    assert done["status"] == "ok", done
    sweep.write_table(out, [{**done, "cycles": -7}])
    status = sweep_main([SPEC, "-o", str(out), "--backend", "processes", "--workers", "2", "--no-progress"])
    assert status == 1  # the broken points failed
    rows = _rows(out)
    assert len(rows) == 6
    kept = [r for r in rows if r["cycles"] == "-7"]
    assert len(kept) == 1 and json.loads(kept[0]["config"]) == {"BLOCK": 256}
    errors = [r for r in rows if r["status"] == "error"]
    assert [r["kernel"] for r in errors] == ["broken", "broken"]
    assert "fails on purpose" in errors[0]["error"]
    ok = {(json.loads(r["config"])["BLOCK"], json.loads(r["machine"])["dram_ecc_efficiency"]): int(r["cycles"])
          for r in rows if r["status"] == "ok" and r["cycles"] != "-7"}  # fmt: skip
    assert ok[(1024, 0.5)] > ok[(1024, 1.0)]  # half the DRAM bandwidth is slower
    # Running again does nothing: every point is in the table.
    assert sweep_main([SPEC, "-o", str(out), "--backend", "processes", "--no-progress"]) == 1
    assert _rows(out) == rows


SLOW_SPEC = """
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mtia_xdsl.sweep import Sweep

STARTED = Path(__file__).with_name("started")


def slow(machine_overrides, i):
    (STARTED / str(i)).write_text(str(os.getpid()))
    time.sleep(1)


SWEEP = Sweep(kernels={"slow": slow}, configs={"slow": [{"i": i} for i in range(8)]})
"""


def test_an_interrupted_sweep_runs_no_more_points(tmp_path: Path) -> None:
    """Closing the row iterator (as Ctrl-C does, raising KeyboardInterrupt where mtia-sweep waits for rows)
    ends the local workers at once: the points not yet started are not run, and no worker is left."""
    spec = tmp_path / "slow_spec.py"
    spec.write_text(SLOW_SPEC)
    (tmp_path / "started").mkdir()
    points = sweep.load_spec(str(spec)).points()
    rows = sweep.run_points(str(spec), points, backend="processes", workers=1)
    assert next(rows)["kernel"] == "slow"
    rows.close()
    started = list((tmp_path / "started").iterdir())
    assert len(started) < len(points), "closing the rows waited for every point"
    worker_pids = {int(text) for text in (path.read_text() for path in started) if text}
    assert worker_pids and not [pid for pid in worker_pids if _alive(pid)]


def _alive(pid: int) -> bool:
    """Whether process `pid` exists (a terminated, joined worker does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_ctrl_c_keeps_the_finished_rows_and_says_how_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s.csv"
    done = sweep.run_point(SPEC, sweep.Point("broken", {}, {"dram_ecc_efficiency": 0.5}))

    def interrupted(*args: object, **kwargs: object) -> Iterator[dict[str, Any]]:
        yield done
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep, "run_points", interrupted)
    assert sweep_main([SPEC, "-o", str(out), "--backend", "processes", "--no-progress"]) == 130
    err = capsys.readouterr().err
    assert "interrupted: 1 of 6 points" in err and "run the same command again" in err, err
    assert [r["kernel"] for r in _rows(out)] == ["broken"]


def test_plot_draws_the_varying_machine_field(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    rows = [
        {"kernel": "add", "config": '{"BLOCK":256}', "machine": json.dumps({"ls_bytes": v}), "status": "ok",
         "time_us": t}
        for v, t in ((1, 3.0), (2, 2.0))
    ]  # fmt: skip
    assert sweep.plot(rows, tmp_path / "p.png") == "ls_bytes"
    assert (tmp_path / "p.png").stat().st_size > 0
    with pytest.raises(ValueError, match="neither"):
        sweep.plot(rows, tmp_path / "p.png", x="nope")


def test_bad_table_extension_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert sweep_main([SPEC, "-o", str(tmp_path / "s.txt"), "--backend", "processes"]) == 2
    assert ".csv or .parquet" in capsys.readouterr().err


def test_parquet_without_pyarrow_is_refused_before_any_point_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without pyarrow a .parquet table is an error naming the extra before the sweep starts (it ran every
    point first and then failed writing the table with "No module named 'pyarrow'")."""
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    out = tmp_path / "s.parquet"
    assert sweep_main([SPEC, "-o", str(out), "--backend", "processes", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "pyarrow" in err and "mtia-xdsl[sweep]" in err and ".csv" in err, err
    assert not out.exists() and not sweep.journal_path(out).exists()


def test_parquet_table_resumes(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    out = tmp_path / "s.parquet"
    machine = ["--machine", "dram_ecc_efficiency=0.5"]
    assert sweep_main([SPEC, "-o", str(out), "--backend", "processes", "--no-progress", *machine]) == 1
    rows = sweep.read_table(out)
    assert sorted(r["kernel"] for r in rows) == ["add", "add", "broken"]
    assert not sweep.journal_path(out).exists()
    assert sweep_main([SPEC, "-o", str(out), "--backend", "processes", "--no-progress", *machine]) == 1
    assert sweep.read_table(out) == rows


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (pip install ray)")
def test_sweep_on_a_local_ray(tmp_path: Path) -> None:
    out = tmp_path / "s.csv"
    status = sweep_main([SPEC, "-o", str(out), "--backend", "ray", "--workers", "2", "--no-progress",
                         "--machine", "dram_ecc_efficiency=0.5"])  # fmt: skip
    assert status == 1
    rows = _rows(out)
    assert sorted((r["kernel"], r["status"]) for r in rows) == [
        ("add", "ok"), ("add", "ok"), ("broken", "error")
    ]  # fmt: skip
    local = sweep.run_point(SPEC, sweep.Point("add", {"BLOCK": 1024}, {"dram_ecc_efficiency": 0.5}))
    on_ray = next(r for r in rows if r["config"] == '{"BLOCK":1024}')
    assert int(on_ray["cycles"]) == local["cycles"]  # a Ray worker runs the same model


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 1024})], key=["n"])
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def test_autotune_configurations_are_timed_on_the_pool() -> None:
    x = torch.arange(8192, dtype=torch.float32)
    out = torch.empty_like(x)
    grid = lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)  # noqa: E731
    sweep.autotune_in_pool(scale_kernel, x, out, x.numel(), grid=grid, backend="processes", workers=2)
    assert torch.equal(out, x * 2)
    timings = {c.kwargs["BLOCK"]: t[0] for c, t in scale_kernel.configs_timings.items()}
    assert set(timings) == {64, 1024} and timings[64] != timings[1024]
    assert scale_kernel.best_config.kwargs["BLOCK"] == min(timings, key=timings.get)


def test_a_spec_that_does_not_import_is_named_with_its_line(tmp_path: Path) -> None:
    """A spec whose import fails (a missing module, an error in its code) is a ValueError naming the spec's
    file and line, so mtia-sweep prints which file to fix, not only "No module named ..."."""
    spec = tmp_path / "bad_spec.py"
    spec.write_text("import torch\nimport no_such_module_for_mtia_sweep\n")
    with pytest.raises(ValueError, match=r"bad_spec\.py:2: the sweep spec does not import: ModuleNotFoundError"):
        sweep.load_spec(str(spec))

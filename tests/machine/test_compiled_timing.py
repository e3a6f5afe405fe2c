"""The compiled timing model (machine/compiled.py): exactly the pure-Python model's cycles, and only while the
build matches the sources (a stale build never shadows an edited module)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mtia_xdsl.machine import compiled

ROOT = Path(__file__).resolve().parents[2]


def _digest(enabled: str) -> dict:
    env = {**os.environ, compiled.ENV: enabled}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests/machine/timing_digest.py")],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(proc.stdout)


def test_compiled_build_gives_every_cycle_of_the_pure_python_model():
    fast = _digest("1")
    if fast["status"] != "compiled":
        pytest.skip(f"no current compiled build ({fast['status']}): run python -m mtia_xdsl.tools.build_timing")
    pure = _digest("0")
    assert pure["status"] == f"pure Python ({compiled.ENV}=0)"
    assert fast["runs"].keys() == pure["runs"].keys()
    for run, figures in pure["runs"].items():
        for name, value in figures.items():
            assert fast["runs"][run][name] == value, f"{run}: {name}"


def _fake_build(tmp_path: Path, stamp: dict) -> Path:
    suffix = stamp["python"]
    for name in (*compiled.MODULES, f"{compiled.GROUP}__mypyc"):
        (tmp_path / (name.rsplit(".", 1)[-1] + suffix)).write_bytes(b"")
    (tmp_path / "stamp.json").write_text(json.dumps(stamp))
    return tmp_path


def test_a_current_build_is_used_and_only_then(tmp_path):
    stamp = compiled.source_stamp()
    status, files = compiled.plan(_fake_build(tmp_path, stamp), {})
    assert status == "compiled"
    assert files["mtia_xdsl.machine.timing"] == tmp_path / ("timing" + stamp["python"])
    assert compiled.plan(tmp_path, {compiled.ENV: "0"}) == (f"pure Python ({compiled.ENV}=0)", {})
    (tmp_path / ("memory" + stamp["python"])).unlink()
    assert compiled.plan(tmp_path, {}) == ("pure Python (incomplete build)", {})
    assert compiled.plan(tmp_path / "none", {}) == ("pure Python (not built)", {})


def test_a_build_of_edited_sources_is_stale(tmp_path):
    stamp = compiled.source_stamp()
    status, files = compiled.plan(_fake_build(tmp_path, {**stamp, "timing.py": "0" * 64}), {})
    assert status == "pure Python (stale build: timing.py changed since it was built)" and files == {}
    status, files = compiled.plan(_fake_build(tmp_path, {**stamp, "python": ".other-python.so"}), {})
    assert status == "pure Python (stale build: the Python version changed since it was built)" and files == {}


def test_a_stale_build_is_named_once_on_stderr(monkeypatch, capsys):
    status = "pure Python (stale build: timing.py changed since it was built)"
    monkeypatch.setattr(compiled, "plan", lambda: (status, {}))
    monkeypatch.setattr(compiled, "_state", {})
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if not isinstance(f, compiled._Finder)])
    compiled.install()
    line = capsys.readouterr().err
    assert line == (
        "mtia_xdsl: using the pure-Python timing model (stale build: timing.py changed since it was built); "
        f"rebuild the compiled one with `python -m mtia_xdsl.tools.build_timing` or set {compiled.ENV}=0\n"
    )
    assert line.count("stale") == 1 and compiled.status() == status


@pytest.mark.parametrize("value", ["no", "false", "off", " 0"])
def test_an_env_value_other_than_0_or_1_is_named_and_runs_pure_python(tmp_path, value):
    # MTIA_SIM_COMPILED=no once loaded the build silently, as if the variable were unset
    status, files = compiled.plan(_fake_build(tmp_path, compiled.source_stamp()), {compiled.ENV: value})
    assert status == f"pure Python ({compiled.ENV}={value!r} is not 0 or 1)" and files == {}
    assert compiled.plan(tmp_path, {compiled.ENV: "1"})[0] == "compiled"

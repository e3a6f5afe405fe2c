"""scripts/upstream_compare.py and scripts/upstream_plugin.py: the figures scripts/upstream_tests.sh prints."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_compare_pairs_outcomes_by_test_id(tmp_path):
    ours = {"a": ["passed", ""], "b": ["failed", "KeyError: 'ttgir'"], "c": ["passed", ""], "d": ["skipped", "x"]}
    interp = {"a": ["passed", ""], "b": ["passed", ""], "c": ["skipped", "bf16"], "d": ["passed", ""]}
    counts, pairs = _load("upstream_compare").compare(ours, interp)
    assert counts["mtia_xdsl"]["passed"] == 2 and counts["interpreter"]["passed"] == 3
    assert pairs[("passed", "passed")] == 1 and pairs[("passed", "failed")] == 1 and pairs[("skipped", "passed")] == 1
    (tmp_path / "o.json").write_text(json.dumps(ours))
    (tmp_path / "i.json").write_text(json.dumps(interp))
    out = subprocess.run(
        [sys.executable, str(SCRIPTS / "upstream_compare.py"), str(tmp_path / "o.json"), str(tmp_path / "i.json")],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "of the 3 tests the interpreter passes, 1 pass here (33 %), 1 fail, 1 skip" in out
    assert "KeyError: 'ttgir'" in out


def test_the_sample_is_a_stable_hash_order_of_test_ids():
    plugin = _load("upstream_plugin")
    ids = [f"test_x[{k}]" for k in range(50)]
    first = sorted(ids, key=plugin._sample_key)[:10]
    assert first == sorted(list(reversed(ids)), key=plugin._sample_key)[:10]  # independent of collection order
    assert first != ids[:10]


def test_upstream_tutorials_refuses_a_directory_without_tutorials(tmp_path):
    """A wrong DIR (e.g. the checkout's root instead of its python/) is a usage error naming what to give,
    not a 'missing' line per tutorial and exit status 0."""
    (tmp_path / "python" / "tutorials").mkdir(parents=True)
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "upstream_tutorials.py"), str(tmp_path)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "has no tutorials/ directory" in proc.stderr
    assert f"did you mean {tmp_path / 'python'}?" in proc.stderr
    assert "missing" not in proc.stdout


def test_upstream_tests_refuses_a_directory_without_unit_tests(tmp_path):
    """The same for scripts/upstream_tests.sh: a DIR without test/unit/ stops before running pytest."""
    (tmp_path / "python" / "test" / "unit").mkdir(parents=True)
    proc = subprocess.run(["bash", str(SCRIPTS / "upstream_tests.sh"), str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "has no test/unit/ directory" in proc.stderr and f"did you mean {tmp_path}/python?" in proc.stderr


def test_the_plugin_runs_beside_a_checkouts_conftest_that_defines_device(tmp_path):
    """Every Triton checkout's python/test/conftest.py adds `--device`; the plugin (loaded first, by -p) added it
    too, so the checkout's conftest failed with "option names {'--device'} already added" and
    upstream_tests.sh ran no test. The checkout's option wins, and the script's `--device cpu` reaches it."""
    (tmp_path / "test" / "unit").mkdir(parents=True)
    (tmp_path / "test" / "conftest.py").write_text(
        'import pytest\n\n\ndef pytest_addoption(parser):\n    parser.addoption("--device", default="cuda")\n'
    )
    (tmp_path / "test" / "unit" / "test_dev.py").write_text(
        "import pytest\n\n\n@pytest.mark.interpreter\ndef test_device(device):\n    assert device == 'cpu'\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "upstream_plugin", "--rootdir", str(tmp_path),
         "-q", "-m", "interpreter", "--device", "cpu", "test/unit/test_dev.py"],
        cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(SCRIPTS)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


def test_upstream_tests_imports_the_installed_triton_not_the_checkouts_source_tree(tmp_path):
    """`python -m pytest` run inside DIR put DIR first on sys.path, so `import triton` found the checkout's
    python/triton/ sources (no compiled libtriton: "cannot import name 'getenv' from 'triton._C.libtriton'")
    instead of the installed triton==3.9.0, and every test module failed to import."""
    (tmp_path / "triton").mkdir()
    (tmp_path / "triton" / "__init__.py").write_text("raise ImportError('the checkout source tree was imported')\n")
    (tmp_path / "test" / "unit" / "language").mkdir(parents=True)
    (tmp_path / "test" / "unit" / "language" / "test_imp.py").write_text(
        "import pytest\nimport triton\n\n\n@pytest.mark.interpreter\ndef test_imp():\n    assert triton.jit\n"
    )
    proc = subprocess.run(
        ["bash", str(SCRIPTS / "upstream_tests.sh"), str(tmp_path), "test/unit/language/test_imp.py"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert "checkout source tree was imported" not in proc.stdout + proc.stderr
    assert proc.stdout.count("1 passed") == 2, proc.stdout + proc.stderr

"""The Triton plugin's modules import cleanly in a fresh process, whatever is imported first.

Triton imports `mtia_xdsl.runtime.triton_backend.compiler` and `.driver` while `import triton` runs; a user
who imports one of them before `triton` (say, to catch `LocalStorageOutOfResources`) must not send Triton's
backend discovery into the half-imported module ("Found 0 concrete subclasses of DriverBase").
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "module",
    [
        "mtia_xdsl.runtime.triton_backend.driver",
        "mtia_xdsl.runtime.triton_backend.compiler",
        "mtia_xdsl.runtime.errors",
    ],
)
def test_plugin_module_imports_before_triton(module: str) -> None:
    code = f"import {module}; import triton; print(triton.runtime.driver.active.__class__.__name__)"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "MtiaDriver"

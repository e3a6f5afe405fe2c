"""A torch.compile whose graph Inductor's FX graph cache already holds: the cached output code calls mtia_xdsl's
custom ops (`torch.ops.mtia_xdsl.topk`, ...), which a fresh process has registered before the call even though
no decomposition ran to import their module (mtia_xdsl/runtime/inductor.py `install`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import torch, torch._inductor.config as inductor_config
import mtia_xdsl
inductor_config.cpu_backend = "triton"
inductor_config.compile_threads = 1
x = torch.tensor([[1.0, 0.0, 0.0, 1.0, 3.0], [2.0, -1.0, 5.0, 5.0, 0.5]])
got = torch.compile(lambda x: torch.topk(x, 2))(x)
expected = torch.topk(x, 2)
assert all(torch.equal(g, e) for g, e in zip(got, expected))
print("ok")
"""


def test_a_cached_graph_calling_a_custom_op_runs_in_a_fresh_process(tmp_path: Path) -> None:
    """The first process compiles topk (a cache miss that fills the cache); the second loads the output code from
    the cache and runs it: before, `torch.ops.mtia_xdsl.topk` was an AttributeError there."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"))
    env["TRITON_CACHE_DIR"] = str(tmp_path / "triton")
    for run in ("miss", "hit"):
        proc = subprocess.run(
            [sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, (run, proc.stderr[-3000:])
        assert proc.stdout.strip().endswith("ok")

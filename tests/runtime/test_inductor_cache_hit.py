"""A torch.compile whose graph Inductor's caches already hold, in a fresh process.

The cached output code calls mtia_xdsl's custom ops (`torch.ops.mtia_xdsl.topk`, ...), which a fresh process has
registered before the call even though no decomposition ran to import their module (mtia_xdsl/runtime/inductor.py
`install`); and it is replayed only by the same mtia_xdsl: the caches' keys hold its source digest
(`compiler.package_hash`, through the uuid of its post-grad custom pass)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import json, sys
import torch, torch._inductor.config as inductor_config
import mtia_xdsl
from mtia_xdsl.runtime.triton_backend import compiler
compiler.package_hash = lambda: sys.argv[1]  # what an edit of mtia_xdsl's sources changes
inductor_config.cpu_backend = "triton"
inductor_config.compile_threads = 1
from torch._dynamo.utils import counters
x = torch.tensor([[1.0, 0.0, 0.0, 1.0, 3.0], [2.0, -1.0, 5.0, 5.0, 0.5]])
got = torch.compile(lambda x: torch.topk(x, 2))(x)
expected = torch.topk(x, 2)
assert all(torch.equal(g, e) for g, e in zip(got, expected))
hits = counters["inductor"]["fxgraph_cache_hit"] + counters["aot_autograd"]["autograd_cache_hit"]
print(json.dumps({"hits": hits, "aot_misses": counters["aot_autograd"]["autograd_cache_miss"]}))
"""


def test_a_cached_graph_runs_in_a_fresh_process_of_the_same_mtia_xdsl_only(tmp_path: Path) -> None:
    """The first process compiles topk (a cache miss that fills the cache); the second, with the same mtia_xdsl
    digest, loads the output code from the cache and runs it (before, `torch.ops.mtia_xdsl.topk` was an
    AttributeError there); the third, with another digest (an updated mtia_xdsl), compiles afresh. Before, it hit
    AOTAutograd's cache, whose key did not hold the digest, and replayed the old output code (a fix of a GEMM
    prologue's masking was not seen: the output stayed NaN)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"))
    env["TRITON_CACHE_DIR"] = str(tmp_path / "triton")
    counts = []
    for digest in ("mtia_xdsl-old", "mtia_xdsl-old", "mtia_xdsl-new"):
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, digest], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, (digest, proc.stderr[-3000:])
        counts.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert [c["hits"] > 0 for c in counts] == [False, True, False], counts
    assert counts[2]["aot_misses"] == 1, counts

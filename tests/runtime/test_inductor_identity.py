"""Run-to-run identity of torch.compile on MTIA: two fresh processes (other string-hash seeds, other cache
directories) generate the same kernels and simulate the same time (mtia_xdsl/runtime/inductor.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mtia_xdsl.runtime.inductor import normalized_output_code

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import hashlib, json
import torch, torch._inductor.config as inductor_config
from torch._inductor.utils import run_and_get_code
import mtia_xdsl
from mtia_xdsl.runtime.inductor import normalized_output_code
inductor_config.cpu_backend = "triton"
inductor_config.compile_threads = 1
inductor_config.force_disable_caches = True
inductor_config.test_configs.max_mm_configs = 2  # a GEMM template autotuned between two configurations
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Embedding(100, 32), torch.nn.LayerNorm(32), torch.nn.Linear(32, 16), torch.nn.ReLU())
ids = torch.randint(0, 100, (16,))
out, code = run_and_get_code(torch.compile(model), ids)
assert torch.allclose(out, model(ids), atol=1e-5)
text = normalized_output_code("\\n".join(code))
print(json.dumps({"code": text, "us": mtia_xdsl.last_report().time_us}))
"""


def test_two_fresh_processes_generate_the_same_kernels(tmp_path: Path) -> None:
    procs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
        env["TRITON_CACHE_DIR"] = str(tmp_path / f"triton{seed}")
        env["TORCHINDUCTOR_CACHE_DIR"] = str(tmp_path / f"inductor{seed}")
        procs.append(
            subprocess.Popen([sys.executable, "-c", CHILD], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        )
    results = []
    for proc in procs:
        stdout, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0
        results.append(json.loads(stdout.strip().splitlines()[-1]))
    first, second = results
    assert "triton_tem_" in first["code"] and "triton_per_" in first["code"]  # a GEMM template and a reduction
    assert first["code"] == second["code"]
    assert first["us"] == second["us"]


def test_normalized_code_drops_what_names_the_compile_not_the_kernels() -> None:
    """The AOT ID, the kernel path and Triton's backend hash (a digest of mtia_xdsl's sources) differ
    between compiles of the same kernels; a kernel's configuration does not."""
    meta = "inductor_meta={{'kernel_name': 'k', 'backend_hash': '{}', 'config_args': {{'BLOCK_M': {}}}}}"
    one = f"# AOT ID: ['0_inference']\n# kernel path: /tmp/a/x.py\n{meta.format('DE5C0810', 16)}"
    two = f"# AOT ID: ['7_inference']\n# kernel path: /tmp/b/y.py\n{meta.format('E08ACD3E', 16)}"
    other = meta.format("E08ACD3E", 32)
    assert normalized_output_code(one) == normalized_output_code(two)
    assert normalized_output_code(two) != normalized_output_code(other)

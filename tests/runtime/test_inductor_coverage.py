"""benchmarks/inductor.py's coverage table names why an SDPA call stays a host call (the attention kernel's rule).

The script sets Inductor's configuration when imported, so it runs in a fresh process.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("bench", "benchmarks/inductor.py")
bench = importlib.util.module_from_spec(spec)
sys.modules["bench"] = bench
spec.loader.exec_module(bench)
bench._install_recording()

class Masked(torch.nn.Module):
    def forward(self, x):
        q = x.view(2, 16, 4, 16).transpose(1, 2)
        mask = torch.zeros(16, 16)
        mask[:, -3:] = float("-inf")
        return torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask)

res = bench.run_case(bench.Case("masked", "llm", Masked, lambda: (torch.randn(2, 16, 64),)))
print("correct", res.correct)
for cause, n in sorted(res.causes.items()):
    print("cause", n, cause)
"""


def test_coverage_names_the_attention_mask():
    """SDPA with an attention mask: the model is correct, and its one host call's cause is the rule's reason
    (`inductor_attention.unsupported`), not "no lowering to Triton"."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    lines = [line for line in out.stdout.splitlines() if line.startswith(("correct", "cause"))]
    assert lines == [
        "correct True",
        "cause 1 host call (not on MTIA): torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default: "
        "not taken by mtia_xdsl's kernel: attn_mask given (mtia_xdsl's attention kernel takes is_causal only)",
    ], out.stdout


TOPK_CHILD = (
    CHILD.split("class Masked")[0]
    + """
class Router(torch.nn.Module):
    def forward(self, x):
        return x.softmax(-1).topk(2, dim=-1)

res = bench.run_case(bench.Case("router", "llm", Router, lambda: (torch.randn(4, 12),)))
print("correct", res.correct)
for cause, n in sorted(res.causes.items()):
    print("cause", n, cause)
"""
)


def test_coverage_names_the_long_topk_rows():
    """topk of rows of 12 (longer than inductor_topk.MAX_N): correct, and its one host call's cause is the rule's
    reason (`inductor_topk.unsupported`)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", TOPK_CHILD], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith(("correct", "cause"))]
    assert lines == [
        "correct True",
        "cause 1 host call (not on MTIA): torch.ops.aten.topk.default: not taken by mtia_xdsl's kernel: "
        "k=2 of rows of 12 (rows of 1 to 9, 1 <= k <= the row)",
    ], out.stdout

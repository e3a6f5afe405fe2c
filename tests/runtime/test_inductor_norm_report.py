"""benchmarks/inductor.py --norm-templates: its table from synthetic results (no compile), the norm+activation
pairs it counts in an FX graph, and the norm rules' reasons it records.

The script sets Inductor's configuration when imported, so it runs in a fresh process.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import importlib.util, json, sys, types, torch
spec = importlib.util.spec_from_file_location("bench", "benchmarks/inductor.py")
bench = importlib.util.module_from_spec(spec)
sys.modules["bench"] = bench
spec.loader.exec_module(bench)
F = torch.nn.functional

def result(name, us, launches, **kw):
    return bench.Result(name, "norm", sim_us=us, kernel_times=[["k"]] * launches, **kw)

# A rule of a norm module, recorded as _install_recording does for _RULES; a rule or module that does not exist
# is skipped.
fake = types.ModuleType("mtia_xdsl.runtime.fake_norms")
fake.unsupported_layer_norm = lambda x, shape, w, b: "over 2 dims" if len(shape) > 1 else None
sys.modules["mtia_xdsl.runtime.fake_norms"] = fake
bench._record_unsupported("fake_norms", "unsupported_layer_norm", "native_layer_norm")
bench._record_unsupported("fake_norms", "no_such_rule", "native_layer_norm")
bench._RULES.append(("no_such_module", "unsupported", "relu"))
bench._install_recording()
fake.unsupported_layer_norm(None, [64], None, None)
fake.unsupported_layer_norm(None, [8, 16], None, None)
fell = {op: sorted(r) for op, r in bench.REC.unsupported.items()}

runs = [
    bench.NormRun("fused", 2, 2, result("fused", 2.5, 4, correct=True), result("fused", 3.0, 6, correct=True)),
    bench.NormRun("slower", 2, 2, result("slower", 2.1, 2, correct=True), result("slower", 2.0, 3, correct=True)),
    bench.NormRun("no_pair", 1, 0, result("no_pair", 1.0, 2, correct=True), result("no_pair", 1.0, 2, correct=True)),
    bench.NormRun("fallback", 1, 1, result("fallback", 1.0, 2, correct=True, unsupported=fell),
                  result("fallback", 1.0, 2, correct=True)),
    bench.NormRun("broken", 1, 1, result("broken", 0.0, 0, error="RuntimeError: boom"), result("broken", 1.0, 2)),
]
table = bench.norm_report(runs, markdown=True)

class Block(torch.nn.Module):
    def forward(self, x, w):
        a = F.gelu(F.layer_norm(x, [8]) * 2.0 + x)  # a pair through a scale and a residual add
        b = F.linear(F.layer_norm(a, [8]), w).relu()  # a matmul between: not a pair
        return torch.nn.functional.silu(torch.rms_norm(b, [8]))  # a pair

print(json.dumps({"table": table, "fell": fell, "pairs": bench.norm_activation_pairs(torch.fx.symbolic_trace(Block()).graph)}))
"""


def test_norm_report_from_synthetic_results():
    """Launches removed = stock launches - template launches; "never slower" is templates us <= stock us; a model
    meets the pair goal when removed >= its norm+activation pairs ("-" with none; a model with a fallback is not
    held to it); a failed run counts in neither; a rule's reason (recorded by the wrapper `_record_unsupported`
    installs; a missing rule or module is skipped) is the fallback column; pairs as `norm_activation_pairs`
    counts them: (norms, pairs) of a graph with a pair through a scale and an add, a norm into a matmul, and a
    pair of rms_norm and SiLU."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.splitlines()[-1])
    assert got["fell"] == {"aten.native_layer_norm.default": ["over 2 dims"]}
    assert got["pairs"] == [3, 2]
    table, summary = got["table"].split("\n\n")
    rows = {
        cells[0]: cells[1:] for cells in ([c.strip() for c in line.split("|")[1:-1]] for line in table.splitlines())
    }
    assert rows["model"][9:12] == ["never slower", ">= 1 per pair", "fell back to stock lowering"]
    assert rows["fused"] == ["2", "2", "yes/yes", "0/0", "3.00", "2.50", "6", "4", "2", "yes", "yes", "-"]
    assert rows["slower"][8:] == ["1", "NO", "NO", "-"]
    assert rows["no_pair"][8:] == ["0", "yes", "-", "-"]
    assert rows["fallback"][8:] == ["0", "yes", "fell back", "native_layer_norm: over 2 dims"]
    assert rows["broken"][-1] == "templates failed: RuntimeError: boom"
    assert summary == (
        "norm templates: 4/5 models ran both ways; 6.60 us per call of them against 7.00 us with stock lowering; "
        "never slower: 3/4 (slower: slower); at least one launch removed per norm+activation pair: 1/2 "
        "(short: slower); fell back to stock lowering: fallback"
    )

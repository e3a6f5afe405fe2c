"""Index forms Inductor generates that the memory-access analysis leaves on the scalar core (issue 14's item 2),
found outside benchmarks/inductor.py's suite, and taken since. Each was a strict xfail until the analysis took it
(a DMA share below 100 % and simulated times 15-20x those of the same model without the form); a form found next
starts here as a strict xfail.

The script sets Inductor's configuration when imported, so each case runs in a fresh process.
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

class Projection(torch.nn.Module):  # attention's output projection of the heads' [B, H, T, d] output
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(64, 64)

    def forward(self, y):
        return self.linear(y.transpose(1, 2).reshape(2, 32, 64))

class Permuted(torch.nn.Module):  # a 5-D tensor's permuted copy fused into the GEMM's A load: a rank-5 box
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(64, 16)

    def forward(self, y):
        return self.linear(y.permute(0, 2, 1, 4, 3).reshape(16, 64))

class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(24, 40), torch.nn.Linear(40, 8)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))

if sys.argv[1].startswith("dynamic"):
    torch._dynamo.config.assume_static_by_default = False
cases = {
    "projection": bench.Case("projection", "llm", Projection, lambda: (torch.randn(2, 4, 32, 16),)),
    "dynamic": bench.Case("dynamic", "mlp", Mlp, lambda: (torch.randn(40, 24),)),
    "permuted": bench.Case("permuted", "llm", Permuted, lambda: (torch.randn(2, 4, 8, 4, 4),)),
    "dynamic_llama16": bench.Case("dynamic_llama16", "llm", bench.LlamaBlock, lambda: (torch.randn(16, 16, 64),)),
}
with torch.no_grad():
    res = bench.run_case(cases[sys.argv[1]])
print("correct", res.correct, "dma", res.dma, "of", res.accesses)
for kernel, cause in res.kernel_causes:
    print("not DMA", kernel, cause)
"""


def _run(case: str, **env_vars: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **env_vars)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, case], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout
    line = next(line for line in out.splitlines() if line.startswith("correct"))
    _, correct, _, dma, _, accesses = line.split()
    assert correct == "True", out
    assert dma == accesses, out


def test_fused_transposing_prologue_is_dma():
    """Inductor fuses the transposing copy into the GEMM template's A load (a prologue):
    `in_ptr + (x9 + 16*x11 + 512*x10 + 2048*x12)` over `xindex = idx_n + 64*idx_m` (digits of `rm % M` and
    of the K offset). It was an element gather on the scalar core (25.8 us, where the same model with
    `prologue_fusion = False` takes 1.25 us); split by place value (memory_access.py `place_value_split`) it
    is one 3-D DMA box viewed as the tile."""
    _run("projection")


def test_dynamic_rows_mod_m_is_dma():
    """`torch.compile(dynamic=True)` (M symbolic, `ks0`): the template's `scf.if` on the run-time
    `M >= BLOCK_M` yields `tl.multiple_of(rm % M, ..)` or plain `rm % M`; either is the remainder, an index
    tile whose rows an indexed DMA gathers (`_index_source`): 1.86 us, where it was a scalar-core gather of
    26 us (the static model: 1.74 us).
    """
    _run("dynamic")


def test_rank_5_prologue_box_runs_as_cpp():
    """Inductor fuses `y.permute(0, 2, 1, 4, 3).reshape(16, 64)` (y [2, 4, 8, 4, 4]) into the GEMM template's A
    load: five digits of y, a box of rank 5 where the DMA takes 4 (MachineConfig.dma_max_rank). Moved in memory
    order and permuted by the MLU (memory_access.py `fit_rank`) it is DMA and the emitted C++ runs it; it was
    `the C++ emitter (mtia-cpp) does not handle a DMA block of rank 5 (at most 4)`."""
    _run("permuted", MTIA_EXECUTOR="cpp")


def test_dynamic_split_by_runtime_scalar_is_dma():
    """`torch.compile(dynamic=True)` of llama_mlp at batch 16 (= its sequence length, so Inductor gives both one
    symbol): the residual add reads `in_ptr1 + (x0 + 64*x1*((ks1*ks1)//ks1))` with `x0 = xindex % ks0`,
    `x1 = xindex // ks0` and ks0, ks1 run-time scalars. It was an element gather on the scalar core (6.77 us of
    the call's 15.33 us, benchmarks/inductor_dynamic.py). Over aligned runs of 16 lanes (ks0 a multiple of 16
    by its hint) the offset steps by 1: an indexed DMA of 16-element rows whose index tile is the offset at
    each row's start (memory_access.py `_row_runs_access`)."""
    _run("dynamic_llama16")

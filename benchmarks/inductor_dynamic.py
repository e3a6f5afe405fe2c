"""torch.compile with dynamic shapes on MTIA: small models of benchmarks/inductor.py's kind at several batch sizes.

`torch._dynamo.config.assume_static_by_default = False` (as `torch.compile(dynamic=True)`) makes the batch
dimension symbolic (`ks0` in Inductor's kernels), so the GEMM template's row count M is a run-time argument
and its choice between the hinted and the plain `rm % M` is a run-time `scf.if`. Each model is compiled and
run at each batch size through `run_case` of benchmarks/inductor.py; per run the script prints whether the
result matches eager, the DMA share of the launched kernels' loads and stores (see inductor.py's DMA %), the
simulated time of one call (us) and the hashes of the kernels' sources / of the launches' simulated times.

Example: python3 benchmarks/inductor_dynamic.py [--models mlp,llama_mlp] [--batches 5,16,40]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import torch

_spec = importlib.util.spec_from_file_location("inductor_bench", Path(__file__).with_name("inductor.py"))
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
sys.modules["inductor_bench"] = bench
_spec.loader.exec_module(bench)


class Mlp(torch.nn.Module):
    """Two linear layers (24 -> 40 -> 8) with a ReLU: two GEMM templates with the bias and ReLU fused."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = torch.nn.Linear(24, 40), torch.nn.Linear(40, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.relu(self.a(x)))


MODELS = {
    "mlp": (Mlp, lambda b: (torch.randn(b, 24),)),
    "llama_mlp": (bench.LlamaBlock, lambda b: (torch.randn(b, 16, 64),)),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of: " + ",".join(MODELS))
    parser.add_argument("--batches", default="5,16,40", help="comma-separated batch sizes (not 0 or 1)")
    args = parser.parse_args(argv)
    torch._dynamo.config.assume_static_by_default = False
    bench._install_recording()
    for name in args.models.split(","):
        make, inputs = MODELS[name]
        for batch in (int(b) for b in args.batches.split(",")):
            case = bench.Case(f"{name}[{batch}]", "dynamic", make, lambda inputs=inputs, batch=batch: inputs(batch))
            with torch.no_grad():
                r = bench.run_case(case)
            dma = 100.0 * r.dma / r.accesses if r.accesses else 0.0
            error = f"  error {r.error}" if r.error else ""
            print(
                f"{case.name:16} correct {r.correct!s:5}  DMA {r.dma}/{r.accesses} = {dma:5.1f} %  "
                f"sim {r.sim_us:7.2f} us  hash {r.kernels_hash}/{r.times_hash}{error}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

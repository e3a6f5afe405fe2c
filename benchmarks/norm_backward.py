"""A LayerNorm training step through torch.compile on MTIA: mtia_xdsl's norm-backward kernel against Inductor's
stock decomposition of `aten.native_layer_norm_backward` (mtia_xdsl/runtime/inductor_norm_backward.py).

Per model, shape [rows, N] and setting (`inductor_config.norm_templates` on / off) the script compiles a training
step with our backend, `ln`: `LayerNorm(N)(x).pow(2).sum().backward()` (the norm's dy, 2 y, is recomputed from x,
mean and rstd by a pointwise kernel of Inductor's when our op takes the backward, and fused into the stock
backward's first reduction otherwise), `ln_linear`: `Linear(N, N)(LayerNorm(N)(x)).pow(2).sum().backward()`
(dy is the matmul's gradient), runs it once (autotuning), then prints for a second call: the simulated MTIA time
of all its kernel launches (forward and backward; Report.time_us summed, the launches' own overhead not included)
and the launches by kernel name. The forward is Inductor's in both
settings unless mtia_xdsl's forward templates are on main.

Example: PYTHONPATH=$PWD python benchmarks/norm_backward.py [--shapes 256x48,1024x768] [--models ln,ln_linear]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="mtia-norm-bwd-bench-"))

import torch
import torch._inductor.config as torch_inductor_config

from mtia_xdsl.runtime import inductor, inductor_config, toolchain
from mtia_xdsl.runtime.triton_backend.compiler import kernel_name

MODELS = ("ln", "ln_linear")
"""The training steps measured (see the module docstring)."""


def step_time(model: str, rows: int, n: int, on: bool) -> tuple[float, collections.Counter[str]]:
    """(simulated us, launches by kernel name) of the second call of a compiled training step of `model`."""
    from triton.runtime import driver

    torch.manual_seed(0)
    norm = torch.nn.LayerNorm(n)
    if model == "ln_linear":
        norm = torch.nn.Sequential(norm, torch.nn.Linear(n, n))
    x = torch.randn(rows, n, requires_grad=True)

    def step(t: torch.Tensor) -> None:
        norm(t).pow(2).sum().backward()

    torch._dynamo.reset()
    with inductor_config.patch(norm_templates=on):
        compiled = torch.compile(step)
        compiled(x)
        names: collections.Counter[str] = collections.Counter()
        run_kernel = toolchain.run_kernel

        def recording_run(module: Any, *args: Any, **kwargs: Any) -> Any:
            names[kernel_name(module)] += 1
            return run_kernel(module, *args, **kwargs)

        toolchain.run_kernel = recording_run
        try:
            ms = driver.active.simulated_time_ms(lambda: compiled(x))
        finally:
            toolchain.run_kernel = run_kernel
    return (ms or 0.0) * 1000.0, names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="256x48,1024x768", help="comma-separated ROWSxN")
    parser.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, of {', '.join(MODELS)}")
    args = parser.parse_args()
    with torch_inductor_config.patch(cpu_backend="triton", force_disable_caches=True):
        from triton.runtime import driver

        _ = driver.active
        inductor.install()
        print(f"{'model':>10} {'shape':>10} {'templates':>9} {'sim us':>9} {'launches':>8}  kernels")
        for model in args.models.split(","):
            for shape in args.shapes.split(","):
                rows, n = (int(s) for s in shape.split("x"))
                for on in (False, True):
                    us, names = step_time(model, rows, n, on)
                    kernels = ", ".join(f"{k} x{c}" if c > 1 else k for k, c in sorted(names.items()))
                    row = f"{model:>10} {shape:>10} {'on' if on else 'off':>9} {us:9.2f} {sum(names.values()):8d}"
                    print(f"{row}  {kernels}", flush=True)


if __name__ == "__main__":
    main()

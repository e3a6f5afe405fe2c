"""demo-opt: the embedding compiler's `xdsl-opt`-style driver, built on mtia_xdsl's public API only.

It registers mtia_xdsl's dialects next to its own (`demo`), mtia_xdsl's passes next to its own
(`demo-lower-square`), and a target `demo-run` that runs the lowered program on the MTIA-2i machine model.
`--demo-pipeline` runs mtia_xdsl's default pipeline with `demo-lower-square` inserted before
`convert-tt-to-mtia`.

Example (from the repository root):
  python -m examples.embedding.driver examples/embedding/square.mlir --demo-pipeline -t "demo-run{n=5000}"
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.utils.target import Target
from xdsl.xdsl_opt_main import xDSLOptMain

import mtia_xdsl
from mtia_xdsl.dialects import register_dialects
from mtia_xdsl.errors import DiagnosticException, KernelRuntimeError
from mtia_xdsl.passes import pipeline_steps, register_passes


def pipeline() -> str:
    """mtia_xdsl's compile pipeline with `demo-lower-square` spliced in before `convert-tt-to-mtia`."""
    steps = pipeline_steps({"num_stages": 2})
    steps.insert(steps.index("convert-tt-to-mtia"), "demo-lower-square")
    return ",".join(steps)


def _demo_pass() -> type[ModulePass]:
    from examples.embedding.passes import DemoLowerSquarePass

    return DemoLowerSquarePass


@dataclass(frozen=True)
class DemoRunTarget(Target):
    """Run the module's kernel on the machine model: every pointer argument gets `n` float32 values
    0, 1, ..., n-1 (numpy), the scalar argument is `n`, the grid is ceil(n / block); print the report
    and the sum of each array."""

    name = "demo-run"
    n: int = 4096
    block: int = 1024

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        kernel = next(op for op in module.walk() if op.name == "tt.func")
        params = kernel.regions[0].blocks[0].args
        args: list[object] = [np.arange(self.n, dtype=np.float32) if "ptr" in str(p.type) else self.n for p in params]
        run = mtia_xdsl.run_module(module, -(-self.n // self.block), args)
        output.write(run.format() + "\n")
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                output.write(f"arg {i}: sum = {float(a.astype(np.float64).sum()):.6g}\n")


class DemoOptMain(xDSLOptMain):
    """xdsl-opt with mtia_xdsl's dialects and passes, the `demo` dialect and pass, and `demo-run`."""

    def register_all_dialects(self) -> None:
        register_dialects(self.ctx)  # tt, ttg, mtia, tensor-capable arith, and xDSL's other dialects

        def demo() -> Dialect:  # a lazy factory, as xDSL's registry takes
            from examples.embedding.dialect import Demo

            return Demo

        self.ctx.register_dialect("demo", demo)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        register_passes(self)
        self.register_pass("demo-lower-square", _demo_pass)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        self.available_targets["demo-run"] = lambda: DemoRunTarget

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument("--demo-pipeline", action="store_true", help="run the demo compile pipeline")

    def setup_pipeline(self) -> None:
        if self.args.demo_pipeline:
            self.args.passes = pipeline()
        super().setup_pipeline()


def main(argv: Sequence[str] | None = None) -> None:
    """Run demo-opt; diagnostics and model errors print as `file:line:col: error: ...`, exit status 1."""
    try:
        DemoOptMain(args=argv).run()
    except (DiagnosticException, KernelRuntimeError) as e:
        print(e)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()

"""examples/embedding/: an out-of-tree compiler on mtia_xdsl's public API, through Python and its driver."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

import mtia_xdsl
from examples.embedding.dialect import Demo
from examples.embedding.driver import main, pipeline
from examples.embedding.passes import DemoLowerSquarePass
from mtia_xdsl.dialects import register_dialects
from mtia_xdsl.errors import DiagnosticException
from mtia_xdsl.frontend import parse_ttir
from mtia_xdsl.passes import run_pipeline

SQUARE = "examples/embedding/square.mlir"


def _module():
    ctx = register_dialects(Context())
    ctx.load_dialect(Demo)
    with open(SQUARE) as f:
        return parse_ttir(f.read(), ctx, SQUARE), ctx


def test_own_pass_between_ours_then_run_on_the_model() -> None:
    module, ctx = _module()
    spec = pipeline()
    steps = spec.split(",")
    at = steps.index("demo-lower-square")
    assert steps[at - 1] == "mtia-set-target{chip=mtia2i}" and steps[at + 1] == "convert-tt-to-mtia"
    run_pipeline(module, spec, extra={"demo-lower-square": lambda: DemoLowerSquarePass}, ctx=ctx)
    assert not any(op.name.startswith("demo.") for op in module.walk())
    x = np.linspace(-2, 2, 3000, dtype=np.float32)
    y = np.ones(3000, np.float32)
    out = np.zeros(3000, np.float32)
    run = mtia_xdsl.run_module(module, 3, [x, y, out, 3000])
    assert np.array_equal(out, x * x + y) and run.report.total_cycles > 0


def test_without_its_pass_the_foreign_op_is_refused() -> None:
    module, ctx = _module()
    with pytest.raises(DiagnosticException, match=r"demo\.square"):
        run_pipeline(module, pipeline().replace("demo-lower-square,", ""), ctx=ctx)


def test_driver_runs_on_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    main([SQUARE, "--demo-pipeline", "-t", "demo-run{n=2048}"])
    out = capsys.readouterr().out
    expected = sum(float(i) * i for i in range(2048)) + sum(range(2048))
    assert "add_kernel on mtia2i" in out and f"arg 2: sum = {expected:.6g}" in out

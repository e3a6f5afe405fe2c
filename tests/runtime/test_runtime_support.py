"""Test doubles (no tests here) for the frontend, pipeline and machine, so the runtime is testable alone.

`build_tt_module` returns a func.func named after the kernel (with the constexprs as an attribute),
`lower` returns it unchanged, and `run_kernel` computes `out[:n] = x[:n] + y[:n]` on the flat tensors
it receives and reports a time inversely proportional to the BLOCK constexpr.
"""

from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64


@dataclass
class FakeReport:
    total_cycles: int
    time_us: float

    def format(self) -> str:
        return f"{self.total_cycles} cycles"


@dataclass
class FakeResult:
    report: FakeReport


@dataclass
class FakeToolchain:
    """Records every call; `calls` lists (stage, details) tuples."""

    calls: list[tuple[str, Any]] = field(default_factory=list)

    def build_tt_module(
        self, fn: Any, signature: dict[str, str], constexprs: Any, attrs: Any = None, options: Any = None
    ) -> ModuleOp:
        self.calls.append(("build", (fn.__name__, dict(signature), dict(constexprs or {}), options)))
        block = next((v for k, v in (constexprs or {}).items() if isinstance(v, int)), 1)
        op = func.FuncOp(fn.__name__, ((), ()))
        op.body.block.add_op(func.ReturnOp())
        op.attributes["test.block"] = IntegerAttr(int(block), i64)
        return ModuleOp([op])

    def lower(self, module: ModuleOp, options: Any, original: ModuleOp | None = None) -> ModuleOp:
        self.calls.append(("lower", options))
        return module

    def run_kernel(self, module: ModuleOp, grid: tuple[int, int, int], args: list[Any], options: Any) -> Any:
        self.calls.append(("run", (grid, args, options)))
        fn = next(iter(module.body.ops))
        block = fn.attributes["test.block"].value.data  # type: ignore[union-attr]
        x, y, out, n = args
        out[:n] = x[:n] + y[:n]
        return FakeResult(FakeReport(total_cycles=1000 // block, time_us=1000.0 / block))


def install(monkeypatch: Any) -> FakeToolchain:
    """Replace the runtime's toolchain with a FakeToolchain for one test; return it."""
    from mtia_xdsl.runtime import toolchain

    fake = FakeToolchain()
    monkeypatch.setattr(toolchain, "build_tt_module", fake.build_tt_module)
    monkeypatch.setattr(toolchain, "lower", fake.lower)
    monkeypatch.setattr(toolchain, "run_kernel", fake.run_kernel)
    return fake

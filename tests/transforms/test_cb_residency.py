"""One rule for "this value lives in a CB" (transforms/analysis/cb_residency.py): after convert-tt-to-mtia,
no scalar float op left to the scalar core reads a value mtia-cb-bufferize will place in a CB."""

from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.ir import Operation

from mtia_xdsl.dialects import mtia, tt
from mtia_xdsl.frontend.pyfile import module_from_python_file
from mtia_xdsl.transforms import get_all_passes
from mtia_xdsl.transforms.analysis.cb_residency import cb_resident_values
from mtia_xdsl.transforms.convert_tt_to_mtia import ConvertTtToMtiaPass

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CARRIED = ROOT / "tests/filecheck/transforms/convert-tt-to-mtia-carried.mlir"


def _lowered(name: str) -> list[tt.FuncOp]:
    module = module_from_python_file(str(EXAMPLES / name))
    passes = get_all_passes()
    for pass_name in ("tt-inline", "tt-lift-early-returns", "tt-rewrite-tensor-descriptor-to-pointer"):
        passes[pass_name]()().apply(Context(), module)
    ConvertTtToMtiaPass().apply(Context(), module)
    return [f for f in module.ops if isinstance(f, tt.FuncOp)]


def _carried_cases() -> list[str]:
    """The kernels of the FileCheck test of carried scalars (a for, an if and a while), as text."""
    return [case for case in CARRIED.read_text().split("// -----") if "tt.func" in case]


def _lowered_text(text: str) -> list[tt.FuncOp]:
    from xdsl.parser import Parser

    from mtia_xdsl.dialects import make_context

    module = Parser(make_context(), text).parse_module()
    ConvertTtToMtiaPass().apply(Context(), module)
    return [f for f in module.walk() if isinstance(f, tt.FuncOp)]


def _scalar_core_float_ops(func: Operation) -> list[Operation]:
    """arith/math ops on floats outside engine command bodies (what the scalar core would run)."""
    from xdsl.dialects.builtin import AnyFloat

    return [
        op
        for op in func.walk()
        if op.name.startswith(("arith.", "math."))
        and not isinstance(op.parent_op(), mtia.EngineComputeOp)
        and any(isinstance(v.type, AnyFloat) for v in (*op.operands, *op.results))
    ]


@pytest.mark.parametrize("name", ["softmax.py", "layer_norm.py", "flash_attention.py", "sliding_window.py"])
def test_no_scalar_core_float_op_reads_a_cb_value(name: str) -> None:
    for func in _lowered(name):
        resident = cb_resident_values(func)
        assert any(isinstance(op, mtia.ENGINE_OPS) for op in func.walk())  # the kernel was lowered
        wrong = [op for op in _scalar_core_float_ops(func) if any(v in resident for v in op.operands)]
        assert not wrong, f"{name}: scalar-core float ops read CB values: {[op.name for op in wrong]}"


@pytest.mark.parametrize("case", range(3))
def test_carried_scalars_fed_by_engines_stay_on_engines(case: int) -> None:
    """A for iter_arg fed by its yield, an if result fed by its else branch, scf.while arguments."""
    (func,) = _lowered_text(_carried_cases()[case])
    resident = cb_resident_values(func)
    carried = [v for op in func.walk() for r in op.regions for b in r.blocks for v in b.args if v in resident]
    carried += [r for op in func.walk() if op.regions for r in op.results if r in resident]
    assert carried  # the case carries a value in a CB
    wrong = [op for op in _scalar_core_float_ops(func) if any(v in resident for v in op.operands)]
    assert not wrong, [op.name for op in wrong]

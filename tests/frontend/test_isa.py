"""mtia_xdsl.utils.isa (and xdsl_speed's cached SSAValue test): the cached tests answer as `isinstance` on every
op, value and type of lowered kernels, for the class tuples and unions the passes test against."""

import pytest
from test_frontend_conformance import CASES
from xdsl.dialects import scf
from xdsl.dialects.builtin import AnyFloat, TensorType
from xdsl.ir import SSAValue

import mtia_xdsl
from mtia_xdsl.dialects import mtia, tt
from mtia_xdsl.utils.isa import isa
from mtia_xdsl.utils.xdsl_speed import _is_value

_CLASSES = (
    mtia.ENGINE_OPS,
    (*mtia.ENGINE_OPS, mtia.ScalarStoreOp),
    scf.ForOp | scf.IfOp | scf.WhileOp,
    mtia.EngineComputeOp,
    (mtia.SeComputeOp, mtia.VecComputeOp),
    TensorType | tt.PointerType,
    AnyFloat,
    SSAValue,
)


@pytest.mark.parametrize("name", ["layer_norm", "if_and_while"])
def test_isa_is_isinstance_on_a_lowered_kernel(name: str) -> None:
    fn, signature, constexprs = CASES[name]
    program = mtia_xdsl.compile(fn, signature, constexprs).fixed.program
    ops = list(program.walk())
    values = [v for op in ops for v in (*op.operands, *op.results)]
    objects = [*ops, *values, *(v.type for v in values)]
    assert any(isinstance(o, mtia.ENGINE_OPS) for o in objects) and any(isinstance(o, _CLASSES[2]) for o in objects)
    for classes in _CLASSES:
        assert [isa(o, classes) for o in objects] == [isinstance(o, classes) for o in objects]
    assert [_is_value(o) for o in objects] == [isinstance(o, SSAValue) for o in objects]

"""mtia_xdsl.utils.xdsl_speed: the fast IRDL op builder gives what xDSL's own builder gives, errors included."""

from collections.abc import Iterator

import pytest
from test_frontend_conformance import CASES
from xdsl.dialects import arith, cf, scf
from xdsl.dialects.builtin import IndexType, f32, i32
from xdsl.ir import Block, Operation, Region
from xdsl.irdl import operations as irdl_operations

import mtia_xdsl
from mtia_xdsl.dialects import make_context, mtia
from mtia_xdsl.utils import xdsl_speed


@pytest.fixture
def xdsl_builder() -> Iterator[None]:
    """Build ops with xDSL's own `irdl_op_init` for the test's duration."""
    make_context()  # installs the fast builder, as any compile does
    assert irdl_operations.irdl_op_init is xdsl_speed.irdl_op_init
    irdl_operations.irdl_op_init = xdsl_speed.XDSL_IRDL_OP_INIT
    try:
        yield
    finally:
        xdsl_speed.install()


def _texts(name: str) -> tuple[str, str]:
    fn, signature, constexprs = CASES[name]
    kernel = mtia_xdsl.compile(fn, signature, constexprs)
    return kernel.asm["ttir"], kernel.asm["mtia"]


@pytest.mark.parametrize("name", ["matmul", "if_and_while"])
def test_compiled_kernels_are_the_same_with_either_builder(name: str, request: pytest.FixtureRequest) -> None:
    fast = _texts(name)
    request.getfixturevalue("xdsl_builder")
    assert _texts(name) == fast


def _ops() -> list[object]:
    """A few ops built through every path of the fast builder (segment sizes, variadics, regions)."""
    block = Block(arg_types=[f32, f32, IndexType()])
    a, b, i = block.args
    body = Region(Block([mtia.YieldOp(a)], arg_types=[f32]))
    return [
        arith.AddfOp(a, b),
        mtia.SeComputeOp([a], [f32], body),
        scf.ForOp(i, i, i, [a], Region(Block(arg_types=[IndexType(), f32]))),
        arith.ConstantOp.from_int_and_width(3, i32),
    ]


def test_ops_are_the_same_with_either_builder(request: pytest.FixtureRequest) -> None:
    fast = [(str(op), dict(op.properties), dict(op.attributes)) for op in _ops()]
    request.getfixturevalue("xdsl_builder")
    assert [(str(op), dict(op.properties), dict(op.attributes)) for op in _ops()] == fast


def _error(build: object) -> str:
    with pytest.raises(ValueError, match=r"builder|Expected") as info:
        build()  # type: ignore[operator]
    return str(info.value)


def test_bad_arguments_raise_xdsl_errors() -> None:
    block = Block(arg_types=[f32, f32])
    a, b = block.args
    bad = [
        lambda: arith.AddfOp.build(operands=[a, None], result_types=[f32]),
        lambda: arith.AddfOp.build(operands=[a, [a, b]], result_types=[f32]),
        lambda: arith.AddfOp.build(operands=[a], result_types=[f32]),
        lambda: arith.AddfOp.build(operands=[a, b], result_types=[None]),
    ]
    make_context()
    fast = [_error(build) for build in bad]
    irdl_operations.irdl_op_init = xdsl_speed.XDSL_IRDL_OP_INIT
    try:
        assert [_error(build) for build in bad] == fast
    finally:
        xdsl_speed.install()


def _state(op: Operation) -> dict[str, object]:
    """The op's instance fields: operands and successors by identity, uses and results by index and type."""
    state: dict[str, object] = {k: type(v) for k, v in vars(op).items()}
    state["operands"] = [id(v) for v in op.operands]
    uses = op._operand_uses  # pyright: ignore[reportPrivateUsage]
    state["uses"] = [(u.operation is op, u.index, u in list(v.uses)) for v, u in zip(op.operands, uses, strict=True)]
    state["results"] = [(r.index, r.type, r.op is op, r.first_use, r.name_hint) for r in op.results]
    state["successors"] = [id(b) for b in op.successors]
    state["regions"] = [r.parent is op for r in op.regions]
    state["properties"], state["attributes"] = dict(op.properties), dict(op.attributes)
    return state


def test_fast_init_sets_what_operation_init_sets(request: pytest.FixtureRequest) -> None:
    """`init_operation` (the fast builder's end) leaves each op with the fields `Operation.__init__` sets."""
    block = Block(arg_types=[f32, f32])
    a, b = block.args
    target = Block()
    fast = [arith.AddfOp(a, b), cf.BranchOp(target, a), mtia.SeComputeOp([a], [f32], Region(Block(arg_types=[f32])))]
    request.getfixturevalue("xdsl_builder")
    slow = [arith.AddfOp(a, b), cf.BranchOp(target, a), mtia.SeComputeOp([a], [f32], Region(Block(arg_types=[f32])))]
    for x, y in zip(fast, slow, strict=True):
        assert _state(x) == _state(y)
    assert [u.operation for u in a.uses] == [*reversed(slow), *reversed(fast)]  # latest use first, as xDSL

"""The fast IRDL builder (mtia_xdsl.utils.xdsl_speed) builds a user's own xDSL ops, registered next to our
dialects, exactly as xDSL's builder does: every definition kind (single, optional, variadic operands, results,
regions and successors), segment sizes as properties and as attributes, SameVariadic* options, property and
attribute defaults, and the errors of bad arguments."""

import inspect
from collections.abc import Callable

from xdsl.dialects.builtin import IntegerAttr, StringAttr, f32, i32
from xdsl.ir import Block, Operation, Region
from xdsl.irdl import (
    AttrSizedOperandSegments,
    AttrSizedRegionSegments,
    AttrSizedResultSegments,
    AttrSizedSuccessorSegments,
    IRDLOperation,
    SameVariadicOperandSize,
    attr_def,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    opt_prop_def,
    opt_region_def,
    opt_result_def,
    opt_successor_def,
    prop_def,
    region_def,
    result_def,
    successor_def,
    var_operand_def,
    var_region_def,
    var_result_def,
    var_successor_def,
)
from xdsl.irdl import operations as irdl_operations

from mtia_xdsl.dialects import make_context
from mtia_xdsl.utils import xdsl_speed


@irdl_op_definition
class MixedOp(IRDLOperation):
    name = "user.mixed"
    a = operand_def()
    b = opt_operand_def()
    c = var_operand_def()
    r = result_def()
    s = opt_result_def()
    t = var_result_def()
    body = region_def()
    extra = opt_region_def()
    more = var_region_def()
    p = prop_def(IntegerAttr, default_value=IntegerAttr(7, i32))
    q = opt_prop_def(StringAttr)
    x = attr_def(StringAttr, default_value=StringAttr("dflt"))
    y = opt_attr_def(StringAttr)
    irdl_options = (
        AttrSizedOperandSegments(as_property=True),
        AttrSizedResultSegments(),
        AttrSizedRegionSegments(as_property=True),
    )


@irdl_op_definition
class BranchyOp(IRDLOperation):
    name = "user.branchy"
    first = successor_def()
    maybe = opt_successor_def()
    rest = var_successor_def()
    irdl_options = (AttrSizedSuccessorSegments(),)


@irdl_op_definition
class SameOp(IRDLOperation):
    name = "user.same"
    u = var_operand_def()
    v = var_operand_def()
    irdl_options = (SameVariadicOperandSize(),)


def _cases() -> list[Callable[[], Operation]]:
    blk = Block(arg_types=[f32, f32, i32])
    a, b, n = blk.args
    producer = MixedOp.build(operands=[a, None, []], result_types=[f32, None, []], regions=[Region(), None, []])
    targets = [Block(), Block(), Block()]
    return [
        lambda: MixedOp.build(operands=[a, None, None], result_types=[f32, None, []], regions=[Region(), None, []]),
        lambda: MixedOp.build(
            operands=[[a], [b], (a, b, n)],
            result_types=[f32, [i32], [f32, f32]],
            regions=[Region(Block()), Region(), [Region(), Region()]],
            properties={"q": StringAttr("q"), "p": None},
            attributes={"y": StringAttr("y"), "x": None},
        ),
        lambda: MixedOp.build(
            operands=[producer, None, [producer]], result_types=[f32, None, []], regions=[Region(), None, []]
        ),
        lambda: MixedOp.build(operands=[a, b, []], result_types=[f32, i32, f32], regions=[[Block()], None, []]),
        lambda: BranchyOp.build(successors=[targets[0], None, []]),
        lambda: BranchyOp.build(successors=[[targets[0]], [targets[1]], targets[1:]]),
        lambda: SameOp.build(operands=[[a, b], [a, n]]),
        # bad arguments: xDSL's errors
        lambda: MixedOp.build(operands=[None, None, []], result_types=[f32, None, []], regions=[Region(), None, []]),
        lambda: MixedOp.build(operands=[a, [a, b], []], result_types=[f32, None, []], regions=[Region(), None, []]),
        lambda: MixedOp.build(operands=[a, None, []], result_types=[f32, None, None], regions=[Region(), None, []]),
        lambda: MixedOp.build(operands=[a, None, []], result_types=[f32, None, []], regions=[None, None, []]),
        lambda: MixedOp.build(operands=[a, None], result_types=[f32, None, []], regions=[Region(), None, []]),
        lambda: BranchyOp.build(successors=[None, None, []]),
        lambda: SameOp.build(operands=[[a, b], [a]]),
    ]


def _outcome(build: Callable[[], Operation]) -> tuple[str, ...]:
    try:
        op = build()
    except (ValueError, TypeError) as e:  # what xDSL's builder raises for bad arguments
        return ("error", type(e).__name__, str(e))
    return (
        str(op),
        repr(sorted(op.properties.items())),
        repr(sorted(op.attributes.items())),
        repr([len(r.blocks) for r in op.regions]),
        repr([op.successors.index(s) for s in op.successors]),
        repr([str(r.type) for r in op.results]),
    )


def test_user_ops_build_as_with_xdsls_builder() -> None:
    make_context()  # installs the fast builder, as any compile does
    assert irdl_operations.irdl_op_init is xdsl_speed.irdl_op_init
    fast = [_outcome(build) for build in _cases()]
    irdl_operations.irdl_op_init = xdsl_speed.XDSL_IRDL_OP_INIT
    try:
        theirs = [_outcome(build) for build in _cases()]
    finally:
        xdsl_speed.install()
    assert sum(o[0] == "error" for o in theirs) == 7
    for i, (ours, reference) in enumerate(zip(fast, theirs, strict=True)):
        assert ours == reference, f"case {i}"


def test_the_fast_builder_takes_xdsls_parameters() -> None:
    def parameters(function):
        return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]

    assert parameters(xdsl_speed.irdl_op_init) == parameters(xdsl_speed.XDSL_IRDL_OP_INIT)
    assert xdsl_speed.install() and irdl_operations.irdl_op_init is xdsl_speed.irdl_op_init


def test_an_xdsl_builder_taking_other_parameters_keeps_its_own(monkeypatch) -> None:
    def changed(self, op_def, *, operands, result_types, properties, attributes, successors, regions, location=None):
        """An xDSL builder with a parameter the fast path does not know."""

    monkeypatch.setattr(xdsl_speed, "XDSL_IRDL_OP_INIT", changed)
    monkeypatch.setattr(irdl_operations, "irdl_op_init", changed)
    assert not xdsl_speed.install()
    assert irdl_operations.irdl_op_init is changed

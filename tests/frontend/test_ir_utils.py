"""mtia_xdsl.utils.walk and mtia_xdsl.utils.clone give what xDSL's `walk()` and `clone()` give."""

import pytest
from test_frontend_conformance import CASES
from xdsl.dialects import arith, cf, func
from xdsl.dialects.builtin import ModuleOp, i32
from xdsl.ir import Block, Operation, Region, SSAValue

import mtia_xdsl
from mtia_xdsl.utils.clone import clone_op
from mtia_xdsl.utils.walk import block_ops_of, ops_of


def _modules(name: str) -> list[ModuleOp]:
    """The tt module and the buffer-level program of conformance kernel `name`."""
    fn, signature, constexprs = CASES[name]
    kernel = mtia_xdsl.compile(fn, signature, constexprs)
    return [kernel.fixed.asm._modules["ttir"], kernel.fixed.program]


def _uses(root: Operation) -> list[list[list[tuple[int, int]]]]:
    """Per op in pre-order, per value it defines (results, then its blocks' arguments): the value's use list
    as (pre-order index of the user, operand index), in use-list order."""
    index = {op: i for i, op in enumerate(root.walk())}

    def uses(value: SSAValue) -> list[tuple[int, int]]:
        return [(index.get(u.operation, -1), u.index) for u in value.uses]

    return [
        [uses(v) for v in op.results] + [uses(a) for r in op.regions for b in r.blocks for a in b.args]
        for op in root.walk()
    ]


@pytest.mark.parametrize("name", ["matmul", "if_and_while"])
def test_walk_and_clone_match_xdsl(name: str) -> None:
    for module in _modules(name):
        assert ops_of(module) == list(module.walk())
        assert block_ops_of(module.body.block) == list(module.body.block.walk())
        ours, xdsl = clone_op(module), module.clone()
        assert str(ours) == str(xdsl) == str(module)
        assert _uses(ours) == _uses(xdsl)  # use lists in the same order (not always the original's)
        assert not set(ops_of(ours)) & set(ops_of(module))  # a copy, sharing no op


def test_clone_of_a_use_before_its_definition_matches_xdsl() -> None:
    """A block using a value of a later block (a forward use in block order) gets the same operands and use
    lists as with `Operation.clone`, which sets every op's operands after copying them all."""
    later = Block()
    first = Block()
    one = arith.ConstantOp.from_int_and_width(1, i32)
    add = arith.AddiOp(one.result, one.result)
    first.add_ops([arith.AddiOp(add.result, one.result), cf.BranchOp(later)])
    later.add_ops([one, add, func.ReturnOp()])
    f = func.FuncOp("f", ((), ()), Region([first, later]))
    ours, xdsl = clone_op(f), f.clone()
    assert str(ours) == str(xdsl)
    assert _uses(ours) == _uses(xdsl)
    assert ours.body.blocks[0].first_op.operands[0].owner is ours.body.blocks[1].ops.first.next_op  # type: ignore[union-attr]

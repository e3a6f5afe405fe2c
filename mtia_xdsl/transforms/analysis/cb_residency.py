"""Which values live in a circular buffer (CB): the one rule convert-tt-to-mtia and mtia-cb-bufferize share.

A value lives in a CB (is an engine value, "resident") when

- an engine op makes it (`mtia.ENGINE_OPS`: DMA, gather/scatter, atomics, DPE, RE, SE/VEC/MLU commands), or
- a region op carries it and it is a tensor, or a value it is carried from or to lives in a CB:
  - `scf.for`: the iter_arg and the result, when the init or the yielded value does;
  - `scf.if`: the result, when the value either branch yields does;
  - `scf.while`: the before-region argument, when the init or the after region's yield does; the
    after-region argument and the result, when the value `scf.condition` forwards does.

The rule is a least fixed point (a carried value may feed another loop's init). mtia-cb-bufferize gives
each class of carried values one CB; convert-tt-to-mtia keeps scalar float math on such values on the SE
(the scalar core would have to read them back from the CB).

Pure: reads the IR, returns sets of values.
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from mtia_xdsl.dialects import mtia
from mtia_xdsl.utils.isa import isa
from mtia_xdsl.utils.walk import ops_of

_REGION_OPS = (scf.ForOp, scf.IfOp, scf.WhileOp)


def carried_into_cb(op: Operation, resident: set[SSAValue]) -> list[SSAValue]:
    """The values region op `op` (scf.for/if/while; others: none) carries that live in a CB, given that
    the values of `resident` do (one step of the rule in the module docstring)."""
    if isinstance(op, scf.ForOp):
        return _carried_by_for(op, resident)
    if isinstance(op, scf.IfOp):
        return _carried_by_if(op, resident)
    if isinstance(op, scf.WhileOp):
        return _carried_by_while(op, resident)
    return []


def _carried_by_for(op: scf.ForOp, resident: set[SSAValue]) -> list[SSAValue]:
    yield_op = op.body.block.last_op
    assert yield_op is not None
    out: list[SSAValue] = []
    for i, (init, arg, res) in enumerate(zip(op.iter_args, op.body.block.args[1:], op.results, strict=True)):
        if isinstance(arg.type, TensorType) or init in resident or yield_op.operands[i] in resident:
            out += [arg, res]
    return out


def _carried_by_if(op: scf.IfOp, resident: set[SSAValue]) -> list[SSAValue]:
    yield_ops = [r.block.last_op for r in op.regions if r.blocks and r.block.last_op is not None]
    return [
        res
        for i, res in enumerate(op.results)
        if isinstance(res.type, TensorType) or any(y.operands[i] in resident for y in yield_ops)
    ]


def _carried_by_while(op: scf.WhileOp, resident: set[SSAValue]) -> list[SSAValue]:
    before, after = op.before_region.block, op.after_region.block
    cond, yield_op = before.last_op, after.last_op
    assert cond is not None and yield_op is not None
    out: list[SSAValue] = []
    for i, (init, arg) in enumerate(zip(op.arguments, before.args, strict=True)):
        if isinstance(arg.type, TensorType) or init in resident or yield_op.operands[i] in resident:
            out.append(arg)
    for j, (arg, res) in enumerate(zip(after.args, op.res, strict=True)):
        if isinstance(arg.type, TensorType) or cond.operands[1 + j] in resident:
            out += [arg, res]
    return out


def cb_resident_values(func: Operation) -> set[SSAValue]:
    """Return the values of `func` that live in CBs: engine results and the values carried from them (the
    least fixed point of the rule in the module docstring)."""
    resident: set[SSAValue] = set()
    region_ops: list[Operation] = []
    for op in ops_of(func):
        if isa(op, mtia.ENGINE_OPS):
            resident.update(op.results)
        elif isa(op, _REGION_OPS):
            region_ops.append(op)
    changed = True
    while changed:
        changed = False
        for op in region_ops:
            for value in carried_into_cb(op, resident):
                if value not in resident:
                    resident.add(value)
                    changed = True
    return resident

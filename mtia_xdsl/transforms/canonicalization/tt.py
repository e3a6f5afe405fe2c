"""inline_and_clean: inline helper calls and clean the frontend's raw tt module as upstream's inliner does.

Upstream's `inline` pass (MLIR's inliner with the canonicalizer as its simplification pipeline) visits
the call graph bottom-up; for each function it canonicalizes, inlines the calls in it, and
canonicalizes again. We do the same, with a small canonicalizer that behaves like MLIR's greedy driver
for what Triton kernels contain:

- constants are uniqued per function and hoisted to the front of the entry block (MLIR's
  OperationFolder: a constant already at the front, or right after a hoisted one, stays; others move to
  the front; constants made by folding are inserted at the front);
- folds: casts of splat constants, integer arithmetic of scalar constants, same-type `arith.bitcast`,
  `tt.splat`/`tt.broadcast`/`tt.expand_dims`/`tt.reshape` of a splat constant, `tt.addptr` of a zero
  offset, `x + 0`, `x * 1`;
- trivially dead ops are erased (which drops the code generator's overflow checks and dead constants).

Matching MLIR's order matters: upstream's TTIR passes keep a contiguous block of constants as it is, so
our module, printed generic and run through them, is textually identical to upstream's TTIR
(tests/test_frontend_conformance.py).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith as xarith
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.traits import ConstantLike
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from mtia_xdsl.dialects import arith, tt

# ---------------------------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------------------------


def _const_value(v: SSAValue) -> Attribute | None:
    """Return the IntegerAttr/FloatAttr/DenseIntOrFPElementsAttr of a constant-defined value."""
    op = v.owner
    if isinstance(op, xarith.ConstantOp):
        return op.value
    return None


def _splat_scalar(attr: Attribute | None) -> float | int | None:
    """Return the scalar of a scalar constant or of a splat dense constant."""
    if isinstance(attr, IntegerAttr | FloatAttr):
        return attr.value.data
    if isinstance(attr, DenseIntOrFPElementsAttr) and attr.is_splat():
        return attr.get_values()[0]
    return None


def _make_attr(value: float | int, ty: Attribute) -> Attribute:
    elem = ty.element_type if isinstance(ty, TensorType) else ty
    if isinstance(elem, IntegerType):
        width = elem.width.data
        v = int(value) & ((1 << width) - 1)
        if width > 1 and v >= 1 << (width - 1):
            v -= 1 << width
        scalar: Attribute = IntegerAttr(v, elem)
        value = v
    else:
        scalar = FloatAttr(float(value), elem)  # type: ignore[arg-type]
    if isinstance(ty, TensorType):
        return DenseIntOrFPElementsAttr.from_list(ty, [value] * ty.element_count())  # type: ignore[arg-type]
    return scalar


class _Folder:
    """Per-function constant uniquing and hoisting, as MLIR's OperationFolder does it."""

    def __init__(self, func: tt.FuncOp):
        self.entry: Block = func.body.blocks[0]
        self.known: dict[tuple[Attribute, Attribute], xarith.ConstantOp] = {}
        self.owned: set[int] = set()

    def register(self, op: xarith.ConstantOp) -> bool:
        """Unique or hoist `op`; return False if it was replaced by an existing equal constant."""
        key = (op.value, op.result.type)
        existing = self.known.get(key)
        if existing is not None and existing is not op:
            Rewriter.replace_op(op, [], [existing.result])
            return False
        front = self.entry.first_op
        prev = op.prev_op
        if op.parent_block() is not self.entry or (op is not front and (prev is None or id(prev) not in self.owned)):
            op.detach()
            self.entry.insert_op_before(op, self.entry.first_op)  # type: ignore[arg-type]
        self.known[key] = op
        self.owned.add(id(op))
        return True

    def constant(self, value: Attribute, ty: Attribute, like: Operation) -> SSAValue:
        """Return the uniqued constant `value : ty`, creating it at the front of the entry block."""
        key = (value, ty)
        existing = self.known.get(key)
        if existing is not None:
            # MLIR re-hoists the constant a fold returns: it ends up in front of the others
            existing.detach()
            self.entry.insert_op_before(existing, self.entry.first_op)  # type: ignore[arg-type]
            return existing.result
        op = xarith.ConstantOp(value, ty)
        op.location = like.location
        first = self.entry.first_op
        if first is None:
            self.entry.add_op(op)
        else:
            self.entry.insert_op_before(op, first)
        self.known[key] = op
        self.owned.add(id(op))
        return op.result


# ---------------------------------------------------------------------------------------------
# Folds
# ---------------------------------------------------------------------------------------------

_INT_FOLDS = {
    xarith.AddiOp: lambda a, b: a + b,
    xarith.SubiOp: lambda a, b: a - b,
    xarith.MuliOp: lambda a, b: a * b,
    xarith.DivSIOp: lambda a, b: int(a / b) if b else None,
    xarith.RemSIOp: lambda a, b: a - b * int(a / b) if b else None,
    xarith.MaxSIOp: max,
    xarith.MinSIOp: min,
}

_FLOAT_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def _cast_value(value: float | int, src: Attribute, dst: Attribute) -> float | int | None:
    """Return `value` converted from element type `src` to `dst` as upstream's arith folders do."""
    dst_name = str(dst)
    if isinstance(dst, AnyFloat):
        if dst_name in _FLOAT_DTYPES:
            return float(_FLOAT_DTYPES[dst_name](value))
        if dst_name == "bf16":
            bits = int(np.array(value, dtype=np.float32).view(np.uint32))
            bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
            return float(np.array(bits, dtype=np.uint32).view(np.float32))
        return None
    if isinstance(dst, IntegerType) and isinstance(src, IntegerType):
        return int(value)
    return None


def _fold(op: Operation, folder: _Folder) -> list[SSAValue] | None:
    """Return the values replacing `op`'s results, or None if `op` does not fold."""
    if isinstance(op, arith.BitcastOp) and op.input.type == op.result.type:
        value = _const_value(op.input)
        if value is not None:  # MLIR folds a constant operand to an attribute, re-materialized
            return [folder.constant(value, op.result.type, op)]
        return [op.input]
    if isinstance(op, tt.SplatOp | tt.BroadcastOp | tt.ExpandDimsOp | tt.ReshapeOp):
        v = _splat_scalar(_const_value(op.src))
        if v is not None:  # upstream's folders: a reshaped splat constant is a splat constant
            return [folder.constant(_make_attr(v, op.result.type), op.result.type, op)]
    if isinstance(op, tt.AddPtrOp) and _splat_scalar(_const_value(op.offset)) == 0:
        return [op.ptr]
    if isinstance(op, arith.ExtFOp | arith.TruncFOp | arith.SIToFPOp | arith.ExtSIOp | arith.TruncIOp):
        v = _splat_scalar(_const_value(op.input))
        if v is not None:
            src = tt.element_type(op.input.type)
            dst = tt.element_type(op.result.type)
            cv = _cast_value(v, src, dst)
            if cv is not None:
                return [folder.constant(_make_attr(cv, op.result.type), op.result.type, op)]
    fn = _INT_FOLDS.get(type(op))  # type: ignore[arg-type]
    if fn is not None and len(op.operands) == 2:
        lhs, rhs = op.operands
        a, b = _const_value(lhs), _const_value(rhs)
        if isinstance(a, IntegerAttr) and isinstance(b, IntegerAttr):
            r = fn(a.value.data, b.value.data)
            if r is not None:
                ty = op.results[0].type
                return [folder.constant(_make_attr(r, ty), ty, op)]
        identity = 0 if isinstance(op, xarith.AddiOp | xarith.SubiOp) else 1 if isinstance(op, xarith.MuliOp) else None
        if identity is not None and _splat_scalar(b) == identity and not isinstance(b, FloatAttr):
            return [lhs]
    return None


# ---------------------------------------------------------------------------------------------
# The greedy driver
# ---------------------------------------------------------------------------------------------


def _erase(op: Operation) -> None:
    block = op.parent_block()
    if block is not None:
        block.detach_op(op)
    op.erase(safe_erase=False)


def _post_order(region: Region) -> list[Operation]:
    return [op for op in region.walk() if op is not region.parent_op()][::-1][::-1]


def _walk_post_order(op: Operation, out: list[Operation]) -> None:
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                _walk_post_order(child, out)
    out.append(op)


def canonicalize_function(func: tt.FuncOp) -> bool:
    """Run the canonicalizer on one function to a fixed point; return True if anything changed."""
    changed_any = False
    for _ in range(10):
        ops: list[Operation] = []
        for block in func.body.blocks:
            for child in list(block.ops):
                _walk_post_order(child, ops)
        folder = _Folder(func)
        changed = False
        worklist: list[Operation] = []
        for op in ops:
            if isinstance(op, xarith.ConstantOp) and op.parent_block() is not None:
                before = (op.parent_block(), op.prev_op)
                if not folder.register(op) or before != (op.parent_block(), op.prev_op):
                    changed = True
            else:
                worklist.append(op)
        changed |= _process(worklist, folder)
        changed |= _erase_dead_constants(func)
        changed_any |= changed
        if not changed:
            break
    return changed_any


def _process(worklist: list[Operation], folder: _Folder) -> bool:
    changed = False
    erased: set[int] = set()
    for op in worklist:
        if id(op) in erased or op.parent_block() is None:
            continue
        if is_trivially_dead(op):
            _erase(op)
            erased.add(id(op))
            changed = True
            continue
        repl = _fold(op, folder)
        if repl is not None:
            Rewriter.replace_op(op, [], repl)
            erased.add(id(op))
            changed = True
    return changed


def _erase_dead_constants(func: tt.FuncOp) -> bool:
    changed = False
    for op in list(func.walk()):
        if op.has_trait(ConstantLike) and is_trivially_dead(op) and op.parent_block() is not None:
            _erase(op)
            changed = True
    return changed


# ---------------------------------------------------------------------------------------------
# Inlining
# ---------------------------------------------------------------------------------------------


def _functions(module: ModuleOp) -> dict[str, tt.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, tt.FuncOp)}


def _drop_unreachable_blocks(region: Region) -> None:
    """Erase blocks after the entry that no branch targets (the code generator's post-return blocks)."""
    changed = True
    while changed:
        changed = False
        targets = {id(s) for b in region.blocks for op in b.ops for s in op.successors}
        for block in list(region.blocks)[1:]:
            if id(block) not in targets:
                for op in reversed(list(block.ops)):
                    _erase(op)
                region.detach_block(block)
                block.erase(safe_erase=False)
                changed = True


def _inlinable(func: tt.FuncOp) -> bool:
    noinline = func.attributes.get("noinline")
    if isinstance(noinline, IntegerAttr) and noinline.value.data:
        return False
    return len(func.body.blocks) == 1 and isinstance(func.body.blocks[0].last_op, tt.ReturnOp)


def _inline_call(call: tt.CallOp, callee: tt.FuncOp) -> None:
    """Clone the callee's single block before `call`, map its arguments, replace the call's results."""
    block: Block = callee.body.blocks[0]
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, call.args, strict=True))
    ret = block.last_op
    assert isinstance(ret, tt.ReturnOp)
    parent = call.parent_block()
    assert parent is not None
    for op in block.ops:
        if op is ret:
            break
        clone = op.clone(value_mapper=mapping)
        parent.insert_op_before(clone, call)
        mapping.update(zip(op.results, clone.results, strict=True))
    Rewriter.replace_op(call, [], [mapping.get(v, v) for v in ret.srcs])


def _call_order(module: ModuleOp) -> list[tt.FuncOp]:
    """Return functions callees-first (post-order over the call graph from each function)."""
    funcs = _functions(module)
    order: list[tt.FuncOp] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen or name not in funcs:
            return
        seen.add(name)
        for op in funcs[name].walk():
            if isinstance(op, tt.CallOp):
                visit(op.callee.string_value())
        order.append(funcs[name])

    for name in funcs:
        visit(name)
    return order


def inline_calls(module: ModuleOp) -> None:
    """Canonicalize, inline and canonicalize each function callees-first; erase unused private functions."""
    funcs = _functions(module)
    for func in funcs.values():
        _drop_unreachable_blocks(func.body)
    for func in _call_order(module):
        if not func.body.blocks:
            continue
        canonicalize_function(func)
        calls = [op for op in func.walk() if isinstance(op, tt.CallOp)]
        inlined = False
        for call in calls:
            callee = funcs.get(call.callee.string_value())
            if callee is not None and callee is not func and _inlinable(callee):
                _inline_call(call, callee)
                inlined = True
        if inlined:
            canonicalize_function(func)
    called = {op.callee.string_value() for op in module.walk() if isinstance(op, tt.CallOp)}
    for name, func in _functions(module).items():
        if func.sym_visibility is not None and func.sym_visibility.data == "private" and name not in called:
            module.body.blocks[0].erase_op(func)


def inline_and_clean(module: ModuleOp) -> ModuleOp:
    """Inline helper calls, fold constants and remove dead code in `module` (in place); return it.

    Requires: a module from `build_tt_module` (or parsed TTIR).
    """
    inline_calls(module)
    return module


_ = _post_order

"""Folds and constant-chain patterns of upstream's canonicalizer, for the ops Triton kernels contain.

Each rule is MLIR's (arith's folders and canonicalization patterns, Triton's tt folders) restricted to
the cases a kernel produces: scalar or splat constants. `fold_op` returns what MLIR's `Operation::fold`
would: replacement values (an attribute is materialized as a new constant right before the op, where
MLIR's greedy driver puts it), `IN_PLACE` for a commutative operand swap, or None. `rewrite_op` applies
the constant-reassociation patterns (`addi(addi(x, c0), c1) -> addi(x, c0 + c1)` and kin), which create a
constant and an op before the root as MLIR's declarative rewrites do.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects import arith as xarith
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import Commutative

from mtia_xdsl.dialects import arith, tt
from mtia_xdsl.semantics import scalar as semantics
from mtia_xdsl.semantics.scalar import round_bf16
from mtia_xdsl.utils.isa import isa

Materialize = Callable[[Attribute, Attribute, Operation], SSAValue]
"""(value, type, op) -> a new constant inserted right before op."""

IN_PLACE: list[SSAValue] = []
"""fold_op's answer when the op was changed in place (operands swapped)."""


# ---------------------------------------------------------------------------------------------
# Constant values
# ---------------------------------------------------------------------------------------------


def const_attr(v: SSAValue) -> Attribute | None:
    """Return the value attribute of an `arith.constant`-defined value, else None."""
    op = v.owner
    return op.value if isa(op, xarith.ConstantOp) else None


_SCALAR_ATTRS = IntegerAttr | FloatAttr


def splat_scalar(attr: Attribute | None) -> float | int | None:
    """Return the scalar of a scalar constant or of a splat dense constant."""
    if isa(attr, _SCALAR_ATTRS):
        return attr.value.data  # type: ignore[union-attr]
    if isa(attr, DenseIntOrFPElementsAttr) and attr.is_splat():  # type: ignore[union-attr]
        return attr.get_values()[0]
    return None


def make_attr(value: float | int, ty: Attribute) -> Attribute:
    """Return the constant attribute of `value` (wrapped to the integer width) for type `ty`."""
    elem = ty.element_type if isinstance(ty, TensorType) else ty
    if isinstance(elem, IntegerType):
        value = _signed(int(value), elem.width.data)
        scalar: Attribute = IntegerAttr(value, elem)
    else:
        scalar = FloatAttr(float(value), elem)  # type: ignore[arg-type]
    if isinstance(ty, TensorType):
        return DenseIntOrFPElementsAttr.from_list(ty, [value])  # type: ignore[arg-type]  # a splat
    return scalar


def _width(ty: Attribute) -> int | None:
    elem = tt.element_type(ty)
    return elem.width.data if isinstance(elem, IntegerType) else None


def _signed(v: int, width: int) -> int:
    v &= (1 << width) - 1
    return v - (1 << width) if width > 1 and v >= 1 << (width - 1) else v


def _unsigned(v: int, width: int) -> int:
    return v & ((1 << width) - 1)


def _int_splat(v: SSAValue) -> int | None:
    """Return the integer of a scalar or splat integer constant `v`, else None."""
    s = splat_scalar(const_attr(v))
    return int(s) if isinstance(s, int) and _width(v.type) is not None else None


# ---------------------------------------------------------------------------------------------
# Casts of constants
# ---------------------------------------------------------------------------------------------

_FLOAT_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def _to_float(value: float, dst: Attribute) -> float | None:
    name = str(dst)
    if name in _FLOAT_DTYPES:
        return float(_FLOAT_DTYPES[name](value))
    if name == "bf16":  # round to nearest even on the f32 bits
        return float(round_bf16(np.float32(value)))
    return None


def _cast_value(op: Operation, value: float | int) -> float | int | None:
    """Return `value` converted as the cast `op` does (arith's folders), or None if it does not fold."""
    src, dst = tt.element_type(op.operands[0].type), tt.element_type(op.results[0].type)
    src_w, dst_w = _width(op.operands[0].type), _width(op.results[0].type)
    if isinstance(op, arith.ExtSIOp | arith.TruncIOp) and src_w is not None:
        return _signed(int(value), src_w)
    if isinstance(op, arith.ExtUIOp) and src_w is not None:
        return _unsigned(int(value), src_w)
    if isinstance(op, arith.SIToFPOp) and src_w is not None:
        return _to_float(float(_signed(int(value), src_w)), dst)
    if isinstance(op, arith.UIToFPOp) and src_w is not None:
        return _to_float(float(_unsigned(int(value), src_w)), dst)
    if isinstance(op, arith.ExtFOp | arith.TruncFOp) and isinstance(src, AnyFloat):
        return _to_float(float(value), dst)
    if isinstance(op, arith.FPToSIOp | arith.FPToUIOp) and dst_w is not None and np.isfinite(value):
        v = int(value)
        lo, hi = (
            (-(1 << (dst_w - 1)), (1 << (dst_w - 1)) - 1) if isinstance(op, arith.FPToSIOp) else (0, (1 << dst_w) - 1)
        )
        return v if lo <= v <= hi else None
    return None


_CASTS = (
    arith.ExtFOp,
    arith.TruncFOp,
    arith.SIToFPOp,
    arith.UIToFPOp,
    arith.FPToSIOp,
    arith.FPToUIOp,
    arith.ExtSIOp,
    arith.ExtUIOp,
    arith.TruncIOp,
)


def _fold_cast(op: Operation) -> Attribute | SSAValue | None:
    v = splat_scalar(const_attr(op.operands[0]))
    if v is not None:
        cv = _cast_value(op, v)
        return None if cv is None else make_attr(cv, op.results[0].type)
    if isinstance(op, arith.TruncIOp):  # trunci(ext(x)) -> x
        inner = op.input.owner
        if isinstance(inner, arith.ExtSIOp | arith.ExtUIOp) and inner.input.type == op.result.type:
            return inner.input
    return None


# ---------------------------------------------------------------------------------------------
# Integer binary ops
# ---------------------------------------------------------------------------------------------


def _eval(name: str) -> Callable[[int, int, int], int]:
    return lambda a, b, w: semantics.eval_int(name, a, b, w)


def _shift(name: str) -> Callable[[int, int, int], int | None]:
    """A shift folds only by less than the width (MLIR leaves a larger shift, poison, alone)."""
    return lambda a, b, w: semantics.eval_int(name, a, b, w) if _unsigned(b, w) < w else None


def _nonzero_divisor(name: str, signed: bool) -> Callable[[int, int, int], int | None]:
    """A division folds only by a nonzero divisor (MLIR leaves a division by zero, UB, alone)."""

    def fold(a: int, b: int, w: int) -> int | None:
        divisor = _signed(b, w) if signed else _unsigned(b, w)
        return semantics.eval_int(name, a, b, w) if divisor else None

    return fold


_INT_EVAL: dict[type[Operation], Callable[[int, int, int], int | None]] = {
    xarith.AddiOp: _eval("arith.addi"),
    xarith.SubiOp: _eval("arith.subi"),
    xarith.MuliOp: _eval("arith.muli"),
    xarith.AndIOp: _eval("arith.andi"),
    xarith.OrIOp: _eval("arith.ori"),
    xarith.XOrIOp: _eval("arith.xori"),
    xarith.ShLIOp: _shift("arith.shli"),
    xarith.ShRUIOp: _shift("arith.shrui"),
    xarith.ShRSIOp: _shift("arith.shrsi"),
    xarith.DivSIOp: _nonzero_divisor("arith.divsi", True),
    xarith.RemSIOp: _nonzero_divisor("arith.remsi", True),
    xarith.DivUIOp: _nonzero_divisor("arith.divui", False),
    xarith.RemUIOp: _nonzero_divisor("arith.remui", False),
    xarith.MaxSIOp: _eval("arith.maxsi"),
    xarith.MinSIOp: _eval("arith.minsi"),
    xarith.MaxUIOp: _eval("arith.maxui"),
    xarith.MinUIOp: _eval("arith.minui"),
}
"""What each integer op folds to: `semantics.scalar`'s value where MLIR folds it (make_attr wraps it)."""


def _identity(op: Operation, lhs: SSAValue, rhs: SSAValue, w: int) -> Attribute | SSAValue | None:
    """Folds with one known operand (or equal operands), as arith's folders do."""
    b = _int_splat(rhs)
    ty = op.results[0].type
    if lhs is rhs:
        if isinstance(op, xarith.SubiOp | xarith.XOrIOp):
            return make_attr(0, ty)
        if isinstance(op, xarith.AndIOp | xarith.OrIOp | xarith.MaxSIOp | xarith.MinSIOp):
            return lhs
        if isinstance(op, xarith.MaxUIOp | xarith.MinUIOp):
            return lhs
    if b is None:
        return None
    zero, ones = b == 0, _unsigned(b, w) == (1 << w) - 1
    if zero and isinstance(op, xarith.MuliOp | xarith.AndIOp):
        return rhs
    if zero and isinstance(op, xarith.AddiOp | xarith.SubiOp | xarith.OrIOp | xarith.XOrIOp):
        return lhs
    if zero and isinstance(op, xarith.ShLIOp | xarith.ShRUIOp | xarith.ShRSIOp):
        return lhs
    if b == 1 and isinstance(op, xarith.MuliOp | xarith.DivSIOp | xarith.DivUIOp):
        return lhs
    if b == 1 and isinstance(op, xarith.RemSIOp | xarith.RemUIOp):
        return make_attr(0, ty)
    if ones and isinstance(op, xarith.AndIOp):
        return lhs
    if ones and isinstance(op, xarith.OrIOp):
        return rhs
    return None


def _fold_int_binary(op: Operation) -> Attribute | SSAValue | None:
    fn = _INT_EVAL.get(type(op))
    w = _width(op.results[0].type)
    if fn is None or w is None or len(op.operands) != 2:
        return None
    lhs, rhs = op.operands
    a, b = _int_splat(lhs), _int_splat(rhs)
    if a is not None and b is not None:
        r = fn(a, b, w)
        return None if r is None else make_attr(r, op.results[0].type)
    return _identity(op, lhs, rhs, w)


_COMMUTATIVE: dict[type[Operation], bool] = {}
"""Whether an op class has the Commutative trait; filled as classes are met (classes are immutable)."""


def _swap_commutative(op: Operation) -> bool:
    """Move a constant lhs of a commutative op to the right (MLIR's commutative trait fold)."""
    kind = type(op)
    commutative = _COMMUTATIVE.get(kind)
    if commutative is None:
        commutative = _COMMUTATIVE[kind] = kind.has_trait(Commutative)
    if not commutative or len(op.operands) != 2:
        return False
    lhs, rhs = op.operands
    if const_attr(lhs) is None or const_attr(rhs) is not None:
        return False
    op.operands = [rhs, lhs]
    return True


# ---------------------------------------------------------------------------------------------
# tt ops
# ---------------------------------------------------------------------------------------------


_SPLAT_PRESERVING = tt.SplatOp | tt.BroadcastOp | tt.ExpandDimsOp | tt.ReshapeOp
"""The tt ops whose fold of a splat constant operand is a splat constant."""


def _fold_tt(op: Operation) -> Attribute | SSAValue | None:
    if isa(op, _SPLAT_PRESERVING):
        v = splat_scalar(const_attr(op.src))
        if v is not None:  # upstream's folders: a reshaped splat constant is a splat constant
            return make_attr(v, op.result.type)
    if isa(op, tt.AddPtrOp) and splat_scalar(const_attr(op.offset)) == 0:
        return op.ptr
    return None


def _fold_bitcast(op: Operation) -> Attribute | SSAValue | None:
    if op.operands[0].type != op.results[0].type:
        return None
    value = const_attr(op.operands[0])  # MLIR folds a constant operand to an attribute, re-materialized
    return op.operands[0] if value is None else value


_FOLDERS: dict[type[Operation], Callable[[Operation], Attribute | SSAValue | None]] = {
    arith.BitcastOp: _fold_bitcast,
    **dict.fromkeys(_CASTS, _fold_cast),
    **dict.fromkeys((tt.SplatOp, tt.BroadcastOp, tt.ExpandDimsOp, tt.ReshapeOp, tt.AddPtrOp), _fold_tt),
    **dict.fromkeys(_INT_EVAL, _fold_int_binary),
}
"""The fold of each op class that has one (dispatch by exact class)."""


def fold_op(op: Operation, materialize: Materialize) -> list[SSAValue] | None:
    """Return the values replacing `op`'s single result, IN_PLACE if `op` changed in place, else None."""
    fold = _FOLDERS.get(type(op))
    folded = fold(op) if fold is not None and len(op.results) == 1 else None
    if folded is None:
        return IN_PLACE if _swap_commutative(op) else None
    if isa(folded, SSAValue):
        return [folded]  # type: ignore[list-item]
    return [materialize(folded, op.results[0].type, op)]  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Constant reassociation (arith canonicalization patterns; scalar constants only, as upstream's)
# ---------------------------------------------------------------------------------------------


def _inner_const(v: SSAValue, kinds: tuple[type[Operation], ...]) -> tuple[Operation, int | None, int | None] | None:
    """Return (op, lhs constant, rhs constant) if `v` is made by one of `kinds`, else None."""
    inner = v.owner
    if not isinstance(inner, kinds):
        return None
    return inner, _scalar_int(inner.operands[0]), _scalar_int(inner.operands[1])


def _scalar_int(v: SSAValue) -> int | None:
    attr = const_attr(v)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def rewrite_op(op: Operation, materialize: Materialize) -> list[SSAValue] | None:
    """Apply one reassociation pattern rooted at `op`; return the replacing values or None.

    addi(addi(x, c0), c1) -> addi(x, c0 + c1); addi(subi(x, c0), c1) -> addi(x, c1 - c0);
    addi(subi(c0, x), c1) -> subi(c0 + c1, x); subi(addi(x, c0), c1) -> addi(x, c0 - c1);
    subi(subi(x, c0), c1) -> subi(x, c0 + c1); subi(subi(c0, x), c1) -> subi(c0 - c1, x);
    muli(muli(x, c0), c1) -> muli(x, c0 * c1).
    """
    if type(op) not in (xarith.AddiOp, xarith.SubiOp, xarith.MuliOp):
        return None
    c1 = _scalar_int(op.operands[1])
    kinds = (xarith.MuliOp,) if isinstance(op, xarith.MuliOp) else (xarith.AddiOp, xarith.SubiOp)
    found = _inner_const(op.operands[0], kinds) if c1 is not None else None
    if found is None:
        return None
    inner, l0, r0 = found
    plan = _reassociate(op, inner, l0, r0, c1)  # type: ignore[arg-type]
    if plan is None:
        return None
    new_type, value, x, const_on_left = plan
    c = materialize(make_attr(value, op.results[0].type), op.results[0].type, op)
    new = new_type(c, x) if const_on_left else new_type(x, c)
    new.location = op.location
    block = op.parent_block()
    assert block is not None
    block.insert_op_before(new, op)
    return [new.results[0]]


def _reassociate(
    op: Operation, inner: Operation, l0: int | None, r0: int | None, c1: int
) -> tuple[type[Operation], int, SSAValue, bool] | None:
    """Return (new op class, constant, other operand, constant goes left) for a matching pattern."""
    x_l, x_r = inner.operands
    outer_add, outer_sub = isinstance(op, xarith.AddiOp), isinstance(op, xarith.SubiOp)
    if isinstance(op, xarith.MuliOp):
        return (xarith.MuliOp, r0 * c1, x_l, False) if r0 is not None else None
    if isinstance(inner, xarith.AddiOp) and r0 is not None:
        return (xarith.AddiOp, r0 + c1, x_l, False) if outer_add else (xarith.AddiOp, r0 - c1, x_l, False)
    if isinstance(inner, xarith.SubiOp) and r0 is not None:
        return (xarith.AddiOp, c1 - r0, x_l, False) if outer_add else (xarith.SubiOp, r0 + c1, x_l, False)
    if isinstance(inner, xarith.SubiOp) and l0 is not None:
        return (xarith.SubiOp, l0 + c1, x_r, True) if outer_add else (xarith.SubiOp, l0 - c1, x_r, True)
    _ = outer_sub
    return None

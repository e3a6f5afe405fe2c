"""Memory-access analysis: which tt.load/tt.store are strided blocks a DMA can move.

A tensor of pointers is a *block* when every element is `ptr + offset + sum_d coeffs[d] * i_d` with
`ptr` a scalar pointer, `offset` and `coeffs` scalars (SSA values or constants) and `i_d` the element's
index along dimension d; its mask is a *box* when it is a conjunction of `i_d + b < bound` and
`i_d + b >= lower` conditions, so the valid elements are a range along each dimension: a prefix (the
effective shape) that may skip leading lanes (`starts`, for a block beginning before its tensor). Such accesses become
`mtia.dma_load`/`mtia.dma_store`; anything else falls back to scalar gathers and scatters.

The analysis is symbolic: it returns `Expr` trees over scalar SSA values, which `materialize`
turns into scalar `arith` ops where the DMA is issued. It walks def-use chains iteratively (no
recursion over use-def chains) in block order.

Example: mtia-opt k.mlir -p test-mtia-memory-access
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass

from mtia_xdsl.dialects import mtia, tt
from mtia_xdsl.transforms.arith_ops import arith

# ----------------------------------------------------------------------------------------------
# Symbolic scalar expressions
# ----------------------------------------------------------------------------------------------

Expr = int | SSAValue | tuple  # ("add", a, b) | ("mul", a, b) | ("neg", a) | ("min"/"max", a, ...)


def add(a: Expr, b: Expr) -> Expr:
    """Return a + b, folding constants."""
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if isinstance(a, int) and a == 0:
        return b
    if isinstance(b, int) and b == 0:
        return a
    return ("add", a, b)


def mul(a: Expr, b: Expr) -> Expr:
    """Return a * b, folding constants."""
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if (isinstance(a, int) and a == 0) or (isinstance(b, int) and b == 0):
        return 0
    if isinstance(a, int) and a == 1:
        return b
    if isinstance(b, int) and b == 1:
        return a
    return ("mul", a, b)


def neg(a: Expr) -> Expr:
    """Return -a."""
    return -a if isinstance(a, int) else ("neg", a)


def expr_str(e: Expr, names: dict[SSAValue, str] | None = None) -> str:
    """Render an expression; SSA values by their printed names (`names`), else their name hint."""
    if isinstance(e, int):
        return str(e)
    if isinstance(e, SSAValue):
        if names and e in names:
            return names[e]
        return f"%{e.name_hint}" if e.name_hint else "%?"
    op, *args = e
    if op == "neg":
        return f"-({expr_str(args[0], names)})"
    if op in ("min", "max"):
        return op + "(" + ", ".join(expr_str(x, names) for x in args) + ")"
    if op == "add" and isinstance(args[1], tuple) and args[1][0] == "neg":
        return f"({expr_str(args[0], names)} - {expr_str(args[1][1], names)})"
    sym = "+" if op == "add" else "*"
    return f"({expr_str(args[0], names)} {sym} {expr_str(args[1], names)})"


def printed_names(module: Operation) -> dict[SSAValue, str]:
    """Return the names the printer gives every SSA value of `module` (for readable test output)."""
    from io import StringIO

    from xdsl.printer import Printer

    printer = Printer(stream=StringIO())
    printer.print_op(module)
    return {v: f"%{n}" for v, n in printer._ssa_values.items()}


def leaves(e: Expr) -> list[SSAValue]:
    """Return the SSA values an expression reads."""
    out: list[SSAValue] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, SSAValue):
            out.append(x)
        elif isinstance(x, tuple):
            stack.extend(x[1:])
    return out


# ----------------------------------------------------------------------------------------------
# Forms
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AffineForm:
    """value[i] = ptr + base + sum_d coeffs[d] * i_d; `ptr` is None for integer tensors.

    Units: base and coeffs count elements of the pointee type (for pointers) or are plain integers.
    """

    base: Expr
    coeffs: tuple[Expr, ...]
    ptr: SSAValue | None = None

    @property
    def uniform(self) -> bool:
        """True when every element has the same value (all coefficients zero)."""
        return all(isinstance(c, int) and c == 0 for c in self.coeffs)


@dataclass(frozen=True)
class BoxMask:
    """mask[i] = AND_d (max(lowers[d]) <= i_d < min(bounds[d])); dimensions without either are fully valid."""

    bounds: tuple[tuple[Expr, ...], ...]
    lowers: tuple[tuple[Expr, ...], ...] = ()

    def lower(self, d: int) -> tuple[Expr, ...]:
        return self.lowers[d] if self.lowers else ()


@dataclass(frozen=True)
class BlockAccess:
    """A tt.load/tt.store that a DMA can perform.

    Shapes: `shape` is the block shape (the tensor's shape); `strides` and `bounds` have one entry per
    dimension, `bounds[d]` being the effective extent along d (clamped to [0, shape[d]] by the DMA);
    `starts` (None: all 0) the first valid index along each dimension.
    """

    ptr: SSAValue
    offset: Expr
    strides: tuple[Expr, ...]
    bounds: tuple[Expr, ...]
    shape: tuple[int, ...]
    other: Attribute | None = None  # a scalar FloatAttr/IntegerAttr, or None for 0 / no mask
    starts: tuple[Expr, ...] | None = None


@dataclass
class MemoryAccessInfo:
    """Result of the analysis over one function: forms of values and the block accesses found."""

    forms: dict[SSAValue, AffineForm] = field(default_factory=dict)
    masks: dict[SSAValue, BoxMask] = field(default_factory=dict)
    accesses: dict[Operation, BlockAccess] = field(default_factory=dict)
    fallback_reasons: dict[Operation, str] = field(default_factory=dict)


def _shape(t: Attribute) -> tuple[int, ...]:
    return tuple(t.get_shape()) if isinstance(t, TensorType) else ()


def _splat_int(attr: Attribute) -> int | None:
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    if isinstance(attr, DenseIntOrFPElementsAttr) and isinstance(attr.get_element_type(), IntegerType | IndexType):
        vals = attr.get_values()
        if len(set(vals)) == 1:
            return int(vals[0])
    return None


def splat_scalar_attr(attr: Attribute) -> Attribute | None:
    """Return the scalar attribute of a splat dense constant (or a scalar constant), else None."""
    if isinstance(attr, DenseIntOrFPElementsAttr):
        vals = attr.get_values()
        if len(vals) == 0 or any(v != vals[0] and not (v != v and vals[0] != vals[0]) for v in vals):
            return None
        et = attr.get_element_type()
        if isinstance(et, IntegerType | IndexType):
            return IntegerAttr(int(vals[0]), et)
        return builtin.FloatAttr(float(vals[0]), et)
    if isinstance(attr, IntegerAttr | builtin.FloatAttr):
        return attr
    return None


class _Analyzer:
    """Computes forms for integer/pointer tensors and box masks, op by op in block order."""

    def __init__(self, info: MemoryAccessInfo) -> None:
        self.info = info

    # -- forms -------------------------------------------------------------------------------
    def form_of(self, v: SSAValue) -> AffineForm | None:
        if v in self.info.forms:
            return self.info.forms[v]
        t = v.type
        if not isinstance(t, TensorType):
            if isinstance(t, tt.PointerType):
                return AffineForm(0, (), ptr=v)
            if isinstance(t, IntegerType | IndexType):
                owner = v.owner
                if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
                    return AffineForm(owner.value.value.data, ())
                return AffineForm(v, ())
        return None

    def visit(self, op: Operation) -> None:
        form = self._form_for_op(op)
        if form is not None:
            self.info.forms[op.results[0]] = form
        mask = self._mask_for_op(op)
        if mask is not None:
            self.info.masks[op.results[0]] = mask

    def _form_for_op(self, op: Operation) -> AffineForm | None:
        if len(op.results) != 1 or not isinstance(op.results[0].type, TensorType):
            return None
        rule = _FORM_RULES.get(type(op))
        return rule(self, op, _shape(op.results[0].type)) if rule is not None else None

    def _ints(self, *values: SSAValue) -> list[AffineForm] | None:
        """Forms of integer (non-pointer) operands, or None if any has none."""
        forms = [self.form_of(v) for v in values]
        return None if any(f is None or f.ptr is not None for f in forms) else forms  # type: ignore[return-value]

    def _range(self, op: tt.MakeRangeOp, shape: tuple[int, ...]) -> AffineForm:
        return AffineForm(op.start.value.data, (1,))

    def _constant(self, op: Operation, shape: tuple[int, ...]) -> AffineForm | None:
        c = _splat_int(op.value)  # type: ignore[attr-defined]
        return AffineForm(c, (0,) * len(shape)) if c is not None else None

    def _splat(self, op: tt.SplatOp, shape: tuple[int, ...]) -> AffineForm | None:
        src = self.form_of(op.src)
        return AffineForm(src.base, (0,) * len(shape), ptr=src.ptr) if src is not None and src.uniform else None

    def _sign_extend(self, op: Operation, shape: tuple[int, ...]) -> AffineForm | None:
        return self.form_of(op.operands[0])  # value-preserving: extsi, index_cast

    def _expand_dims(self, op: tt.ExpandDimsOp, shape: tuple[int, ...]) -> AffineForm | None:
        src = self.form_of(op.src)
        if src is None:
            return None
        coeffs = list(src.coeffs)
        coeffs.insert(op.axis.value.data, 0)
        return AffineForm(src.base, tuple(coeffs), ptr=src.ptr)

    def _broadcast(self, op: tt.BroadcastOp, shape: tuple[int, ...]) -> AffineForm | None:
        src = self.form_of(op.src)
        if src is None:
            return None
        pairs = zip(_shape(op.src.type), shape, src.coeffs, strict=True)
        return AffineForm(src.base, tuple(0 if s == 1 and d != 1 else c for s, d, c in pairs), ptr=src.ptr)

    def _add(self, op: Operation, shape: tuple[int, ...]) -> AffineForm | None:
        forms = self._ints(op.operands[0], op.operands[1])
        if forms is None:
            return None
        a, b = forms
        if isinstance(op, arith.SubiOp):
            b = AffineForm(neg(b.base), tuple(neg(c) for c in b.coeffs))
        return AffineForm(add(a.base, b.base), tuple(add(x, y) for x, y in zip(a.coeffs, b.coeffs, strict=True)))

    def _mul(self, op: Operation, shape: tuple[int, ...]) -> AffineForm | None:
        forms = self._ints(op.operands[0], op.operands[1])
        if forms is None:
            return None
        a, b = forms
        if b.uniform:
            a, b = b, a
        if not a.uniform:
            return None  # a product of two index-dependent values is not affine
        return AffineForm(mul(b.base, a.base), tuple(mul(c, a.base) for c in b.coeffs))

    def _addptr(self, op: tt.AddPtrOp, shape: tuple[int, ...]) -> AffineForm | None:
        p, o = self.form_of(op.ptr), self.form_of(op.offset)
        if p is None or o is None or p.ptr is None or o.ptr is not None:
            return None
        return AffineForm(
            add(p.base, o.base), tuple(add(x, y) for x, y in zip(p.coeffs, o.coeffs, strict=True)), ptr=p.ptr
        )

    # -- masks -------------------------------------------------------------------------------
    def mask_of(self, v: SSAValue) -> BoxMask | None:
        return self.info.masks.get(v)

    def _mask_for_op(self, op: Operation) -> BoxMask | None:
        if len(op.results) != 1 or not isinstance(op.results[0].type, TensorType):
            return None
        rule = _MASK_RULES.get(type(op))
        return rule(self, op, _shape(op.results[0].type)) if rule is not None else None

    def _true_mask(self, op: Operation, shape: tuple[int, ...]) -> BoxMask | None:
        value = op.value  # type: ignore[attr-defined]
        if isinstance(value, DenseIntOrFPElementsAttr) and value.get_element_type() == builtin.i1:
            if set(value.get_values()) <= {1, -1, True}:
                return BoxMask(((),) * len(shape))
        return None

    def _and_mask(self, op: Operation, shape: tuple[int, ...]) -> BoxMask | None:
        a, b = self.mask_of(op.operands[0]), self.mask_of(op.operands[1])
        if a is None or b is None:
            return None
        rank = len(a.bounds)
        return BoxMask(
            tuple(x + y for x, y in zip(a.bounds, b.bounds, strict=True)),
            tuple(a.lower(d) + b.lower(d) for d in range(rank)) if a.lowers or b.lowers else (),
        )

    def _expand_mask(self, op: tt.ExpandDimsOp, shape: tuple[int, ...]) -> BoxMask | None:
        src = self.mask_of(op.src)
        if src is None:
            return None
        bounds, lowers = list(src.bounds), [src.lower(d) for d in range(len(src.bounds))]
        bounds.insert(op.axis.value.data, ())
        lowers.insert(op.axis.value.data, ())
        return BoxMask(tuple(bounds), tuple(lowers) if src.lowers else ())

    def _broadcast_mask(self, op: tt.BroadcastOp, shape: tuple[int, ...]) -> BoxMask | None:
        src = self.mask_of(op.src)
        if src is None:
            return None
        for k, (s, d, b) in enumerate(zip(_shape(op.src.type), shape, src.bounds, strict=True)):
            if s == 1 and d != 1 and (b or src.lower(k)):
                return None  # a bound on a broadcast dimension is a whole-or-nothing condition
        return src

    def _cmp_rule(self, op: arith.CmpiOp, shape: tuple[int, ...]) -> BoxMask | None:
        return self._cmp_mask(op, len(shape))

    def _cmp_mask(self, op: arith.CmpiOp, rank: int) -> BoxMask | None:
        pred = op.predicate.value.data
        # arith.cmpi predicates: 2 slt, 3 sle, 4 sgt, 5 sge; unsigned compares would also reject negative
        # offsets. Normalized to `a < b` (an upper bound) or `a >= b` (a lower bound), `a` the index.
        a, b = self.form_of(op.lhs), self.form_of(op.rhs)
        if a is None or b is None or a.ptr is not None or b.ptr is not None:
            return None
        if pred in (3, 4):  # a <= b == b >= a; a > b == b < a
            a, b, pred = b, a, {3: 5, 4: 2}[pred]
        if pred not in (2, 5) or not b.uniform:
            return None
        dims = [d for d, c in enumerate(a.coeffs) if not (isinstance(c, int) and c == 0)]
        if len(dims) != 1 or not (isinstance(a.coeffs[dims[0]], int) and a.coeffs[dims[0]] == 1):
            return None
        bound = add(b.base, neg(a.base))
        bounds: list[tuple[Expr, ...]] = [()] * rank
        bounds[dims[0]] = (bound,)
        if pred == 5:
            return BoxMask(((),) * rank, tuple(bounds))
        return BoxMask(tuple(bounds))


_FORM_RULES = {
    tt.MakeRangeOp: _Analyzer._range,
    arith.ConstantOp: _Analyzer._constant,
    tt.SplatOp: _Analyzer._splat,
    arith.ExtSIOp: _Analyzer._sign_extend,
    arith.IndexCastOp: _Analyzer._sign_extend,
    tt.ExpandDimsOp: _Analyzer._expand_dims,
    tt.BroadcastOp: _Analyzer._broadcast,
    arith.AddiOp: _Analyzer._add,
    arith.SubiOp: _Analyzer._add,
    arith.MuliOp: _Analyzer._mul,
    tt.AddPtrOp: _Analyzer._addptr,
}
"""How each op kind transforms the affine forms of its operands (ops not listed have no form)."""


_MASK_RULES = {
    arith.ConstantOp: _Analyzer._true_mask,
    arith.CmpiOp: _Analyzer._cmp_rule,
    arith.AndIOp: _Analyzer._and_mask,
    tt.ExpandDimsOp: _Analyzer._expand_mask,
    tt.BroadcastOp: _Analyzer._broadcast_mask,
}
"""How each op kind builds a box mask from its operands' (ops not listed give none)."""


def analyze_function(func: Operation) -> MemoryAccessInfo:
    """Return forms, box masks and block accesses for every op nested in `func`, in block order.

    Loop-carried pointer tensors are not given forms here; `convert-tt-to-mtia` first rewrites them
    into scalar pointers (see `scalarize_loop_pointers`).
    """
    info = MemoryAccessInfo()
    analyzer = _Analyzer(info)
    for op in func.walk():
        analyzer.visit(op)
        if isinstance(op, tt.LoadOp | tt.StoreOp):
            access, reason = _classify(op, analyzer)
            if access is not None:
                info.accesses[op] = access
            else:
                info.fallback_reasons[op] = reason
    return info


def _classify(op: tt.LoadOp | tt.StoreOp, analyzer: _Analyzer) -> tuple[BlockAccess | None, str]:
    if not isinstance(op.ptr.type, TensorType):
        return None, "scalar pointer"
    shape = _shape(op.ptr.type)
    form = analyzer.form_of(op.ptr)
    if form is None or form.ptr is None:
        return None, "pointer is not an affine block"
    if getattr(op, "boundaryCheck", None) is not None and len(op.boundaryCheck.get_values()) > 0:
        return None, "boundary check"
    bounds: tuple[Expr, ...] = tuple(shape)
    starts: tuple[Expr, ...] | None = None
    if op.mask is not None:
        mask = analyzer.mask_of(op.mask)
        if mask is None:
            return None, "mask is not a box"
        bounds = tuple(_min_bound(b, s) for b, s in zip(mask.bounds, shape, strict=True))
        if mask.lowers:
            starts = tuple(_max_start(mask.lower(d)) for d in range(len(shape)))
    other: Attribute | None = None
    if isinstance(op, tt.LoadOp) and op.other is not None:
        other = constant_other(op.other)
        if other is None:
            return None, "`other` is not a constant"
    return BlockAccess(form.ptr, form.base, form.coeffs, bounds, shape, other, starts), ""


def constant_other(other: SSAValue) -> Attribute | None:
    """The scalar attribute of a load's `other` if it is a splat constant (or splat of one), else None."""
    owner = other.owner
    if isinstance(owner, arith.ConstantOp):
        return splat_scalar_attr(owner.value)
    if isinstance(owner, tt.SplatOp) and isinstance(owner.src.owner, arith.ConstantOp):
        return splat_scalar_attr(owner.src.owner.value)
    return None


def _max_start(lowers: tuple[Expr, ...]) -> Expr:
    if not lowers:
        return 0
    if len(lowers) == 1:
        return lowers[0]
    return ("max", *lowers)


def _min_bound(bounds: tuple[Expr, ...], size: int) -> Expr:
    if not bounds:
        return size
    if len(bounds) == 1:
        return bounds[0]
    return ("min", *bounds)


# ----------------------------------------------------------------------------------------------
# Materialization
# ----------------------------------------------------------------------------------------------


class Materializer:
    """Emit scalar i64 arith ops computing expressions, inserted before `anchor`; memoized per value."""

    def __init__(self, anchor: Operation) -> None:
        self.anchor = anchor
        self.cache: dict[object, SSAValue] = {}

    def _insert(self, op: Operation) -> SSAValue:
        op.location = self.anchor.location
        assert self.anchor.parent is not None
        self.anchor.parent.insert_op_before(op, self.anchor)
        return op.results[0]

    def const(self, value: int, width: int = 64) -> SSAValue:
        key = ("const", value, width)
        if key not in self.cache:
            self.cache[key] = self._insert(arith.ConstantOp(IntegerAttr(value, width)))
        return self.cache[key]

    def i64(self, e: Expr) -> SSAValue:
        """Return an i64 SSA value equal to `e`."""
        if isinstance(e, int):
            return self.const(e)
        if isinstance(e, SSAValue):
            return self._widen(e)
        key = ("expr", e)
        if key in self.cache:
            return self.cache[key]
        kind, *args = e
        if kind == "add" and isinstance(args[1], tuple) and args[1][0] == "neg":
            res = self._insert(arith.SubiOp(self.i64(args[0]), self.i64(args[1][1])))
            self.cache[key] = res
            return res
        vals = [self.i64(a) for a in args]
        if kind == "add":
            res = self._insert(arith.AddiOp(vals[0], vals[1]))
        elif kind == "mul":
            res = self._insert(arith.MuliOp(vals[0], vals[1]))
        elif kind == "neg":
            res = self._insert(arith.SubiOp(self.const(0), vals[0]))
        elif kind in ("min", "max"):
            res = vals[0]
            for v in vals[1:]:
                res = self._insert(arith.MinSIOp(res, v) if kind == "min" else arith.MaxSIOp(res, v))
        else:  # pragma: no cover - internal invariant
            raise AssertionError(kind)
        self.cache[key] = res
        return res

    def _widen(self, v: SSAValue) -> SSAValue:
        key = ("widen", v)
        if key in self.cache:
            return self.cache[key]
        t = v.type
        if isinstance(t, IndexType):
            res = self._insert(arith.IndexCastOp(v, builtin.i64))
        elif isinstance(t, IntegerType) and t.width.data < 64:
            res = self._insert(arith.ExtSIOp(v, builtin.i64))
        else:
            res = v
        self.cache[key] = res
        return res

    def ptr(self, ptr: SSAValue, offset: Expr) -> SSAValue:
        """Return `ptr` advanced by `offset` elements."""
        if isinstance(offset, int) and offset == 0:
            return ptr
        return self._insert(tt.AddPtrOp(ptr, self.i64(offset)))


# ----------------------------------------------------------------------------------------------
# Test pass: print the analysis as attributes
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TestMtiaMemoryAccessPass(ModulePass):
    """Annotate each tt.load/tt.store with `mtia.access`: its DMA block description or fallback reason.

    Example: mtia-opt k.mlir -p test-mtia-memory-access
    """

    name = "test-mtia-memory-access"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        names = printed_names(op)
        for func in op.walk():
            if not isinstance(func, tt.FuncOp):
                continue
            info = analyze_function(func)
            for access_op in func.walk():
                if access_op in info.accesses:
                    a = info.accesses[access_op]
                    text = (
                        f"dma base={expr_str(a.ptr, names)}+{expr_str(a.offset, names)} "
                        f"strides=[{', '.join(expr_str(s, names) for s in a.strides)}] "
                        f"bounds=[{', '.join(expr_str(b, names) for b in a.bounds)}] shape={list(a.shape)}"
                    )
                    if a.starts is not None:
                        text += f" starts=[{', '.join(expr_str(b, names) for b in a.starts)}]"
                    access_op.attributes[mtia.ACCESS_ATTR] = StringAttr(text)
                elif access_op in info.fallback_reasons:
                    access_op.attributes[mtia.ACCESS_ATTR] = StringAttr(f"scalar: {info.fallback_reasons[access_op]}")


def block_accesses(ops: Sequence[Operation], info: MemoryAccessInfo) -> list[Operation]:
    """Return the ops of `ops` that the analysis found to be block (DMA) accesses, in order."""
    return [o for o in ops if o in info.accesses]

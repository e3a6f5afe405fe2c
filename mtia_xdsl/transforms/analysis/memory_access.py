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

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from xdsl.context import Context
from xdsl.dialects import builtin, scf
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from mtia_xdsl.dialects import mtia, tt
from mtia_xdsl.machine import cost
from mtia_xdsl.machine.config import MachineConfig, module_or_default_config
from mtia_xdsl.transforms.arith_ops import arith
from mtia_xdsl.utils.walk import ops_of

# ----------------------------------------------------------------------------------------------
# Symbolic scalar expressions
# ----------------------------------------------------------------------------------------------

Expr = int | SSAValue | tuple
"""("add", a, b) | ("mul", a, b) | ("neg", a) | ("rem", a, c) | ("div", a, c) | ("min"/"max", a, ...);
`rem` and `div` are remainder and quotient of a non-negative dividend by a positive divisor."""


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


def rem(a: Expr, c: Expr) -> Expr:
    """Return a % c (a >= 0, c > 0), folding constants."""
    if isinstance(a, int) and isinstance(c, int):
        return a % c
    return 0 if isinstance(c, int) and c == 1 else ("rem", a, c)


def div(a: Expr, c: Expr) -> Expr:
    """Return a // c (a >= 0, c > 0), folding constants."""
    if isinstance(a, int) and isinstance(c, int):
        return a // c
    return a if isinstance(c, int) and c == 1 else ("div", a, c)


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
    sym = {"add": "+", "mul": "*", "rem": "%", "div": "//"}[op]
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


def linear(e: Expr) -> dict[Expr | None, int]:
    """`e` as a linear combination `{atom: coefficient}` (key None: the constant term) over atoms that are
    SSA values or non-linear subexpressions (rem, div, min, max, products of two non-constants); the
    canonical form two bounds are compared in (`bound_implies`)."""
    if isinstance(e, int):
        return {None: e} if e else {}
    if isinstance(e, SSAValue):
        c = constant_value(e)
        return linear(c) if c is not None else {e: 1}
    kind, *args = e
    if kind == "add":
        out = dict(linear(args[0]))
        for k, v in linear(args[1]).items():
            out[k] = out.get(k, 0) + v
        return {k: v for k, v in out.items() if v}
    if kind == "neg":
        return {k: -v for k, v in linear(args[0]).items()}
    if kind == "mul":
        a, b = linear(args[0]), linear(args[1])
        if set(a) <= {None}:
            a, b = b, a
        if set(b) <= {None}:
            s = b.get(None, 0)
            return {k: v * s for k, v in a.items() if v * s}
    return {e: 1}


def bound_implies(bound: Expr, limit: Expr) -> bool:
    """True when `bound <= limit` for every value of the atoms: their linear forms differ by a constant."""
    diff = dict(linear(limit))
    for k, v in linear(bound).items():
        diff[k] = diff.get(k, 0) - v
    if all(v == 0 for k, v in diff.items() if k is not None) and diff.get(None, 0) >= 0:
        return True
    high, low = expr_range(bound), expr_range(limit)  # or by constant ranges (a single-step K loop's bound)
    return high is not None and low is not None and high[1] <= low[0]


@dataclass(frozen=True)
class Digits:
    """The coefficient of one dimension whose index Inductor split (`x0 = xindex % 64; x1 = xindex // 64`).

    The index i (0 <= i < extent) is written in mixed radix, inner digit first:
    `i = sum_j q_j * place_j` with `0 <= q_j < extents[j]` and `place_j = prod(extents[:j])`; the value
    along the dimension is `sum_j coeffs[j] * q_j` (element units, as AffineForm.coeffs). A DMA moves
    such a dimension as one box dimension per digit, outer first (a multi-row box). Built only through
    `digits()`, which collapses digits that are one affine run.
    """

    extents: tuple[int, ...]
    coeffs: tuple[Expr, ...]

    @property
    def places(self) -> tuple[int, ...]:
        return tuple(math.prod(self.extents[:j]) for j in range(len(self.extents)))


Coeff = Expr | Digits
"""A form's coefficient along one dimension: a scalar expression, or digits of a split index."""


def digits(extents: Sequence[int], coeffs: Sequence[Expr]) -> Coeff:
    """Digits over `extents` with `coeffs`, adjacent digits merged where they form one run
    (`coeffs[j+1] == coeffs[j] * extents[j]`, e.g. `x0 + 64 * x1` is the plain index); a plain
    coefficient when one digit is left."""
    ext, cs = [extents[0]], [coeffs[0]]
    for e, c in zip(extents[1:], coeffs[1:], strict=True):
        if c == mul(cs[-1], ext[-1]):
            ext[-1] *= e
        else:
            ext.append(e)
            cs.append(c)
    return cs[0] if len(ext) == 1 else Digits(tuple(ext), tuple(cs))


def _refine(d: Digits, places: Sequence[int]) -> tuple[Expr, ...]:
    """The coefficients of `d` over the finer digits whose places are `places` (a chain containing d's)."""
    out = []
    for p in places:
        j = max(k for k, q in enumerate(d.places) if q <= p)
        out.append(mul(d.coeffs[j], p // d.places[j]))
    return tuple(out)


def _common_places(extent: int, *ds: Digits) -> list[int] | None:
    """Places of the coarsest mixed radix refining every `ds` (each place divides the next), else None."""
    places = sorted({p for d in ds for p in d.places} | {extent})
    if any(b % a for a, b in itertools.pairwise(places)):
        return None
    return places


def coeff_add(x: Coeff, y: Coeff) -> Coeff | None:
    """x + y for coefficients along one dimension; None when two digit splits have no common refinement."""
    if not isinstance(x, Digits) and not isinstance(y, Digits):
        return add(x, y)
    ds = [c for c in (x, y) if isinstance(c, Digits)]
    extent = math.prod(ds[0].extents)
    places = _common_places(extent, *ds)
    if places is None:
        return None
    extents = [b // a for a, b in itertools.pairwise(places)]
    places = places[:-1]

    def over(c: Coeff) -> tuple[Expr, ...]:
        return _refine(c, places) if isinstance(c, Digits) else tuple(mul(c, p) for p in places)

    return digits(extents, tuple(add(a, b) for a, b in zip(over(x), over(y), strict=True)))


def coeff_scale(x: Coeff, s: Expr) -> Coeff:
    """x * s for a coefficient along one dimension and a scalar s."""
    if isinstance(x, Digits):
        return digits(x.extents, tuple(mul(c, s) for c in x.coeffs))
    return mul(x, s)


def coeff_neg(x: Coeff) -> Coeff:
    """-x for a coefficient along one dimension."""
    return digits(x.extents, tuple(neg(c) for c in x.coeffs)) if isinstance(x, Digits) else neg(x)


def coeff_str(c: Coeff, names: dict[SSAValue, str] | None = None) -> str:
    """Render a coefficient; digits as `{c_outer:e_outer, .., c_inner:e_inner}` (coefficient:extent)."""
    if isinstance(c, Digits):
        parts = [f"{expr_str(k, names)}:{e}" for k, e in zip(reversed(c.coeffs), reversed(c.extents), strict=True)]
        return "{" + ", ".join(parts) + "}"
    return expr_str(c, names)


# ----------------------------------------------------------------------------------------------
# Forms
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AffineForm:
    """value[i] = ptr + base + sum_d coeffs[d] * i_d; `ptr` is None for integer tensors.

    Units: base and coeffs count elements of the pointee type (for pointers) or are plain integers.
    """

    base: Expr
    coeffs: tuple[Coeff, ...]
    """Per dimension, a scalar coefficient or the Digits of an index Inductor split by `%` and `//`."""
    ptr: SSAValue | None = None
    limits: tuple[tuple[Expr, ...], ...] = ()
    """Per dimension, upper bounds on the index past which the value is not the affine one (a wrap-around
    `rm % M` the kernel's hints say does not happen, see `_rem`): a load reads `other` there, a store
    falls back to the scalar core. Empty when the form holds everywhere."""

    index: SSAValue | None = None
    """An integer tile (broadcasting to the form's shape) whose elements, times `index_scale`, are added:
    `ptr + base + index[i] * index_scale + sum_d coeffs[d] * i_d` (embedding rows picked by a loaded id)."""
    index_scale: Expr = 0
    wrap: Expr | None = None
    """For a 1-D flat index split by a row length n that the block does not start at a row boundary of
    (`xindex % 48` with XBLOCK a power of two): the flat index `start` of the block's first element. The
    single coefficient is then Digits over the position `j = i + start % n` in a box of whole rows that
    begins at row `start // n` (a wrapped box: a load moves the box and slices the block out of it).
    None otherwise."""
    wrap_dim: int = 0
    """The dimension `wrap` splits: 0 for a 1-D flat index; on an n-D tile, the one dimension its index
    varies along (cnn's `yindex % 3` over a [YBLOCK, 1] tile, second pass of the analysis only)."""

    @property
    def uniform_coeffs(self) -> bool:
        """True when no coefficient is non-zero (the index tile, if any, may still vary)."""
        return all(isinstance(c, int) and c == 0 for c in self.coeffs)

    @property
    def uniform(self) -> bool:
        """True when every element has the same value (all coefficients zero, no index tile)."""
        return self.index is None and self.uniform_coeffs

    @property
    def split(self) -> bool:
        """True when some dimension's coefficient is Digits (a flat index split across rows)."""
        return any(isinstance(c, Digits) for c in self.coeffs)

    def limited(self, limits: tuple[tuple[Expr, ...], ...]) -> AffineForm:
        """This form with `limits` added (per dimension)."""
        if not limits:
            return self
        if not self.limits:
            return replace(self, limits=limits)
        return replace(self, limits=tuple(a + b for a, b in zip(self.limits, limits, strict=True)))

    def plus(self, other: AffineForm, sign: int = 1) -> AffineForm | None:
        """self + sign * other (`other` an integer form; at most one of them with an index tile), else None."""
        if self.index is not None and other.index is not None:
            return None
        if self.wrap is not None or other.wrap is not None:
            return self._plus_wrapped(other, sign)
        pairs = zip(self.coeffs, other.coeffs, strict=True)
        coeffs = tuple(coeff_add(x, y if sign > 0 else coeff_neg(y)) for x, y in pairs)
        if any(c is None for c in coeffs):
            return None  # two splits of one dimension that no mixed radix refines
        base = add(self.base, other.base if sign > 0 else neg(other.base))
        index, scale = (self.index, self.index_scale) if self.index is not None else (other.index, other.index_scale)
        if other.index is not None and sign < 0:
            scale = neg(scale)
        form = AffineForm(base, coeffs, self.ptr, (), index, scale)  # type: ignore[arg-type]
        return form.limited(self.limits).limited(other.limits)

    def _plus_wrapped(self, other: AffineForm, sign: int) -> AffineForm | None:
        """`plus` when a form is wrapped (see `wrap`): the same start and wrapped dimension d, no limits. A
        plain coefficient c over the block's i_d is c over the box's j with the base less `c * shift`; a sum
        whose digits merge into one run (`x0 + 48 * x1`) is affine in i again (the flat index itself); the
        other dimensions' coefficients add as usual. An index tile added with sign +1 to a 1-D form
        (`tmp9 + 5 * tmp4 + 25 * x1`, dlrm's tril gather) stays: the access is an element gather over the
        wrapped box's rows (see `_ls_gather_access`)."""
        wrapped = self if self.wrap is not None else other
        d = wrapped.wrap_dim
        rank = len(self.coeffs)
        if len(other.coeffs) != rank or self.limits or other.limits:
            return None
        if any(f.wrap is not None and f.wrap_dim != d for f in (self, other)):
            return None
        indexed = [f for f in (self, other) if f.index is not None]
        if indexed:
            if len(indexed) != 1 or sign < 0 or rank != 1:
                return None
            idx = indexed[0]
            bare = replace(idx, index=None, index_scale=0)
            summed = (bare if idx is self else self)._plus_wrapped(bare if idx is other else other, 1)
            if summed is None:
                return None
            return replace(summed, ptr=summed.ptr or idx.ptr, index=idx.index, index_scale=idx.index_scale)
        starts = {f.wrap for f in (self, other) if f.wrap is not None}
        if len(starts) != 1:
            return None
        start = starts.pop()
        row = wrapped.coeffs[d]
        assert isinstance(row, Digits)
        shift = rem(start, row.extents[0])

        def on_box(f: AffineForm) -> AffineForm:
            c = f.coeffs[d]
            return (
                f if f.wrap is not None or isinstance(c, Digits) else replace(f, base=add(f.base, neg(mul(c, shift))))
            )

        a, b = on_box(self), on_box(other)
        coeffs = [coeff_add(x, y if sign > 0 else coeff_neg(y)) for x, y in zip(a.coeffs, b.coeffs, strict=True)]
        if any(c is None for c in coeffs) or any(isinstance(c, Digits) for e, c in enumerate(coeffs) if e != d):
            return None
        coeff = coeffs[d]
        base = add(a.base, b.base if sign > 0 else neg(b.base))
        if isinstance(coeff, Digits):
            return AffineForm(base, tuple(coeffs), self.ptr, wrap=start, wrap_dim=d)  # type: ignore[arg-type]
        base = add(base, mul(coeff, shift))  # type: ignore[arg-type]
        n = row.extents[0]
        if base == add(mul(div(start, n), n), shift):  # n * (start // n) + start % n
            base = start
        return AffineForm(base, tuple(coeffs), self.ptr)  # type: ignore[arg-type]  # affine in i: no box needed


@dataclass(frozen=True)
class BoxMask:
    """mask[i] = AND_d (max(lowers[d]) <= i_d < min(bounds[d])); dimensions without either are fully valid."""

    bounds: tuple[tuple[Expr, ...], ...]
    lowers: tuple[tuple[Expr, ...], ...] = ()
    digit_bounds: tuple[tuple[DigitBound, ...], ...] = ()
    """Per dimension, conditions on one digit of a split index (Inductor's conv template: `0 <= h + i - 1 < 8`
    with `h = (nhw // 8) % 8`); empty when there are none."""

    def lower(self, d: int) -> tuple[Expr, ...]:
        return self.lowers[d] if self.lowers else ()

    def digits_of(self, d: int) -> tuple[DigitBound, ...]:
        return self.digit_bounds[d] if self.digit_bounds else ()


@dataclass(frozen=True)
class DigitBound:
    """`q < bound` (or `q >= bound` when `lower`) for the digit `q = (i // place) % extent` of a dimension's
    index i."""

    place: int
    extent: int
    lower: bool
    bound: Expr


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
    other: Attribute | SSAValue | None = None
    """A scalar FloatAttr/IntegerAttr, a scalar value (the splat of a run-time scalar, e.g. a host tensor
    descriptor's padding), or None for 0 / no mask."""
    index: SSAValue | None = None
    """Index tile of an indexed DMA (rows picked by loaded ids): element i is at
    `ptr + offset + index[i] * index_scale + sum_d strides[d] * i_d`; None for a strided block."""
    index_scale: Expr = 0
    starts: tuple[Expr, ...] | None = None
    """First valid index along each dimension (None: all 0), for a block beginning before its tensor."""
    index_box: tuple[int, ...] | None = None
    """The shape the index tile is reshaped to when the block is a multi-row box (`view` set), else None."""
    view: tuple[int, ...] | None = None
    """The tensor's shape when it differs from the block's `shape` (None: the same): a flat index split
    across rows is moved as a box with one dimension per digit, outer first, whose row-major order is
    the tensor's (the tensor is its reshape)."""
    window: Expr | None = None
    """For a wrapped box (AffineForm.wrap), the flat position in the box of the block's first element: the
    block is the box, flattened, from there (`mtia.extract_slice`). For a store (`_wrapped_store`), the box
    is the block from there. None: the box is the block."""
    window_dim: int = 0
    """The tile dimension a store's `window` slices (n-D `_wrapped_store`): the box is the tile's first
    elements along it, reshaped; 0 for a flat block."""
    ls_gather: LsGather | None = None
    """Set for an element gather from a small source block (`_ls_gather_access`): the DMA moves the box
    (`strides`, `bounds`, `shape`: [rows, row] in memory order, dense) and each element of the tile is
    gathered from it in LS; None for a block that is the tile."""
    order: tuple[int, ...] | None = None
    """For a box moved in memory order to fit `MachineConfig.dma_max_rank` (`fit_rank`): dimension k of the
    moved box, before its contiguous dimensions are merged, is dimension `order[k]` of the box in the tile's
    order (extents `unmerged`); the MLU permutes it back (`tt.trans`) before the reshape to `view`. None: the
    box is moved in the tile's order."""
    unmerged: tuple[int, ...] = ()
    """With `order`, the extents of the box in the tile's order, before merging; empty otherwise."""
    index_at_row_starts: bool = False
    """Set for rows of an index tile that steps along them (`_row_runs_access`): the tile, reshaped to
    `index_box`, is read at each row's first element only (its first column, the row's start); the others
    are the row's next elements, which the strides reach. False: the tile is used as it is."""


@dataclass(frozen=True)
class LsGather:
    """How a load's elements are picked from its DMA box in LS (`BlockAccess.ls_gather`).

    Element i of the tile reads the box at `(address_i - address of the box's first element) / element
    bytes`, the box flattened (it is dense in memory). Lanes whose position falls outside the rows the DMA
    moved are gathered from global memory by the scalar core. `exact`: the index provably stays in its row
    (`rn % N` with N the row), so every valid lane is inside the box, and only a box clipped at the end of
    its tensor's storage can leave one out (convert_tt_to_mtia.py `_ls_gather`).
    """

    exact: bool


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


_FACT_DEPTH = 8
"""How many defining ops `expr_divisor` / `expr_nonneg` look through (kernels' index math is shallow)."""


def expr_divisor(e: Expr, depth: int = _FACT_DEPTH) -> int:
    """Return a positive integer that provably divides `e` (0 if e is provably 0, 1 if nothing is known).

    Facts: constants; products and sums; `tl.program_id`; the `tt.divisibility` hint of the defining op
    (`tl.multiple_of`) or of a kernel argument (Triton's specialisation, Inductor's `tt.divisibility`).
    """
    if isinstance(e, int):
        return abs(e)
    if isinstance(e, tuple):
        kind, *args = e
        if kind == "mul":
            return expr_divisor(args[0], depth) * expr_divisor(args[1], depth)
        if kind == "add":
            return math.gcd(expr_divisor(args[0], depth), expr_divisor(args[1], depth))
        if kind == "neg":
            return expr_divisor(args[0], depth)
        if kind == "div" and isinstance(args[1], int) and args[1] > 0:  # (m * c * k) // c == m * k
            a = expr_divisor(args[0], depth)
            return a // args[1] if a % args[1] == 0 else 1
        if kind == "rem":  # a % c == a - c * (a // c)
            return math.gcd(expr_divisor(args[0], depth), expr_divisor(args[1], depth))
        return 1
    hint = _divisibility_hint(e)
    owner = e.owner
    if depth == 0 or not isinstance(owner, Operation):
        return hint
    found = 1
    if (c := constant_value(e)) is not None:
        found = abs(c)
    elif isinstance(owner, arith.MuliOp):
        found = expr_divisor(owner.lhs, depth - 1) * expr_divisor(owner.rhs, depth - 1)
    elif isinstance(owner, arith.AddiOp):
        found = math.gcd(expr_divisor(owner.lhs, depth - 1), expr_divisor(owner.rhs, depth - 1))
    elif isinstance(owner, arith.ExtSIOp | arith.ExtUIOp | arith.IndexCastOp | tt.SplatOp):
        found = expr_divisor(owner.operands[0], depth - 1)
    return math.lcm(found, hint) if found and hint else found or hint


def expr_nonneg(e: Expr, depth: int = _FACT_DEPTH) -> bool:
    """True if `e` is provably >= 0: non-negative constants, program ids, sums, products, rem/div of those."""
    if isinstance(e, int):
        return e >= 0
    if isinstance(e, tuple):
        kind, *args = e
        return kind in ("add", "mul", "rem", "div") and all(expr_nonneg(a, depth) for a in args)
    if _assumed_nonneg(e) or ((c := constant_value(e)) is not None and c >= 0):
        return True
    owner = e.owner
    if depth == 0 or not isinstance(owner, Operation):
        return False
    if isinstance(owner, tt.GetProgramIdOp | tt.GetNumProgramsOp):
        return True
    if isinstance(owner, arith.ConstantOp):
        c = _splat_int(owner.value)
        return c is not None and c >= 0
    if isinstance(owner, arith.MuliOp | arith.AddiOp | arith.DivSIOp | arith.MinSIOp | arith.MaxSIOp):
        return expr_nonneg(owner.lhs, depth - 1) and expr_nonneg(owner.rhs, depth - 1)
    if isinstance(owner, arith.RemSIOp):  # the remainder has the dividend's sign
        return expr_nonneg(owner.lhs, depth - 1)
    if isinstance(owner, arith.ExtSIOp | arith.IndexCastOp | tt.SplatOp):
        return expr_nonneg(owner.operands[0], depth - 1)
    return False


def _assumed_nonneg(v: SSAValue) -> bool:
    """True if the kernel assumes `v >= 0` (`tl.assume(v >= 0)`, as Inductor's GEMM template does)."""
    for use in v.uses:
        cmp = use.operation
        if not isinstance(cmp, arith.CmpiOp) or use.index != 0 or cmp.predicate.value.data not in (4, 5):
            continue  # sgt / sge
        bound = constant_value(cmp.rhs)
        if bound is None or bound < (0 if cmp.predicate.value.data == 5 else -1):
            continue
        if any(u.operation.name == "llvm.intr.assume" for u in cmp.result.uses):
            return True
    return False


_FOLD = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.DivSIOp: lambda a, b: int(a / b) if b else None,
    arith.MinSIOp: min,
    arith.MaxSIOp: max,
}


def constant_value(v: SSAValue, depth: int = _FACT_DEPTH) -> int | None:
    """The value of a scalar integer computed from constants only (the canonicalizer leaves such arith)."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp):
        return _splat_int(owner.value)
    fold = _FOLD.get(type(owner)) if isinstance(owner, Operation) else None
    if fold is None or depth == 0 or isinstance(v.type, TensorType):
        return None
    a, b = constant_value(owner.operands[0], depth - 1), constant_value(owner.operands[1], depth - 1)
    return None if a is None or b is None else fold(a, b)


_CMP_FOLD = {
    0: lambda a, b: a == b,  # eq
    1: lambda a, b: a != b,  # ne
    2: lambda a, b: a < b,  # slt
    3: lambda a, b: a <= b,  # sle
    4: lambda a, b: a > b,  # sgt
    5: lambda a, b: a >= b,  # sge
}
"""arith.cmpi predicates (signed and equality) by their enum value."""


def constant_condition(v: SSAValue, depth: int = _FACT_DEPTH) -> bool | None:
    """The value of a scalar i1 computed from integer constants only (`arith.cmpi` of `constant_value`s,
    `arith.andi`/`ori`/`xori` of such conditions, an i1 constant), else None. Inductor's GEMM template
    picks its hinted or plain row index by such a condition of the kernel's static strides and sizes."""
    owner = v.owner
    if not isinstance(owner, Operation) or isinstance(v.type, TensorType) or depth == 0:
        return None
    if isinstance(owner, arith.ConstantOp):
        attr = owner.value
        return bool(attr.value.data) if isinstance(attr, IntegerAttr) and attr.type == builtin.i1 else None
    if isinstance(owner, arith.CmpiOp):
        fold = _CMP_FOLD.get(owner.predicate.value.data)
        a, b = constant_value(owner.lhs, depth - 1), constant_value(owner.rhs, depth - 1)
        return None if fold is None or a is None or b is None else fold(a, b)
    if isinstance(owner, arith.AndIOp | arith.OrIOp | arith.XOrIOp):
        a, b = constant_condition(owner.lhs, depth - 1), constant_condition(owner.rhs, depth - 1)
        if isinstance(owner, arith.AndIOp) and (a is False or b is False):
            return False
        if isinstance(owner, arith.OrIOp) and (a is True or b is True):
            return True
        if a is None or b is None:
            return None
        return (a and b) if isinstance(owner, arith.AndIOp) else (a or b) if isinstance(owner, arith.OrIOp) else a != b
    return None


def _divisibility_hint(v: SSAValue) -> int:
    """The `tt.divisibility` hint on `v` (its defining op's attribute, or its kernel argument's), else 1."""
    owner = v.owner
    if isinstance(owner, Operation):
        attr = owner.attributes.get("tt.divisibility")
        return max(_hint_values(attr), default=1) if attr is not None else 1
    block = owner
    func = block.parent_op() if block is not None else None
    if isinstance(func, tt.FuncOp) and func.arg_attrs is not None and block is func.body.blocks[0]:
        attrs = func.arg_attrs.data[v.index].data  # type: ignore[attr-defined]
        if "tt.divisibility" in attrs:
            return max(_hint_values(attrs["tt.divisibility"]), default=1)
    return 1


def _contiguity(op: Operation, dim: int) -> int:
    """The `tt.contiguity` hint (`tl.max_contiguous`) of `op`'s result along `dim`, else 1."""
    attr = op.attributes.get("tt.contiguity")
    if attr is None:
        return 1
    values = _hint_values(attr)
    return values[dim] if dim < len(values) else (values[0] if len(values) == 1 else 1)


def _hint_values(attr: Attribute) -> list[int]:
    if isinstance(attr, IntegerAttr):
        return [attr.value.data]
    if isinstance(attr, DenseIntOrFPElementsAttr):
        return [int(x) for x in attr.get_values()]
    return []


def splat_scalar_attr(attr: Attribute) -> Attribute | None:
    """Return the scalar attribute of a splat dense constant (or a scalar constant), else None."""
    if isinstance(attr, DenseIntOrFPElementsAttr):
        vals = attr.get_values()
        raw, n = attr.data.data, len(vals)
        bitwise_splat = n > 0 and raw == raw[: len(raw) // n] * n  # the common case, without a loop in Python
        if not bitwise_splat and (n == 0 or any(v != vals[0] and not (v != v and vals[0] != vals[0]) for v in vals)):
            return None
        et = attr.get_element_type()
        if isinstance(et, IntegerType | IndexType):
            return IntegerAttr(int(vals[0]), et)
        return builtin.FloatAttr(float(vals[0]), et)
    if isinstance(attr, IntegerAttr | builtin.FloatAttr):
        return attr
    return None


def _bounded_rem_div(a: AffineForm, c: Expr, is_rem: bool, shape: tuple[int, ...]) -> AffineForm | None:
    """`a % c` or `a // c` for a constant c > 0 by place value, on tiles of any rank (Inductor's
    `(xindex // 32) % 16` of a GEMM template's `xindex = rn + 32 * rm`), else None.

    `a = c * m + r + sum_d k_d * i_d` with every term non-negative: base terms whose divisor is a multiple
    of c make up `c * m`, the others r; dimensions with k_d a multiple of c are carried (`k_d / c` in the
    quotient). The other dimensions, by increasing k, must nest like digits: `k_j * E_j <= k_(j+1)` and
    `k_last * E_last <= c` (E: the block's extent). Then `r + sum < c`, and `a // c = m + sum_carried
    (k_d / c) * i_d`, `a % c = r + sum_(not carried) k_d * i_d`. With r = 0 this holds everywhere. With r
    not provably 0 (a block base such as `16 * pid_n`), the lowest such dimension must have k = 1 and the
    form holds below the limit `i < K - r`, K the next k (or c): the form carries it in `limits`, and an
    access using it must have a mask that implies it (`rn < N` with N = 32: every valid element has
    `r + i < 32`); see `_classify`.
    """
    if not isinstance(c, int) or c <= 0 or a.ptr is not None:
        return None
    m: Expr = 0
    r: Expr = 0
    for atom, coef in linear(a.base).items():
        if coef < 0 or (atom is not None and not expr_nonneg(atom)):
            return None
        if atom is None:
            m, r = add(m, coef // c), add(r, coef % c)
            continue
        g = math.gcd(coef, c)
        if expr_divisor(atom) % (c // g) == 0:
            m = add(m, mul(div(atom, c // g), coef // g))
        else:
            r = add(r, mul(atom, coef))
    carried: dict[int, int] = {}
    nested: list[tuple[int, int]] = []  # (k, d)
    for d, k in enumerate(a.coeffs):
        if shape[d] == 1:
            continue
        if not isinstance(k, int) or k < 0:
            return None
        if k % c == 0:
            carried[d] = k // c
        else:
            nested.append((k, d))
    nested.sort()
    limits: list[tuple[Expr, ...]] = [()] * len(shape)
    for j, (k, d) in enumerate(nested):
        above = nested[j + 1][0] if j + 1 < len(nested) else c
        if j == 0 and not (isinstance(r, int) and r == 0):
            if k != 1:
                return None
            limits[d] = (add(above, neg(r)),)
        elif k * shape[d] > above:
            return None
    if not nested and not (isinstance(r, int) and r == 0):
        return None  # r < c is not known and there is no index to bound
    if is_rem:
        coeffs = tuple(k if d not in carried and shape[d] != 1 else 0 for d, k in enumerate(a.coeffs))
        form = AffineForm(r, coeffs)  # type: ignore[arg-type]
    else:
        form = AffineForm(m, tuple(carried.get(d, 0) for d in range(len(shape))))
    return form.limited(tuple(limits)) if any(limits) else form


def _loop_range(v: SSAValue) -> tuple[int, int] | None:
    """[first, last] value of an `scf.for` induction variable with constant bounds and a positive step
    (Inductor's GEMM template's `k_idx` over `range(0, tl.cdiv(K, BLOCK_K))`), else None."""
    block = v.owner
    if not isinstance(v, BlockArgument) or v.index != 0 or not isinstance(block, Block):
        return None
    loop = block.parent_op()
    if not isinstance(loop, scf.ForOp) or block is not loop.body.block:
        return None
    lb, ub, step = constant_value(loop.lb), constant_value(loop.ub), constant_value(loop.step)
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return lb, lb + step * max((ub - lb - 1) // step, 0)


def _range_args(ranges: list[tuple[int, int] | None]) -> list[tuple[int, int]] | None:
    return None if any(r is None or r[0] < 0 for r in ranges) else ranges  # type: ignore[return-value]


def expr_range(e: Expr, depth: int = _FACT_DEPTH) -> tuple[int, int] | None:
    """[lo, hi] with 0 <= lo <= e <= hi when provable from constants and `scf.for` induction variables
    (`_loop_range`) through sums, products, casts and `//`, `%` by constants; else None (in particular for
    values without a constant bound, such as program ids)."""
    if isinstance(e, int):
        return (e, e) if e >= 0 else None
    if isinstance(e, tuple):
        kind, *args = e
        rs = _range_args([expr_range(x, depth) for x in args]) if kind in ("add", "mul", "div", "rem") else None
        if rs is None or (kind in ("div", "rem") and rs[1][0] <= 0):
            return None
        (a, b), (c, d) = rs
        return {"add": (a + c, b + d), "mul": (a * c, b * d), "div": (a // d, b // c), "rem": (0, min(b, d - 1))}[kind]
    if (c := constant_value(e)) is not None:
        return (c, c) if c >= 0 else None
    owner = e.owner
    if not isinstance(owner, Operation):
        return _loop_range(e)
    if depth == 0:
        return None
    if isinstance(owner, arith.MuliOp | arith.AddiOp):
        return expr_range(("mul" if isinstance(owner, arith.MuliOp) else "add", owner.lhs, owner.rhs), depth - 1)
    if isinstance(owner, arith.SubiOp):
        x, y = expr_range(owner.lhs, depth - 1), expr_range(owner.rhs, depth - 1)
        return (x[0] - y[1], x[1] - y[0]) if x is not None and y is not None and x[0] >= y[1] else None
    if isinstance(owner, arith.ExtSIOp | arith.ExtUIOp | arith.IndexCastOp):
        return expr_range(owner.operands[0], depth - 1)
    return None


def _nonneg_in_loops(e: Expr) -> bool:
    """`expr_nonneg`, also through `scf.for` induction variables with a non-negative range (`expr_range`)."""
    if isinstance(e, tuple):
        return e[0] in ("add", "mul", "rem", "div") and all(_nonneg_in_loops(x) for x in e[1:])
    return expr_nonneg(e) or expr_range(e) is not None


def _split_base(base: Expr, c: int) -> tuple[Expr, Expr, int, int] | None:
    """`base = c * m + r` by place value: (m, r, period, slack) where r's terms that no constant bounds are
    multiples of `period` (a divisor of c) and the rest are at most `slack`; None unless every term is
    provably non-negative."""
    m: Expr = 0
    r: Expr = 0
    period, slack = c, 0
    for atom, coef in linear(base).items():
        if coef < 0 or (atom is not None and not _nonneg_in_loops(atom)):
            return None
        if atom is None:
            m, r, slack = add(m, coef // c), add(r, coef % c), slack + coef % c
            continue
        g = math.gcd(coef, c)
        if expr_divisor(atom) % (c // g) == 0:
            m = add(m, mul(div(atom, c // g), coef // g))
            continue
        r = add(r, mul(atom, coef))
        bounded = expr_range(atom)
        if bounded is not None:
            slack += coef * bounded[1]
        else:
            period = math.gcd(period, coef * expr_divisor(atom))
    return m, r, period, slack


def _split_digits(coeff: Coeff, extent: int, c: int) -> tuple[Coeff, Coeff, int] | None:
    """One dimension's coefficient split by place value c: (its `% c` part, its `// c` part, the largest
    value of the `% c` part), else None. Each digit (the whole index, or one Digits entry) of extent E and
    constant coefficient k >= 0 is carried (k a multiple of c: `k / c` in the quotient), kept (k * (E - 1)
    < c: in the remainder), or split in two (k dividing c, c / k dividing E: `q = q' + (c / k) * q''`,
    q' in the remainder with k, q'' in the quotient with 1)."""
    extents, ks = (coeff.extents, coeff.coeffs) if isinstance(coeff, Digits) else ((extent,), (coeff,))
    out: list[int] = []
    rems: list[Expr] = []
    quots: list[Expr] = []
    slack = 0
    for e, k in zip(extents, ks, strict=True):
        if not isinstance(k, int) or k < 0:
            return None
        if k % c == 0:
            out, rems, quots = [*out, e], [*rems, 0], [*quots, k // c]
        elif k * (e - 1) < c:
            out, rems, quots, slack = [*out, e], [*rems, k], [*quots, 0], slack + k * (e - 1)
        elif c % k == 0 and e % (c // k) == 0:
            s = c // k
            out, rems, quots, slack = [*out, s, e // s], [*rems, k, 0], [*quots, 0, 1], slack + k * (s - 1)
        else:
            return None
    return digits(out, rems), digits(out, quots), slack


def place_value_split(
    a: AffineForm, c: Expr, is_rem: bool, shape: tuple[int, ...], bounded: bool = False
) -> AffineForm | None:
    """`a % c` or `a // c` for a constant c > 0 by place value, where `a` varies along several dimensions
    of the tile and a digit may straddle c, else None: the `//` and `%` Inductor decomposes a flat index
    `xindex = idx_n + K * idx_m` of a 2-D tile into when it fuses a permuting copy into a GEMM template's
    A load (a prologue: `x9 = xindex % 16`, `x10 = (xindex // 16) % 4`, ...). The digits then permute into
    a multi-dimensional box (`_split_access`).

    Every dimension's digits are split by `_split_digits` and the base by `_split_base`: with every
    remainder term non-negative and their largest sum (`slack`, plus at most `c - period` for the base's
    unbounded terms) below c, there is no carry: `a // c = m + r // c + sum of the quotient parts` and
    `a % c = r % c + sum of the remainder parts` (r % c is r itself when r's terms are all bounded). An
    `scf.for` induction variable with constant bounds (`k_idx` of a K loop) is such a bounded term.
    Size-1 dimensions do not vary: their coefficient is 0.

    With `bounded` (the mask-bounded pass), one dimension of coefficient 1 that `_split_digits` cannot
    split (a K offset of BLOCK_K = 64 over rows of K = 40) stays a remainder term below the limit
    `period - slack` on its index (AffineForm.limits), which the access's mask must imply (`a_mask`:
    `offs_k < K - k_idx * BLOCK_K`).
    """
    if not isinstance(c, int) or c <= 0 or a.ptr is not None or a.index is not None or a.wrap is not None:
        return None
    split = _split_base(a.base, c) if not a.limits else None
    if split is None:
        return None
    m, r, period, slack = split
    rems: list[Coeff] = []
    quots: list[Coeff] = []
    runs: list[tuple[int, int]] = []  # (d, its slack): dimensions of coefficient 1 a limit may bound
    for d, coeff in enumerate(a.coeffs):
        parts = _split_digits(coeff, shape[d], c) if shape[d] != 1 else (0, 0, 0)
        if bounded and isinstance(coeff, int) and coeff == 1 and shape[d] != 1 and (parts is None or parts[1] == 0):
            parts, runs = (1, 0, 0), [*runs, (d, shape[d] - 1)]
        if parts is None:
            return None
        rems.append(parts[0])
        quots.append(parts[1])
        slack += parts[2]
    limits: list[tuple[Expr, ...]] = [()] * len(shape)
    if slack + sum(e for _, e in runs) >= period:
        if len(runs) != 1 or slack >= period:
            return None
        limits[runs[0][0]] = (period - slack,)
    if period == c:  # r is bounded terms only, r <= slack < c
        form = AffineForm(r, tuple(rems)) if is_rem else AffineForm(m, tuple(quots))
    else:
        form = AffineForm(rem(r, c), tuple(rems)) if is_rem else AffineForm(add(m, div(r, c)), tuple(quots))
    return form.limited(tuple(limits)) if any(limits) else form


class _Analyzer:
    """Computes forms for integer/pointer tensors and box masks, op by op in block order."""

    def __init__(
        self, info: MemoryAccessInfo, mask_bounded: bool = False, wrap_rows: bool = False, place_value: bool = False
    ) -> None:
        self.info = info
        self.place_value = place_value
        """The fourth pass: a `%` or `//` no other rule gives a form is split by place value across the
        tile's dimensions (`place_value_split`)."""
        self.mask_bounded = mask_bounded
        """The second pass of `analyze_function`: a `%` or `//` may hold only below a limit on one
        dimension's index (`_bounded_rem_div`), which each access's mask must imply (`_classify`)."""
        self.wrap_rows = wrap_rows
        """The third pass: a `%` or `//` by a constant of an index varying along one dimension of an n-D
        tile is a wrapped box along it (`AffineForm.wrap_dim`; a store of whole rows, `_wrapped_store`)."""

    # -- forms -------------------------------------------------------------------------------
    def form_of(self, v: SSAValue) -> AffineForm | None:
        if v in self.info.forms:
            return self.info.forms[v]
        owner = v.owner
        if isinstance(owner, scf.IfOp) and isinstance(v.type, TensorType):
            return self._if_form(owner, owner.results.index(v))
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

    def _if_form(self, op: scf.IfOp, i: int) -> AffineForm | None:
        """The form of result i of an scf.if: the taken branch's when the condition is computed from constants
        (`constant_condition`), else the form both branches yield (Inductor's template picks
        `tl.multiple_of(rm % M, ..)` or plain `rm % M` by a condition the canonicalizer leaves in place)."""
        if not op.false_region.blocks:
            return None
        then_y, else_y = op.true_region.block.last_op, op.false_region.block.last_op
        if not isinstance(then_y, scf.YieldOp) or not isinstance(else_y, scf.YieldOp):
            return None
        taken = constant_condition(op.cond)
        if taken is not None:
            a = self.form_of((then_y if taken else else_y).operands[i])
            if a is None:
                return None
            self.info.forms[op.results[i]] = a
            return a
        a, b = self.form_of(then_y.operands[i]), self.form_of(else_y.operands[i])
        if a is None or a != b:
            return None
        self.info.forms[op.results[i]] = a
        return a

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

    def _ints_or_index(self, *values: SSAValue) -> list[AffineForm] | None:
        """Like `_ints`, but an integer tensor without a form (loaded ids) becomes an index tile."""
        forms = [self.form_of(v) or _index_leaf(v) for v in values]
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
        if src is None or src.index is not None or src.wrap is not None:
            return None
        coeffs = list(src.coeffs)
        coeffs.insert(op.axis.value.data, 0)
        limits = list(src.limits)
        if limits:
            limits.insert(op.axis.value.data, ())
        return AffineForm(src.base, tuple(coeffs), src.ptr, tuple(limits))

    def _broadcast(self, op: tt.BroadcastOp, shape: tuple[int, ...]) -> AffineForm | None:
        src = self.form_of(op.src) or _index_leaf(op.src)
        if src is None:
            return None
        pairs = zip(_shape(op.src.type), shape, src.coeffs, strict=True)
        coeffs = tuple(0 if s == 1 and d != 1 else c for s, d, c in pairs)
        # a size-1 dimension never reaches a limit; the index tile broadcasts as it is
        return replace(src, coeffs=coeffs)

    def _add(self, op: Operation, shape: tuple[int, ...]) -> AffineForm | None:
        forms = self._ints_or_index(op.operands[0], op.operands[1])
        if forms is None:
            return None
        a, b = forms
        if (a.index is not None and a.index is op.operands[0] and b.uniform) or (
            b.index is not None and b.index is op.operands[1] and a.uniform
        ):
            return None  # a loaded id plus a constant is a new id tile (Inductor's `id + n` wrap), not an offset
        return a.plus(b, -1 if isinstance(op, arith.SubiOp) else 1)

    def _mul(self, op: Operation, shape: tuple[int, ...]) -> AffineForm | None:
        forms = self._ints_or_index(op.operands[0], op.operands[1])
        if forms is None:
            return None
        a, b = forms
        if b.uniform:
            a, b = b, a
        if not a.uniform:
            return None  # a product of two index-dependent values is not affine
        scale = mul(b.index_scale, a.base) if b.index is not None else 0
        coeffs = tuple(coeff_scale(c, a.base) for c in b.coeffs)
        wrap = b.wrap if any(isinstance(c, Digits) for c in coeffs) else None  # a zero scale leaves no box
        product = AffineForm(mul(b.base, a.base), coeffs, None, (), b.index, scale, wrap, b.wrap_dim)
        return product.limited(a.limits).limited(b.limits)

    def _rem_div(self, op: Operation, shape: tuple[int, ...]) -> AffineForm | None:
        """`a % c` and `a // c` (Inductor's decompositions of a flat index, `rm % M`), c > 0 uniform.

        A uniform `a` gives a uniform result. Otherwise `a` must vary along one dimension d, through
        one digit q (the whole index, or one Digits entry) of extent E with a positive constant
        coefficient k, from a base b >= 0:
        - when k * (E - 1) < gcd(divisor(b), c) (the block stays within one period of c), `a % c` is
          `b % c + k * q` and `a // c` is `b // c`;
        - when k == 1, c is a constant dividing both b and E, the digit splits in two, `q = q' + c * q''`
          with q' < c: `a % c` is q' and `a // c` is `b // c + q''` (XBLOCK a multiple of the row, an
          aligned `xoffset = pid * XBLOCK`: the block covers whole rows, a multi-row box);
        When neither holds, a `%` whose op carries the kernel's `tt.contiguity` hint (`tl.max_contiguous`)
        covering the block is taken at its word, with a limit: past `c - b % c` the index would wrap, and
        a load reads `other` there (see AffineForm.limits). Otherwise, when k == 1, c is a constant n and
        the form is 1-D, the result is over a wrapped box (AffineForm.wrap) of the rows the block touches,
        at most ceil((n - gcd(divisor(b), n) + E) / n) of them; so is an n-D form (split along d,
        `AffineForm.wrap_dim`) in the third pass (`wrap_rows`): cnn's `yindex % 3` over a [YBLOCK, 1]
        tile, whose store holds whole rows when one block holds every valid row.

        Before those last two, and where `a` varies along several dimensions, `_bounded_rem_div` splits by
        place value when that is exact; in the second pass (`mask_bounded`) also where it holds only below
        a limit on one dimension that the access's mask must imply, and a limited `a` passes its limits on.
        When none of these gives a form, the fourth pass (`place_value`) splits `a` by place value across
        the tile's dimensions, a digit straddling c split in two (`place_value_split`).
        """
        forms = self._ints(op.operands[0], op.operands[1])
        if forms is None:
            return None
        a, c = forms
        limits: tuple[tuple[Expr, ...], ...] = ()
        if a.limits and self.mask_bounded and not c.limits:
            a, limits = replace(a, limits=()), a.limits
        form = self._rem_div_form(op, shape, a, c)
        if form is None and self.place_value and c.uniform and not c.limits:
            is_rem = isinstance(op, arith.RemSIOp | arith.RemUIOp)
            form = place_value_split(a, c.base, is_rem, shape, self.mask_bounded)
        return form.limited(limits) if form is not None else None

    def _rem_div_form(self, op: Operation, shape: tuple[int, ...], a: AffineForm, c: AffineForm) -> AffineForm | None:
        if not c.uniform or a.limits or c.limits or a.index is not None or a.wrap is not None:
            return None
        is_rem = isinstance(op, arith.RemSIOp | arith.RemUIOp)
        bounded = _bounded_rem_div(a, c.base, is_rem, shape)
        exact = bounded if bounded is not None and not bounded.limits else None
        if bounded is not None and bounded.limits and not self.mask_bounded:
            bounded = None
        if isinstance(c.base, int) and c.base <= 0:
            return None
        if a.uniform:
            base = rem(a.base, c.base) if is_rem else div(a.base, c.base)
            return AffineForm(base, a.coeffs)
        varying = [d for d, k in enumerate(a.coeffs) if not (isinstance(k, int) and k == 0)]
        if len(varying) != 1:
            return exact or bounded
        d = varying[0]
        coeff = a.coeffs[d]
        extents, ks = (coeff.extents, coeff.coeffs) if isinstance(coeff, Digits) else ((shape[d],), (coeff,))
        moving = [j for j, k in enumerate(ks) if not (isinstance(k, int) and k == 0)]
        if len(moving) != 1 or not isinstance(ks[moving[0]], int) or ks[moving[0]] <= 0:  # type: ignore[operator]
            return exact or bounded
        j, k, extent = moving[0], ks[moving[0]], extents[moving[0]]
        assert isinstance(k, int)

        def with_coeff(new: Coeff) -> tuple[Coeff, ...]:
            return tuple(new if e == d else x for e, x in enumerate(a.coeffs))

        if expr_nonneg(a.base):
            period = math.gcd(expr_divisor(a.base), expr_divisor(c.base))  # divides b % c, as c > 0
            if k * (extent - 1) < period:
                if is_rem:
                    return AffineForm(rem(a.base, c.base), a.coeffs)
                return AffineForm(div(a.base, c.base), with_coeff(0))
            n = c.base
            if k == 1 and isinstance(n, int) and period % n == 0 and extent % n == 0:
                inner = (*extents[:j], n, extent // n, *extents[j + 1 :])
                zeros = (0,) * len(ks)
                if is_rem:
                    return AffineForm(0, with_coeff(digits(inner, (*zeros[:j], 1, 0, *zeros[j + 1 :]))))
                return AffineForm(div(a.base, n), with_coeff(digits(inner, (*zeros[:j], 0, 1, *zeros[j + 1 :]))))
        if exact is not None:
            return exact
        if is_rem and k == 1 and not isinstance(coeff, Digits) and _contiguity(op, d) >= shape[d]:
            limits: list[tuple[Expr, ...]] = [()] * len(shape)
            limits[d] = (add(c.base, neg(rem(a.base, c.base))),)
            return AffineForm(rem(a.base, c.base), a.coeffs, limits=tuple(limits))
        n = c.base
        wrappable = len(shape) == 1 or self.wrap_rows  # n-D: third pass only (`analyze_function`)
        if k == 1 and isinstance(n, int) and wrappable and not isinstance(coeff, Digits) and expr_nonneg(a.base):
            # a block not starting at a row boundary, or not whole rows: a wrapped box (see AffineForm.wrap)
            # of the rows the block touches along d; its first element sits `b % n <= n - gcd` into the box
            rows = -(-(n - math.gcd(expr_divisor(a.base), n) + extent) // n)
            if is_rem:
                return AffineForm(0, with_coeff(digits((n, rows), (1, 0))), wrap=a.base, wrap_dim=d)
            return AffineForm(div(a.base, n), with_coeff(digits((n, rows), (0, 1))), wrap=a.base, wrap_dim=d)
        return bounded

    def _bitcast(self, op: tt.BitcastOp, shape: tuple[int, ...]) -> AffineForm | None:
        """A tensor of pointers recast to pointees of the same storage size (Triton stores bools through
        `!tt.ptr<i1>` recast to `!tt.ptr<i8>`): the same block; the DMA's base is recast where issued."""
        src = self.form_of(op.src)
        s, r = op.src.type, op.result.type
        if src is None or src.ptr is None or not isinstance(s, TensorType) or not isinstance(r, TensorType):
            return None
        a, b = s.element_type, r.element_type
        if not isinstance(a, tt.PointerType) or not isinstance(b, tt.PointerType):
            return None
        try:
            same = mtia.element_bytes(a.pointee_type) == mtia.element_bytes(b.pointee_type)
        except VerifyException:  # a pointee without a storage size
            return None
        return src if same else None

    def _addptr(self, op: tt.AddPtrOp, shape: tuple[int, ...]) -> AffineForm | None:
        p, o = self.form_of(op.ptr), self.form_of(op.offset) or _index_leaf(op.offset)
        if p is None or o is None or p.ptr is None or o.ptr is not None:
            return None
        return p.plus(o)

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
            tuple(a.digits_of(d) + b.digits_of(d) for d in range(rank)) if a.digit_bounds or b.digit_bounds else (),
        )

    def _expand_mask(self, op: tt.ExpandDimsOp, shape: tuple[int, ...]) -> BoxMask | None:
        src = self.mask_of(op.src)
        if src is None:
            return None
        rank = len(src.bounds)
        bounds, lowers = list(src.bounds), [src.lower(d) for d in range(rank)]
        split = [src.digits_of(d) for d in range(rank)]
        for x in (bounds, lowers, split):
            x.insert(op.axis.value.data, ())
        return BoxMask(tuple(bounds), tuple(lowers) if src.lowers else (), tuple(split) if src.digit_bounds else ())

    def _broadcast_mask(self, op: tt.BroadcastOp, shape: tuple[int, ...]) -> BoxMask | None:
        src = self.mask_of(op.src)
        if src is None:
            return None
        for k, (s, d, b) in enumerate(zip(_shape(op.src.type), shape, src.bounds, strict=True)):
            if s == 1 and d != 1 and (b or src.lower(k) or src.digits_of(k)):
                return None  # a bound on a broadcast dimension is a whole-or-nothing condition
        return src

    def _splat_mask(self, op: tt.SplatOp, shape: tuple[int, ...]) -> BoxMask | None:
        """A scalar condition on uniform values splat to the tile (the bmm template's `idx_q < BATCH`): all
        or nothing, as a bound `count * shape[0]` on dimension 0, with count > 0 exactly when the condition
        holds (the DMA clamps the bound to [0, shape[0]])."""
        cmp = op.src.owner
        if not shape or not isinstance(cmp, arith.CmpiOp) or isinstance(cmp.lhs.type, TensorType):
            return None
        a, b = self.form_of(cmp.lhs), self.form_of(cmp.rhs)
        if a is None or b is None or a.ptr is not None or b.ptr is not None:
            return None
        pred = cmp.predicate.value.data  # 2 slt, 3 sle, 4 sgt, 5 sge
        count = {
            2: add(b.base, neg(a.base)), 3: add(add(b.base, neg(a.base)), 1),
            4: add(a.base, neg(b.base)), 5: add(add(a.base, neg(b.base)), 1),
        }.get(pred)  # fmt: skip
        if count is None:
            return None
        bounds: list[tuple[Expr, ...]] = [()] * len(shape)
        bounds[0] = (mul(count, shape[0]),)
        return BoxMask(tuple(bounds))

    def _cmp_rule(self, op: arith.CmpiOp, shape: tuple[int, ...]) -> BoxMask | None:
        return self._cmp_mask(op, shape)

    def _cmp_mask(self, op: arith.CmpiOp, shape: tuple[int, ...]) -> BoxMask | None:
        pred = op.predicate.value.data
        # arith.cmpi predicates: 2 slt, 3 sle, 4 sgt, 5 sge; unsigned compares would also reject negative
        # offsets. Normalized to `a < b` (an upper bound) or `a >= b` (a lower bound), `a` the index.
        a, b = self.form_of(op.lhs), self.form_of(op.rhs)
        if a is None or b is None or a.ptr is not None or b.ptr is not None or a.limits or b.limits:
            return None
        if a.index is not None or b.index is not None:
            return None
        if pred in (3, 4):  # a <= b == b >= a; a > b == b < a
            a, b, pred = b, a, {3: 5, 4: 2}[pred]
        if pred not in (2, 5) or not b.uniform:
            return None
        rank = len(shape)
        dims = [d for d, c in enumerate(a.coeffs) if not (isinstance(c, int) and c == 0)]
        if not dims and rank:  # a uniform condition (the conv template's `idx_n < BATCH` within one image):
            # all or nothing, as in `_splat_mask`
            count = add(b.base, neg(a.base)) if pred == 2 else add(add(a.base, neg(b.base)), 1)
            return BoxMask((((mul(count, shape[0])),), *((),) * (rank - 1)))
        if len(dims) != 1:
            return None
        bound = add(b.base, neg(a.base))
        c = a.coeffs[dims[0]]
        if isinstance(c, Digits):  # a condition on one digit of a split index
            moving = [j for j, k in enumerate(c.coeffs) if not (isinstance(k, int) and k == 0)]
            if a.wrap is not None or len(moving) != 1 or c.coeffs[moving[0]] != 1:
                return None
            j = moving[0]
            split: list[tuple[DigitBound, ...]] = [()] * rank
            split[dims[0]] = (DigitBound(c.places[j], c.extents[j], pred == 5, bound),)
            return BoxMask(((),) * rank, (), tuple(split))
        if not (isinstance(c, int) and c == 1):
            return None
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
    arith.RemSIOp: _Analyzer._rem_div,
    arith.RemUIOp: _Analyzer._rem_div,
    arith.DivSIOp: _Analyzer._rem_div,
    arith.DivUIOp: _Analyzer._rem_div,
    tt.AddPtrOp: _Analyzer._addptr,
    tt.BitcastOp: _Analyzer._bitcast,
}
"""How each op kind transforms the affine forms of its operands (ops not listed have no form)."""


_MASK_RULES = {
    arith.ConstantOp: _Analyzer._true_mask,
    arith.CmpiOp: _Analyzer._cmp_rule,
    tt.SplatOp: _Analyzer._splat_mask,
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
    info = _analyze(func, mask_bounded=False)
    if info.fallback_reasons:
        # Second pass, for the accesses the first left on the scalar core: a `%`/`//` may hold below a
        # limit that the access's mask implies (see `_bounded_rem_div`); the first pass's forms stay.
        bounded = _analyze(func, mask_bounded=True)
        for op in list(info.fallback_reasons):
            if op in bounded.accesses:
                info.accesses[op] = bounded.accesses[op]
                del info.fallback_reasons[op]
            elif info.fallback_reasons[op] == _ELEMENT_GATHER and bounded.fallback_reasons.get(op) == _UNBOUNDED_LIMIT:
                info.fallback_reasons[op] = _UNBOUNDED_LIMIT  # the remainder was an index tile only for want of a box
    if any(isinstance(op, tt.StoreOp) for op in info.fallback_reasons):
        # Third pass, for the stores still left: a split along one dimension of an n-D tile is a wrapped
        # box (`wrap_rows`), stored when one block holds every valid row (`_wrapped_store`).
        wrapped = _analyze(func, mask_bounded=True, wrap_rows=True)
        for op in list(info.fallback_reasons):
            if isinstance(op, tt.StoreOp) and op in wrapped.accesses:
                info.accesses[op] = wrapped.accesses[op]
                del info.fallback_reasons[op]
            elif (reason := wrapped.fallback_reasons.get(op)) in (_WRAPPED_STORE, _REPEATED_STORE):
                info.fallback_reasons[op] = reason  # the remainder was an index tile only for want of a box
    return _place_value_pass(func, info)


def _place_value_pass(func: Operation, info: MemoryAccessInfo) -> MemoryAccessInfo:
    """Fourth pass of `analyze_function`, for the accesses the others left on the scalar core: a `%`/`//`
    across several dimensions of a tile, split by place value (`place_value_split`). The earlier passes'
    accesses stay (a form where they had none could turn an index tile's rows into a box no DMA takes)."""
    if info.fallback_reasons:
        split = _analyze(func, mask_bounded=True, place_value=True)
        for op in list(info.fallback_reasons):
            access = split.accesses.get(op)
            if access is None:
                if split.fallback_reasons.get(op, "").startswith(_BOX_RANK_PREFIX):
                    info.fallback_reasons[op] = split.fallback_reasons[op]  # a box, but too many dimensions
                continue
            if isinstance(op, tt.StoreOp) and _repeats(access):
                info.fallback_reasons[op] = _REPEATED_STORE
                continue
            info.accesses[op] = access
            del info.fallback_reasons[op]
    return info


def _repeats(access: BlockAccess) -> bool:
    """True when the block has a stride of 0 along a dimension of more than one element (several elements at
    one address)."""
    return any(isinstance(k, int) and k == 0 for k, e in zip(access.strides, access.shape, strict=True) if e > 1)


def _analyze(
    func: Operation, mask_bounded: bool, wrap_rows: bool = False, place_value: bool = False
) -> MemoryAccessInfo:
    info = MemoryAccessInfo()
    analyzer = _Analyzer(info, mask_bounded, wrap_rows, place_value)
    for op in ops_of(func):
        analyzer.visit(op)
        if isinstance(op, tt.LoadOp | tt.StoreOp):
            access, reason = _classify(op, analyzer)
            if access is not None:
                info.accesses[op] = access
            else:
                info.fallback_reasons[op] = reason
    return info


def _classify(op: tt.LoadOp | tt.StoreOp, analyzer: _Analyzer) -> tuple[BlockAccess | None, str]:
    """The DMA access of `op` with a box the DMA engine takes (`fit_rank`), else (None, why not)."""
    access, reason = _classify_box(op, analyzer)
    if access is None:
        return None, reason
    return fit_rank(access, _module_config(op).dma_max_rank)


def _classify_box(op: tt.LoadOp | tt.StoreOp, analyzer: _Analyzer) -> tuple[BlockAccess | None, str]:
    if not isinstance(op.ptr.type, TensorType):
        return None, "scalar pointer"
    shape = _shape(op.ptr.type)
    form = analyzer.form_of(op.ptr)
    if form is None or form.ptr is None:
        return None, "pointer is not an affine block"
    if getattr(op, "boundaryCheck", None) is not None and len(op.boundaryCheck.get_values()) > 0:
        return None, "boundary check"
    if form.index is not None:
        if isinstance(op, tt.StoreOp):
            return None, _row_scatter_reason(form, shape, analyzer)
        if form.wrap is not None or (
            not form.split and not _rows_only(form.index, analyzer) and not _rows_in_memory_order(form, shape)
        ):
            runs = _row_runs_access(op, form, shape, analyzer)
            return runs if runs[0] is not None else _ls_gather_access(op, form, shape, analyzer)
    bounds: tuple[Expr, ...] = tuple(shape)
    starts: tuple[Expr, ...] | None = None
    if form.limits and analyzer.mask_bounded:
        mask = analyzer.mask_of(op.mask) if op.mask is not None else None
        if mask is None or not all(
            any(bound_implies(b, limit) for b in mask.bounds[d])
            for d, dim_limits in enumerate(form.limits)
            for limit in dim_limits
        ):
            return None, _UNBOUNDED_LIMIT
        form = replace(form, limits=())  # every valid element is below its limits
    limits = form.limits or ((),) * len(shape)
    if form.limits and isinstance(op, tt.StoreOp):
        return None, "store through an index that may wrap around"
    if op.mask is not None:
        mask = analyzer.mask_of(op.mask)
        if mask is None:
            return None, "mask is not a box"
        limits = tuple(a + b for a, b in zip(mask.bounds, limits, strict=True))
        if mask.lowers:
            if form.index is not None:
                return None, "lower bound on an index tile's rows"
            starts = tuple(_max_start(mask.lower(d)) for d in range(len(shape)))
    if any(limits):
        bounds = tuple(_min_bound(b, s) for b, s in zip(limits, shape, strict=True))
    other, why = _dma_other(op)
    if why:
        return None, why
    digit_limits: dict[int, dict[int, DigitLimits]] = {}
    if op.mask is not None and (mask := analyzer.mask_of(op.mask)) is not None and mask.digit_bounds:
        refined = _refine_by_digit_bounds(form, mask, shape)
        if refined is None:
            return None, "mask bounds digits of a split index that the block's digits do not refine"
        form, digit_limits = refined
    if form.wrap is not None and isinstance(op, tt.StoreOp):
        return _wrapped_store(form, bounds, shape, starts)
    if form.split:
        return _split_access(analyzer, form, bounds, shape, other, starts, digit_limits)
    return (
        BlockAccess(
            form.ptr,
            form.base,
            form.coeffs,
            bounds,
            shape,
            other,
            form.index,
            form.index_scale,
            starts,  # type: ignore[arg-type]
        ),
        "",
    )


_ROW_SCATTER = "store of rows through an index tile (a repeated id would leave the last writer to the DMA's order)"
_ELEMENT_SCATTER = "store through an index tile that varies along the last dimension (an element scatter, not rows)"


def _row_scatter_reason(form: AffineForm, shape: tuple[int, ...], analyzer: _Analyzer) -> str:
    """Why a store through an index tile stays on the scalar core. Rows (the tile the same along the last
    dimension): an indexed DMA store would write them, but two equal ids would leave the row's final value
    to the order the DMA engine writes its rows in, which no source gives (MACHINE.md: only that MTIA's DMA
    has an indexed mode for embedding rows), and a tile of ids is not provably free of repeats; the scalar
    core writes in element order, as Triton's interpreter does. Else single elements (moe_top2's
    `out[tmp3 + 4 * x1]`), which no row DMA writes."""
    assert form.index is not None
    last = form.coeffs[-1] if form.coeffs else 0
    if isinstance(last, Digits):  # a flat index split across rows: one id per run of the innermost digit
        rows = _rows_only(form.index, analyzer, inner=last.extents[0])
    else:
        rows = _rows_only(form.index, analyzer) or _rows_in_memory_order(form, shape)
    return _ROW_SCATTER if rows else _ELEMENT_SCATTER


_UNBOUNDED_LIMIT = "a split index holds only below a limit the mask does not imply (it may carry into the next row)"
_ELEMENT_GATHER = "index tile varies along the last dimension (an element gather, not rows)"


def _rows_in_memory_order(form: AffineForm, shape: tuple[int, ...]) -> bool:
    """True when the index tile varies along the last dimension but the block is contiguous along another
    dimension u (coefficient 1) along which the tile is constant (size 1): rows of memory picked by the
    index, moved in memory order (u last) and transposed by the MLU (`memory_order`). dlrm's `z @ z^T`:
    the bmm template's B tile [BLOCK_K, BLOCK_N] reads column `rn % N` of z^T, row `rn % N` of z."""
    assert form.index is not None
    index_shape = _shape(form.index.type)
    if len(shape) < 2 or len(index_shape) != len(shape):
        return False
    unit = [d for d, c in enumerate(form.coeffs[:-1]) if isinstance(c, int) and c == 1 and shape[d] > 1]
    return len(unit) == 1 and index_shape[unit[0]] == 1


def _ls_gather_access(
    op: tt.LoadOp | tt.StoreOp, form: AffineForm, shape: tuple[int, ...], analyzer: _Analyzer
) -> tuple[BlockAccess | None, str]:
    """An element gather `ptr + base + C * row(i) + index[i]` whose affine part moves along one row
    coordinate with a constant stride C: the DMA moves the rows the block touches, [rows, C] (dense in
    memory), and the tile is gathered from them in LS (`BlockAccess.ls_gather`), else the scalar core.

    The row coordinate is one dimension of the tile (a GEMM template's B tile `rk * N + rn % N`: rows rk,
    the index `rn % N` picks the column) or the outer digit of a wrapped flat index (dlrm's tril gather
    `z[b, li[k], lj[k]]` as `tmp9 + 5 * tmp4 + 25 * x1` with `x1 = xindex // 10`: the rows z[b] the block
    touches). The rows stop at the mask's bound (the rows the valid elements lie in). The index need not be
    provably within a row: a lane whose address falls outside the box is gathered by the scalar core (none
    when the index is a remainder by C, `LsGather.exact`). Refused: an index with a scale other than 1, a
    mask that is not a box or bounds a row by a start or a digit, a box of more elements than
    `cost.ls_gather_box_ratio` times the tile's (moving it would cost more than the scalar core's gather)
    on the machine of the enclosing module (`_module_config`). dlrm's tril gather reads 27 rows of 25 for
    a tile of 256, mlp_train's target gather 16 rows of 8 for a tile of 16.
    """
    assert form.ptr is not None and form.index is not None
    if not (isinstance(form.index_scale, int) and form.index_scale == 1) or form.limits:
        return None, _ELEMENT_GATHER
    mask = analyzer.mask_of(op.mask) if op.mask is not None else None
    if op.mask is not None and (mask is None or mask.lowers or mask.digit_bounds):
        return None, _ELEMENT_GATHER
    rows = _gather_rows(form, shape, mask)
    if rows is None:
        return None, _ELEMENT_GATHER
    extent, row, row_bound = rows
    pointee = form.ptr.type
    assert isinstance(pointee, tt.PointerType)
    ratio = cost.ls_gather_box_ratio(mtia.element_bytes(pointee.pointee_type), _module_config(op))
    if extent * row > ratio * math.prod(shape):
        return None, _ELEMENT_GATHER
    other, why = _dma_other(op)
    if why:
        return None, why
    exact = _below(form.index, row, analyzer)
    return (
        BlockAccess(form.ptr, form.base, (row, 1), (row_bound, row), (extent, row), other,
                    ls_gather=LsGather(exact)),
        "",
    )  # fmt: skip


@dataclass(frozen=True)
class _Run:
    """How a 1-D integer tile moves along aligned runs of g lanes (`_run_of`): within each run,
    `v[i] = v[start] + slope * (i - start)`, `start` the run's first lane (a multiple of g). `align` (> 0)
    divides `v[start]` of every run (0: every `v[start]` is 0); `nonneg`: every element is >= 0;
    `uniform`: the tile is one scalar, `slope` 0 and `value` that scalar."""

    slope: Expr
    align: int
    nonneg: bool
    uniform: bool = False
    value: Expr = 0


def _run_of(v: SSAValue, g: int, analyzer: _Analyzer, depth: int = _FACT_DEPTH) -> _Run | None:
    """How the 1-D integer tile `v` moves along aligned runs of `g` lanes (see `_Run`), else None.

    A tile with a plain affine form `b + k * i` steps by k (runs start at `b + k * g * j`). Otherwise by its
    op: extsi / index_cast keep the run; sums add slopes; a product needs one factor uniform (the slope
    scales) or both constant along runs. `a % c` and `a // c` with c uniform: a constant along runs stays
    one; an `a` that steps by 1 from run starts that are multiples of g, non-negative, over a c that is a
    multiple of g (`expr_divisor`), never crosses a multiple of c inside a run, as every run lies in
    [c * m, c * m + c) for the m of its start: `a % c` steps by 1 and `a // c` is constant along it.

    ASSUMPTION: a run-time divisor c is not 0 (for c < 0 the same holds, by |c|). The kernel computes
    `a % c` and `a // c` itself, so c = 0 is a division by zero in the kernel: undefined behaviour in
    compiled Triton (LLVM's srem/sdiv), where the claim holds wherever the kernel is defined. (Our interpreter
    and Triton's give 0 there instead; the DMA then reads a run's lanes where the gather read its first.)
    The analysis's `rem` and `div` assume positive divisors throughout.
    """
    t = v.type
    if not isinstance(t, TensorType) or len(t.get_shape()) != 1 or not isinstance(t.element_type, IntegerType):
        return None
    form = analyzer.form_of(v)
    if form is not None and form.ptr is None and form.index is None and not form.limits and form.wrap is None:
        k = form.coeffs[0]
        if not isinstance(k, Digits):
            uniform = isinstance(k, int) and k == 0
            align = math.gcd(expr_divisor(form.base), expr_divisor(k) * g)
            return _Run(k, align, expr_nonneg(form.base) and expr_nonneg(k), uniform, form.base if uniform else 0)
    owner = v.owner
    if depth == 0 or not isinstance(owner, Operation):
        return None
    if isinstance(owner, arith.ExtSIOp | arith.IndexCastOp):
        return _run_of(owner.operands[0], g, analyzer, depth - 1)
    rule = _RUN_RULES.get(type(owner))
    if rule is None:
        return None
    a, b = (_run_of(x, g, analyzer, depth - 1) for x in owner.operands[:2])
    return rule(a, b, g) if a is not None and b is not None else None


def _run_sum(a: _Run, b: _Run, g: int, sign: int = 1) -> _Run | None:
    slope = add(a.slope, b.slope if sign > 0 else neg(b.slope))
    uniform = a.uniform and b.uniform
    value = add(a.value, b.value if sign > 0 else neg(b.value)) if uniform else 0
    return _Run(slope, math.gcd(a.align, b.align), a.nonneg and b.nonneg and sign > 0, uniform, value)


def _run_difference(a: _Run, b: _Run, g: int) -> _Run | None:
    return _run_sum(a, b, g, -1)


def _run_product(a: _Run, b: _Run, g: int) -> _Run | None:
    if b.uniform:
        a, b = b, a
    nonneg = a.nonneg and b.nonneg
    if a.uniform:
        value = mul(a.value, b.value) if b.uniform else 0
        return _Run(mul(b.slope, a.value), b.align * expr_divisor(a.value), nonneg, b.uniform, value)
    if a.slope == 0 and b.slope == 0:
        return _Run(0, a.align * b.align, nonneg)
    return None


def _run_rem_div(a: _Run, c: _Run, g: int, is_rem: bool) -> _Run | None:
    if not c.uniform:
        return None
    divisor = expr_divisor(c.value)
    if divisor == 0:
        return None  # a division by a constant 0
    if a.slope == 0:
        if a.uniform:
            value = rem(a.value, c.value) if is_rem else div(a.value, c.value)
            return _Run(0, expr_divisor(value), a.nonneg and (is_rem or c.nonneg), True, value)
        return _Run(0, math.gcd(a.align, divisor) if is_rem else 1, a.nonneg and (is_rem or c.nonneg))
    if a.slope != 1 or not a.nonneg or divisor % g or a.align % g:
        return None
    if is_rem:
        return _Run(1, math.gcd(a.align, divisor), True)
    return _Run(0, 1, c.nonneg)


_RUN_RULES = {
    arith.AddiOp: _run_sum,
    arith.SubiOp: _run_difference,
    arith.MuliOp: _run_product,
    arith.RemSIOp: lambda a, c, g: _run_rem_div(a, c, g, True),
    arith.RemUIOp: lambda a, c, g: _run_rem_div(a, c, g, True),
    arith.DivSIOp: lambda a, c, g: _run_rem_div(a, c, g, False),
    arith.DivUIOp: lambda a, c, g: _run_rem_div(a, c, g, False),
}
"""How each op combines its operands' runs (`_run_of`)."""


def _row_runs_access(
    op: tt.LoadOp | tt.StoreOp, form: AffineForm, shape: tuple[int, ...], analyzer: _Analyzer
) -> tuple[BlockAccess | None, str]:
    """The load `ptr + base + s * index[i] + k * i` of a 1-D tile whose index tile steps by a uniform slope t
    along aligned runs of g lanes (`_run_of`): the block is g-element rows of stride `s * t + k`, row r
    starting at `s * index[g * r] + k * g * r`: an indexed DMA over the box [E / g, g] whose index tile is the
    tile read at each row's start (`BlockAccess.index_at_row_starts`). Inductor's `x0 + 64 * x1 * ks1` with
    `x0 = xindex % ks0`, `x1 = xindex // ks0` (ks0 a run-time multiple of 16, `torch.compile(dynamic=True)`)
    is rows of 16.

    g is the largest power of two dividing the block's extent E and the mask's bound (`xindex < xnumel`: the
    valid lanes are whole rows) for which the tile runs; a row must hold a DMA granule at least
    (`MachineConfig.dma_granule_bytes` of the enclosing module): the timing model charges an indexed DMA one
    descriptor per contiguous run of the rows it reads (`mtia_indexed_dma`), adjacent rows merged, so rows of
    a granule or more keep that charge within one descriptor and one granule per row of MTIA's per-row
    descriptors (S1's indexed mode). Else (None, reason)."""
    assert form.ptr is not None and form.index is not None
    if isinstance(op, tt.StoreOp) or len(shape) != 1 or form.wrap is not None or form.limits:
        return None, _ELEMENT_GATHER
    k = form.coeffs[0]
    mask = analyzer.mask_of(op.mask) if op.mask is not None else None
    if isinstance(k, Digits) or _shape(form.index.type) != shape or (op.mask is not None and mask is None):
        return None, _ELEMENT_GATHER
    bound: Expr = shape[0]
    if mask is not None:
        if mask.lowers or mask.digit_bounds:
            return None, _ELEMENT_GATHER
        bound = _min_bound(mask.bounds[0], shape[0]) if mask.bounds[0] else shape[0]
    pointee = form.ptr.type
    assert isinstance(pointee, tt.PointerType)
    granule = _module_config(op).dma_granule_bytes
    smallest = max(2, -(-granule // mtia.element_bytes(pointee.pointee_type)))
    limit = math.gcd(shape[0], expr_divisor(bound)) if bound != shape[0] else shape[0]
    g = limit & -limit  # the largest power of two dividing it
    while g >= smallest:
        run = _run_of(form.index, g, analyzer)
        if run is not None and not run.uniform:
            return _row_runs_block(op, form, shape, g, bound, run.slope)
        g //= 2
    return None, _ELEMENT_GATHER


def _row_runs_block(
    op: tt.LoadOp | tt.StoreOp, form: AffineForm, shape: tuple[int, ...], g: int, bound: Expr, slope: Expr
) -> tuple[BlockAccess | None, str]:
    """The indexed DMA of `_row_runs_access` for rows of g, the tile's valid lanes below `bound`."""
    assert form.ptr is not None and form.index is not None
    other, why = _dma_other(op)
    if why:
        return None, why
    k = form.coeffs[0]
    assert not isinstance(k, Digits)
    rows = shape[0] // g
    row_bound = rows if bound == shape[0] else div(bound, g)
    strides = (mul(k, g), add(mul(form.index_scale, slope), k))
    return (
        BlockAccess(form.ptr, form.base, strides, (row_bound, g), (rows, g), other, form.index, form.index_scale,
                    index_box=(rows, g), view=shape, index_at_row_starts=True),
        "",
    )  # fmt: skip


def _module_config(op: Operation) -> MachineConfig:
    """The MachineConfig of the module `op` is in (`module_config`: its `mtia.target` and overrides); the
    default chip's for a module without `mtia.target` (the pass or analysis run alone, as in FileCheck tests)."""
    top = op
    while (parent := top.parent_op()) is not None:
        top = parent
    return module_or_default_config(top)


def _gather_rows(form: AffineForm, shape: tuple[int, ...], mask: BoxMask | None) -> tuple[int, int, Expr] | None:
    """(rows, row length C, row bound) of an element gather's box (see `_ls_gather_access`), else None."""
    c = form.coeffs[0] if len(form.coeffs) == 1 else None
    if form.wrap is not None and isinstance(c, Digits):
        if len(c.extents) != 2 or c.coeffs[0] != 0 or not isinstance(c.coeffs[1], int) or c.coeffs[1] <= 0:
            return None
        n, start = c.extents[0], form.wrap
        touched = div(add(rem(start, n), shape[0] + n - 1), n)
        bound: Expr = touched
        if mask is not None and mask.bounds[0]:
            flat = _flat_bound(_min_bound(mask.bounds[0], shape[0]), start)
            if flat is None or flat % n:
                return None
            bound = ("min", touched, add(flat // n, neg(div(start, n))))
        return c.extents[1], c.coeffs[1], bound
    if form.split:
        return None
    moving = [d for d, k in enumerate(form.coeffs) if not (isinstance(k, int) and k == 0) and shape[d] > 1]
    if len(moving) != 1:
        return None
    d = moving[0]
    k = form.coeffs[d]
    if not isinstance(k, int) or k <= 0:
        return None
    bound = _min_bound(mask.bounds[d], shape[d]) if mask is not None else shape[d]
    return shape[d], k, bound


def _below(v: SSAValue, n: int, analyzer: _Analyzer, depth: int = _FACT_DEPTH) -> bool:
    """True if every element of the integer tile `v` is provably in [0, n): a remainder by a constant in
    (0, n] of a non-negative value (the GEMM template's `rn % N`), through expand_dims, broadcasts,
    value-preserving casts and the taken branch of an scf.if computed from constants."""
    owner = v.owner
    if depth == 0 or not isinstance(owner, Operation):
        return False
    if isinstance(owner, arith.RemSIOp | arith.RemUIOp):
        c = analyzer.form_of(owner.rhs)
        a = analyzer.form_of(owner.lhs)
        if c is None or not c.uniform or not isinstance(c.base, int) or not 0 < c.base <= n or a is None:
            return False
        return (
            a.ptr is None and a.index is None and a.wrap is None and not a.limits and expr_nonneg(a.base)
            and all(isinstance(k, int) and k >= 0 for k in a.coeffs)
        )  # fmt: skip
    if isinstance(owner, tt.ExpandDimsOp | tt.BroadcastOp | arith.ExtSIOp | arith.IndexCastOp):
        return _below(owner.operands[0], n, analyzer, depth - 1)
    if isinstance(owner, scf.IfOp):
        taken = constant_condition(owner.cond)
        region = owner.true_region if taken else owner.false_region
        if taken is None or not region.blocks or not isinstance(region.block.last_op, scf.YieldOp):
            return False
        return _below(region.block.last_op.operands[owner.results.index(v)], n, analyzer, depth - 1)
    return False


def _wrapped_access(
    form: AffineForm,
    bounds: tuple[Expr, ...],
    shape: tuple[int, ...],
    other: Attribute | SSAValue | None,
    starts: tuple[Expr, ...] | None,
) -> tuple[BlockAccess | None, str]:
    """The load of a wrapped form (AffineForm.wrap): the box of the rows the block touches, rows
    `start // n ..`, read whole and sliced from `start % n` (`BlockAccess.window`).

    The box's rows stop at the last row the block touches and, under a mask `xindex < N` (N a constant
    multiple of n, so the rows below it are whole), at row N // n: the box reads only rows the valid
    elements lie in. Stores are not boxes (they would write the rows' other elements).
    """
    assert form.ptr is not None and form.wrap is not None
    if len(shape) != 1:
        return None, "load through an index split across rows along one dimension of a tile, not at a row"
    c = form.coeffs[0]
    assert isinstance(c, Digits)
    if len(c.extents) != 2:
        return None, "flat index split across rows more than once, not starting at a row"
    if starts is not None:
        return None, "lower bound on a flat index split across rows"
    n, start = c.extents[0], form.wrap
    shift = rem(start, n)
    touched = div(add(shift, shape[0] + n - 1), n)
    row_bound: Expr = touched
    bound = bounds[0]
    if not (isinstance(bound, int) and bound == shape[0]):
        flat = _flat_bound(bound, start)
        if flat is None or flat % n:
            return None, "mask bound ends inside a row of a flat index split across rows"
        row_bound = ("min", touched, add(flat // n, neg(div(start, n))))
    return (
        BlockAccess(
            form.ptr, form.base, (c.coeffs[1], c.coeffs[0]), (row_bound, n), (c.extents[1], n), other,
            view=shape, window=shift,
        ),
        "",
    )  # fmt: skip


_REPEATED_STORE = "store writes several elements of the block to one address (a stride of 0)"
_WRAPPED_STORE = "store through a flat index split across rows, not starting at a row or not whole rows"


def _wrapped_store(
    form: AffineForm, bounds: tuple[Expr, ...], shape: tuple[int, ...], starts: tuple[Expr, ...] | None
) -> tuple[BlockAccess | None, str]:
    """The store of a wrapped form when its block holds all valid elements: under `xindex < N` (N a
    multiple of the row n, N <= XBLOCK) with the block's start a multiple of XBLOCK >= N (`pid * XBLOCK`),
    a block with any valid element starts at 0, and its first N elements are the N // n whole rows (dlrm's
    padded store of a [16, 10] tile into rows of 26 from one block of 256). The box is those rows, bound
    `(N - start) // n` (none for any other block), filled from the block's first N elements
    (`BlockAccess.window` 0). Otherwise a store would write the rows' other elements: the scalar core.

    On an n-D tile the same holds along the wrapped dimension d (`AffineForm.wrap_dim`), the others kept:
    cnn's channels-last copy `out[y0 + 3 * x2 + 768 * y1]` with `y0 = yindex % 3`, `y1 = yindex // 3`,
    `yindex < 6` from one [8, XBLOCK] block is the box [2, 3, XBLOCK] of strides [768, 1, 3] filled from
    the tile's first 6 rows (`BlockAccess.window_dim`); it is moved in memory order (`memory_order`). A box
    with a stride of 0 (`out[768 * y1 + 3 * x2]`: three rows to one address) stays on the scalar core, whose
    element order decides the last writer, as in Triton's interpreter."""
    assert form.ptr is not None and form.wrap is not None
    d = form.wrap_dim
    c = form.coeffs[d]
    assert isinstance(c, Digits)
    n, start, bound = c.extents[0], form.wrap, bounds[d]
    flat = _flat_bound(bound, start)
    if len(c.extents) != 2 or starts is not None or flat is None or flat % n or flat > shape[d]:
        return None, _WRAPPED_STORE
    if not expr_nonneg(start) or expr_divisor(start) < flat:
        return None, _WRAPPED_STORE
    strides = (*form.coeffs[:d], c.coeffs[1], c.coeffs[0], *form.coeffs[d + 1 :])
    box_bounds = (*bounds[:d], div(bound, n), n, *bounds[d + 1 :])
    box = (*shape[:d], flat // n, n, *shape[d + 1 :])
    if any(isinstance(k, int) and k == 0 for k, e in zip(strides, box, strict=True) if e > 1):
        return None, _REPEATED_STORE  # which element lands last is the scalar core's order
    return (
        BlockAccess(form.ptr, form.base, strides, box_bounds, box, view=shape, window=0,  # type: ignore[arg-type]
                    window_dim=d),
        "",
    )  # fmt: skip


DigitLimits = tuple[list[Expr], list[Expr]]
"""Upper bounds and lower bounds (starts) on one digit of a split dimension, from a mask's DigitBounds."""


def _refine_by_digit_bounds(
    form: AffineForm, mask: BoxMask, shape: tuple[int, ...]
) -> tuple[AffineForm, dict[int, DigitLimits]] | None:
    """`form` with each dimension the mask bounds digits of split into digits (the finest mixed radix of
    its own digits and the mask's), and the mask's bounds per dimension and digit place; None when the
    form has an index tile or a wrapped box, or a mask digit is not exactly one digit of that radix.

    A channels-last conv input `x[n, h + i - 1, w + j - 1, c]` read over `nhw` is one coefficient
    (stride 8 over all of nhw), but its mask `0 <= h + i - 1 < 8` bounds the digit h: the box is then
    [n, h, w, c] with a start and a bound on h and w (the zero padding as `other`)."""
    if form.index is not None or form.wrap is not None or form.limits:
        return None
    coeffs = list(form.coeffs)
    limits: dict[int, dict[int, DigitLimits]] = {}
    for d in range(len(shape)):
        conds = mask.digits_of(d)
        if not conds:
            continue
        c = coeffs[d]
        places = {1, shape[d]} | ({p for p in c.places} if isinstance(c, Digits) else set())
        places |= {x for b in conds for x in (b.place, b.place * b.extent)}
        chain = sorted(places)
        if any(b % a for a, b in itertools.pairwise(chain)):
            return None
        for b in conds:
            k = chain.index(b.place)
            if k + 1 >= len(chain) or chain[k + 1] != b.place * b.extent:
                return None  # the condition spans several digits: not a box
        inner = chain[:-1]
        extents = tuple(y // x for x, y in itertools.pairwise(chain))
        new = _refine(c, inner) if isinstance(c, Digits) else tuple(mul(c, x) for x in inner)
        coeffs[d] = Digits(extents, new)
        per_place: dict[int, DigitLimits] = {}
        for b in conds:
            ups, lows = per_place.setdefault(b.place, ([], []))
            (lows if b.lower else ups).append(b.bound)
        limits[d] = per_place
    return replace(form, coeffs=tuple(coeffs)), limits


def _flat_bound(bound: Expr, start: Expr) -> int | None:
    """N when `bound` is `N - start` (the mask `xindex < N` of a block starting at `start`), else None."""
    if isinstance(bound, tuple) and bound[0] == "add" and isinstance(bound[1], int) and bound[2] == neg(start):
        return bound[1]
    return None


def _split_access(
    analyzer: _Analyzer,
    form: AffineForm,
    bounds: tuple[Expr, ...],
    shape: tuple[int, ...],
    other: Attribute | SSAValue | None,
    starts: tuple[Expr, ...] | None,
    digit_limits: dict[int, dict[int, DigitLimits]] | None = None,
) -> tuple[BlockAccess | None, str]:
    """The multi-row box of a form with Digits: one box dimension per digit, outer first.

    `digit_limits` (from a mask's DigitBounds) bound and start single digits of a split dimension.

    A split dimension's bound (a flat `xindex < xnumel`) must be a multiple of the outer digit's place
    (the rows below it are whole): it becomes the outer digit's bound `bound // place`. An index tile
    (embedding rows of a flat kernel: `tmp0 = load(ids + x1)`, `load(w + x0 + 64 * tmp0)`) must be the same
    along the box's innermost dimension; it is reshaped to the box (`BlockAccess.index_box`).
    """
    assert form.ptr is not None
    if form.limits:
        return None, "flat index split across rows with a wrap limit"
    if form.wrap is not None:
        return _wrapped_access(form, bounds, shape, other, starts)
    index_box: list[int] = []
    strides: list[Expr] = []
    box_bounds: list[Expr] = []
    box_shape: list[int] = []
    box_starts: list[Expr] = []
    starts_seen = starts is not None
    for d, c in enumerate(form.coeffs):
        start = starts[d] if starts is not None else 0
        index_size = _shape(form.index.type)[d] if form.index is not None else 1
        if not isinstance(c, Digits):
            strides.append(c)
            box_bounds.append(bounds[d])
            box_shape.append(shape[d])
            box_starts.append(start)
            index_box.append(index_size)
            continue
        if not (isinstance(start, int) and start == 0):
            return None, "lower bound on a flat index split across rows"
        outer = c.places[-1]
        bound = bounds[d]
        if isinstance(bound, int) and bound == shape[d]:
            bound = c.extents[-1]
        else:
            if expr_divisor(bound) % outer:
                return None, "mask bound ends inside a row of a flat index split across rows"
            bound = div(bound, outer)
        for j in reversed(range(len(c.extents))):
            ups, lows = (digit_limits or {}).get(d, {}).get(c.places[j], ([], []))
            strides.append(c.coeffs[j])
            box_shape.append(c.extents[j])
            whole = bound if j == len(c.extents) - 1 else c.extents[j]
            box_bounds.append(_min_bound(tuple(ups), c.extents[j]) if ups and whole == c.extents[j] else
                              ("min", whole, *ups) if ups else whole)  # fmt: skip
            box_starts.append(_max_start(tuple(lows)))
            starts_seen = starts_seen or bool(lows)
            index_box.append(c.extents[j] if index_size != 1 else 1)
    if form.index is not None and not _rows_only(form.index, analyzer, inner=box_shape[-1]):
        return None, _ELEMENT_GATHER
    return (
        BlockAccess(
            form.ptr, form.base, tuple(strides), tuple(box_bounds), tuple(box_shape), other, form.index,
            form.index_scale, starts=tuple(box_starts) if starts_seen else None, view=shape,
            index_box=tuple(index_box) if form.index is not None else None,
        ),
        "",
    )  # fmt: skip


_BoxDim = tuple[int, Expr, Expr, Expr]
"""One dimension of a DMA box: (extent, stride, bound, start)."""


def _whole(dim: _BoxDim) -> bool:
    """Every index of the dimension is valid (a constant bound of at least its extent, start 0)."""
    e, _, b, a = dim
    return isinstance(b, int) and b >= e and isinstance(a, int) and a <= 0


def merge_box_dims(dims: Sequence[_BoxDim]) -> list[_BoxDim]:
    """The box `dims` (outer first) with its unit dimensions that are whole dropped, and each dimension merged
    into its outer neighbour where the two are one run (`stride[o] == extent[i] * stride[i]`) and the inner one
    is whole: the merged dimension's bound and start are the outer one's times the inner extent (the DMA's clamp
    to [0, extent] commutes with that scaling). A box of unit dimensions only keeps its last."""
    out: list[_BoxDim] = []
    for dim in dims:
        e, stride, _, _ = dim
        if e == 1 and _whole(dim):
            continue
        if out and _whole(dim) and out[-1][1] == mul(stride, e):
            oe, _, ob, oa = out[-1]
            out[-1] = (oe * e, stride, mul(ob, e), mul(oa, e))
            continue
        out.append(dim)
    return out or [dims[-1]]


_BOX_RANK_PREFIX = "a DMA box of rank"
_BOX_RANK = (
    _BOX_RANK_PREFIX + " {rank} ({merged} with its contiguous dimensions merged, in memory order too); "
    "MachineConfig.dma_max_rank is {limit}"
)


def fit_rank(access: BlockAccess, max_rank: int) -> tuple[BlockAccess | None, str]:
    """`access` with a box of at most `max_rank` dimensions (MachineConfig.dma_max_rank), else (None, why).

    A box within the limit is returned as it is. A larger one (a split index's digits, one box dimension each:
    `place_value_split`) has its contiguous dimensions merged and its whole unit dimensions dropped
    (`merge_box_dims`), the tile its reshape (`view`). If that is still too many, the box is moved in memory
    order (dimensions by decreasing stride, `order`), where more of them are one run: a permuted prologue's
    [2, 8, 2, 4, 4] box of strides [512, 16, 128, 1, 4] is [2, 256] of strides [512, 1], two runs instead of
    128, and the MLU permutes it in LS. Splitting the box into several DMA commands over its outer dimensions
    would keep every short run and pay a command's issue per part, and the buffer level has no DMA into part
    of a CB slot; the memory order moves the same bytes in fewer runs. Otherwise the access stays on the
    scalar core (None): an index tile's rows, a wrapped box and an LS gather keep their dimensions.
    """
    rank = len(access.shape)
    if rank <= max_rank:
        return access, ""
    starts = access.starts if access.starts is not None else (0,) * rank
    dims = list(zip(access.shape, access.strides, access.bounds, starts, strict=True))
    merged = merge_box_dims(dims)
    order: tuple[int, ...] | None = None
    if len(merged) > max_rank and all(isinstance(s, int) and s >= 0 for s in access.strides):
        perm = tuple(sorted(range(rank), key=lambda d: -access.strides[d]))  # type: ignore[operator]
        by_memory = merge_box_dims([dims[d] for d in perm])
        if len(by_memory) < len(merged):
            merged, order = by_memory, perm
    kept = access.index is None and access.window is None and access.ls_gather is None
    if len(merged) > max_rank or not kept:
        return None, _BOX_RANK.format(rank=rank, merged=len(merged), limit=max_rank)
    shape, strides, bounds, new_starts = zip(*merged, strict=True)
    return (
        replace(
            access, strides=strides, bounds=bounds, shape=shape, view=access.view or access.shape,
            starts=new_starts if access.starts is not None else None, order=order,
            unmerged=access.shape if order is not None else (),
        ),
        "",
    )  # fmt: skip


def _index_leaf(v: SSAValue) -> AffineForm | None:
    """An integer tensor without an affine form as an index tile (`v[i] * 1`), else None: ids read from
    memory, or a remainder no block holds (`rm % M` with M < BLOCK_M: the block wraps inside itself); the
    tile's values pick the rows (see `_index_source`)."""
    t = v.type
    if not isinstance(t, TensorType) or not isinstance(t.element_type, IntegerType) or t.element_type.width.data == 1:
        return None
    if not _index_source(v):
        return None
    return AffineForm(0, (0,) * len(t.get_shape()), index=v, index_scale=1)


def _index_source(v: SSAValue, depth: int = _FACT_DEPTH) -> bool:
    """True if `v` is read from memory (a tt.load) or is a remainder (`arith.remsi/remui`, a wrapping
    `rm % M`), possibly through elementwise integer ops, broadcasts, expand_dims, a `tt.gather` in LS of such
    a tile (ids picked from loaded ids: the embedding-bag kernel's step of a tile of all ids) and an scf.if:
    the taken branch when its condition is computed from constants (`constant_condition`), else both
    branches (the template's hinted-or-plain `rm % M` by the run-time `M >= BLOCK_M` when M is symbolic,
    `torch.compile(dynamic=True)`: either yields the remainder, whose values pick the rows for every M)."""
    owner = v.owner
    if not isinstance(owner, Operation):
        return False
    if isinstance(owner, tt.LoadOp | arith.RemSIOp | arith.RemUIOp):
        return True
    if isinstance(owner, tt.GatherOp):
        return depth > 0 and _index_source(owner.src, depth - 1)
    if isinstance(owner, scf.IfOp) and depth > 0:  # the template's hinted-or-plain `rm % M`
        taken = constant_condition(owner.cond)
        regions = (owner.true_region, owner.false_region)
        if taken is not None:
            regions = (owner.true_region if taken else owner.false_region,)
        i = owner.results.index(v)
        return all(
            bool(r.blocks) and isinstance(y := r.block.last_op, scf.YieldOp) and _index_source(y.operands[i], depth - 1)
            for r in regions
        )
    if depth == 0 or not (owner.name.startswith("arith.") or isinstance(owner, tt.BroadcastOp | tt.ExpandDimsOp)):
        return False
    return any(_index_source(x, depth - 1) for x in owner.operands if isinstance(x.type, TensorType))


_ROWS_DEPTH = 8
"""How many elementwise ops `_rows_only` looks through (Inductor's negative-id wrap is 3 ops deep)."""


def _rows_only(v: SSAValue, analyzer: _Analyzer, depth: int = _ROWS_DEPTH, inner: int | None = None) -> bool:
    """True if `v` provably has one value per row: the same along the last dimension of its tensor, or
    with `inner`, along runs of `inner` aligned elements of it (the innermost dimension of a multi-row box).

    Size-1 last dimension; a splat or constant; a load whose pointer form does not move along the last
    dimension (or along its inner digit, a multiple of `inner`); elementwise integer ops (the
    `where(id < 0, id + n, id)` wrap) of such values.
    """
    t = v.type
    if not isinstance(t, TensorType) or not t.get_shape() or t.get_shape()[-1] == 1:
        return True
    owner = v.owner
    if depth == 0 or not isinstance(owner, Operation):
        return False
    if isinstance(owner, tt.SplatOp | arith.ConstantOp):
        return True
    if isinstance(owner, tt.BroadcastOp):
        return _rows_only(owner.src, analyzer, depth - 1, inner)
    if isinstance(owner, tt.LoadOp):
        form = analyzer.form_of(owner.ptr)
        if form is None or form.index is not None:
            return False
        last = form.coeffs[-1]
        if isinstance(last, Digits):
            return inner is not None and last.coeffs[0] == 0 and last.extents[0] % inner == 0
        return isinstance(last, int) and last == 0
    if owner.name.startswith("arith.") and len(owner.results) == 1:
        return all(_rows_only(x, analyzer, depth - 1, inner) for x in owner.operands)
    return False


def _dma_other(op: tt.LoadOp | tt.StoreOp) -> tuple[Attribute | SSAValue | None, str]:
    """A load's `other` as a DMA command takes it (a constant attribute, else a splat scalar's value; None for a
    store or a load without one), with "" or, when it is neither, the reason the access is not a DMA."""
    if not isinstance(op, tt.LoadOp) or op.other is None:
        return None, ""
    other = constant_other(op.other)  # not `or`: an IntegerAttr of 0 is falsy
    if other is None:
        other = splat_scalar(op.other)
    return (other, "") if other is not None else (None, "`other` is not a splat scalar")


def constant_other(other: SSAValue) -> Attribute | None:
    """The scalar attribute of a load's `other` if it is a splat constant (or splat of one), else None."""
    owner = other.owner
    if isinstance(owner, arith.ConstantOp):
        return splat_scalar_attr(owner.value)
    if isinstance(owner, tt.SplatOp) and isinstance(owner.src.owner, arith.ConstantOp):
        return splat_scalar_attr(owner.src.owner.value)
    if isinstance(owner, Operation) and owner.name in _INT_CASTS and len(owner.operands) == 1:
        src = constant_other(owner.operands[0])  # Triton's `other=0.0` of a bool load: fptosi of 0.0 to i8
        et = owner.results[0].type
        et = et.element_type if isinstance(et, TensorType) else et
        if isinstance(src, IntegerAttr | builtin.FloatAttr) and isinstance(et, IntegerType):
            value = src.value.data
            if float(value).is_integer() and -(2 ** (et.width.data - 1)) <= int(value) < 2 ** (et.width.data - 1):
                return IntegerAttr(int(value), et)
    return None


_INT_CASTS = ("arith.fptosi", "arith.fptoui", "arith.extsi", "arith.extui", "arith.trunci")
"""Casts to an integer type whose splat-constant operand `constant_other` folds (exact values only)."""


def splat_scalar(other: SSAValue) -> SSAValue | None:
    """The scalar a load's `other` splats (`tt.splat %s`), else None."""
    owner = other.owner
    if isinstance(owner, tt.SplatOp) and not isinstance(owner.src.type, TensorType):
        return owner.src
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
            self.cache[key] = self._insert(arith.ConstantOp(IntegerAttr(value, i64 if width == 64 else width)))
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
        elif kind == "rem":
            res = self._insert(arith.RemSIOp(vals[0], vals[1]))
        elif kind == "div":
            res = self._insert(arith.DivSIOp(vals[0], vals[1]))
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
                    indexed = (
                        f"index={expr_str(a.index, names)}*{expr_str(a.index_scale, names)} "
                        if a.index is not None
                        else ""
                    )
                    text = (
                        f"{'dma_gather_rows' if a.index is not None else 'dma'} "
                        f"base={expr_str(a.ptr, names)}+{expr_str(a.offset, names)} {indexed}"
                        f"strides=[{', '.join(expr_str(s, names) for s in a.strides)}] "
                        f"bounds=[{', '.join(expr_str(b, names) for b in a.bounds)}] shape={list(a.shape)}"
                    )
                    if a.starts is not None:
                        text += f" starts=[{', '.join(expr_str(b, names) for b in a.starts)}]"
                    if a.view is not None:
                        text += f" view={list(a.view)}"
                    if a.order is not None:
                        text += f" order={list(a.order)}"
                    if a.window is not None:
                        text += f" window={expr_str(a.window, names)}"
                    if a.ls_gather is not None:
                        text += f" ls_gather={'exact' if a.ls_gather.exact else 'checked'}"
                    if a.index_at_row_starts:
                        text += " index_at_row_starts"
                    access_op.attributes[mtia.ACCESS_ATTR] = StringAttr(text)
                elif access_op in info.fallback_reasons:
                    access_op.attributes[mtia.ACCESS_ATTR] = StringAttr(f"scalar: {info.fallback_reasons[access_op]}")


def block_accesses(ops: Sequence[Operation], info: MemoryAccessInfo) -> list[Operation]:
    """Return the ops of `ops` that the analysis found to be block (DMA) accesses, in order."""
    return [o for o in ops if o in info.accesses]

"""The `tt` dialect: Triton's TTIR, op for op as upstream Triton 3.9 defines it.

Models: `include/triton/Dialect/Triton/IR/TritonOps.td` of triton==3.9.0 (pinned; the libtriton shipped in
that wheel is the reference: our generic form parses there unchanged, see
tests/frontend/test_frontend_conformance.py). Names, operand order, property names and the i32 enum encodings are
upstream's: e.g. `tt.atomic_rmw` stores `atomic_rmw_op = 5 : i32` for `fadd`, `tt.dot` stores
`inputPrecision = 2 : i32` for `ieee`, `tt.get_program_id` stores `axis = 0 : i32` for `x`.

Deviations:
- Triton 3.9 replaced the `cache`/`evict` enum properties of `tt.load`/`tt.store` by one `cachePolicy`
  attribute `#tt.cache_policy<cache_modifier = cg, eviction_policy = evict_last>`; we model that, and
  `LoadOp.cache` / `LoadOp.evict` (also on StoreOp) give the two strings as convenience accessors.
- Custom syntax is upstream's where it prints the same text; `tt.load`/`tt.store`, the ops with enum
  keywords and `tt.func` have hand-written parse/print because the declarative format cannot infer a
  type from a pointer's pointee or map a keyword to an i32 property. `tt.reduce`/`tt.scan` print in
  generic form, as upstream does.
- Everything Triton 3.9's code generator emits for CPU-meaningful kernels is modelled, tensor
  descriptors included; GPU-only ops (`tt.dot_scaled`, `tt.elementwise_inline_asm`, grid-dependency
  control) are not: the frontend refuses them with an error naming the kernel line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from typing import ClassVar

from xdsl.dialects.builtin import (
    I32,
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    DictionaryAttr,
    FlatSymbolRefAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    i32,
)
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    CallableOpInterface,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

# ---------------------------------------------------------------------------------------------
# Enum encodings (upstream TritonAttrDefs.td; checked against libtriton's Python enums)
# ---------------------------------------------------------------------------------------------

PROGRAM_DIM: Mapping[str, int] = {"x": 0, "y": 1, "z": 2}
CACHE_MODIFIER: Mapping[str, int] = {"none": 1, "ca": 2, "cg": 3, "wb": 4, "cs": 5, "wt": 6, "cv": 7}
EVICTION_POLICY: Mapping[str, int] = {"evict_normal": 1, "evict_first": 2, "evict_last": 3}
PADDING_OPTION: Mapping[str, int] = {"zero": 1, "nan": 2}
ATOMIC_RMW_OP: Mapping[str, int] = {
    "and": 1, "or": 2, "xor": 3, "add": 4, "fadd": 5, "max": 6, "min": 7, "umax": 8, "umin": 9, "exch": 10,
}  # fmt: skip
MEM_SEMANTIC: Mapping[str, int] = {"relaxed": 1, "acquire": 2, "release": 3, "acq_rel": 4}
MEM_SYNC_SCOPE: Mapping[str, int] = {"gpu": 1, "cta": 2, "sys": 3}
ROUNDING_MODE: Mapping[str, int] = {"rtz": 0, "rtne": 1}
PROPAGATE_NAN: Mapping[str, int] = {"none": 0, "all": 0xFFFF}
INPUT_PRECISION: Mapping[str, int] = {"tf32": 0, "tf32x3": 1, "ieee": 2, "bf16x3": 3, "bf16x6": 4}


@cache
def _i32(value: int) -> IntegerAttr:
    """An i32 attribute; cached, since attributes are immutable and building one checks its range."""
    return IntegerAttr(value, 32)


@lru_cache(maxsize=4096)
def _tensor_of(elem: Attribute, shape: tuple[int, ...]) -> TensorType:
    return TensorType(elem, shape)


def _tensor_type(elem: Attribute, shape: Sequence[int]) -> TensorType:
    """`TensorType(elem, shape)`, one shared instance per element type and shape (attributes are immutable;
    building and verifying one per shape op was ~2 % of a compile)."""
    return _tensor_of(elem, tuple(shape))


def enum_name(table: Mapping[str, int], value: int) -> str:
    """Return the upstream name of i32 enum `value` in `table` (ROUNDING_MODE, MEM_SEMANTIC, ...).

    Raises: VerifyException if `value` is not in the table.
    """
    for name, v in table.items():
        if v == value:
            return name
    raise VerifyException(f"value {value} is not one of {dict(table)}")


def _parse_enum(parser: AttrParser, table: Mapping[str, int], what: str) -> IntegerAttr:
    pos = parser.pos
    word = parser.parse_identifier(f" ({what})")
    if word not in table:
        parser.raise_error(f"expected {what}, one of {', '.join(table)}; got '{word}'", pos)
    return _i32(table[word])


def _check_enum(op: Operation, prop: str, table: Mapping[str, int]) -> None:
    attr = op.properties.get(prop)
    if isinstance(attr, IntegerAttr) and attr.value.data not in table.values():
        raise VerifyException(f"'{op.name}' {prop} = {attr.value.data} is not one of {dict(table)}")


# ---------------------------------------------------------------------------------------------
# Types and attributes
# ---------------------------------------------------------------------------------------------


@irdl_attr_definition
class PointerType(ParametrizedAttribute, TypeAttribute):
    """`!tt.ptr<T>` (address space "global") or `!tt.ptr<T, "constant">`: a pointer to T.

    Triton 3.9 names address spaces by string; "global" is the default and is not printed.
    """

    name = "tt.ptr"
    pointee_type: Attribute = param_def()
    address_space: StringAttr = param_def()

    def __init__(self, pointee_type: Attribute, address_space: str = "global"):
        super().__init__(pointee_type, StringAttr(address_space))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute, StringAttr]:
        with parser.in_angle_brackets():
            pointee = parser.parse_type()
            space = "global"
            if parser.parse_optional_punctuation(","):
                space = parser.parse_str_literal()
        return pointee, StringAttr(space)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.pointee_type)
            if self.address_space.data != "global":
                printer.print_string(", ")
                printer.print_string_literal(self.address_space.data)


@irdl_attr_definition
class CachePolicyAttr(ParametrizedAttribute):
    """`#tt.cache_policy<cache_modifier = cg, eviction_policy = evict_last>` (Triton 3.9)."""

    name = "tt.cache_policy"
    cache_modifier: StringAttr = param_def()
    eviction_policy: StringAttr = param_def()

    def __init__(self, cache_modifier: str = "none", eviction_policy: str = "evict_normal"):
        super().__init__(StringAttr(cache_modifier), StringAttr(eviction_policy))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[StringAttr, StringAttr]:
        with parser.in_angle_brackets():
            parser.parse_keyword("cache_modifier")
            parser.parse_punctuation("=")
            cache = parser.parse_identifier()
            parser.parse_punctuation(",")
            parser.parse_keyword("eviction_policy")
            parser.parse_punctuation("=")
            evict = parser.parse_identifier()
        return StringAttr(cache), StringAttr(evict)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(
            f"<cache_modifier = {self.cache_modifier.data}, eviction_policy = {self.eviction_policy.data}>"
        )

    def verify(self) -> None:
        if self.cache_modifier.data not in CACHE_MODIFIER:
            raise VerifyException(f"unknown cache modifier '{self.cache_modifier.data}'")
        if self.eviction_policy.data not in EVICTION_POLICY:
            raise VerifyException(f"unknown eviction policy '{self.eviction_policy.data}'")

    @property
    def is_default(self) -> bool:
        """Return True for `none` / `evict_normal`."""
        return self.cache_modifier.data == "none" and self.eviction_policy.data == "evict_normal"


# ---------------------------------------------------------------------------------------------
# Type helpers
# ---------------------------------------------------------------------------------------------


def element_type(ty: Attribute) -> Attribute:
    """Return the element type of a tensor, or `ty` for a scalar."""
    return ty.element_type if isinstance(ty, TensorType) else ty


def shape_of(ty: Attribute) -> tuple[int, ...]:
    """Return the shape of a tensor, () for a scalar."""
    return tuple(ty.get_shape()) if isinstance(ty, TensorType) else ()


def like(ty: Attribute, elem: Attribute) -> Attribute:
    """Return `elem` with the shape of `ty` (a tensor if `ty` is one)."""
    return _tensor_type(elem, ty.get_shape()) if isinstance(ty, TensorType) else elem


def pointee_of(ptr_type: Attribute) -> Attribute:
    """Return what loading through `ptr_type` (a pointer or tensor of pointers) yields."""
    elem = element_type(ptr_type)
    if not isinstance(elem, PointerType):
        raise VerifyException(f"expected a pointer or a tensor of pointers, got {ptr_type}")
    return like(ptr_type, elem.pointee_type)


def _tensor(v: SSAValue, op: Operation, what: str) -> TensorType:
    if not isinstance(v.type, TensorType):
        raise VerifyException(f"'{op.name}' {what} must be a tensor, got {v.type}")
    return v.type


def _same_shape(op: Operation, a: Attribute, b: Attribute, what: str) -> None:
    if shape_of(a) != shape_of(b):
        raise VerifyException(f"'{op.name}' {what}: shapes {list(shape_of(a))} and {list(shape_of(b))} differ")


# ---------------------------------------------------------------------------------------------
# Casts
# ---------------------------------------------------------------------------------------------


class _UnaryCast(IRDLOperation):
    src = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[src], result_types=[result_type])

    def verify_(self) -> None:
        _same_shape(self, self.src.type, self.result.type, "operand and result")


@irdl_op_definition
class IntToPtrOp(_UnaryCast):
    """Cast i64 (or a tensor of i64) to a pointer (or tensor of pointers)."""

    name = "tt.int_to_ptr"

    def verify_(self) -> None:
        super().verify_()
        if element_type(self.src.type) != IntegerType(64):
            raise VerifyException(f"'tt.int_to_ptr' operand must be i64-like, got {self.src.type}")
        pointee_of(self.result.type)


@irdl_op_definition
class PtrToIntOp(_UnaryCast):
    """Cast a pointer (or tensor of pointers) to i64."""

    name = "tt.ptr_to_int"

    def verify_(self) -> None:
        super().verify_()
        pointee_of(self.src.type)
        if element_type(self.result.type) != IntegerType(64):
            raise VerifyException(f"'tt.ptr_to_int' result must be i64-like, got {self.result.type}")


@irdl_op_definition
class BitcastOp(_UnaryCast):
    """Reinterpret bits between types of equal width; also casts between pointer types."""

    name = "tt.bitcast"


@irdl_op_definition
class FpToFpOp(IRDLOperation):
    """Float conversion for custom types (fp8) and explicit rounding (`rounding` = rtz/rtne for downcasts)."""

    name = "tt.fp_to_fp"
    src = operand_def()
    rounding = opt_prop_def(IntegerAttr[I32])
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, src: SSAValue | Operation, result_type: Attribute, rounding: str | None = None):
        props = {"rounding": _i32(ROUNDING_MODE[rounding])} if rounding is not None else {}
        super().__init__(operands=[src], result_types=[result_type], properties=props)

    def verify_(self) -> None:
        _same_shape(self, self.src.type, self.result.type, "operand and result")
        _check_enum(self, "rounding", ROUNDING_MODE)

    @classmethod
    def parse(cls, parser: Parser) -> FpToFpOp:
        src = parser.parse_unresolved_operand()
        rounding = None
        if parser.parse_optional_punctuation(","):
            parser.parse_keyword("rounding")
            parser.parse_punctuation("=")
            rounding = _parse_enum(parser, ROUNDING_MODE, "rounding mode")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        src_t = parser.parse_type()
        parser.parse_punctuation("->")
        res_t = parser.parse_type()
        op = cls(parser.resolve_operand(src, src_t), res_t)
        if rounding is not None:
            op.properties["rounding"] = rounding
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        printer.print_op_attributes(self.attributes)
        if self.rounding is not None:
            printer.print_string(f", rounding = {enum_name(ROUNDING_MODE, self.rounding.value.data)}")
        printer.print_string(" : ")
        printer.print_attribute(self.src.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


# ---------------------------------------------------------------------------------------------
# Arithmetic and math
# ---------------------------------------------------------------------------------------------


@irdl_op_definition
class ClampFOp(IRDLOperation):
    """Clamp `x` to [min, max]; `propagateNan` = none (0) or all (0xFFFF)."""

    name = "tt.clampf"
    T: ClassVar = VarConstraint("T", AnyAttr())
    x = operand_def(T)
    min = operand_def(T)
    max = operand_def(T)
    propagateNan = prop_def(IntegerAttr[I32])
    result = result_def(T)
    traits = traits_def(Pure())

    def __init__(
        self,
        x: SSAValue | Operation,
        min: SSAValue | Operation,
        max: SSAValue | Operation,
        propagate_nan: str = "none",
    ):
        x = SSAValue.get(x)
        super().__init__(
            operands=[x, min, max],
            result_types=[x.type],
            properties={"propagateNan": _i32(PROPAGATE_NAN[propagate_nan])},
        )

    def verify_(self) -> None:
        _check_enum(self, "propagateNan", PROPAGATE_NAN)

    @classmethod
    def parse(cls, parser: Parser) -> ClampFOp:
        names = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            names.append(parser.parse_unresolved_operand())
        parser.parse_punctuation(",")
        parser.parse_keyword("propagateNan")
        parser.parse_punctuation("=")
        nan = _parse_enum(parser, PROPAGATE_NAN, "propagateNan")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ty = parser.parse_type()
        x, lo, hi = parser.resolve_operands(names, [ty] * 3, parser.pos)
        op = cls(x, lo, hi, enum_name(PROPAGATE_NAN, nan.value.data))
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_string(f", propagateNan = {enum_name(PROPAGATE_NAN, self.propagateNan.value.data)}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class PreciseSqrtOp(IRDLOperation):
    """Correctly rounded square root."""

    name = "tt.precise_sqrt"
    T: ClassVar = VarConstraint("T", AnyAttr())
    x = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` type($x)"

    def __init__(self, x: SSAValue | Operation):
        x = SSAValue.get(x)
        super().__init__(operands=[x], result_types=[x.type])


class _BinarySameType(IRDLOperation):
    T: ClassVar = VarConstraint("T", AnyAttr())
    x = operand_def(T)
    y = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$x `,` $y attr-dict `:` type($x)"

    def __init__(self, x: SSAValue | Operation, y: SSAValue | Operation):
        x = SSAValue.get(x)
        super().__init__(operands=[x, y], result_types=[x.type])


@irdl_op_definition
class PreciseDivFOp(_BinarySameType):
    """Correctly rounded float division."""

    name = "tt.precise_divf"


@irdl_op_definition
class MulhiUIOp(_BinarySameType):
    """Most significant N bits of the 2N-bit unsigned product."""

    name = "tt.mulhiui"


@irdl_op_definition
class ExternElementwiseOp(IRDLOperation):
    """Elementwise call of `symbol` from library `libname` at `libpath` (libdevice functions)."""

    name = "tt.extern_elementwise"
    srcs = var_operand_def()
    libname = prop_def(StringAttr)
    libpath = prop_def(StringAttr)
    symbol = prop_def(StringAttr)
    pure = prop_def(BoolAttr)
    result = result_def()
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$srcs attr-dict `:` functional-type($srcs, $result)"

    def __init__(
        self,
        srcs: Sequence[SSAValue | Operation],
        result_type: Attribute,
        libname: str,
        libpath: str,
        symbol: str,
        pure: bool,
    ):
        super().__init__(
            operands=[srcs],
            result_types=[result_type],
            properties={
                "libname": StringAttr(libname),
                "libpath": StringAttr(libpath),
                "symbol": StringAttr(symbol),
                "pure": BoolAttr.from_bool(pure),
            },
        )


# ---------------------------------------------------------------------------------------------
# Pointers, loads, stores, atomics
# ---------------------------------------------------------------------------------------------


@irdl_op_definition
class AddPtrOp(IRDLOperation):
    """`ptr + offset` elements (offset in units of the pointee type)."""

    name = "tt.addptr"
    T: ClassVar = VarConstraint("T", AnyAttr())
    ptr = operand_def(T)
    offset = operand_def()
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$ptr `,` $offset attr-dict `:` type($result) `,` type($offset)"

    def __init__(self, ptr: SSAValue | Operation, offset: SSAValue | Operation):
        ptr = SSAValue.get(ptr)
        super().__init__(operands=[ptr, offset], result_types=[ptr.type])

    def verify_(self) -> None:
        pointee_of(self.ptr.type)
        _same_shape(self, self.ptr.type, self.offset.type, "ptr and offset")
        if not isinstance(element_type(self.offset.type), IntegerType):
            raise VerifyException(f"'tt.addptr' offset must be integer-like, got {self.offset.type}")


def _print_cache_policy_attrs(printer: Printer, op: Operation, extra: Mapping[str, Attribute]) -> None:
    attrs: dict[str, Attribute] = dict(extra)
    attrs |= op.attributes
    printer.print_op_attributes(attrs)


class _CachePolicyAccessors:
    """`cache` and `evict` as strings, read from the `cachePolicy` property (defaults when absent)."""

    @property
    def cache(self) -> str:
        """Return the cache modifier (`none`, `ca`, `cg`, ...)."""
        cp = self.properties.get("cachePolicy")  # type: ignore[attr-defined]
        return cp.cache_modifier.data if isinstance(cp, CachePolicyAttr) else "none"

    @property
    def evict(self) -> str:
        """Return the eviction policy (`evict_normal`, `evict_first`, `evict_last`)."""
        cp = self.properties.get("cachePolicy")  # type: ignore[attr-defined]
        return cp.eviction_policy.data if isinstance(cp, CachePolicyAttr) else "evict_normal"


_LOAD_PROPS = ("cachePolicy", "isVolatile", "boundaryCheck", "padding")


@irdl_op_definition
class LoadOp(_CachePolicyAccessors, IRDLOperation):
    """Load through a pointer or tensor of pointers; masked-off lanes take `other` (undefined if absent).

    Shapes: ptr `tensor<S x !tt.ptr<T>>`, mask `tensor<S x i1>`, other and result `tensor<S x T>`.
    """

    name = "tt.load"
    ptr = operand_def()
    mask = opt_operand_def()
    other = opt_operand_def()
    boundaryCheck = opt_prop_def(DenseArrayBase)
    padding = opt_prop_def(IntegerAttr[I32])
    cachePolicy = opt_prop_def(CachePolicyAttr)
    isVolatile = opt_prop_def(BoolAttr)
    result = result_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        ptr: SSAValue | Operation,
        mask: SSAValue | Operation | None = None,
        other: SSAValue | Operation | None = None,
        cache: str = "none",
        evict: str = "evict_normal",
        is_volatile: bool = False,
    ):
        ptr = SSAValue.get(ptr)
        props: dict[str, Attribute] = {}
        if (cache, evict) != ("none", "evict_normal"):
            props["cachePolicy"] = CachePolicyAttr(cache, evict)
        if is_volatile:
            props["isVolatile"] = BoolAttr.from_bool(True)
        super().__init__(
            operands=[ptr, [mask] if mask is not None else [], [other] if other is not None else []],
            result_types=[pointee_of(ptr.type)],
            properties=props,
        )

    def verify_(self) -> None:
        want = pointee_of(self.ptr.type)
        if self.result.type != want:
            raise VerifyException(f"'tt.load' result must be {want}, got {self.result.type}")
        if self.mask is not None and self.mask.type != like(want, IntegerType(1)):
            raise VerifyException(f"'tt.load' mask must be {like(want, IntegerType(1))}, got {self.mask.type}")
        if self.other is not None and self.other.type != want:
            raise VerifyException(f"'tt.load' other must be {want}, got {self.other.type}")

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        names = [parser.parse_unresolved_operand()]
        while parser.parse_optional_punctuation(","):
            names.append(parser.parse_unresolved_operand())
        attrs = dict(parser.parse_optional_attr_dict())
        parser.parse_punctuation(":")
        ptr_t = parser.parse_type()
        val_t = pointee_of(ptr_t)
        types = [ptr_t, like(val_t, IntegerType(1)), val_t][: len(names)]
        vals = parser.resolve_operands(names, types, parser.pos)
        op = cls(vals[0], vals[1] if len(vals) > 1 else None, vals[2] if len(vals) > 2 else None)
        for key in _LOAD_PROPS:
            if key in attrs:
                op.properties[key] = attrs.pop(key)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        props = {k: v for k, v in self.properties.items() if k in _LOAD_PROPS}
        if isinstance(props.get("cachePolicy"), CachePolicyAttr) and props["cachePolicy"].is_default:
            del props["cachePolicy"]
        if props.get("isVolatile") == BoolAttr.from_bool(False):
            del props["isVolatile"]
        _print_cache_policy_attrs(printer, self, props)
        printer.print_string(" : ")
        printer.print_attribute(self.ptr.type)


_STORE_PROPS = ("cachePolicy", "boundaryCheck")


@irdl_op_definition
class StoreOp(_CachePolicyAccessors, IRDLOperation):
    """Store `value` through a pointer or tensor of pointers where `mask` holds."""

    name = "tt.store"
    ptr = operand_def()
    value = operand_def()
    mask = opt_operand_def()
    boundaryCheck = opt_prop_def(DenseArrayBase)
    cachePolicy = opt_prop_def(CachePolicyAttr)

    def __init__(
        self,
        ptr: SSAValue | Operation,
        value: SSAValue | Operation,
        mask: SSAValue | Operation | None = None,
        cache: str = "none",
        evict: str = "evict_normal",
    ):
        props: dict[str, Attribute] = {}
        if (cache, evict) != ("none", "evict_normal"):
            props["cachePolicy"] = CachePolicyAttr(cache, evict)
        super().__init__(operands=[ptr, value, [mask] if mask is not None else []], properties=props)

    def verify_(self) -> None:
        want = pointee_of(self.ptr.type)
        if self.value.type != want:
            raise VerifyException(f"'tt.store' value must be {want}, got {self.value.type}")
        if self.mask is not None and self.mask.type != like(want, IntegerType(1)):
            raise VerifyException(f"'tt.store' mask must be {like(want, IntegerType(1))}, got {self.mask.type}")

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        names = [parser.parse_unresolved_operand()]
        while parser.parse_optional_punctuation(","):
            names.append(parser.parse_unresolved_operand())
        attrs = dict(parser.parse_optional_attr_dict())
        parser.parse_punctuation(":")
        ptr_t = parser.parse_type()
        val_t = pointee_of(ptr_t)
        types = [ptr_t, val_t, like(val_t, IntegerType(1))][: len(names)]
        vals = parser.resolve_operands(names, types, parser.pos)
        op = cls(vals[0], vals[1], vals[2] if len(vals) > 2 else None)
        for key in _STORE_PROPS:
            if key in attrs:
                op.properties[key] = attrs.pop(key)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        props = {k: v for k, v in self.properties.items() if k in _STORE_PROPS}
        if isinstance(props.get("cachePolicy"), CachePolicyAttr) and props["cachePolicy"].is_default:
            del props["cachePolicy"]
        _print_cache_policy_attrs(printer, self, props)
        printer.print_string(" : ")
        printer.print_attribute(self.ptr.type)


def _print_functional_type(printer: Printer, op: Operation) -> None:
    printer.print_string(" : (")
    printer.print_list([o.type for o in op.operands], printer.print_attribute)
    printer.print_string(") -> ")
    printer.print_attribute(op.results[0].type)


def _parse_functional_type(parser: Parser) -> tuple[list[Attribute], Attribute]:
    parser.parse_punctuation(":")
    ins = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
    parser.parse_punctuation("->")
    return ins, parser.parse_type()


@irdl_op_definition
class AtomicRMWOp(IRDLOperation):
    """Atomically apply `atomic_rmw_op` with `val` at `ptr` where `mask` holds; return the old values."""

    name = "tt.atomic_rmw"
    atomic_rmw_op = prop_def(IntegerAttr[I32])
    ptr = operand_def()
    val = operand_def()
    mask = opt_operand_def()
    sem = prop_def(IntegerAttr[I32])
    scope = prop_def(IntegerAttr[I32])
    result = result_def()

    def __init__(
        self,
        rmw_op: str,
        ptr: SSAValue | Operation,
        val: SSAValue | Operation,
        mask: SSAValue | Operation | None = None,
        sem: str = "acq_rel",
        scope: str = "gpu",
    ):
        val = SSAValue.get(val)
        super().__init__(
            operands=[ptr, val, [mask] if mask is not None else []],
            result_types=[val.type],
            properties={
                "atomic_rmw_op": _i32(ATOMIC_RMW_OP[rmw_op]),
                "sem": _i32(MEM_SEMANTIC[sem]),
                "scope": _i32(MEM_SYNC_SCOPE[scope]),
            },
        )

    def verify_(self) -> None:
        _check_enum(self, "atomic_rmw_op", ATOMIC_RMW_OP)
        _check_enum(self, "sem", MEM_SEMANTIC)
        _check_enum(self, "scope", MEM_SYNC_SCOPE)
        if pointee_of(self.ptr.type) != self.val.type:
            raise VerifyException(f"'tt.atomic_rmw' val type {self.val.type} does not match ptr {self.ptr.type}")

    @classmethod
    def parse(cls, parser: Parser) -> AtomicRMWOp:
        kind = _parse_enum(parser, ATOMIC_RMW_OP, "atomic op")
        parser.parse_punctuation(",")
        sem = _parse_enum(parser, MEM_SEMANTIC, "memory semantic")
        parser.parse_punctuation(",")
        scope = _parse_enum(parser, MEM_SYNC_SCOPE, "memory scope")
        names = []
        while parser.parse_optional_punctuation(","):
            names.append(parser.parse_unresolved_operand())
        attrs = parser.parse_optional_attr_dict()
        ins, _ = _parse_functional_type(parser)
        vals = parser.resolve_operands(names, ins, parser.pos)
        op = cls(
            enum_name(ATOMIC_RMW_OP, kind.value.data),
            vals[0],
            vals[1],
            vals[2] if len(vals) > 2 else None,
            enum_name(MEM_SEMANTIC, sem.value.data),
            enum_name(MEM_SYNC_SCOPE, scope.value.data),
        )
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        kind = enum_name(ATOMIC_RMW_OP, self.atomic_rmw_op.value.data)
        sem = enum_name(MEM_SEMANTIC, self.sem.value.data)
        scope = enum_name(MEM_SYNC_SCOPE, self.scope.value.data)
        printer.print_string(f" {kind}, {sem}, {scope}, ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        _print_functional_type(printer, self)


@irdl_op_definition
class AtomicCASOp(IRDLOperation):
    """Atomic compare-and-swap: where *ptr == cmp store val; return the old values."""

    name = "tt.atomic_cas"
    ptr = operand_def()
    cmp = operand_def()
    val = operand_def()
    sem = prop_def(IntegerAttr[I32])
    scope = prop_def(IntegerAttr[I32])
    result = result_def()

    def __init__(
        self,
        ptr: SSAValue | Operation,
        cmp: SSAValue | Operation,
        val: SSAValue | Operation,
        sem: str = "acq_rel",
        scope: str = "gpu",
    ):
        val = SSAValue.get(val)
        super().__init__(
            operands=[ptr, cmp, val],
            result_types=[val.type],
            properties={"sem": _i32(MEM_SEMANTIC[sem]), "scope": _i32(MEM_SYNC_SCOPE[scope])},
        )

    def verify_(self) -> None:
        _check_enum(self, "sem", MEM_SEMANTIC)
        _check_enum(self, "scope", MEM_SYNC_SCOPE)
        want = pointee_of(self.ptr.type)
        if not (self.cmp.type == self.val.type == want):
            raise VerifyException(f"'tt.atomic_cas' cmp and val must be {want}")

    @classmethod
    def parse(cls, parser: Parser) -> AtomicCASOp:
        sem = _parse_enum(parser, MEM_SEMANTIC, "memory semantic")
        parser.parse_punctuation(",")
        scope = _parse_enum(parser, MEM_SYNC_SCOPE, "memory scope")
        names = []
        while parser.parse_optional_punctuation(","):
            names.append(parser.parse_unresolved_operand())
        attrs = parser.parse_optional_attr_dict()
        ins, _ = _parse_functional_type(parser)
        p, c, v = parser.resolve_operands(names, ins, parser.pos)
        op = cls(p, c, v, enum_name(MEM_SEMANTIC, sem.value.data), enum_name(MEM_SYNC_SCOPE, scope.value.data))
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        sem = enum_name(MEM_SEMANTIC, self.sem.value.data)
        scope = enum_name(MEM_SYNC_SCOPE, self.scope.value.data)
        printer.print_string(f" {sem}, {scope}, ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        _print_functional_type(printer, self)


# ---------------------------------------------------------------------------------------------
# Shape manipulation
# ---------------------------------------------------------------------------------------------


class _ShapeOp(IRDLOperation):
    src = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def _same_elem(self) -> None:
        if element_type(self.src.type) != element_type(self.result.type):
            raise VerifyException(
                f"'{self.name}' element types differ: {element_type(self.src.type)} vs {element_type(self.result.type)}"
            )


@irdl_op_definition
class SplatOp(_ShapeOp):
    """Broadcast a scalar to a tensor."""

    name = "tt.splat"

    def __init__(self, src: SSAValue | Operation, shape: Sequence[int]):
        src = SSAValue.get(src)
        super().__init__(operands=[src], result_types=[_tensor_type(src.type, shape)])

    def verify_(self) -> None:
        if isinstance(self.src.type, TensorType):
            raise VerifyException(f"'tt.splat' operand must be a scalar, got {self.src.type}")
        self._same_elem()


@irdl_op_definition
class UnsplatOp(_ShapeOp):
    """Extract the single element of a one-element tensor."""

    name = "tt.unsplat"

    def __init__(self, src: SSAValue | Operation):
        src = SSAValue.get(src)
        super().__init__(operands=[src], result_types=[element_type(src.type)])

    def verify_(self) -> None:
        t = _tensor(self.src, self, "operand")
        if t.element_count() != 1:
            raise VerifyException(f"'tt.unsplat' source tensor must have exactly one element, got {t}")


@irdl_op_definition
class BroadcastOp(_ShapeOp):
    """Broadcast size-1 dimensions to a larger size."""

    name = "tt.broadcast"

    def __init__(self, src: SSAValue | Operation, shape: Sequence[int]):
        src = SSAValue.get(src)
        super().__init__(operands=[src], result_types=[_tensor_type(element_type(src.type), shape)])

    def verify_(self) -> None:
        self._same_elem()
        s, r = shape_of(self.src.type), shape_of(self.result.type)
        if len(s) != len(r) or any(a != b and a != 1 for a, b in zip(s, r)):
            raise VerifyException(f"'tt.broadcast' cannot broadcast shape {list(s)} to {list(r)}")


@irdl_op_definition
class ExpandDimsOp(_ShapeOp):
    """Insert a size-1 dimension at `axis`."""

    name = "tt.expand_dims"
    axis = prop_def(IntegerAttr[I32])
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, src: SSAValue | Operation, axis: int):
        src = SSAValue.get(src)
        shape = list(shape_of(src.type))
        shape.insert(axis, 1)
        super().__init__(
            operands=[src],
            result_types=[_tensor_type(element_type(src.type), shape)],
            properties={"axis": _i32(axis)},
        )

    def verify_(self) -> None:
        self._same_elem()
        shape = list(shape_of(self.src.type))
        axis = self.axis.value.data
        if not 0 <= axis <= len(shape):
            raise VerifyException(f"'tt.expand_dims' axis {axis} is out of range for rank {len(shape)}")
        shape.insert(axis, 1)
        if list(shape_of(self.result.type)) != shape:
            raise VerifyException(f"'tt.expand_dims' result shape must be {shape}")


@irdl_op_definition
class ReshapeOp(_ShapeOp):
    """Reinterpret a tensor with a new shape of the same element count."""

    name = "tt.reshape"
    allow_reorder = opt_prop_def(UnitAttr)
    efficient_layout = opt_prop_def(UnitAttr)
    assembly_format = (
        "$src (`allow_reorder` $allow_reorder^)? (`efficient_layout` $efficient_layout^)? attr-dict "
        "`:` type($src) `->` type($result)"
    )

    def __init__(self, src: SSAValue | Operation, shape: Sequence[int], allow_reorder: bool = False):
        src = SSAValue.get(src)
        props = {"allow_reorder": UnitAttr()} if allow_reorder else {}
        super().__init__(operands=[src], result_types=[_tensor_type(element_type(src.type), shape)], properties=props)

    def verify_(self) -> None:
        self._same_elem()
        s = _tensor(self.src, self, "operand")
        r = _tensor(self.result, self, "result")
        if s.element_count() != r.element_count():
            raise VerifyException(f"'tt.reshape' element counts differ: {s} vs {r}")


@irdl_op_definition
class TransOp(_ShapeOp):
    """Permute dimensions: result dim i is source dim order[i]."""

    name = "tt.trans"
    order = prop_def(DenseArrayBase)
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, src: SSAValue | Operation, order: Sequence[int]):
        src = SSAValue.get(src)
        shape = shape_of(src.type)
        super().__init__(
            operands=[src],
            result_types=[_tensor_type(element_type(src.type), [shape[i] for i in order])],
            properties={"order": DenseArrayBase.from_list(i32, list(order))},
        )

    def verify_(self) -> None:
        self._same_elem()
        order = list(self.order.get_values())
        shape = shape_of(self.src.type)
        if sorted(order) != list(range(len(shape))):
            raise VerifyException(f"'tt.trans' order {order} is not a permutation of rank {len(shape)}")
        if list(shape_of(self.result.type)) != [shape[i] for i in order]:
            raise VerifyException(f"'tt.trans' result shape must be {[shape[i] for i in order]}")


class _BinaryTensorOp(IRDLOperation):
    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def()
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)"


@irdl_op_definition
class CatOp(_BinaryTensorOp):
    """Concatenate two tensors along dim 0 (the order of elements may be changed)."""

    name = "tt.cat"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        shape = list(shape_of(lhs.type))
        shape[0] *= 2
        super().__init__(operands=[lhs, rhs], result_types=[_tensor_type(element_type(lhs.type), shape)])


@irdl_op_definition
class JoinOp(_BinaryTensorOp):
    """Join two tensors along a new minor dimension of size 2."""

    name = "tt.join"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        shape = [*shape_of(lhs.type), 2]
        super().__init__(operands=[lhs, rhs], result_types=[_tensor_type(element_type(lhs.type), shape)])

    def verify_(self) -> None:
        want = [*shape_of(self.lhs.type), 2]
        if list(shape_of(self.result.type)) != want:
            raise VerifyException(f"'tt.join' result shape must be {want}")


@irdl_op_definition
class SplitOp(IRDLOperation):
    """Split a tensor whose last dimension is 2 into its two halves."""

    name = "tt.split"
    T: ClassVar = VarConstraint("T", AnyAttr())
    src = operand_def()
    outLHS = result_def(T)
    outRHS = result_def(T)
    assembly_format = "$src attr-dict `:` type($src) `->` type($outLHS)"

    def __init__(self, src: SSAValue | Operation):
        src = SSAValue.get(src)
        out = _tensor_type(element_type(src.type), shape_of(src.type)[:-1])
        super().__init__(operands=[src], result_types=[out, out])

    def verify_(self) -> None:
        shape = shape_of(self.src.type)
        if not shape or shape[-1] != 2:
            raise VerifyException(f"'tt.split' last dimension must be 2, got shape {list(shape)}")


@irdl_op_definition
class HistogramOp(IRDLOperation):
    """Count the values of `src` into bins 0..N-1 (N = result size), skipping masked-off lanes."""

    name = "tt.histogram"
    src = operand_def()
    mask = opt_operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$src (`,` $mask^ `:` type($mask))? attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue | Operation, num_bins: int, mask: SSAValue | Operation | None = None):
        src = SSAValue.get(src)
        super().__init__(
            operands=[src, [mask] if mask is not None else []],
            result_types=[TensorType(element_type(src.type), [num_bins])],
        )


@irdl_op_definition
class GatherOp(IRDLOperation):
    """Gather `src` along `axis` at `indices`; the result has the shape of `indices`."""

    name = "tt.gather"
    src = operand_def()
    indices = operand_def()
    axis = prop_def(IntegerAttr[I32])
    efficient_layout = opt_prop_def(UnitAttr)
    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$src `[` $indices `]` attr-dict `:` functional-type(operands, results)"

    def __init__(self, src: SSAValue | Operation, indices: SSAValue | Operation, axis: int):
        src, indices = SSAValue.get(src), SSAValue.get(indices)
        super().__init__(
            operands=[src, indices],
            result_types=[TensorType(element_type(src.type), shape_of(indices.type))],
            properties={"axis": _i32(axis)},
        )

    def verify_(self) -> None:
        rank = len(shape_of(self.src.type))
        if len(shape_of(self.indices.type)) != rank:
            raise VerifyException(f"'tt.gather' indices must have rank {rank}")
        if not 0 <= self.axis.value.data < rank:
            raise VerifyException(f"'tt.gather' axis {self.axis.value.data} is out of range for rank {rank}")


# ---------------------------------------------------------------------------------------------
# SPMD, ranges, dot, reductions
# ---------------------------------------------------------------------------------------------


class _ProgramDimOp(IRDLOperation):
    axis = prop_def(IntegerAttr[I32])
    result = result_def(i32)
    traits = traits_def(Pure())

    def __init__(self, axis: int):
        super().__init__(result_types=[i32], properties={"axis": _i32(axis)})

    def verify_(self) -> None:
        _check_enum(self, "axis", PROGRAM_DIM)

    @classmethod
    def parse(cls, parser: Parser) -> _ProgramDimOp:
        axis = _parse_enum(parser, PROGRAM_DIM, "program dimension")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        parser.parse_type()
        op = cls(axis.value.data)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {enum_name(PROGRAM_DIM, self.axis.value.data)}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : i32")


@irdl_op_definition
class GetProgramIdOp(_ProgramDimOp):
    """Index of this program along `axis` (x=0, y=1, z=2) of the launch grid."""

    name = "tt.get_program_id"


@irdl_op_definition
class GetNumProgramsOp(_ProgramDimOp):
    """Size of the launch grid along `axis`."""

    name = "tt.get_num_programs"


@irdl_op_definition
class MakeRangeOp(IRDLOperation):
    """The 1-D i32 tensor [start, end)."""

    name = "tt.make_range"
    start = prop_def(IntegerAttr[I32])
    end = prop_def(IntegerAttr[I32])
    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, start: int, end: int):
        super().__init__(
            result_types=[TensorType(i32, [end - start])],
            properties={"start": _i32(start), "end": _i32(end)},
        )

    def verify_(self) -> None:
        start, end = self.start.value.data, self.end.value.data
        if end <= start:
            raise VerifyException(f"'tt.make_range' needs start < end, got start = {start} and end = {end}")
        t = _tensor(self.result, self, "result")
        if t.get_shape() != (end - start,) or t.element_type != i32:
            raise VerifyException(f"'tt.make_range' result must be tensor<{end - start}xi32>, got {t}")


@irdl_op_definition
class DotOp(IRDLOperation):
    """d = a @ b + c; `inputPrecision` (tf32=0, tf32x3=1, ieee=2, ...) applies to f32 inputs.

    Shapes: a `tensor<M x K x T>`, b `tensor<K x N x T>`, c and d `tensor<M x N x Tacc>` (optional batch dim).
    """

    name = "tt.dot"
    a = operand_def()
    b = operand_def()
    c = operand_def()
    inputPrecision = prop_def(IntegerAttr[I32], default_value=_i32(INPUT_PRECISION["ieee"]))
    maxNumImpreciseAcc = prop_def(IntegerAttr[I32], default_value=_i32(0))
    d = result_def()
    traits = traits_def(Pure())

    def __init__(
        self,
        a: SSAValue | Operation,
        b: SSAValue | Operation,
        c: SSAValue | Operation,
        input_precision: str = "ieee",
        max_num_imprecise_acc: int = 0,
    ):
        c = SSAValue.get(c)
        super().__init__(
            operands=[a, b, c],
            result_types=[c.type],
            properties={
                "inputPrecision": _i32(INPUT_PRECISION[input_precision]),
                "maxNumImpreciseAcc": _i32(max_num_imprecise_acc),
            },
        )

    def verify_(self) -> None:
        _check_enum(self, "inputPrecision", INPUT_PRECISION)
        a, b, c = shape_of(self.a.type), shape_of(self.b.type), shape_of(self.c.type)
        if len(a) not in (2, 3) or len(a) != len(b) or len(a) != len(c):
            raise VerifyException("'tt.dot' expected operands to be 2d or 3d tensors of equal rank")
        if a[-1] != b[-2] or c[-2:] != (a[-2], b[-1]):
            raise VerifyException(f"'tt.dot' shapes {list(a)} x {list(b)} -> {list(c)} do not match")
        if self.d.type != self.c.type:
            raise VerifyException("'tt.dot' result type must match the accumulator type")

    @classmethod
    def parse(cls, parser: Parser) -> DotOp:
        names = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            names.append(parser.parse_unresolved_operand())
        prec = "ieee"
        if parser.parse_optional_punctuation(","):
            parser.parse_keyword("inputPrecision")
            parser.parse_punctuation("=")
            prec = enum_name(INPUT_PRECISION, _parse_enum(parser, INPUT_PRECISION, "input precision").value.data)
        attrs = dict(parser.parse_optional_attr_dict())
        parser.parse_punctuation(":")
        at = parser.parse_type()
        parser.parse_punctuation("*")
        bt = parser.parse_type()
        parser.parse_punctuation("->")
        dt = parser.parse_type()
        a, b, c = parser.resolve_operands(names, [at, bt, dt], parser.pos)
        acc = attrs.pop("maxNumImpreciseAcc", _i32(0))
        op = cls(a, b, c, prec, acc.value.data if isinstance(acc, IntegerAttr) else 0)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        prec = self.inputPrecision.value.data
        if prec != INPUT_PRECISION["ieee"]:
            printer.print_string(f", inputPrecision = {enum_name(INPUT_PRECISION, prec)}")
        attrs = dict(self.attributes)
        if self.maxNumImpreciseAcc.value.data != 0:
            attrs["maxNumImpreciseAcc"] = self.maxNumImpreciseAcc
        printer.print_op_attributes(attrs)
        printer.print_string(" : ")
        printer.print_attribute(self.a.type)
        printer.print_string(" * ")
        printer.print_attribute(self.b.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.d.type)


def _combine_region(elem_types: Sequence[Attribute]) -> Region:
    return Region(Block(arg_types=[*elem_types, *elem_types]))


def _verify_combine(op: Operation, region: Region, elem_types: Sequence[Attribute]) -> None:
    block = region.blocks.first
    if block is None:
        raise VerifyException(f"'{op.name}' needs a combine block")
    want = [*elem_types, *elem_types]
    if list(block.arg_types) != want:
        names = ", ".join(str(t) for t in want)
        got = ", ".join(str(t) for t in block.arg_types)
        raise VerifyException(f"'{op.name}' combine block arguments must be [{names}], got [{got}]")


def _verify_axis_and_combine(op: ReduceOp | ScanOp) -> None:
    """Shared checks of tt.reduce and tt.scan: the axis exists, the combine region fits the operands."""
    rank = len(shape_of(op.srcs[0].type)) if op.srcs else 0
    if not 0 <= op.axis.value.data < rank:
        raise VerifyException(f"'{op.name}' axis {op.axis.value.data} is out of range for rank {rank}")
    _verify_combine(op, op.combineOp, [element_type(s.type) for s in op.srcs])


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """Reduce `srcs` along `axis` with the combine region (2N scalar args -> N scalars via reduce.return)."""

    name = "tt.reduce"
    srcs = var_operand_def()
    axis = prop_def(IntegerAttr[I32])
    result = var_result_def()
    combineOp = region_def("single_block")
    traits = traits_def(Pure())

    def __init__(self, srcs: Sequence[SSAValue | Operation], axis: int, region: Region | None = None):
        vals = [SSAValue.get(s) for s in srcs]
        res_types: list[Attribute] = []
        for v in vals:
            shape = list(shape_of(v.type))
            del shape[axis]
            elem = element_type(v.type)
            res_types.append(TensorType(elem, shape) if shape else elem)
        region = region or _combine_region([element_type(v.type) for v in vals])
        super().__init__(operands=[vals], result_types=[res_types], properties={"axis": _i32(axis)}, regions=[region])

    def verify_(self) -> None:
        _verify_axis_and_combine(self)


@irdl_op_definition
class ReduceReturnOp(IRDLOperation):
    """Terminator of the tt.reduce combine region."""

    name = "tt.reduce.return"
    result = var_operand_def()
    traits = traits_def(Pure(), IsTerminator(), HasParent(ReduceOp))
    assembly_format = "$result attr-dict `:` type($result)"

    def __init__(self, *values: SSAValue | Operation):
        super().__init__(operands=[values])


@irdl_op_definition
class ScanOp(IRDLOperation):
    """Inclusive scan of `srcs` along `axis` (reversed if `reverse`) with the combine region."""

    name = "tt.scan"
    srcs = var_operand_def()
    axis = prop_def(IntegerAttr[I32])
    reverse = prop_def(BoolAttr)
    result = var_result_def()
    combineOp = region_def("single_block")
    traits = traits_def(Pure())

    def __init__(
        self,
        srcs: Sequence[SSAValue | Operation],
        axis: int,
        reverse: bool,
        region: Region | None = None,
    ):
        vals = [SSAValue.get(s) for s in srcs]
        region = region or _combine_region([element_type(v.type) for v in vals])
        super().__init__(
            operands=[vals],
            result_types=[[v.type for v in vals]],
            properties={"axis": _i32(axis), "reverse": BoolAttr.from_bool(reverse)},
            regions=[region],
        )

    def verify_(self) -> None:
        _verify_axis_and_combine(self)


@irdl_op_definition
class ScanReturnOp(IRDLOperation):
    """Terminator of the tt.scan combine region."""

    name = "tt.scan.return"
    result = var_operand_def()
    traits = traits_def(Pure(), IsTerminator(), HasParent(ScanOp))
    assembly_format = "$result attr-dict `:` type($result)"

    def __init__(self, *values: SSAValue | Operation):
        super().__init__(operands=[values])


# ---------------------------------------------------------------------------------------------
# Debug ops
# ---------------------------------------------------------------------------------------------


@irdl_op_definition
class PrintOp(IRDLOperation):
    """Device-side print of `prefix` and the values of `args`."""

    name = "tt.print"
    prefix = prop_def(StringAttr)
    hex = prop_def(BoolAttr)
    args = var_operand_def()
    isSigned = prop_def(DenseArrayBase)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$prefix attr-dict (`:` $args^ `:` type($args))?"

    def __init__(self, prefix: str, hex: bool, args: Sequence[SSAValue | Operation], is_signed: Sequence[int]):
        super().__init__(
            operands=[args],
            properties={
                "prefix": StringAttr(prefix),
                "hex": BoolAttr.from_bool(hex),
                "isSigned": DenseArrayBase.from_list(i32, list(is_signed)),
            },
        )


@irdl_op_definition
class AssertOp(IRDLOperation):
    """Device-side assert: abort with `message` where `condition` is false."""

    name = "tt.assert"
    condition = operand_def()
    message = prop_def(StringAttr)
    assembly_format = "$condition `,` $message attr-dict `:` type($condition)"

    def __init__(self, condition: SSAValue | Operation, message: str):
        super().__init__(operands=[condition], properties={"message": StringAttr(message)})

    def verify_(self) -> None:
        if element_type(self.condition.type) != IntegerType(1):
            raise VerifyException(f"'tt.assert' condition must be i1-like, got {self.condition.type}")


# ---------------------------------------------------------------------------------------------
# Functions
# ---------------------------------------------------------------------------------------------


class _FuncCallable(CallableOpInterface):
    @classmethod
    def get_callable_region(cls, op: Operation) -> Region:
        assert isinstance(op, FuncOp)
        return op.body

    @classmethod
    def get_argument_types(cls, op: Operation) -> tuple[Attribute, ...]:
        assert isinstance(op, FuncOp)
        return op.function_type.inputs.data

    @classmethod
    def get_result_types(cls, op: Operation) -> tuple[Attribute, ...]:
        assert isinstance(op, FuncOp)
        return op.function_type.outputs.data


@irdl_op_definition
class FuncOp(IRDLOperation):
    """A Triton function: the kernel (`public`) or a `@triton.jit` helper (`private`, noinline attr)."""

    name = "tt.func"
    body = region_def()
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    sym_visibility = opt_prop_def(StringAttr)
    arg_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    res_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface(), _FuncCallable())

    def __init__(
        self,
        name: str,
        function_type: FunctionType,
        region: Region | None = None,
        visibility: str | None = None,
        arg_attrs: ArrayAttr[DictionaryAttr] | None = None,
    ):
        region = region or Region(Block(arg_types=function_type.inputs))
        props: dict[str, Attribute | None] = {
            "sym_name": StringAttr(name),
            "function_type": function_type,
            "sym_visibility": StringAttr(visibility) if visibility else None,
            "arg_attrs": arg_attrs,
        }
        super().__init__(properties=props, regions=[region])

    @property
    def args(self) -> tuple[SSAValue, ...]:
        """Return the entry block arguments."""
        block = self.body.blocks.first
        return block.args if block is not None else ()

    def verify_(self) -> None:
        block = self.body.blocks.first
        if block is not None and tuple(block.arg_types) != self.function_type.inputs.data:
            raise VerifyException("'tt.func' entry block arguments must match the function type inputs")

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        visibility = parser.parse_optional_visibility_keyword()
        name, ins, outs, region, extra, arg_attrs, _res = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type", "sym_visibility")
        )
        op = cls(
            name,
            FunctionType.from_lists(ins, outs),
            region,
            visibility.data if visibility else None,
            arg_attrs,
        )
        if extra is not None:
            op.attributes |= extra.data
        return op

    def print(self, printer: Printer) -> None:
        if self.sym_visibility:
            printer.print_string(f" {self.sym_visibility.data}")
        print_func_op_like(
            printer,
            self.sym_name,
            self.function_type,
            self.body,
            self.attributes,
            arg_attrs=self.arg_attrs,
            reserved_attr_names=("sym_name", "function_type", "sym_visibility", "arg_attrs"),
        )


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Return from a tt.func."""

    name = "tt.return"
    srcs = var_operand_def()
    traits = traits_def(Pure(), IsTerminator(), HasParent(FuncOp))
    assembly_format = "attr-dict ($srcs^ `:` type($srcs))?"

    def __init__(self, *srcs: SSAValue | Operation):
        super().__init__(operands=[srcs])

    def verify_(self) -> None:
        func = self.parent_op()
        if isinstance(func, FuncOp):
            want = func.function_type.outputs.data
            if tuple(s.type for s in self.srcs) != want:
                names = ", ".join(str(t) for t in want)
                raise VerifyException(f"'tt.return' types must match the function results [{names}]")


@irdl_op_definition
class CallOp(IRDLOperation):
    """Call the tt.func `callee` in this module."""

    name = "tt.call"
    callee = prop_def(SymbolRefAttr)
    args = var_operand_def()
    arg_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    res_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    res = var_result_def()
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $res)"

    def __init__(
        self,
        callee: str | SymbolRefAttr,
        args: Sequence[SSAValue | Operation],
        result_types: Sequence[Attribute],
    ):
        if isinstance(callee, str):
            callee = FlatSymbolRefAttr(callee)
        super().__init__(operands=[args], result_types=[result_types], properties={"callee": callee})


# ---------------------------------------------------------------------------------------------
# Tensor descriptors (tl.make_tensor_descriptor and its load/store/reduce/gather/scatter)
# ---------------------------------------------------------------------------------------------

DESCRIPTOR_REDUCE_KIND: Mapping[str, int] = {
    "add": 1, "min": 2, "max": 3, "inc": 4, "dec": 5, "and": 6, "or": 7, "xor": 8,
}  # fmt: skip


@irdl_attr_definition
class TensorDescType(ParametrizedAttribute, TypeAttribute):
    """`!tt.tensordesc<16x32xf32>`: a tensor descriptor whose blocks are `block_type`.

    As upstream, an unsigned integer element (`ui32`) records that the descriptor was made from an
    unsigned pointer; loads through it still yield signless tensors.
    """

    name = "tt.tensordesc"
    block_type: TensorType = param_def(TensorType)

    def __init__(self, block_type: TensorType):
        super().__init__(block_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[TensorType]:
        with parser.in_angle_brackets():
            shape, elem = parser.parse_ranked_shape()
        return (TensorType(elem, shape),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string("".join(f"{d}x" for d in self.block_type.get_shape()))
            printer.print_attribute(self.block_type.element_type)

    def value_type(self) -> TensorType:
        """Return the signless tensor type that loads of a block produce."""
        elem = self.block_type.element_type
        if isinstance(elem, IntegerType):
            elem = IntegerType(elem.width.data)
        return TensorType(elem, self.block_type.get_shape())


def _desc(op: Operation, v: SSAValue) -> TensorDescType:
    if not isinstance(v.type, TensorDescType):
        raise VerifyException(f"'{op.name}' expects a !tt.tensordesc operand, got {v.type}")
    return v.type


def _check_indices(op: Operation, desc: TensorDescType, indices: Sequence[SSAValue]) -> None:
    rank = len(desc.block_type.get_shape())
    if len(indices) != rank:
        raise VerifyException(f"'{op.name}' needs {rank} indices for {desc}, got {len(indices)}")
    if any(i.type != i32 for i in indices):
        raise VerifyException(f"'{op.name}' indices must be i32")


def _parse_short_ptr(parser: Parser) -> Attribute:
    """Parse `!tt.ptr<T>` or upstream's short form `<T>`."""
    if parser.parse_optional_punctuation("<") is None:
        return parser.parse_type()
    pointee = parser.parse_type()
    space = parser.parse_str_literal() if parser.parse_optional_punctuation(",") else "global"
    parser.parse_punctuation(">")
    return PointerType(pointee, space)


def _parse_short_desc(parser: Parser) -> Attribute:
    """Parse `!tt.tensordesc<...>` or upstream's short form `<16x32xf32>`."""
    if parser.parse_optional_punctuation("<") is None:
        return parser.parse_type()
    shape, elem = parser.parse_ranked_shape()
    parser.parse_punctuation(">")
    return TensorDescType(TensorType(elem, shape))


def _parse_indexed(parser: Parser) -> tuple[UnresolvedOperand, list[UnresolvedOperand]]:
    desc = parser.parse_unresolved_operand()
    idx = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_unresolved_operand)
    return desc, idx


def _print_indexed(printer: Printer, desc: SSAValue, indices: Sequence[SSAValue]) -> None:
    printer.print_string(" ")
    printer.print_operand(desc)
    printer.print_string("[")
    printer.print_list(indices, printer.print_operand)
    printer.print_string("]")


@irdl_op_definition
class MakeTensorDescOp(IRDLOperation):
    """Describe a `shape`-sized, `strides`-strided tensor at `base`, read and written in `block_type` blocks.

    Shapes: shape `i32` per dimension, strides `i64` per dimension (elements; the last is 1);
    result `!tt.tensordesc<BLOCK_0 x ... x T>`. Out-of-bounds lanes read `padding` (zero or NaN).
    Custom syntax (upstream's): the types print without their `!tt.ptr`/`!tt.tensordesc` prefixes,
    which the declarative format cannot do.
    """

    name = "tt.make_tensor_descriptor"
    base = operand_def(PointerType)
    shape = var_operand_def(i32)
    strides = var_operand_def(IntegerType(64))
    padding = opt_prop_def(IntegerAttr[I32])
    result = result_def(TensorDescType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())

    def __init__(
        self,
        base: SSAValue | Operation,
        shape: Sequence[SSAValue | Operation],
        strides: Sequence[SSAValue | Operation],
        block_type: TensorType,
        padding: str = "zero",
    ):
        super().__init__(
            operands=[base, shape, strides],
            result_types=[TensorDescType(block_type)],
            properties={"padding": _i32(PADDING_OPTION[padding])},
        )

    @property
    def padding_name(self) -> str:
        """Return "zero" or "nan"."""
        return enum_name(PADDING_OPTION, self.padding.value.data) if self.padding else "zero"

    def verify_(self) -> None:
        _check_enum(self, "padding", PADDING_OPTION)
        rank = len(self.result.type.block_type.get_shape())
        if not (len(self.shape) == len(self.strides) == rank):
            raise VerifyException(
                f"'tt.make_tensor_descriptor' needs {rank} sizes and strides, got {len(self.shape)} and "
                f"{len(self.strides)}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> MakeTensorDescOp:
        base = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        sizes = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_unresolved_operand)
        parser.parse_punctuation(",")
        strides = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_unresolved_operand)
        attrs = dict(parser.parse_optional_attr_dict())
        parser.parse_punctuation(":")
        base_t = _parse_short_ptr(parser)
        parser.parse_punctuation(",")
        desc_t = _parse_short_desc(parser)
        if not isinstance(desc_t, TensorDescType):
            parser.raise_error(f"expected a !tt.tensordesc type, got {desc_t}")
        b = parser.resolve_operand(base, base_t)
        s = [parser.resolve_operand(o, i32) for o in sizes]
        st = [parser.resolve_operand(o, IntegerType(64)) for o in strides]
        op = cls(b, s, st, desc_t.block_type)
        if "padding" in attrs:
            op.properties["padding"] = attrs.pop("padding")
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.base)
        printer.print_string(", [")
        printer.print_list(self.shape, printer.print_operand)
        printer.print_string("], [")
        printer.print_list(self.strides, printer.print_operand)
        printer.print_string("]")
        extra: dict[str, Attribute] = {}
        if self.padding is not None and self.padding.value.data != PADDING_OPTION["zero"]:
            extra["padding"] = self.padding
        _print_cache_policy_attrs(printer, self, extra)
        printer.print_string(" : ")
        self.base.type.print_parameters(printer)  # type: ignore[attr-defined]
        printer.print_string(", ")
        self.result.type.print_parameters(printer)


@irdl_op_definition
class DescriptorLoadOp(_CachePolicyAccessors, IRDLOperation):
    """Load the block of `desc` whose first element is at `indices`; lanes outside the shape read padding."""

    name = "tt.descriptor_load"
    desc = operand_def(TensorDescType)
    indices = var_operand_def(i32)
    cachePolicy = opt_prop_def(CachePolicyAttr)
    result = result_def(TensorType)

    def __init__(
        self, desc: SSAValue | Operation, indices: Sequence[SSAValue | Operation], cache: str = "none",
        evict: str = "evict_normal", result_type: Attribute | None = None,
    ):  # fmt: skip
        desc = SSAValue.get(desc)
        if result_type is None:
            assert isinstance(desc.type, TensorDescType)
            result_type = desc.type.value_type()
        props: dict[str, Attribute] = {}
        if (cache, evict) != ("none", "evict_normal"):
            props["cachePolicy"] = CachePolicyAttr(cache, evict)
        super().__init__(operands=[desc, indices], result_types=[result_type], properties=props)

    def verify_(self) -> None:
        desc = _desc(self, self.desc)
        _check_indices(self, desc, self.indices)
        if shape_of(self.result.type) != shape_of(desc.block_type):
            raise VerifyException(f"'tt.descriptor_load' result {self.result.type} does not match {desc}")

    @classmethod
    def parse(cls, parser: Parser) -> DescriptorLoadOp:
        desc, idx = _parse_indexed(parser)
        attrs = dict(parser.parse_optional_attr_dict())
        parser.parse_punctuation(":")
        desc_t = parser.parse_type()
        parser.parse_punctuation("->")
        res_t = parser.parse_type()
        indices = [parser.resolve_operand(i, i32) for i in idx]
        op = cls(parser.resolve_operand(desc, desc_t), indices, result_type=res_t)
        if "cachePolicy" in attrs:
            op.properties["cachePolicy"] = attrs.pop("cachePolicy")
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        _print_indexed(printer, self.desc, self.indices)
        extra: dict[str, Attribute] = {}
        if self.cachePolicy is not None and not self.cachePolicy.is_default:
            extra["cachePolicy"] = self.cachePolicy
        _print_cache_policy_attrs(printer, self, extra)
        printer.print_string(" : ")
        printer.print_attribute(self.desc.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


class _DescriptorWrite(IRDLOperation):
    """Common syntax of descriptor_store and descriptor_reduce: `desc[indices], src : desc_t, src_t`."""

    desc = operand_def(TensorDescType)
    src = operand_def(TensorType)
    indices = var_operand_def(i32)

    def verify_(self) -> None:
        desc = _desc(self, self.desc)
        _check_indices(self, desc, self.indices)
        if shape_of(self.src.type) != shape_of(desc.block_type):
            raise VerifyException(f"'{self.name}' value {self.src.type} does not match {desc}")

    @classmethod
    def _parse_rest(cls, parser: Parser) -> tuple[SSAValue, SSAValue, list[SSAValue], dict[str, Attribute]]:
        desc, idx = _parse_indexed(parser)
        parser.parse_punctuation(",")
        src = parser.parse_unresolved_operand()
        attrs = dict(parser.parse_optional_attr_dict())
        parser.parse_punctuation(":")
        desc_t = parser.parse_type()
        parser.parse_punctuation(",")
        src_t = parser.parse_type()
        return (
            parser.resolve_operand(desc, desc_t),
            parser.resolve_operand(src, src_t),
            [parser.resolve_operand(i, i32) for i in idx],
            attrs,
        )

    def _print_rest(self, printer: Printer) -> None:
        _print_indexed(printer, self.desc, self.indices)
        printer.print_string(", ")
        printer.print_operand(self.src)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.desc.type)
        printer.print_string(", ")
        printer.print_attribute(self.src.type)


@irdl_op_definition
class DescriptorStoreOp(_DescriptorWrite):
    """Store `src` as the block of `desc` at `indices`; lanes outside the shape are not written."""

    name = "tt.descriptor_store"

    def __init__(self, desc: SSAValue | Operation, src: SSAValue | Operation, indices: Sequence[SSAValue | Operation]):
        super().__init__(operands=[desc, src, indices])

    @classmethod
    def parse(cls, parser: Parser) -> DescriptorStoreOp:
        desc, src, idx, attrs = cls._parse_rest(parser)
        op = cls(desc, src, idx)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        self._print_rest(printer)


@irdl_op_definition
class DescriptorReduceOp(_DescriptorWrite):
    """Atomically combine `src` (`kind`: add, min, max, and, or, xor, ...) into the block of `desc` at `indices`."""

    name = "tt.descriptor_reduce"
    kind = prop_def(IntegerAttr[I32])

    def __init__(
        self,
        kind: str,
        desc: SSAValue | Operation,
        src: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
    ):
        super().__init__(operands=[desc, src, indices], properties={"kind": _i32(DESCRIPTOR_REDUCE_KIND[kind])})

    @property
    def kind_name(self) -> str:
        """Return the reduction's keyword (add, min, max, inc, dec, and, or, xor)."""
        return enum_name(DESCRIPTOR_REDUCE_KIND, self.kind.value.data)

    def verify_(self) -> None:
        _check_enum(self, "kind", DESCRIPTOR_REDUCE_KIND)
        super().verify_()

    @classmethod
    def parse(cls, parser: Parser) -> DescriptorReduceOp:
        kind = _parse_enum(parser, DESCRIPTOR_REDUCE_KIND, "descriptor reduce kind")
        parser.parse_punctuation(",")
        desc, src, idx, attrs = cls._parse_rest(parser)
        op = cls(enum_name(DESCRIPTOR_REDUCE_KIND, kind.value.data), desc, src, idx)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind_name},")
        self._print_rest(printer)


def _check_gather(op: Operation, desc_v: SSAValue, x_offsets: SSAValue, tile: Attribute) -> None:
    desc = _desc(op, desc_v)
    block = desc.block_type.get_shape()
    if len(block) != 2 or block[0] != 1:
        raise VerifyException(f"'{op.name}' needs a descriptor with 1-row 2-d blocks, got {desc}")
    rows = shape_of(x_offsets.type)
    if len(rows) != 1:
        raise VerifyException(f"'{op.name}' x_offsets must be a 1-d tensor, got {x_offsets.type}")
    if shape_of(tile) != (rows[0], block[1]):
        raise VerifyException(f"'{op.name}' tile must be {rows[0]}x{block[1]}, got {tile}")


@irdl_op_definition
class DescriptorGatherOp(IRDLOperation):
    """Load rows `x_offsets` of columns [y_offset, y_offset + BLOCK_N) through a 1-row descriptor."""

    name = "tt.descriptor_gather"
    desc = operand_def(TensorDescType)
    x_offsets = operand_def(TensorType)
    y_offset = operand_def(i32)
    result = result_def(TensorType)
    assembly_format = "$desc `[` $x_offsets `,` $y_offset `]` attr-dict `:` functional-type(operands, results)"

    def __init__(
        self, desc: SSAValue | Operation, x_offsets: SSAValue | Operation, y_offset: SSAValue | Operation,
        result_type: Attribute,
    ):  # fmt: skip
        super().__init__(operands=[desc, x_offsets, y_offset], result_types=[result_type])

    def verify_(self) -> None:
        _check_gather(self, self.desc, self.x_offsets, self.result.type)


@irdl_op_definition
class DescriptorScatterOp(IRDLOperation):
    """Store `src` to rows `x_offsets`, columns [y_offset, y_offset + BLOCK_N), through a 1-row descriptor."""

    name = "tt.descriptor_scatter"
    desc = operand_def(TensorDescType)
    x_offsets = operand_def(TensorType)
    y_offset = operand_def(i32)
    src = operand_def(TensorType)
    assembly_format = (
        "$desc `[` $x_offsets `,` $y_offset `]` `,` $src attr-dict `:` type($desc) `,` type($x_offsets) `,` "
        "type($y_offset) `,` type($src)"
    )

    def __init__(
        self, desc: SSAValue | Operation, x_offsets: SSAValue | Operation, y_offset: SSAValue | Operation,
        src: SSAValue | Operation,
    ):  # fmt: skip
        super().__init__(operands=[desc, x_offsets, y_offset, src])

    def verify_(self) -> None:
        _check_gather(self, self.desc, self.x_offsets, self.src.type)


# ---------------------------------------------------------------------------------------------
# Triton 3.9 additions: approximate division, map_elementwise, atomic load/store/poll
# ---------------------------------------------------------------------------------------------


@irdl_op_definition
class ApproxDivFOp(_BinarySameType):
    """Approximate f32 division (`tl.fdiv(x, y, approx=True)`); the reference computes it exactly."""

    name = "tt.approx_divf"


@irdl_op_definition
class MapElementwiseOp(IRDLOperation):
    """Apply the scalar region lane by lane to `srcs` (`tl.map_elementwise`), `pack` lanes per call."""

    name = "tt.map_elementwise"
    srcs = var_operand_def()
    pack = prop_def(IntegerAttr[I32])
    result = var_result_def()
    scalarOp = region_def()

    def __init__(
        self, srcs: Sequence[SSAValue | Operation], result_types: Sequence[Attribute], pack: int, region: Region
    ):
        super().__init__(
            operands=[srcs], result_types=[result_types], properties={"pack": _i32(pack)}, regions=[region]
        )

    def verify_(self) -> None:
        if self.pack.value.data < 1:
            raise VerifyException(f"'tt.map_elementwise' pack must be >= 1, got {self.pack.value.data}")
        shapes = {shape_of(v.type) for v in [*self.srcs, *self.result]}
        if len(shapes) > 1:
            raise VerifyException("'tt.map_elementwise' operands and results must have one shape")


@irdl_op_definition
class MapElementwiseReturnOp(IRDLOperation):
    """Terminator of the tt.map_elementwise region."""

    name = "tt.map_elementwise.return"
    result = var_operand_def()
    traits = traits_def(Pure(), IsTerminator(), HasParent(MapElementwiseOp))
    assembly_format = "attr-dict ($result^ `:` type($result))?"

    def __init__(self, *values: SSAValue | Operation):
        super().__init__(operands=[values])


class _AtomicMemOp(IRDLOperation):
    """Shared syntax of atomic_load/atomic_store: `sem, scope, operands ...`."""

    sem = prop_def(IntegerAttr[I32])
    scope = prop_def(IntegerAttr[I32])

    def verify_(self) -> None:
        _check_enum(self, "sem", MEM_SEMANTIC)
        _check_enum(self, "scope", MEM_SYNC_SCOPE)

    def _print_head(self, printer: Printer) -> None:
        sem = enum_name(MEM_SEMANTIC, self.sem.value.data)
        scope = enum_name(MEM_SYNC_SCOPE, self.scope.value.data)
        printer.print_string(f" {sem}, {scope}, ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)

    @staticmethod
    def _parse_head(parser: Parser) -> tuple[str, str, list[UnresolvedOperand], dict[str, Attribute]]:
        sem = _parse_enum(parser, MEM_SEMANTIC, "memory semantic")
        parser.parse_punctuation(",")
        scope = _parse_enum(parser, MEM_SYNC_SCOPE, "memory scope")
        names: list[UnresolvedOperand] = []
        while parser.parse_optional_punctuation(","):
            names.append(parser.parse_unresolved_operand())
        attrs = dict(parser.parse_optional_attr_dict())
        return (
            enum_name(MEM_SEMANTIC, sem.value.data),
            enum_name(MEM_SYNC_SCOPE, scope.value.data),
            names,
            attrs,
        )


@irdl_op_definition
class AtomicLoadOp(_AtomicMemOp):
    """Atomic load (`tl.atomic_load`, acquire or relaxed) where `mask` holds; masked-off lanes are 0."""

    name = "tt.atomic_load"
    ptr = operand_def()
    mask = opt_operand_def()
    result = result_def()

    def __init__(
        self, ptr: SSAValue | Operation, mask: SSAValue | Operation | None, sem: str = "acquire",
        scope: str = "gpu",
    ):  # fmt: skip
        ptr = SSAValue.get(ptr)
        super().__init__(
            operands=[ptr, [mask] if mask is not None else []],
            result_types=[pointee_of(ptr.type)],
            properties={"sem": _i32(MEM_SEMANTIC[sem]), "scope": _i32(MEM_SYNC_SCOPE[scope])},
        )

    @classmethod
    def parse(cls, parser: Parser) -> AtomicLoadOp:
        sem, scope, names, attrs = cls._parse_head(parser)
        ins, _ = _parse_functional_type(parser)
        vals = parser.resolve_operands(names, ins, parser.pos)
        op = cls(vals[0], vals[1] if len(vals) > 1 else None, sem, scope)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        self._print_head(printer)
        _print_functional_type(printer, self)


@irdl_op_definition
class AtomicStoreOp(_AtomicMemOp):
    """Atomic store (`tl.atomic_store`, release or relaxed) of `val` where `mask` holds."""

    name = "tt.atomic_store"
    ptr = operand_def()
    val = operand_def()
    mask = opt_operand_def()

    def __init__(
        self, ptr: SSAValue | Operation, val: SSAValue | Operation, mask: SSAValue | Operation | None,
        sem: str = "release", scope: str = "gpu",
    ):  # fmt: skip
        super().__init__(
            operands=[ptr, val, [mask] if mask is not None else []],
            properties={"sem": _i32(MEM_SEMANTIC[sem]), "scope": _i32(MEM_SYNC_SCOPE[scope])},
        )

    @classmethod
    def parse(cls, parser: Parser) -> AtomicStoreOp:
        sem, scope, names, attrs = cls._parse_head(parser)
        parser.parse_punctuation(":")
        ptr_t = parser.parse_type()
        val_t = pointee_of(ptr_t)
        types = [ptr_t, val_t, like(val_t, IntegerType(1))][: len(names)]
        vals = parser.resolve_operands(names, types, parser.pos)
        op = cls(vals[0], vals[1], vals[2] if len(vals) > 2 else None, sem, scope)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        self._print_head(printer)
        printer.print_string(" : ")
        printer.print_attribute(self.ptr.type)


@irdl_op_definition
class AtomicPollOp(_AtomicMemOp):
    """Spin until *ptr == expected per lane (`tl.atomic_poll`) or `timeout` ns pass; true where it matched."""

    name = "tt.atomic_poll"
    ptr = operand_def()
    expected = operand_def()
    timeout = opt_operand_def(IntegerType(64))
    result = result_def()

    def __init__(
        self, ptr: SSAValue | Operation, expected: SSAValue | Operation, timeout: SSAValue | Operation | None,
        sem: str = "acquire", scope: str = "gpu",
    ):  # fmt: skip
        expected = SSAValue.get(expected)
        super().__init__(
            operands=[ptr, expected, [timeout] if timeout is not None else []],
            result_types=[like(expected.type, IntegerType(1))],
            properties={"sem": _i32(MEM_SEMANTIC[sem]), "scope": _i32(MEM_SYNC_SCOPE[scope])},
        )

    @classmethod
    def parse(cls, parser: Parser) -> AtomicPollOp:
        sem, scope, names, _ = cls._parse_head(parser)
        timeout = None
        if parser.parse_optional_keyword("timeout") is not None:
            timeout = parser.parse_unresolved_operand()
        attrs = dict(parser.parse_optional_attr_dict())
        parser.parse_punctuation(":")
        ptr_t = parser.parse_type()
        parser.parse_punctuation(",")
        exp_t = parser.parse_type()
        parser.parse_punctuation("->")
        parser.parse_type()
        p, e = parser.resolve_operands(names, [ptr_t, exp_t], parser.pos)
        t = parser.resolve_operand(timeout, IntegerType(64)) if timeout is not None else None
        op = cls(p, e, t, sem, scope)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        sem = enum_name(MEM_SEMANTIC, self.sem.value.data)
        scope = enum_name(MEM_SYNC_SCOPE, self.scope.value.data)
        printer.print_string(f" {sem}, {scope}, ")
        printer.print_list([self.ptr, self.expected], printer.print_operand)
        if self.timeout is not None:
            printer.print_string(" timeout ")
            printer.print_operand(self.timeout)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list([self.ptr.type, self.expected.type], printer.print_attribute)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


TT = Dialect(
    "tt",
    [
        IntToPtrOp,
        PtrToIntOp,
        BitcastOp,
        FpToFpOp,
        ClampFOp,
        PreciseSqrtOp,
        PreciseDivFOp,
        MulhiUIOp,
        ExternElementwiseOp,
        AddPtrOp,
        LoadOp,
        StoreOp,
        AtomicRMWOp,
        AtomicCASOp,
        SplatOp,
        UnsplatOp,
        BroadcastOp,
        ExpandDimsOp,
        ReshapeOp,
        TransOp,
        CatOp,
        JoinOp,
        SplitOp,
        HistogramOp,
        GatherOp,
        GetProgramIdOp,
        GetNumProgramsOp,
        MakeRangeOp,
        DotOp,
        ReduceOp,
        ReduceReturnOp,
        ScanOp,
        ScanReturnOp,
        PrintOp,
        AssertOp,
        FuncOp,
        ReturnOp,
        CallOp,
        MakeTensorDescOp,
        DescriptorLoadOp,
        DescriptorStoreOp,
        DescriptorReduceOp,
        DescriptorGatherOp,
        DescriptorScatterOp,
        ApproxDivFOp,
        MapElementwiseOp,
        MapElementwiseReturnOp,
        AtomicLoadOp,
        AtomicStoreOp,
        AtomicPollOp,
    ],
    [PointerType, CachePolicyAttr, TensorDescType],
)

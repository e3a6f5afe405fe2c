"""Tensor-capable `arith`: xDSL's arith dialect with the ops Triton emits on tensors made shape-polymorphic.

Models: MLIR's `arith` dialect as Triton 3.9's TTIR uses it (upstream LLVM at Triton's pinned commit).
xDSL 0.74 restricts `cmpi`, `cmpf`, `select` and the casts to scalars (or gives them a scalar `i1`
result) and has no `remf`; this module redefines those ops under the same names, with the same property
names and encodings as MLIR (`predicate` is an i64 integer), accepting scalars and ranked tensors of them.
Every other op is xDSL's own.

Deviations: none in syntax. Also carries `patch_dense_float_hex_parsing`, a fix for xDSL 0.74's parser,
which reads a hex literal inside `dense<...>` of a float type as an integer value instead of a bit pattern
(so `dense<0xFF800000> : tensor<4xf32>`, i.e. -inf, silently became 4286578688.0).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import arith as xarith
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CMPF_PREDICATES = (
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
)  # fmt: skip


def element_type(ty: Attribute) -> Attribute:
    """Return the element type of a tensor type, or `ty` itself for a scalar."""
    return ty.element_type if isinstance(ty, TensorType) else ty


def shape_of(ty: Attribute) -> tuple[int, ...] | None:
    """Return the shape of a tensor type, or None for a scalar."""
    return tuple(ty.get_shape()) if isinstance(ty, TensorType) else None


def with_element_type(ty: Attribute, elem: Attribute) -> Attribute:
    """Return `ty` with its element type replaced (a scalar becomes `elem`)."""
    if isinstance(ty, TensorType):
        return TensorType(elem, ty.get_shape())
    return elem


def i1_like(ty: Attribute) -> Attribute:
    """Return i1 with the shape of `ty`."""
    return with_element_type(ty, i1)


def _check_kind(ty: Attribute, kinds: tuple[type, ...], what: str, op: str) -> None:
    if not isinstance(element_type(ty), kinds):
        raise VerifyException(f"'{op}' expects {what} (or a tensor of it), got {ty}")


def _check_same_shape(a: Attribute, b: Attribute, op: str) -> None:
    if shape_of(a) != shape_of(b):
        raise VerifyException(f"'{op}' operand and result shapes differ: {a} vs {b}")


def _kind_names(kinds: tuple[type, ...]) -> str:
    names = {IntegerType: "an integer", IndexType: "index"}
    return " or ".join(names.get(k, "a float") for k in kinds)


def _width(ty: Attribute) -> int:
    elem = element_type(ty)
    if isinstance(elem, IntegerType):
        return elem.width.data
    if isinstance(elem, AnyFloat):
        return elem.bitwidth
    return 64


class _CmpBase(IRDLOperation):
    """Shared custom syntax of cmpi/cmpf: `pred, lhs, rhs : type` (MLIR prints the predicate keyword)."""

    PREDICATES: ClassVar[tuple[str, ...]] = ()
    KINDS: ClassVar[tuple[type, ...]] = ()

    predicate = prop_def(IntegerAttr)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()

    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation, predicate: int | str):
        lhs, rhs = SSAValue.get(lhs), SSAValue.get(rhs)
        if isinstance(predicate, str):
            predicate = self.PREDICATES.index(predicate)
        super().__init__(
            operands=[lhs, rhs],
            result_types=[i1_like(lhs.type)],
            properties=self._props(predicate),
        )

    def _props(self, predicate: int) -> dict[str, Attribute]:
        return {"predicate": IntegerAttr(predicate, i64)}

    @property
    def predicate_name(self) -> str:
        """Return the predicate keyword (`slt`, `olt`, ...)."""
        return self.PREDICATES[self.predicate.value.data]

    def verify_(self) -> None:
        if self.lhs.type != self.rhs.type:
            raise VerifyException(f"'{self.name}' operands differ in type: {self.lhs.type}, {self.rhs.type}")
        _check_kind(self.lhs.type, self.KINDS, _kind_names(self.KINDS), self.name)
        if self.result.type != i1_like(self.lhs.type):
            raise VerifyException(f"'{self.name}' result must be {i1_like(self.lhs.type)}, got {self.result.type}")
        if not 0 <= self.predicate.value.data < len(self.PREDICATES):
            raise VerifyException(f"'{self.name}' predicate {self.predicate.value.data} is out of range")

    @classmethod
    def parse(cls, parser: Parser) -> _CmpBase:
        pred = parser.parse_identifier()
        if pred not in cls.PREDICATES:
            parser.raise_error(f"unknown predicate '{pred}' for {cls.name}")
        parser.parse_punctuation(",")
        lhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        rhs = parser.parse_unresolved_operand()
        fastmath = None
        if parser.parse_optional_keyword("fastmath"):
            fastmath = FastMathFlagsAttr(FastMathFlagsAttr.parse_parameter(parser))
        parser.parse_punctuation(":")
        ty = parser.parse_type()
        lhs, rhs = parser.resolve_operands([lhs, rhs], [ty, ty], parser.pos)
        op = cls(lhs, rhs, pred)
        if fastmath is not None:
            op.properties["fastmath"] = fastmath
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.predicate_name}, ")
        printer.print_operand(self.lhs)
        printer.print_string(", ")
        printer.print_operand(self.rhs)
        fm = self.properties.get("fastmath")
        if isinstance(fm, FastMathFlagsAttr) and fm != FastMathFlagsAttr("none"):
            printer.print_string(" fastmath")
            fm.print_parameter(printer)
        printer.print_string(" : ")
        printer.print_attribute(self.lhs.type)


@irdl_op_definition
class CmpiOp(_CmpBase):
    """Compare integers (or tensors of them) elementwise; the result is i1 of the operand shape."""

    name = "arith.cmpi"
    PREDICATES: ClassVar[tuple[str, ...]] = CMPI_PREDICATES
    KINDS: ClassVar[tuple[type, ...]] = (IntegerType, IndexType)


@irdl_op_definition
class CmpfOp(_CmpBase):
    """Compare floats (or tensors of them) elementwise; the result is i1 of the operand shape."""

    name = "arith.cmpf"
    PREDICATES: ClassVar[tuple[str, ...]] = CMPF_PREDICATES
    KINDS: ClassVar[tuple[type, ...]] = (AnyFloat,)
    fastmath = prop_def(FastMathFlagsAttr, default_value=FastMathFlagsAttr("none"))

    def _props(self, predicate: int) -> dict[str, Attribute]:
        return {"predicate": IntegerAttr(predicate, 64), "fastmath": FastMathFlagsAttr("none")}


@irdl_op_definition
class SelectOp(IRDLOperation):
    """Choose `true_value` where `condition` holds, else `false_value`; the condition is i1 or i1-tensor.

    Shapes: a tensor condition has the shape of the values; a scalar i1 condition selects whole values.
    """

    name = "arith.select"
    condition = operand_def()
    true_value = operand_def()
    false_value = operand_def()
    result = result_def()

    traits = traits_def(Pure())

    def __init__(
        self,
        condition: SSAValue | Operation,
        true_value: SSAValue | Operation,
        false_value: SSAValue | Operation,
    ):
        true_value = SSAValue.get(true_value)
        super().__init__(operands=[condition, true_value, false_value], result_types=[true_value.type])

    @property
    def cond(self) -> SSAValue:
        """xDSL's name for `condition`."""
        return self.condition

    @property
    def lhs(self) -> SSAValue:
        """xDSL's name for `true_value`."""
        return self.true_value

    @property
    def rhs(self) -> SSAValue:
        """xDSL's name for `false_value`."""
        return self.false_value

    def verify_(self) -> None:
        ct, tt_, ft = self.condition.type, self.true_value.type, self.false_value.type
        if not (tt_ == ft == self.result.type):
            raise VerifyException(f"'arith.select' value and result types must match: {tt_}, {ft}")
        if element_type(ct) != IntegerType(1):
            raise VerifyException(f"'arith.select' condition must be i1 or a tensor of i1, got {ct}")
        if isinstance(ct, TensorType) and ct != i1_like(tt_):
            raise VerifyException(f"'arith.select' condition {ct} does not match the value shape {tt_}")

    @classmethod
    def parse(cls, parser: Parser) -> SelectOp:
        c = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        t = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        f = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        ty = parser.parse_type()
        cond_ty: Attribute = IntegerType(1)
        if parser.parse_optional_punctuation(","):
            cond_ty, ty = ty, parser.parse_type()
        ops = parser.resolve_operands([c, t, f], [cond_ty, ty, ty], parser.pos)
        return cls(*ops)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list([self.condition, self.true_value, self.false_value], printer.print_operand)
        printer.print_string(" : ")
        if isinstance(self.condition.type, TensorType):
            printer.print_attribute(self.condition.type)
            printer.print_string(", ")
        printer.print_attribute(self.result.type)


class _CastBase(IRDLOperation):
    """Elementwise cast `input : T1 to T2`; the subclass states the element kinds and width rule."""

    IN_KINDS: ClassVar[tuple[type, ...]] = (IntegerType, IndexType, AnyFloat)
    OUT_KINDS: ClassVar[tuple[type, ...]] = (IntegerType, IndexType, AnyFloat)
    WIDTH_RULE: ClassVar[str] = "any"  # "wider", "narrower", "same" or "any"

    input = operand_def()
    result = result_def()

    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, input: SSAValue | Operation, target_type: Attribute):
        input = SSAValue.get(input)
        if not isinstance(target_type, TensorType):
            target_type = with_element_type(input.type, target_type)
        super().__init__(operands=[input], result_types=[target_type])

    def verify_(self) -> None:
        src, dst = self.input.type, self.result.type
        _check_same_shape(src, dst, self.name)
        _check_kind(src, self.IN_KINDS, f"{_kind_names(self.IN_KINDS)} input", self.name)
        _check_kind(dst, self.OUT_KINDS, f"{_kind_names(self.OUT_KINDS)} result", self.name)
        ws, wd = _width(src), _width(dst)
        bad = {
            "wider": wd <= ws,
            "narrower": wd >= ws,
            "same": wd != ws,
            "any": False,
        }[self.WIDTH_RULE]
        if bad:
            raise VerifyException(f"'{self.name}' needs a {self.WIDTH_RULE} result than {src}, got {dst}")


_INT = (IntegerType,)
_FLOAT = (AnyFloat,)


@irdl_op_definition
class ExtFOp(_CastBase):
    """Extend a float to a wider float type."""

    name = "arith.extf"
    IN_KINDS: ClassVar[tuple[type, ...]] = _FLOAT
    OUT_KINDS: ClassVar[tuple[type, ...]] = _FLOAT
    WIDTH_RULE: ClassVar[str] = "wider"


@irdl_op_definition
class TruncFOp(_CastBase):
    """Truncate a float to a narrower float type (round to nearest even)."""

    name = "arith.truncf"
    IN_KINDS: ClassVar[tuple[type, ...]] = _FLOAT
    OUT_KINDS: ClassVar[tuple[type, ...]] = _FLOAT
    WIDTH_RULE: ClassVar[str] = "narrower"


@irdl_op_definition
class ExtSIOp(_CastBase):
    """Sign-extend an integer."""

    name = "arith.extsi"
    IN_KINDS: ClassVar[tuple[type, ...]] = _INT
    OUT_KINDS: ClassVar[tuple[type, ...]] = _INT
    WIDTH_RULE: ClassVar[str] = "wider"


@irdl_op_definition
class ExtUIOp(_CastBase):
    """Zero-extend an integer."""

    name = "arith.extui"
    IN_KINDS: ClassVar[tuple[type, ...]] = _INT
    OUT_KINDS: ClassVar[tuple[type, ...]] = _INT
    WIDTH_RULE: ClassVar[str] = "wider"


@irdl_op_definition
class TruncIOp(_CastBase):
    """Truncate an integer."""

    name = "arith.trunci"
    IN_KINDS: ClassVar[tuple[type, ...]] = _INT
    OUT_KINDS: ClassVar[tuple[type, ...]] = _INT
    WIDTH_RULE: ClassVar[str] = "narrower"


@irdl_op_definition
class SIToFPOp(_CastBase):
    """Convert a signed integer to float."""

    name = "arith.sitofp"
    IN_KINDS: ClassVar[tuple[type, ...]] = _INT
    OUT_KINDS: ClassVar[tuple[type, ...]] = _FLOAT


@irdl_op_definition
class UIToFPOp(_CastBase):
    """Convert an unsigned integer to float."""

    name = "arith.uitofp"
    IN_KINDS: ClassVar[tuple[type, ...]] = _INT
    OUT_KINDS: ClassVar[tuple[type, ...]] = _FLOAT


@irdl_op_definition
class FPToSIOp(_CastBase):
    """Convert a float to a signed integer (toward zero)."""

    name = "arith.fptosi"
    IN_KINDS: ClassVar[tuple[type, ...]] = _FLOAT
    OUT_KINDS: ClassVar[tuple[type, ...]] = _INT


@irdl_op_definition
class FPToUIOp(_CastBase):
    """Convert a float to an unsigned integer (toward zero)."""

    name = "arith.fptoui"
    IN_KINDS: ClassVar[tuple[type, ...]] = _FLOAT
    OUT_KINDS: ClassVar[tuple[type, ...]] = _INT


@irdl_op_definition
class BitcastOp(_CastBase):
    """Reinterpret the bits of a value as another type of the same width."""

    name = "arith.bitcast"
    IN_KINDS: ClassVar[tuple[type, ...]] = (IntegerType, AnyFloat)
    OUT_KINDS: ClassVar[tuple[type, ...]] = (IntegerType, AnyFloat)
    WIDTH_RULE: ClassVar[str] = "same"


@irdl_op_definition
class IndexCastOp(_CastBase):
    """Cast between index and an integer type."""

    name = "arith.index_cast"
    IN_KINDS: ClassVar[tuple[type, ...]] = (IntegerType, IndexType)
    OUT_KINDS: ClassVar[tuple[type, ...]] = (IntegerType, IndexType)

    def verify_(self) -> None:
        super().verify_()
        a = isinstance(element_type(self.input.type), IndexType)
        b = isinstance(element_type(self.result.type), IndexType)
        if a == b:
            raise VerifyException("'arith.index_cast' needs exactly one index-typed side")


@irdl_op_definition
class RemFOp(IRDLOperation):
    """Float remainder with the sign of the dividend (C `fmod`)."""

    name = "arith.remf"
    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    fastmath = prop_def(FastMathFlagsAttr, default_value=FastMathFlagsAttr("none"))
    result = result_def(T)

    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs (`fastmath` `` $fastmath^)? attr-dict `:` type($result)"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        if not (self.lhs.type == self.rhs.type == self.result.type):
            raise VerifyException("'arith.remf' operand and result types must match")
        _check_kind(self.lhs.type, _FLOAT, "a float", self.name)


REPLACED: Sequence[type[IRDLOperation]] = (
    CmpiOp, CmpfOp, SelectOp, ExtFOp, TruncFOp, ExtSIOp, ExtUIOp, TruncIOp, SIToFPOp, UIToFPOp,
    FPToSIOp, FPToUIOp, BitcastOp, IndexCastOp,
)  # fmt: skip


def _make_dialect() -> Dialect:
    ours = {op.name: op for op in (*REPLACED, RemFOp)}
    ops = [ours.pop(op.name, op) for op in xarith.Arith.operations]
    ops.extend(ours.values())
    return Dialect("arith", ops, list(xarith.Arith.attributes), list(xarith.Arith._interfaces))


# ---------------------------------------------------------------------------------------------
# xDSL 0.74 fix: hex literals in dense<...> of float type are bit patterns, as in MLIR.
# ---------------------------------------------------------------------------------------------


class _HexBits(int):
    """An integer literal that was written in hex; for a float element type it is a bit pattern."""


_FLOAT_FORMATS: dict[type, tuple[str, str]] = {Float16Type: ("<H", "<e"), Float32Type: ("<I", "<f")}


def float_from_bits(bits: int, ty: Attribute) -> float:
    """Return the value of the float type `ty` whose bit pattern is `bits`."""
    if isinstance(ty, BFloat16Type):
        return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]
    if isinstance(ty, Float64Type):
        return struct.unpack("<d", struct.pack("<Q", bits & (2**64 - 1)))[0]
    fmt = _FLOAT_FORMATS.get(type(ty))
    if fmt is None:
        raise ValueError(f"no bit-pattern decoding for {ty}")
    width = 16 if fmt[0] == "<H" else 32
    return struct.unpack(fmt[1], struct.pack(fmt[0], bits & ((1 << width) - 1)))[0]


def patch_dense_float_hex_parsing() -> None:
    """Make xDSL read `dense<0xFF800000> : tensor<..xf32>` as the bit pattern (-inf), as MLIR does.

    Idempotent. Needed because xDSL's printer emits non-finite dense floats in hex and its parser read
    them back as integers (a silent miscompile of -inf / nan constants).
    """
    from xdsl.parser.attribute_parser import AttrParser
    from xdsl.utils.mlir_lexer import MLIRTokenKind

    if getattr(AttrParser, "_mtia_hex_patch", False):
        return
    elem_cls = AttrParser._TensorLiteralElement  # pyright: ignore[reportPrivateUsage]
    orig_parse = AttrParser._parse_optional_bool_int_or_float  # pyright: ignore[reportPrivateUsage]
    orig_to_type = elem_cls.to_type

    def parse_optional_bool_int_or_float(self: AttrParser):  # type: ignore[no-untyped-def]
        tok = self._current_token  # pyright: ignore[reportPrivateUsage]
        is_hex = tok.kind == MLIRTokenKind.INTEGER_LIT and tok.text[:2] in ("0x", "0X")
        res = orig_parse(self)
        if res is not None and is_hex:
            return _HexBits(res[0]), res[1]
        return res

    def to_type(self, parser, type):  # type: ignore[no-untyped-def]
        if isinstance(self.value, _HexBits) and isinstance(type, AnyFloat):
            return float_from_bits(int(self.value), type)
        return orig_to_type(self, parser, type)

    AttrParser._parse_optional_bool_int_or_float = parse_optional_bool_int_or_float  # type: ignore
    elem_cls.to_type = to_type  # type: ignore[method-assign]
    AttrParser._mtia_hex_patch = True  # type: ignore[attr-defined]


patch_dense_float_hex_parsing()
Arith = _make_dialect()

"""Scalar arithmetic in the `llvm` dialect: one element of an arith / math / tt op, shared by the scalar core's
code and the per-element bodies of engine command loops (backend/llvm_body.py).

Registers: integers as iN (i1 as i1), index as i64, f16/f32/f64 as themselves, bf16 as f32 holding a bf16
value (rounded after every op, as the machine model's semantics does), `!tt.ptr<T>` as an i64 byte address.
Local storage (LS) keeps i1 as one byte and bf16 as its 16-bit pattern (`storage_type`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from xdsl.dialects import builtin, llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from mtia_xdsl.backend.llvm_ir import FPToSIOp, FPToUIOp, UIToFPOp
from mtia_xdsl.dialects import mtia
from mtia_xdsl.semantics.scalar import INT_DIV_BY_ZERO, MAX_MIN
from mtia_xdsl.utils.locations import location_str

I1, I8, I16, I32, I64 = (IntegerType(w) for w in (1, 8, 16, 32, 64))
F32 = Float32Type()
PTR = llvm.LLVMPointerType()


class NotHandled(DiagnosticException):
    """A construct the LLVM IR emitter does not translate; the message names the kernel line."""


def not_handled(op: Operation, what: str = "") -> NotHandled:
    """The error for `op`: `file:line:col: error: the LLVM IR emitter does not handle ...`."""
    detail = f" ({what})" if what else ""
    return NotHandled(
        f"{location_str(op.location)}: error: the LLVM IR emitter (mtia-llvm) does not handle {op.name}{detail}; "
        "run the kernel on the machine model (the default executor) instead"
    )


def element_type(t: Attribute) -> Attribute:
    """The element type of a tensor type, or `t` itself."""
    return cast(TensorType[Attribute], t).element_type if isinstance(t, TensorType) else t


def is_tensor(t: Attribute) -> bool:
    """Whether `t` is a tensor type (without narrowing `t` to xDSL's generic TensorType)."""
    return isinstance(t, TensorType)


def shape_of(t: Attribute) -> list[int]:
    """The shape of tensor type `t`; [] for a scalar type."""
    return list(cast(TensorType[Attribute], t).get_shape()) if isinstance(t, TensorType) else []


def is_int(t: Attribute) -> bool:
    """Whether `t` is an integer type (without narrowing `t` to xDSL's generic IntegerType)."""
    return isinstance(t, IntegerType)


def int_width(t: Attribute) -> int:
    """The bit width of integer type `t`. Raises: ValueError for a type that is not an integer."""
    if not isinstance(t, IntegerType):
        raise ValueError(f"{t} is not an integer type")
    return t.bitwidth


def register_type(t: Attribute) -> Attribute:
    """The LLVM type holding one element of (scalar or element type) `t` in a register.

    Raises: ValueError for a type without one (fp8, complex, ...).
    """
    t = element_type(t)
    if is_int(t):
        return IntegerType(int_width(t))
    if isinstance(t, IndexType):
        return I64
    if isinstance(t, BFloat16Type):
        return F32
    if isinstance(t, Float16Type | Float32Type | Float64Type):
        return t
    if t.name == "tt.ptr":
        return I64
    raise ValueError(f"no LLVM register type for {t}")


def storage_type(t: Attribute) -> Attribute:
    """The LLVM type of one element of `t` in LS (i1 as i8, bf16 as i16)."""
    t = element_type(t)
    if is_int(t) and int_width(t) == 1:
        return I8
    if isinstance(t, BFloat16Type):
        return I16
    return register_type(t)


def _is_i1(t: Attribute) -> bool:
    e = element_type(t)
    return is_int(e) and int_width(e) == 1


def is_bf16(t: Attribute) -> bool:
    """Whether the element type of `t` is bf16."""
    return isinstance(element_type(t), BFloat16Type)


def is_float(t: Attribute) -> bool:
    """Whether the element type of `t` is a float type."""
    return isinstance(element_type(t), builtin.AnyFloat)


class Builder:
    """Appends `llvm` ops to a block (the insertion point moves with `block`)."""

    def __init__(self, block: Block) -> None:
        self.block = block

    def add(self, op: Operation) -> SSAValue:
        """Append `op`; return its first result (or a dummy for result-less ops)."""
        self.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def const(self, value: int | float, t: Attribute) -> SSAValue:
        """A constant of LLVM type `t`."""
        if isinstance(t, builtin.AnyFloat):
            return self.add(llvm.ConstantOp(FloatAttr(float(value), t), t))
        width = int_width(t)
        v = int(value)
        if width == 1:
            v = 1 if v else 0
        else:
            v &= (1 << width) - 1
            if v >= 1 << (width - 1):
                v -= 1 << width
        return self.add(llvm.ConstantOp(IntegerAttr(v, cast(IntegerType, t)), t))

    def intrinsic(self, name: str, args: Sequence[SSAValue], result: Attribute) -> SSAValue:
        """Call LLVM intrinsic `name` (the type suffix is added from `result`)."""
        return self.add(llvm.CallIntrinsicOp(f"{name}.{_suffix(result)}", list(args), [result]))

    def icmp(self, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(llvm.ICmpOp(a, b, IntegerAttr(llvm.ICmpPredicateFlag(pred).to_int(), 64)))

    def int_cast(self, v: SSAValue, to: Attribute, signed: bool = True) -> SSAValue:
        """Sign- (or zero-) extend or truncate integer `v` to integer type `to`."""
        frm, width = int_width(v.type), int_width(to)
        if frm == width:
            return v
        if frm > width:
            return self.add(llvm.TruncOp(v, to))
        return self.add(llvm.SExtOp(v, to) if signed and frm > 1 else llvm.ZExtOp(v, to))

    def round_bf16(self, v: SSAValue) -> SSAValue:
        """Round f32 `v` to the nearest bf16 (even on ties), kept as f32 (semantics.scalar.f32_to_bf16_bits)."""
        return self.bf16_to_f32(self.f32_to_bf16(v))

    def f32_to_bf16(self, v: SSAValue) -> SSAValue:
        """The bf16 bit pattern (i16) nearest f32 `v`; NaN stays a quiet NaN with its sign."""
        u = self.add(llvm.BitcastOp(v, I32))
        c16 = self.const(16, I32)
        lsb = self.add(llvm.AndOp(self.add(llvm.LShrOp(u, c16)), self.const(1, I32)))
        rounded = self.add(
            llvm.LShrOp(self.add(llvm.AddOp(u, self.add(llvm.AddOp(lsb, self.const(0x7FFF, I32))))), c16)
        )
        mag = self.add(llvm.AndOp(u, self.const(0x7FFFFFFF, I32)))
        nan = self.icmp("ugt", mag, self.const(0x7F800000, I32))
        quiet = self.add(llvm.OrOp(self.add(llvm.LShrOp(u, c16)), self.const(0x40, I32)))
        return self.add(llvm.TruncOp(self.add(llvm.SelectOp(nan, quiet, rounded)), I16))

    def bf16_to_f32(self, bits: SSAValue) -> SSAValue:
        """The f32 value of bf16 pattern `bits` (i16), exact."""
        wide = self.add(llvm.ZExtOp(bits, I32))
        return self.add(llvm.BitcastOp(self.add(llvm.ShlOp(wide, self.const(16, I32))), F32))

    def from_storage(self, v: SSAValue, t: Attribute) -> SSAValue:
        """An element loaded from LS (storage_type) as a register value of element type `t`."""
        if _is_i1(t):
            return self.icmp("ne", v, self.const(0, I8))
        if is_bf16(t):
            return self.bf16_to_f32(v)
        return v

    def to_storage(self, v: SSAValue, t: Attribute) -> SSAValue:
        """A register value of element type `t` as stored in LS (storage_type)."""
        if _is_i1(t):
            return self.add(llvm.ZExtOp(v, I8))
        if is_bf16(t):
            return self.f32_to_bf16(v)
        return v

    def byte_ptr(self, base: SSAValue, offset_bytes: SSAValue) -> SSAValue:
        """`base` + `offset_bytes` (an i64) as a pointer."""
        return self.add(llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], I8, ssa_indices=[offset_bytes]))


def _suffix(t: Attribute) -> str:
    return f"i{int_width(t)}" if is_int(t) else f"f{float_bits(t)}"


def float_bits(t: Attribute) -> int:
    """The width of LLVM float register type `t` (16, 32 or 64), else 0."""
    if isinstance(t, Float16Type):
        return 16
    if isinstance(t, Float32Type):
        return 32
    return 64 if isinstance(t, Float64Type) else 0


# ------------------------------------------------------------------------------------------------
# the op table: op name -> (builder, operand values, op) -> result value
# ------------------------------------------------------------------------------------------------

ScalarRule = Callable[[Builder, list[SSAValue], Operation], SSAValue]


def _binary(cls: type[Operation]) -> ScalarRule:
    return lambda b, a, op: b.add(cls(a[0], a[1]))  # type: ignore[call-arg]


def _int_division(cls: type[Operation], signed: bool, remainder: bool) -> ScalarRule:
    """`a / b` or `a % b` by semantics.scalar's rules, never LLVM's undefined (trapping) cases: by zero
    INT_DIV_BY_ZERO; a signed division by -1 is the wrapping negation, its remainder 0."""

    def rule(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
        t = a[0].type
        by_zero = b.icmp("eq", a[1], b.const(0, t))
        divisor = b.add(llvm.SelectOp(by_zero, b.const(1, t), a[1]))
        by_minus_one = b.icmp("eq", a[1], b.const(-1, t)) if signed else None
        if by_minus_one is not None:
            divisor = b.add(llvm.SelectOp(by_minus_one, b.const(1, t), divisor))
        r = b.add(cls(a[0], divisor))  # type: ignore[call-arg]
        if by_minus_one is not None:
            wrapped = b.const(0, t) if remainder else b.add(llvm.SubOp(b.const(0, t), a[0]))
            r = b.add(llvm.SelectOp(by_minus_one, wrapped, r))
        return b.add(llvm.SelectOp(by_zero, b.const(INT_DIV_BY_ZERO, t), r))

    return rule


def _intr(name: str) -> ScalarRule:
    return lambda b, a, op: b.intrinsic(name, a, a[0].type)


def _result_type(op: Operation) -> Attribute:
    return register_type(op.results[0].type)


def _cast(cls: type[Operation]) -> ScalarRule:
    return lambda b, a, op: b.add(cls(a[0], _result_type(op)))  # type: ignore[call-arg]


def _int_ext(signed: bool) -> ScalarRule:
    return lambda b, a, op: b.int_cast(a[0], _result_type(op), signed)


def _int_prop(op: Operation, name: str) -> int:
    """The value of integer property `name` of `op`."""
    return cast(IntegerAttr, op.properties[name]).value.data


def _cmpi(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
    pred = _int_prop(op, "predicate")
    return b.add(llvm.ICmpOp(a[0], a[1], IntegerAttr(pred, 64)))


_FCMP_UNSUPPORTED = {0: "false", 7: "ord", 14: "uno", 15: "true"}


def _cmpf(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
    pred = _int_prop(op, "predicate")
    if pred in _FCMP_UNSUPPORTED:
        raise not_handled(op, f"predicate {_FCMP_UNSUPPORTED[pred]}")
    return b.add(llvm.FCmpOp(a[0], a[1], IntegerAttr(pred, 64)))


def _constant(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
    value = op.properties.get("value")
    if value is None:
        value = op.attributes.get("value")
    t = _result_type(op)
    if isinstance(value, builtin.DenseIntOrFPElementsAttr):
        values = value.get_values()
        if len(set(values)) != 1:
            raise not_handled(op, "a non-uniform dense constant")
        return b.const(values[0], t)
    if isinstance(value, IntegerAttr | FloatAttr):
        return b.const(value.value.data, t)
    raise not_handled(op, f"constant {value}")


def _addptr(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
    pointee = cast(Attribute, element_type(op.results[0].type).pointee_type)  # type: ignore[attr-defined]
    elem_bytes = mtia.element_bytes(pointee)
    offset = b.int_cast(a[1], I64)
    scaled = b.add(llvm.MulOp(offset, b.const(elem_bytes, I64)))
    return b.add(llvm.AddOp(a[0], scaled))


def _fp_cast(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
    """extf / truncf / tt.fp_to_fp between f16, bf16 (as f32), f32 and f64, as the model converts
    (machine/interpret/arith.py `_float_convert`, tt.py `_fp_to_fp`): to nearest even, f64 -> bf16 rounded once
    (through round-to-odd f32); tt.fp_to_fp with rounding rtz truncates toward zero."""
    src_t, dst_t = element_type(op.operands[0].type), element_type(op.results[0].type)
    v = a[0]
    src_r, dst_r = register_type(src_t), register_type(dst_t)
    src_bits, dst_bits = float_bits(src_r), float_bits(dst_r)
    if not src_bits or not dst_bits:
        raise not_handled(op, f"{src_t} -> {dst_t}")
    if op.name == "tt.fp_to_fp" and op.properties.get("rounding") is not None:
        from mtia_xdsl.dialects.tt import ROUNDING_MODE

        rounding = _int_prop(op, "rounding")
        narrowing = mtia.element_bytes(dst_t) < mtia.element_bytes(src_t)
        if rounding != ROUNDING_MODE["rtne"] and narrowing:
            return _fp_trunc_rtz(b, v, src_t, dst_t)
    if dst_bits > src_bits:
        v = b.add(llvm.FPExtOp(v, dst_r))
    elif isinstance(dst_t, BFloat16Type) and isinstance(src_t, Float64Type):
        return b.round_bf16(_f64_to_f32_round_to_odd(b, v))
    elif dst_bits < src_bits:
        v = b.add(llvm.FPTruncOp(v, dst_r))
    if isinstance(dst_t, BFloat16Type) and not isinstance(src_t, BFloat16Type):
        v = b.round_bf16(v)
    return v


def _toward_zero(b: Builder, r: SSAValue, x: SSAValue) -> SSAValue:
    """`r` (the nearest-even narrowing of `x`) moved one ulp toward zero where it rounded away from zero,
    |r| > |x| (never for NaN; an overflow to inf becomes the largest finite value)."""
    wide = b.add(llvm.FPExtOp(r, x.type))
    too_far = b.add(llvm.FCmpOp(b.add(llvm.FAbsOp(wide, x.type)), b.add(llvm.FAbsOp(x, x.type)), IntegerAttr(2, 64)))
    bits = IntegerType(float_bits(r.type))
    down = b.add(llvm.BitcastOp(b.add(llvm.SubOp(b.add(llvm.BitcastOp(r, bits)), b.const(1, bits))), r.type))
    return b.add(llvm.SelectOp(too_far, down, r))


def _f64_to_f32_round_to_odd(b: Builder, x: SSAValue) -> SSAValue:
    """f64 `x` narrowed to f32 rounding to odd (formats._f64_to_f32_round_to_odd), so that a following
    f32 -> bf16 rounding is not a double rounding."""
    f = _toward_zero(b, b.add(llvm.FPTruncOp(x, F32)), x)
    inexact = b.add(llvm.FCmpOp(b.add(llvm.FPExtOp(f, x.type)), x, IntegerAttr(6, 64)))  # one: ordered, !=
    bits = b.add(llvm.BitcastOp(f, I32))
    return b.add(llvm.BitcastOp(b.add(llvm.OrOp(bits, b.add(llvm.ZExtOp(inexact, I32)))), F32))


def _fp_trunc_rtz(b: Builder, x: SSAValue, src_t: Attribute, dst_t: Attribute) -> SSAValue:
    """tt.fp_to_fp toward zero (machine/interpret/tt.py `_fp_to_fp`): to bf16 the f32 value's (an f64 first
    rounded to nearest f32) upper 16 bits, NaN kept quiet; to f16 / f32 the nearest-even value moved one ulp
    toward zero where it rounded away from zero."""
    if isinstance(dst_t, BFloat16Type):
        f = x if isinstance(x.type, Float32Type) else b.add(llvm.FPTruncOp(x, F32))
        cut = b.add(llvm.AndOp(b.add(llvm.BitcastOp(f, I32)), b.const(0xFFFF0000, I32)))
        nan = b.add(llvm.FCmpOp(f, f, IntegerAttr(14, 64)))  # uno
        return b.add(llvm.SelectOp(nan, b.round_bf16(f), b.add(llvm.BitcastOp(cut, F32))))
    return _toward_zero(b, b.add(llvm.FPTruncOp(x, register_type(dst_t))), x)


def _clampf(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
    """tt.clampf: min(max(x, lo), hi) with IEEE max/min (-0 < +0); NaN propagates if `propagateNan` is set."""
    prop = op.properties.get("propagateNan")
    nan = isinstance(prop, IntegerAttr) and prop.value.data != 0
    hi, lo = (MAX_MIN["arith.maximumf"], MAX_MIN["arith.minimumf"]) if nan else (
        MAX_MIN["arith.maxnumf"], MAX_MIN["arith.minnumf"])  # fmt: skip
    hi_fn, lo_fn = hi.llvm_intrinsic, lo.llvm_intrinsic
    return b.intrinsic(lo_fn, [b.intrinsic(hi_fn, [a[0], a[1]], a[0].type), a[2]], a[0].type)


def _rsqrt(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
    return b.add(llvm.FDivOp(b.const(1.0, a[0].type), b.add(llvm.FSqrtOp(a[0]))))


def _libm(name32: str) -> ScalarRule:
    """A libm call (tanhf, atan2f, ...) on all operands, for f32; f64 uses the name without the suffix, f16
    computes in f32 and rounds once (as numpy's float16 loops do). The ops of semantics.scalar.WIDENED_F32
    compute an f32 (or bf16) value with the double function, rounded once, as every executor does."""
    from mtia_xdsl.semantics.scalar import WIDENED_F32

    widened = f"math.{name32.removesuffix('f')}" in WIDENED_F32

    def rule(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
        t = a[0].type
        if widened and isinstance(t, Float32Type):
            xs = [b.add(llvm.FPExtOp(x, Float64Type())) for x in a]
            wide = b.add(llvm.CallOp(name32.removesuffix("f"), *xs, return_type=Float64Type()))
            return b.add(llvm.FPTruncOp(wide, t))
        if isinstance(t, Float16Type):
            xs = [b.add(llvm.FPExtOp(x, F32)) for x in a]
            return b.add(llvm.FPTruncOp(b.add(llvm.CallOp(name32, *xs, return_type=F32)), t))
        if not isinstance(t, Float32Type | Float64Type):
            raise not_handled(op, f"{name32} of {t}")
        name = name32 if isinstance(t, Float32Type) else name32[:-1]
        return b.add(llvm.CallOp(name, *a, return_type=t))

    return rule


LIBM_FUNCTIONS = {
    "tanhf": 1, "erff": 1, "expm1f": 1, "log1pf": 1, "log10f": 1, "cbrtf": 1, "tanf": 1, "asinf": 1, "acosf": 1,
    "atanf": 1, "sinhf": 1, "coshf": 1, "asinhf": 1, "acoshf": 1, "atanhf": 1, "powf": 2, "atan2f": 2,
    "hypotf": 2,
}  # fmt: skip
"""libm functions the emitted IR may call (f32 names; the f64 ones drop the `f`) and their arity, declared by
the emitter and resolved from the process by the JIT. glibc's error bounds are in
tests/conformance/executor_tolerance.py."""


def _fclass(test: str) -> ScalarRule:
    """isnan / isinf / isfinite / signbit of a float, as the op's integer (or i1) result type."""

    def rule(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
        x = a[0]
        if test == "signbit":
            bits = IntegerType(float_bits(x.type))
            flag = b.icmp("slt", b.add(llvm.BitcastOp(x, bits)), b.const(0, bits))
        elif test == "isnan":
            flag = b.add(llvm.FCmpOp(x, x, IntegerAttr(14, 64)))  # uno: unordered
        else:
            mag = b.add(llvm.FAbsOp(x, x.type))
            inf = b.const(float("inf"), x.type)
            # isinf: |x| == inf (oeq, 1); isfinite: |x| < inf (olt, 4), false for NaN
            flag = b.add(llvm.FCmpOp(mag, inf, IntegerAttr(1 if test == "isinf" else 4, 64)))
        return b.int_cast(flag, _result_type(op), signed=False)

    return rule


_LIBDEVICE_RULES: dict[str, ScalarRule] = {
    "hypot": _libm("hypotf"),
    **{test: _fclass(test) for test in ("isnan", "isinf", "isfinite", "signbit")},
    "finite": _fclass("isfinite"),
}
"""libdevice stems (semantics/libdevice.py) that are no `arith`/`math` op (those lower as that op)."""


def _extern_elementwise(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
    """tt.extern_elementwise (`tl.extra.libdevice`): the `arith`/`math` op its symbol computes
    (semantics/libdevice.py SAME_AS_OP), or a rule of `_LIBDEVICE_RULES`."""
    from mtia_xdsl.semantics.libdevice import SAME_AS_OP, libdevice_stem

    symbol = cast(builtin.StringAttr, op.properties["symbol"]).data
    stem = libdevice_stem(symbol)
    name = SAME_AS_OP.get(stem)
    rule = SCALAR_RULES.get(name) if name is not None else _LIBDEVICE_RULES.get(stem)
    if rule is None:
        raise not_handled(op, f"libdevice function {symbol}")
    return rule(b, a, op)


def _select(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
    return b.add(llvm.SelectOp(a[0], a[1], a[2]))


def _mulhiui(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
    t = a[0].type
    width = int_width(t)
    wide = IntegerType(2 * width)
    x, y = (b.add(llvm.ZExtOp(v, wide)) for v in a)
    hi = b.add(llvm.LShrOp(b.add(llvm.MulOp(x, y)), b.const(width, wide)))
    return b.add(llvm.TruncOp(hi, t))


def _absi(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
    return b.add(llvm.CallIntrinsicOp(f"llvm.abs.{_suffix(a[0].type)}", [a[0], b.const(0, I1)], [a[0].type]))


def _identity(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
    return b.int_cast(a[0], _result_type(op)) if isinstance(a[0].type, IntegerType) else a[0]


def _bitcast(b: Builder, a: list[SSAValue], op: Operation) -> SSAValue:
    dst = _result_type(op)
    if is_bf16(op.operands[0].type) or is_bf16(op.results[0].type):
        raise not_handled(op, "a bitcast to or from bf16")
    return a[0] if a[0].type == dst else b.add(llvm.BitcastOp(a[0], dst))


SCALAR_RULES: dict[str, ScalarRule] = {
    "arith.constant": _constant,
    "arith.addi": _binary(llvm.AddOp),
    "arith.subi": _binary(llvm.SubOp),
    "arith.muli": _binary(llvm.MulOp),
    "arith.divsi": _int_division(llvm.SDivOp, signed=True, remainder=False),
    "arith.divui": _int_division(llvm.UDivOp, signed=False, remainder=False),
    "arith.remsi": _int_division(llvm.SRemOp, signed=True, remainder=True),
    "arith.remui": _int_division(llvm.URemOp, signed=False, remainder=True),
    "arith.andi": _binary(llvm.AndOp),
    "arith.ori": _binary(llvm.OrOp),
    "arith.xori": _binary(llvm.XOrOp),
    "arith.shli": _binary(llvm.ShlOp),
    "arith.shrsi": _binary(llvm.AShrOp),
    "arith.shrui": _binary(llvm.LShrOp),
    "arith.maxsi": _intr("llvm.smax"),
    "arith.minsi": _intr("llvm.smin"),
    "arith.maxui": _intr("llvm.umax"),
    "arith.minui": _intr("llvm.umin"),
    "arith.addf": _binary(llvm.FAddOp),
    "arith.subf": _binary(llvm.FSubOp),
    "arith.mulf": _binary(llvm.FMulOp),
    "arith.divf": _binary(llvm.FDivOp),
    "arith.remf": _binary(llvm.FRemOp),
    "arith.negf": lambda b, a, op: b.add(llvm.FNegOp(a[0])),
    **{name: _intr(rule.llvm_intrinsic) for name, rule in MAX_MIN.items()},  # -0 < +0, NaN as the table says
    "arith.cmpi": _cmpi,
    "arith.cmpf": _cmpf,
    "arith.select": _select,
    "arith.extsi": _int_ext(True),
    "arith.extui": _int_ext(False),
    "arith.trunci": _int_ext(True),
    "arith.index_cast": _int_ext(True),
    "arith.sitofp": _cast(llvm.SIToFPOp),
    "arith.uitofp": _cast(UIToFPOp),
    "arith.fptosi": _cast(FPToSIOp),
    "arith.fptoui": _cast(FPToUIOp),
    "arith.extf": _fp_cast,
    "arith.truncf": _fp_cast,
    "arith.bitcast": _bitcast,
    "math.exp": lambda b, a, op: b.add(llvm.FExpOp(a[0])),
    "math.exp2": lambda b, a, op: b.add(llvm.FExp2Op(a[0])),
    "math.log": lambda b, a, op: b.add(llvm.FLogOp(a[0])),
    "math.log2": lambda b, a, op: b.add(llvm.FLog2Op(a[0])),
    "math.sqrt": lambda b, a, op: b.add(llvm.FSqrtOp(a[0])),
    "math.rsqrt": _rsqrt,
    "math.absf": lambda b, a, op: b.add(llvm.FAbsOp(a[0], a[0].type)),
    "math.absi": _absi,
    "math.floor": lambda b, a, op: b.add(llvm.FFloorOp(a[0])),
    "math.ceil": lambda b, a, op: b.add(llvm.FCeilOp(a[0])),
    "math.sin": lambda b, a, op: b.add(llvm.FSinOp(a[0])),
    "math.cos": lambda b, a, op: b.add(llvm.FCosOp(a[0])),
    "math.fma": lambda b, a, op: b.add(llvm.FMAOp(a[0], a[1], a[2])),
    **{f"math.{n.removesuffix('f')}": _libm(n) for n in LIBM_FUNCTIONS if n not in ("hypotf", "powf")},
    "math.powf": _libm("powf"),
    "math.trunc": _intr("llvm.trunc"),
    "math.round": _intr("llvm.round"),  # halves away from zero, as semantics.scalar.round_half_away
    "math.roundeven": _intr("llvm.roundeven"),
    "math.copysign": _intr("llvm.copysign"),
    "tt.extern_elementwise": _extern_elementwise,
    "tt.addptr": _addptr,
    "tt.precise_sqrt": lambda b, a, op: b.add(llvm.FSqrtOp(a[0])),
    "tt.precise_divf": _binary(llvm.FDivOp),
    "tt.fp_to_fp": _fp_cast,
    "tt.clampf": _clampf,
    "tt.mulhiui": _mulhiui,
    "tt.bitcast": _bitcast,
    "tt.int_to_ptr": _identity,
    "ub.poison": lambda b, a, op: b.const(0, _result_type(op)),  # reads as 0, as in the machine model
    "tt.ptr_to_int": _identity,
}
"""How one element of each elementwise op is computed (bf16 results are rounded by `emit_scalar`)."""

_BF16_EXACT = frozenset(
    ("arith.constant", "arith.cmpf", "arith.select", "arith.negf", "math.absf", "arith.maxnumf", "arith.minnumf",
     "tt.clampf",
     "arith.maximumf", "arith.minimumf", "arith.extf", "arith.truncf", "tt.fp_to_fp")
)  # fmt: skip
"""Ops whose bf16 result needs no rounding (it is one of the inputs, or the rule rounds it)."""


def emit_scalar(b: Builder, op: Operation, args: list[SSAValue]) -> SSAValue:
    """Emit one element of elementwise `op` on register values `args`; return the result register.

    Raises: NotHandled naming the kernel line for an op without a rule.
    """
    rule = SCALAR_RULES.get(op.name)
    if rule is None or len(op.results) != 1:
        raise not_handled(op)
    try:
        value = rule(b, args, op)
    except ValueError as e:
        raise not_handled(op, str(e)) from None
    if is_bf16(op.results[0].type) and op.name not in _BF16_EXACT:
        value = b.round_bf16(value)
    return value

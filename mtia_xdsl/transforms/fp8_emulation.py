"""fp8 emulation for convert-tt-to-mtia: fp8 values become their 8-bit patterns (i8), computed in fp32.

MTIA-2i's DPE and SE take int8, fp16, bf16 and fp32 (docs/machine.md); the RISC-V vector core emulates fp8.
`emulate_fp8(func)` rewrites a tt function so that no fp8 type remains:

- every fp8 value (scalar, tensor, pointee of a pointer, region argument) is retyped to i8 holding the
  raw bits, so loads, stores, layout ops, selects and loop-carried values move bytes unchanged;
- an op computing on fp8 (arith/math float ops, comparisons, casts, `tt.fp_to_fp`) decodes its fp8
  operands to f32 with integer bit operations, computes in f32, and encodes fp8 results back;
- `tt.dot` with fp8 operands decodes them to f16 (exact for every supported format) for the DPE;
- fp8 constants become i8 constants of their bit patterns.

Each decode or encode sequence (about 20 integer ops on i32 per element) is one `mtia.vec_compute`
command on the RISC-V vector core, so the machine charges elements x ops at the vector core's rate;
the f32 op in between goes to the SE as any f32 op does.

Rounding: f32 -> fp8 rounds to nearest even (or toward zero for `tt.fp_to_fp` with `rounding = rtz`),
bit-exact with torch's `.to(torch.float8_*)`: overflow (and inf) gives inf for E5M2, the largest finite
value for E4M3FN (as NVIDIA's `cvt.rn.satfinite`, which Triton's CUDA backend uses), NaN for the FNUZ
formats. Triton's interpreter differs (it does not carry the rounding into the exponent; DESIGN.md).
Sources wider than f32 (f64) are rounded to f32 first (a double rounding in rare ties).

Supported formats: E5M2 (tl.float8e5), E4M3FN (tl.float8e4nv), E5M2FNUZ (tl.float8e5b16) and
E4M3FNUZ (tl.float8e4b8). Others raise PassFailedException naming the kernel line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import builtin
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.dialects import mtia, tt
from mtia_xdsl.transforms.arith_ops import arith
from mtia_xdsl.utils.fp8 import FP8_FORMATS, Fp8Format, encode_fp8_np
from mtia_xdsl.utils.isa import isa
from mtia_xdsl.utils.locations import location_str
from mtia_xdsl.utils.walk import ops_of

_FP8_TYPES = (
    builtin.Float8E4M3FNType,
    builtin.Float8E5M2Type,
    builtin.Float8E4M3FNUZType,
    builtin.Float8E5M2FNUZType,
    builtin.Float8E4M3B11FNUZType,
    builtin.Float8E4M3Type,
    builtin.Float8E3M4Type,
    builtin.Float8E8M0FNUType,
)

_WRAPPERS = (TensorType, tt.PointerType)
"""Types whose element or pointee type `check_supported` looks through."""

# ----------------------------------------------------------------------------------------------
# IR building
# ----------------------------------------------------------------------------------------------


def fp8_format(t: Attribute) -> Fp8Format | None:
    """The format of an fp8 element type (or of a tensor of it); None for other types."""
    elem = t.element_type if isinstance(t, TensorType) else t
    return FP8_FORMATS.get(type(elem))


def _has_fp8(t: Attribute) -> bool:
    if isa(t, TensorType):
        return _has_fp8(t.element_type)  # type: ignore[attr-defined]
    if isa(t, tt.PointerType):
        return _has_fp8(t.pointee_type)  # type: ignore[attr-defined]
    return isa(t, _FP8_TYPES)


def _bits_type(t: Attribute) -> Attribute:
    """`t` with every fp8 element (also behind pointers) replaced by i8."""
    if isinstance(t, TensorType):
        return TensorType(_bits_type(t.element_type), t.get_shape())
    if isinstance(t, tt.PointerType):
        return tt.PointerType(_bits_type(t.pointee_type), t.address_space.data)
    if isinstance(t, _FP8_TYPES):
        return builtin.i8
    return t


def _like(t: Attribute, elem: Attribute) -> Attribute:
    return TensorType(elem, t.get_shape()) if isinstance(t, TensorType) else elem


class _Emitter:
    """Inserts ops before `anchor`, with its location; scalar or tensor shaped like `shape_of`."""

    def __init__(self, anchor: Operation, shape_of: Attribute) -> None:
        self.anchor = anchor
        self.shape_of = shape_of

    def add(self, op: Operation) -> SSAValue:
        op.location = self.anchor.location
        self.anchor.parent.insert_op_before(op, self.anchor)  # type: ignore[union-attr]
        return op.results[0]

    def ty(self, elem: Attribute) -> Attribute:
        return _like(self.shape_of, elem)

    def const(self, value: int | float, elem: Attribute) -> SSAValue:
        t = self.ty(elem)
        if isinstance(t, TensorType):
            attr: Attribute = DenseIntOrFPElementsAttr.from_list(t, [value])  # type: ignore[arg-type]
        elif isinstance(elem, IntegerType):
            attr = IntegerAttr(int(value), elem)
        else:
            attr = FloatAttr(float(value), elem)  # type: ignore[arg-type]
        return self.add(arith.ConstantOp(attr, t))

    def i(self, value: int) -> SSAValue:
        return self.const(value, builtin.i32)

    def binary(self, cls: type, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(cls(a, b))

    def cast(self, cls: type, v: SSAValue, elem: Attribute) -> SSAValue:
        return self.add(cls(v, self.ty(elem)))

    def cmp(self, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.CmpiOp(a, b, pred))

    def select(self, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.SelectOp(c, a, b))


def _decode(em: _Emitter, bits: SSAValue, fmt: Fp8Format) -> SSAValue:
    """f32 value of 8-bit patterns `bits` (i8), exactly."""
    a = arith
    u = em.cast(a.ExtUIOp, bits, builtin.i32)
    sign = em.binary(a.ShLIOp, em.binary(a.AndIOp, u, em.i(0x80)), em.i(24))
    e = em.binary(a.AndIOp, em.binary(a.ShRUIOp, u, em.i(fmt.mant_bits)), em.i((1 << fmt.exp_bits) - 1))
    m = em.binary(a.AndIOp, u, em.i((1 << fmt.mant_bits) - 1))
    # normal: rebias the exponent, widen the mantissa
    f32_exp = em.binary(a.ShLIOp, em.binary(a.AddiOp, e, em.i(127 - fmt.bias)), em.i(23))
    normal = em.binary(a.OrIOp, f32_exp, em.binary(a.ShLIOp, m, em.i(23 - fmt.mant_bits)))
    # subnormal: m * 2^(1 - bias - mant_bits), exact in f32
    sub_f = em.binary(
        a.MulfOp, em.cast(a.SIToFPOp, m, builtin.f32), em.const(2.0 ** (1 - fmt.bias - fmt.mant_bits), builtin.f32)
    )
    sub = em.cast(a.BitcastOp, sub_f, builtin.i32)
    mag = em.select(em.cmp("eq", e, em.i(0)), sub, normal)
    if fmt.kind == "ieee":
        top = em.cmp("eq", e, em.i((1 << fmt.exp_bits) - 1))
        special = em.select(em.cmp("eq", m, em.i(0)), em.i(0x7F800000), em.i(0x7FC00000))
        mag = em.select(top, special, mag)
    elif fmt.kind == "fn":
        mag = em.select(em.cmp("eq", em.binary(a.AndIOp, u, em.i(0x7F)), em.i(0x7F)), em.i(0x7FC00000), mag)
    else:
        is_nan = em.cmp("eq", u, em.i(0x80))
        mag = em.select(is_nan, em.i(0x7FC00000), mag)
        sign = em.select(is_nan, em.i(0), sign)
    return em.cast(a.BitcastOp, em.binary(a.OrIOp, mag, sign), builtin.f32)


def _encode(em: _Emitter, x: SSAValue, fmt: Fp8Format, rtz: bool) -> SSAValue:
    """8-bit patterns (i8) of f32 values `x`, rounded to nearest even (or toward zero)."""
    a = arith
    bits = em.cast(a.BitcastOp, x, builtin.i32)
    sign = em.binary(a.AndIOp, em.binary(a.ShRUIOp, bits, em.i(24)), em.i(0x80))
    mag = em.binary(a.AndIOp, bits, em.i(0x7FFFFFFF))
    shift = 23 - fmt.mant_bits
    # normal range: round the f32 mantissa to mant_bits (a carry moves into the exponent), rebias
    rounded = mag
    if not rtz:
        lsb = em.binary(a.AndIOp, em.binary(a.ShRUIOp, mag, em.i(shift)), em.i(1))
        rounded = em.binary(a.AddiOp, mag, em.binary(a.AddiOp, lsb, em.i((1 << (shift - 1)) - 1)))
    code_n = em.binary(a.SubiOp, em.binary(a.ShRUIOp, rounded, em.i(shift)), em.i((127 - fmt.bias) << fmt.mant_bits))
    # subnormal range: scale to units of the smallest subnormal, round to an integer in f32
    q = em.binary(
        a.MulfOp,
        em.cast(a.BitcastOp, mag, builtin.f32),
        em.const(2.0 ** (fmt.bias - 1 + fmt.mant_bits), builtin.f32),
    )
    if not rtz:  # adding and removing 2^23 rounds a value below 2^22 to the nearest even integer
        magic = em.const(2.0**23, builtin.f32)
        q = em.binary(a.SubfOp, em.binary(a.AddfOp, q, magic), magic)
    code_s = em.cast(a.FPToSIOp, q, builtin.i32)
    exp = em.binary(a.ShRUIOp, mag, em.i(23))
    is_sub = em.cmp("slt", exp, em.i(127 + 1 - fmt.bias))
    code = em.select(is_sub, code_s, code_n)
    code = em.select(em.cmp("sgt", code, em.i(fmt.max_code)), em.i(fmt.overflow_code), code)
    if fmt.kind == "fnuz":  # no negative zero; the sign bit alone is NaN
        signed = em.select(em.cmp("eq", code, em.i(0)), em.i(0), em.binary(a.OrIOp, code, sign))
        out = em.select(em.cmp("eq", code, em.i(0x80)), em.i(0x80), signed)
        out = em.select(em.cmp("ugt", mag, em.i(0x7F800000)), em.i(0x80), out)
    else:
        out = em.binary(a.OrIOp, code, sign)
        out = em.select(em.cmp("ugt", mag, em.i(0x7F800000)), em.binary(a.OrIOp, em.i(fmt.nan_code), sign), out)
    return em.cast(a.TruncIOp, out, builtin.i8)


def _on_vector_core(anchor: Operation, v: SSAValue, result_elem: Attribute, build: Any) -> SSAValue:
    """One mtia.vec_compute before `anchor` whose body is `build(emitter, arg)`; return its result."""
    block = Block(arg_types=[v.type])
    placeholder = mtia.YieldOp()
    block.add_op(placeholder)
    out = build(_Emitter(placeholder, v.type), block.args[0])
    Rewriter.replace_op(placeholder, mtia.YieldOp(out))
    for body_op in block.ops:
        body_op.location = anchor.location
    cmd = mtia.VecComputeOp([v], [_like(v.type, result_elem)], Region(block))
    return _Emitter(anchor, v.type).add(cmd)


def decode(anchor: Operation, bits: SSAValue, fmt: Fp8Format) -> SSAValue:
    """f32 values of fp8 patterns `bits` (i8), one vector-core command before `anchor`."""
    return _on_vector_core(anchor, bits, builtin.f32, lambda em, arg: _decode(em, arg, fmt))


def encode(anchor: Operation, x: SSAValue, fmt: Fp8Format, rtz: bool = False) -> SSAValue:
    """fp8 patterns (i8) of f32 values `x`, one vector-core command before `anchor`."""
    return _on_vector_core(anchor, x, builtin.i8, lambda em, arg: _encode(em, arg, fmt, rtz))


# ----------------------------------------------------------------------------------------------
# the rewrite
# ----------------------------------------------------------------------------------------------

_CASTS = ("arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui", "tt.fp_to_fp")


def _to_f32(em: _Emitter, v: SSAValue, signed: bool = True) -> SSAValue:
    """`v` (a non-fp8 number) converted to f32."""
    elem = v.type.element_type if isinstance(v.type, TensorType) else v.type
    if isinstance(elem, builtin.Float32Type):
        return v
    if isinstance(elem, builtin.AnyFloat):
        cls = arith.TruncFOp if elem.bitwidth > 32 else arith.ExtFOp
        return em.cast(cls, v, builtin.f32)
    return em.cast(arith.SIToFPOp if signed else arith.UIToFPOp, v, builtin.f32)


def _from_f32(em: _Emitter, v: SSAValue, target: Attribute, name: str) -> SSAValue:
    """f32 `v` converted to the non-fp8 element type of `target` by the cast `name` asked for."""
    elem = target.element_type if isinstance(target, TensorType) else target
    if isinstance(elem, builtin.Float32Type):
        return v
    if isinstance(elem, builtin.AnyFloat):
        return em.cast(arith.ExtFOp if elem.bitwidth > 32 else arith.TruncFOp, v, elem)
    return em.cast(arith.FPToUIOp if name == "arith.fptoui" else arith.FPToSIOp, v, elem)


@dataclass
class _Fp8Rewriter:
    """Remembers the fp8 format of every value retyped to i8."""

    fmt_of: dict[SSAValue, Fp8Format]

    def retype(self, v: SSAValue) -> SSAValue:
        fmt = fp8_format(v.type)
        new = Rewriter.replace_value_with_new_type(v, _bits_type(v.type))
        if fmt is not None:
            self.fmt_of[new] = fmt
        return new

    def check_supported(self, v: SSAValue, op: Operation) -> None:
        t = v.type
        while isa(t, _WRAPPERS):
            t = t.element_type if isinstance(t, TensorType) else t.pointee_type
        if isa(t, _FP8_TYPES) and type(t) not in FP8_FORMATS:
            raise PassFailedException(
                f"{location_str(op.location)}: error: {t} values are not supported by mtia_xdsl (fp8 is emulated for "
                "E5M2, E4M3FN, E5M2FNUZ and E4M3FNUZ: tl.float8e5, tl.float8e4nv, tl.float8e5b16, tl.float8e4b8)"
            )

    def run_op(self, op: Operation) -> None:
        fp8_in = [v for v in op.operands if v in self.fmt_of]
        fp8_out = [r for r in op.results if _has_fp8(r.type)]
        for r in op.results:
            self.check_supported(r, op)
        if not fp8_in and not fp8_out:
            return
        if isinstance(op, arith.ConstantOp):
            self._constant(op)
        elif op.name == "arith.bitcast":
            self._bitcast(op)
        elif op.name in _CASTS:
            self._cast(op)
        elif isinstance(op, tt.DotOp) and (op.a in self.fmt_of or op.b in self.fmt_of):
            self._dot(op)
        elif op.name.startswith(("arith.", "math.")) and op.name != "arith.select":
            self._compute(op)
        else:  # moves bits only (memory, layout, select, control flow): same op on i8
            for r in fp8_out:
                self.retype(r)

    def _constant(self, op: Operation) -> None:
        fmt = fp8_format(op.results[0].type)
        assert fmt is not None
        t = _bits_type(op.results[0].type)
        value = op.value
        if isinstance(value, DenseIntOrFPElementsAttr):
            floats = np.asarray(value.get_values(), dtype=np.float32)
            codes = encode_fp8_np(floats, fmt).view(np.int8)
            attr: Attribute = DenseIntOrFPElementsAttr.from_list(t, [int(c) for c in codes])  # type: ignore[arg-type]
        else:
            code = encode_fp8_np(np.float32(value.value.data), fmt).view(np.int8)  # type: ignore[union-attr]
            attr = IntegerAttr(int(code), builtin.i8)
        new = arith.ConstantOp(attr, t)
        new.location = op.location
        Rewriter.replace_op(op, new)
        self.fmt_of[new.results[0]] = fmt

    def _bitcast(self, op: Operation) -> None:
        src, res = op.operands[0], op.results[0]
        if _bits_type(res.type) == src.type:  # fp8 <-> i8: the bits are already i8
            res.replace_all_uses_with(src)
            Rewriter.erase_op(op)
            return
        self._compute(op)

    def _cast(self, op: Operation) -> None:
        src, res = op.operands[0], op.results[0]
        em = _Emitter(op, src.type)
        src_fmt = self.fmt_of.get(src)
        x = decode(op, src, src_fmt) if src_fmt is not None else _to_f32(em, src, op.name != "arith.uitofp")
        dst_fmt = fp8_format(res.type)
        if dst_fmt is not None:
            rounding = op.properties.get("rounding")
            rtz = isinstance(rounding, IntegerAttr) and rounding.value.data == tt.ROUNDING_MODE["rtz"]
            new = encode(op, x, dst_fmt, rtz)
            self.fmt_of[new] = dst_fmt
        else:
            new = _from_f32(em, x, res.type, op.name)
        res.replace_all_uses_with(new)
        Rewriter.erase_op(op)

    def _dot(self, op: tt.DotOp) -> None:
        operands = []
        for v in (op.a, op.b):
            fmt = self.fmt_of.get(v)
            if fmt is None:
                operands.append(v)
                continue
            operands.append(_Emitter(op, v.type).cast(arith.TruncFOp, decode(op, v, fmt), builtin.f16))
        new = op.clone()
        new.operands[0], new.operands[1] = operands
        op.parent.insert_op_before(new, op)  # type: ignore[union-attr]
        Rewriter.replace_op(op, [], list(new.results))

    def _compute(self, op: Operation) -> None:
        """Decode fp8 operands, run the op in f32, encode fp8 results."""
        em = _Emitter(op, op.operands[0].type)
        decoded = {v: decode(op, v, self.fmt_of[v]) for v in dict.fromkeys(op.operands) if v in self.fmt_of}
        operands = [decoded.get(v, v) for v in op.operands]
        res_types = [_like(r.type, builtin.f32) if fp8_format(r.type) else r.type for r in op.results]
        new = op.__class__.create(
            operands=operands,
            result_types=res_types,
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        em.add(new)
        outs: list[SSAValue] = []
        for r, n in zip(op.results, new.results, strict=True):
            fmt = fp8_format(r.type)
            if fmt is None:
                outs.append(n)
                continue
            enc = encode(op, n, fmt)
            self.fmt_of[enc] = fmt
            outs.append(enc)
        Rewriter.replace_op(op, [], outs)


def _blocks(op: Operation) -> list[Block]:
    return [b for o in ops_of(op) for r in o.regions for b in r.blocks]


def emulate_fp8(func: tt.FuncOp) -> None:
    """Rewrite `func` so that no fp8 type remains (see the module docstring).

    Raises: PassFailedException naming the kernel line for fp8 formats without emulation.
    """
    rw = _Fp8Rewriter({})
    for block in _blocks(func):
        for arg in list(block.args):
            rw.check_supported(arg, func)
            if _has_fp8(arg.type):
                rw.retype(arg)
    entry = func.body.blocks[0]
    ftype = func.function_type
    if any(_has_fp8(t) for t in (*ftype.inputs, *ftype.outputs)):
        func.properties["function_type"] = FunctionType.from_lists(
            [a.type for a in entry.args], [_bits_type(t) for t in ftype.outputs]
        )
    for op in [o for o in ops_of(func) if o is not func]:
        rw.run_op(op)

"""RISC-V vector (RVV 1.0) intrinsics for the elementwise body of one SE or vector-core command.

The C++ emitter (`backend/cpp.py`) writes each engine command's body as a portable loop; for the bodies this
module can translate it adds the same loop strip-mined in the RVV shape, under `#ifdef __riscv_vector`:
set the vector length (`vsetvl`), load each input chunk, compute, store each output chunk, with every
intermediate of a fused body kept in vector registers. A splatted scalar operand (a scalar input, a
`tt.splat`, a splat constant, a per-row value of a column broadcast) is used in the vector-scalar forms
(`.vf`/`.vx`, `vfrsub`/`vfrdiv` when it is the left operand) instead of being materialised.

Intrinsic names are clang 14's (the RVV intrinsics v0.10 naming: `vsetvl_e32m1`, `vle32_v_f32m1`,
`vfadd_vf_f32m1`, with no `__riscv_` prefix); build with `--target=riscv64-linux-gnu -march=rv64gcv_zfh`
(`backend/riscv.py`). Every arithmetic instruction used is IEEE-exact (add, sub, mul, div, sqrt, min/max
as maximumNumber, int-to-float conversion), so the vector loop computes bit for bit what the portable loop
computes (a NaN's payload aside: `vfmax`/`vfmin` of two NaNs give the canonical NaN).

What is translated (`rvv_body_loop`), anything else keeps the portable loop alone:
- tiles of f32, i32 and i1 (stored one byte per element), 1-D or 2-D, with or without `valid` extents, and
  f16 tiles (stored as uint16_t bits) converted to or from f32 (`arith.extf`/`truncf`, round to nearest even)
  in a body with 32-bit values; f16 arithmetic, bf16 and other types keep the portable loop;
- elementwise `arith` ops of `_FLOAT_BINARY`, `_INT_BINARY`, `_MASK_BINARY`, comparisons, `arith.select`,
  `arith.negf`, `arith.sitofp`, `math.sqrt`/`absf` (not `fptosi`: RVV turns NaN into INT_MAX, the C++ emitter's
  `mtia_fptoi` into INT_MIN);
- any other unary `math` function through the caller's scalar expression for it, applied lane by lane
  to a chunk spilled to a small stack array (the chunk is then at most `SPILL_LANES` lanes);
- `tt.splat`, splat constants, `tt.make_range`, and the row/column broadcasts `tt.expand_dims` +
  `tt.broadcast` of 2-D bodies.

Source of the vector width: MTIA-2i's vector RISC-V core has 512-bit registers (`MachineConfig.vec_register_bits`,
MACHINE.md S1); the loops here are vector-length agnostic (they run on any VLEN; qemu runs them at that width).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from mtia_xdsl.dialects import mtia

SPILL_LANES = 64
"""Lanes of the stack array a chunk is spilled to for a function without an RVV instruction (exp, log, ...);
a body holding such a function strip-mines at most this many lanes per chunk."""

ScalarExpr = Callable[[Operation, Sequence[str]], str | None]
"""The C++ emitter's scalar expression of a unary math op applied to C expressions (None: not handled)."""

# element type -> (C type, RVV letter, SEW bits)
_ELEM = {"f32": ("float", "f", 32), "i32": ("int32_t", "i", 32)}

_FLOAT_BINARY = {
    # op: (vv/vf intrinsic stem, stem when the scalar is the left operand or None if commutative)
    "arith.addf": ("vfadd", None),
    "arith.subf": ("vfsub", "vfrsub"),
    "arith.mulf": ("vfmul", None),
    "arith.divf": ("vfdiv", "vfrdiv"),
    "arith.maxnumf": ("vfmax", None),
    "arith.minnumf": ("vfmin", None),
}
_INT_BINARY = {
    "arith.addi": ("vadd", None),
    "arith.subi": ("vsub", "vrsub"),
    "arith.muli": ("vmul", None),
    "arith.andi": ("vand", None),
    "arith.ori": ("vor", None),
    "arith.xori": ("vxor", None),
    "arith.maxsi": ("vmax", None),
    "arith.minsi": ("vmin", None),
}
_SCALAR_C = {"arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/"}
"""Float ops of two scalars inside a vector body, as C operators (IEEE single, exact as the vector forms)."""
_MASK_BINARY = {"arith.andi": "vmand", "arith.ori": "vmor", "arith.xori": "vmxor"}
# comparison predicate -> (vector-vector stem, stem with the operands swapped)
_CMPF = {
    "oeq": ("vmfeq", "vmfeq"),
    "une": ("vmfne", "vmfne"),
    "olt": ("vmflt", "vmfgt"),
    "ole": ("vmfle", "vmfge"),
    "ogt": ("vmfgt", "vmflt"),
    "oge": ("vmfge", "vmfle"),
}
_CMPI = {
    "eq": ("vmseq", "vmseq"),
    "ne": ("vmsne", "vmsne"),
    "slt": ("vmslt", "vmsgt"),
    "sle": ("vmsle", "vmsge"),
    "sgt": ("vmsgt", "vmslt"),
    "sge": ("vmsge", "vmsle"),
}
_CMPF_NAMES = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une")
_CMPI_NAMES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_FLOAT_UNARY = {"arith.negf": "vfneg_v", "math.sqrt": "vfsqrt_v", "math.absf": "vfabs_v"}


class Unsupported(Exception):
    """A body (or an op of it) has no RVV translation here; the caller keeps the portable loop."""


@dataclass(frozen=True)
class _Val:
    """A body value inside one chunk: a vector register, a mask register or a C scalar."""

    kind: str  # "vec" | "mask" | "scalar"
    expr: str
    elem: str  # "f32" | "i32" | "i1"


@dataclass
class _Loop:
    """State of one emission: the chunk's lines, value names and the loop's shape."""

    sew: int
    lanes: str  # "i" (1-D) / "r * COLS + j" style element offset expression for full tiles
    row: str | None  # row index name of a 2-D loop
    col: str  # column (or element) index name
    scalar_expr: ScalarExpr | None
    lines: list[str] = field(default_factory=list[str])
    vals: dict[SSAValue, _Val] = field(default_factory=dict[SSAValue, _Val])
    count: int = 0
    spills: bool = False

    def fresh(self, stem: str) -> str:
        """A chunk-local name, `rvv_v3` (stem v: vector, m: mask, s: splat): the `rvv_` prefix keeps it apart from
        the enclosing function's names (`v3` is a generated scalar name there, which a chunk may read)."""
        self.count += 1
        return f"rvv_{stem}{self.count}"

    def suffix(self, elem: str) -> str:
        if elem not in _ELEM:  # f16 values are only loaded, converted and stored
            raise Unsupported(f"{elem} arithmetic")
        _, letter, bits = _ELEM[elem]
        return f"{letter}{bits}m1"

    @property
    def mask(self) -> str:
        return f"b{self.sew}"

    @property
    def u8(self) -> str:
        return {8: "u8m1", 16: "u8mf2", 32: "u8mf4", 64: "u8mf8"}[self.sew]


def _elem_name(t: Attribute) -> str:
    """Return "f32", "i32", "f16" or "i1" for an element type (or a tensor's), else raise Unsupported."""
    text = str(_tensor(t).element_type if _is_tensor(t) else t)
    if text in ("f32", "i32", "f16", "i1"):
        return text
    raise Unsupported(f"element type {text}")


def _is_tensor(t: Attribute) -> bool:
    """Return whether `t` is a tensor type (a function, so that `t` keeps its declared type)."""
    return isinstance(t, TensorType)


def _tensor(t: Attribute) -> TensorType[Attribute]:
    """Return `t` as a tensor type (caller checked it is one)."""
    return cast(TensorType[Attribute], t)


def _shape_of(t: Attribute) -> tuple[int, ...]:
    """Return the shape of a tensor type, () for a scalar type."""
    return tuple(_tensor(t).get_shape()) if _is_tensor(t) else ()


def _int_prop(op: Operation, name: str) -> int:
    """Return integer property `name` of `op` (a verified op: it has it)."""
    attr = op.properties[name]
    assert isinstance(attr, IntegerAttr)
    return int(cast(IntegerAttr[Any], attr).value.data)


def _c_float(value: float) -> str:
    """Return an exact C++ float literal for `value` (hex float; builtins for inf and NaN)."""
    if math.isnan(value):
        return '__builtin_nanf("")'
    if math.isinf(value):
        return "__builtin_inff()" if value > 0 else "(-__builtin_inff())"
    value = struct.unpack("<f", struct.pack("<f", value))[0]
    return f"{float(value).hex()}f"


def _splat_constant(op: Operation) -> _Val:
    """Return the scalar of an `arith.constant` (scalar, or a tensor splat), else raise Unsupported."""
    value = op.properties.get("value") or op.attributes.get("value")
    elem = _elem_name(op.results[0].type)
    if isinstance(value, DenseIntOrFPElementsAttr):
        values = value.get_values()
        if len(set(values)) != 1:
            raise Unsupported("a non-splat dense constant")
        scalar: float | int = values[0]
    elif isinstance(value, FloatAttr | IntegerAttr):
        scalar = value.value.data  # pyright: ignore[reportUnknownMemberType]
    else:
        raise Unsupported(f"constant {value}")
    if elem == "f32":
        return _Val("scalar", _c_float(float(scalar)), elem)
    if elem == "i1":
        return _Val("scalar", "1" if int(scalar) & 1 else "0", elem)
    if elem != "i32":
        raise Unsupported(f"an {elem} constant")
    return _Val("scalar", f"int32_t({int(scalar)})", elem)


def _vec(loop: _Loop, v: _Val) -> str:
    """Return `v` as a vector register, broadcasting a scalar (`vfmv.v.f` / `vmv.v.x`)."""
    if v.kind == "vec":
        return v.expr
    if v.kind != "scalar" or v.elem == "i1":
        raise Unsupported("a mask where a vector is needed")
    name = loop.fresh("s")
    sfx = loop.suffix(v.elem)
    fn = f"vfmv_v_f_{sfx}" if v.elem == "f32" else f"vmv_v_x_{sfx}"
    loop.lines.append(f"v{'float' if v.elem == 'f32' else 'int'}32m1_t {name} = {fn}({v.expr}, vl);")
    return name


def _vtype(elem: str) -> str:
    return "vfloat32m1_t" if elem == "f32" else "vint32m1_t"


def _assign(loop: _Loop, result: SSAValue, elem: str, expr: str) -> None:
    name = loop.fresh("v")
    loop.lines.append(f"{_vtype(elem)} {name} = {expr};")
    loop.vals[result] = _Val("vec", name, elem)


def _binary(loop: _Loop, op: Operation, stems: tuple[str, str | None], vx: str) -> None:
    a, b = (loop.vals[o] for o in op.operands)
    elem = _elem_name(op.results[0].type)
    sfx = loop.suffix(elem)
    stem, rstem = stems
    if a.kind == "scalar" and b.kind == "scalar":
        if op.name not in _SCALAR_C:
            raise Unsupported(f"{op.name} of two scalars")
        loop.vals[op.results[0]] = _Val("scalar", f"({a.expr} {_SCALAR_C[op.name]} {b.expr})", elem)
        return
    if b.kind == "scalar":
        _assign(loop, op.results[0], elem, f"{stem}_{vx}_{sfx}({_vec(loop, a)}, {b.expr}, vl)")
    elif a.kind == "scalar":
        _assign(loop, op.results[0], elem, f"{rstem or stem}_{vx}_{sfx}({b.expr}, {a.expr}, vl)")
    else:
        _assign(loop, op.results[0], elem, f"{stem}_vv_{sfx}({a.expr}, {b.expr}, vl)")


def _compare(loop: _Loop, op: Operation, table: dict[str, tuple[str, str]], names: tuple[str, ...]) -> None:
    pred = names[_int_prop(op, "predicate")]
    if pred not in table:
        raise Unsupported(f"{op.name} predicate {pred}")
    a, b = (loop.vals[o] for o in op.operands)
    elem = a.elem
    vx = "vf" if elem == "f32" else "vx"
    sfx = f"{loop.suffix(elem)}_{loop.mask}"
    stem, swapped = table[pred]
    if b.kind == "scalar":
        expr = f"{stem}_{vx}_{sfx}({_vec(loop, a)}, {b.expr}, vl)"
    elif a.kind == "scalar":
        expr = f"{swapped}_{vx}_{sfx}({b.expr}, {a.expr}, vl)"
    else:
        expr = f"{stem}_vv_{sfx}({a.expr}, {b.expr}, vl)"
    name = loop.fresh("m")
    loop.lines.append(f"vbool{loop.sew}_t {name} = {expr};")
    loop.vals[op.results[0]] = _Val("mask", name, "i1")


def _select(loop: _Loop, op: Operation) -> None:
    cond, a, b = (loop.vals[o] for o in op.operands)
    if cond.kind != "mask":
        raise Unsupported("arith.select on a scalar condition")
    elem = _elem_name(op.results[0].type)
    if elem == "i1":
        raise Unsupported("arith.select of masks")
    sfx = loop.suffix(elem)
    if a.kind == "scalar" and elem == "f32":
        expr = f"vfmerge_vfm_{sfx}({cond.expr}, {_vec(loop, b)}, {a.expr}, vl)"
    elif a.kind == "scalar":
        expr = f"vmerge_vxm_{sfx}({cond.expr}, {_vec(loop, b)}, {a.expr}, vl)"
    else:
        expr = f"vmerge_vvm_{sfx}({cond.expr}, {_vec(loop, b)}, {a.expr}, vl)"
    _assign(loop, op.results[0], elem, expr)


def _spilled_unary(loop: _Loop, op: Operation) -> None:
    """Apply a unary function without an RVV instruction lane by lane on the chunk spilled to the stack."""
    if loop.scalar_expr is None or len(op.operands) != 1 or _elem_name(op.results[0].type) != "f32":
        raise Unsupported(op.name)
    (a,) = (loop.vals[o] for o in op.operands)
    if a.kind == "scalar":
        expr = loop.scalar_expr(op, [a.expr])
        if expr is None:
            raise Unsupported(op.name)
        loop.vals[op.results[0]] = _Val("scalar", f"({expr})", "f32")
        return
    expr = loop.scalar_expr(op, ["spill[lane]"])
    if expr is None:
        raise Unsupported(op.name)
    loop.spills = True
    loop.lines.append(f"vse32_v_f32m1(spill, {_vec(loop, a)}, vl);")
    loop.lines.append(f"for (size_t lane = 0; lane < vl; ++lane) spill[lane] = {expr};  // {op.name}: no RVV op")
    _assign(loop, op.results[0], "f32", "vle32_v_f32m1(spill, vl)")


def _emit_op(loop: _Loop, op: Operation) -> None:  # noqa: C901  (a dispatch over the op families)
    name = op.name
    if name == "arith.constant":
        loop.vals[op.results[0]] = _splat_constant(op)
    elif name == "tt.splat":
        src = loop.vals[op.operands[0]]
        if src.kind != "scalar":
            raise Unsupported("tt.splat of a vector")
        loop.vals[op.results[0]] = src
    elif name in ("tt.expand_dims", "tt.broadcast"):
        loop.vals[op.results[0]] = loop.vals[op.operands[0]]  # resolved when the input was read
    elif name == "tt.make_range":
        _make_range(loop, op)
    elif name in _MASK_BINARY and _elem_name(op.results[0].type) == "i1":
        a, b = (loop.vals[o] for o in op.operands)
        if a.kind != "mask" or b.kind != "mask":
            raise Unsupported(f"{name} of a scalar mask")
        m = loop.fresh("m")
        loop.lines.append(f"vbool{loop.sew}_t {m} = {_MASK_BINARY[name]}_mm_{loop.mask}({a.expr}, {b.expr}, vl);")
        loop.vals[op.results[0]] = _Val("mask", m, "i1")
    elif name in _FLOAT_BINARY:
        _binary(loop, op, _FLOAT_BINARY[name], "vf")
    elif name in _INT_BINARY:
        _binary(loop, op, _INT_BINARY[name], "vx")
    elif name == "arith.cmpf":
        _compare(loop, op, _CMPF, _CMPF_NAMES)
    elif name == "arith.cmpi":
        _compare(loop, op, _CMPI, _CMPI_NAMES)
    elif name == "arith.select":
        _select(loop, op)
    elif name in _FLOAT_UNARY:
        a = loop.vals[op.operands[0]]
        _assign(loop, op.results[0], "f32", f"{_FLOAT_UNARY[name]}_f32m1({_vec(loop, a)}, vl)")
    elif name == "arith.extf" and _elem_name(op.operands[0].type) == "f16":
        a = loop.vals[op.operands[0]]
        _assign(loop, op.results[0], "f32", f"vfwcvt_f_f_v_f32m1({a.expr}, vl)")
    elif name == "arith.truncf" and _elem_name(op.results[0].type) == "f16":
        a = loop.vals[op.operands[0]]
        h = loop.fresh("v")
        loop.lines.append(f"vfloat16mf2_t {h} = vfncvt_f_f_w_f16mf2({_vec(loop, a)}, vl);")
        loop.vals[op.results[0]] = _Val("vec", h, "f16")
    elif name == "arith.sitofp" and _elem_name(op.operands[0].type) == "i32":
        a = loop.vals[op.operands[0]]
        _assign(loop, op.results[0], "f32", f"vfcvt_f_x_v_f32m1({_vec(loop, a)}, vl)")
    elif name.startswith("math."):
        _spilled_unary(loop, op)
    else:
        raise Unsupported(name)


def _make_range(loop: _Loop, op: Operation) -> None:
    if len(_shape_of(op.results[0].type)) != 1 or loop.row is not None:
        raise Unsupported("tt.make_range in a 2-D body")
    start = _int_prop(op, "start")
    ids = loop.fresh("v")
    loop.lines.append(f"vint32m1_t {ids} = vreinterpret_v_u32m1_i32m1(vid_v_u32m1(vl));")
    _assign(loop, op.results[0], "i32", f"vadd_vx_i32m1({ids}, int32_t({start} + {loop.col}), vl)")


@dataclass(frozen=True)
class _Shape:
    """The loop's iteration space: rows x cols (rows None for a 1-D loop over `cols` elements)."""

    rows: str | None
    cols: str
    stride: int  # elements between rows of a full tile


def _read_input(loop: _Loop, arg: BlockArgument, expr: str, shape: tuple[int, ...]) -> _Val:
    """Return the chunk of body argument `arg` (C expression `expr`: a pointer for tiles, a value for scalars)."""
    t = arg.type
    if not _is_tensor(t):
        elem = _elem_name(t)
        if elem in ("i1", "f16"):
            raise Unsupported(f"a scalar {elem} input")
        return _Val("scalar", expr, elem)
    elem = _elem_name(t)
    tshape = _shape_of(t)
    offset = _input_offset(loop, arg, tshape, shape)
    if offset is None:  # one value per row: a scalar of the chunk
        if elem == "f16":
            raise Unsupported("an f16 column")
        return _Val("scalar", f"{expr}[{loop.row}]", elem)
    ptr = f"{expr} + {offset}"
    name = loop.fresh("m" if elem == "i1" else "v")
    if elem == "i1":
        load = f"vle8_v_{loop.u8}(reinterpret_cast<const uint8_t*>({ptr}), vl)"
        loop.lines.append(f"vbool{loop.sew}_t {name} = vmsne_vx_{loop.u8}_{loop.mask}({load}, 0, vl);")
        return _Val("mask", name, elem)
    if elem == "f16":  # stored as uint16_t bits (the C++ emitter's f16 storage)
        loop.lines.append(f"vfloat16mf2_t {name} = vle16_v_f16mf2(reinterpret_cast<const _Float16*>({ptr}), vl);")
        return _Val("vec", name, elem)
    sfx = loop.suffix(elem)
    loop.lines.append(f"{_vtype(elem)} {name} = vle32_v_{sfx}({ptr}, vl);")
    return _Val("vec", name, elem)


def _input_offset(loop: _Loop, arg: BlockArgument, tshape: tuple[int, ...], shape: tuple[int, ...]) -> str | None:
    """Return the element offset of the chunk in a tile of shape `tshape` read in a loop over `shape`.

    None means the tile holds one value per row (a column broadcast). Raises Unsupported for other layouts.
    """
    if tshape == shape:
        return loop.lanes
    if len(shape) == 2 and tshape in ((1, shape[1]), (shape[0], 1)):
        return loop.col if tshape[0] == 1 else None
    if len(shape) == 2 and tshape in ((shape[1],), (shape[0],)):
        expands = [u.operation for u in arg.uses if u.operation.name == "tt.expand_dims"]
        axes = {_int_prop(e, "axis") for e in expands}
        if len(axes) == 1 and len(list(arg.uses)) == 1:
            axis = axes.pop()
            if axis == 0 and tshape == (shape[1],):
                return loop.col
            if axis == 1 and tshape == (shape[0],):
                return None
    raise Unsupported(f"an input tile of shape {tshape} in a loop over {shape}")


def _store(loop: _Loop, v: _Val, ptr: str) -> None:
    if v.elem == "i1":
        if v.kind != "mask":
            raise Unsupported("a scalar i1 result")
        zero = f"vmv_v_x_{loop.u8}(0, vl)"
        loop.lines.append(
            f"vse8_v_{loop.u8}(reinterpret_cast<uint8_t*>({ptr}), vmerge_vxm_{loop.u8}({v.expr}, {zero}, 1, vl), vl);"
        )
        return
    if v.elem == "f16":
        loop.lines.append(f"vse16_v_f16mf2(reinterpret_cast<_Float16*>({ptr}), {v.expr}, vl);")
        return
    loop.lines.append(f"vse32_v_{loop.suffix(v.elem)}({ptr}, {_vec(loop, v)}, vl);")


def _sew(op: mtia.EngineComputeOp) -> int:
    """Return the element width (bits) of the loop: 32 if any value is 32-bit, 8 for masks alone.

    f16 values ride along a 32-bit loop at half the register group (LMUL 1/2); a body without 32-bit
    values but with f16 ones has no RVV form here.
    """
    bits = {"i1": 8, "f16": 16}
    values = [*op.body.block.args, *(v for o in op.body.walk() for v in (*o.results, *o.operands))]
    widths = {bits.get(_elem_name(v.type), 32) for v in values}
    if 16 in widths and 32 not in widths:
        raise Unsupported("an f16 body without 32-bit values")
    return max(widths)


def _loop_shape(
    op: mtia.EngineComputeOp, results: Sequence[SSAValue], valid: Sequence[str]
) -> tuple[tuple[int, ...], _Shape]:
    shapes = {_shape_of(v.type) for v in results}
    if len(shapes) != 1:
        raise Unsupported("results of different shapes")
    shape = shapes.pop()
    if len(shape) not in (1, 2):
        raise Unsupported(f"a {len(shape)}-D body")
    if valid and len(valid) != len(shape):
        raise Unsupported(f"{len(valid)} valid extents for a {len(shape)}-D body")
    # a valid extent is clamped to the tile (the command never writes past it); one <= 0 runs no lane
    extents = [f"std::min<int64_t>({v}, {n})" for v, n in zip(valid, shape, strict=True)] if valid else []
    given = bool(extents)
    extents = extents or [str(n) for n in shape]
    if len(shape) == 1:
        return shape, _Shape(None, extents[0], shape[0])
    flat = not given and all(not _is_tensor(a.type) or _shape_of(a.type) == shape for a in op.body.block.args)
    if flat:
        return shape, _Shape(None, str(shape[0] * shape[1]), shape[0] * shape[1])
    return shape, _Shape(extents[0], extents[1], shape[1])


def rvv_body_loop(
    op: mtia.EngineComputeOp,
    ins: Sequence[str],
    outs: Sequence[str],
    valid: Sequence[str] = (),
    scalar_expr: ScalarExpr | None = None,
    results: Sequence[SSAValue] | None = None,
) -> list[str] | None:
    """Return the C++ lines of the RVV strip-mined loop of `op`'s body, or None if it has no RVV form here.

    `ins` are C expressions of the body arguments in order: a pointer to the tile's first element for a
    tile (`const float*`, `const int32_t*`, 1-byte elements for i1), the value for a scalar. `results` are
    the yielded values to store (default: all), `outs` a pointer to the first element of each one's output
    tile; `valid` the C expressions (int64) of the command's `valid` extents, one per dimension (empty: the
    whole tile); each is clamped to the tile, and one <= 0 runs no lane. The lines are not indented and not
    guarded (see `guarded`); they use <riscv_vector.h> and `std::min` (<algorithm>). `scalar_expr` gives the
    C expression of a unary math op without an RVV instruction (exp, log, ...); without it such bodies
    return None.
    Shapes: tiles tensor<N x T> or tensor<R x C x T> (T in f32, i32, i1); inputs of a 2-D body may also be
    a row (tensor<1 x C>, or tensor<C> expanded on axis 0) or a column (tensor<R x 1>, or tensor<R>
    expanded on axis 1).
    """
    try:
        return _body_loop(op, ins, outs, valid, scalar_expr, results)
    except Unsupported:
        return None


def unsupported_reason(op: mtia.EngineComputeOp, scalar_expr: ScalarExpr | None = None) -> str | None:
    """Return why `op`'s body has no RVV form (None when it has one)."""
    term = op.body.block.last_op
    assert term is not None
    args = [f"in{k}" for k in range(len(op.body.block.args))]
    outs = [f"out{k}" for k in range(len(term.operands))]
    try:
        _body_loop(op, args, outs, [f"valid{k}" for k in range(len(op.valid))], scalar_expr, None)
    except Unsupported as e:
        return str(e)
    return None


def _body_loop(
    op: mtia.EngineComputeOp,
    ins: Sequence[str],
    outs: Sequence[str],
    valid: Sequence[str],
    scalar_expr: ScalarExpr | None,
    results: Sequence[SSAValue] | None,
) -> list[str]:
    term = op.body.block.last_op
    assert isinstance(term, mtia.YieldOp)
    stored = list(term.values) if results is None else list(results)
    shape, space = _loop_shape(op, stored, valid)
    sew = _sew(op)
    row = "r" if space.rows is not None else None
    lanes = f"{row} * {space.stride} + j" if row else "j"
    loop = _Loop(sew=sew, lanes=lanes, row=row, col="j", scalar_expr=scalar_expr)
    for arg, expr in zip(op.body.block.args, ins, strict=True):
        loop.vals[arg] = _read_input(loop, arg, expr, shape)
    for inner in op.body.block.ops:
        if inner is not term:
            _emit_op(loop, inner)
    for value, ptr in zip(stored, outs, strict=True):
        _store(loop, loop.vals[value], f"{ptr} + {lanes}")
    _drop_unused(loop)
    return _wrap(loop, space)


def _drop_unused(loop: _Loop) -> None:
    """Drop the chunk's lines defining a register no later line reads (loads of inputs another output uses)."""
    kept: list[str] = []
    for k, line in enumerate(loop.lines):
        name = line.split(" = ", 1)[0].split()[-1] if " = " in line and line.startswith("v") else None
        if name is not None and not any(_reads(later, name) for later in loop.lines[k + 1 :]):
            continue
        kept.append(line)
    loop.lines = kept


def _reads(line: str, name: str) -> bool:
    rhs = line.split(" = ", 1)[1] if " = " in line and line.startswith("v") else line
    return any(tok == name for tok in rhs.replace("(", " ").replace(")", " ").replace(",", " ").split())


def _wrap(loop: _Loop, space: _Shape) -> list[str]:
    """Return the chunk's lines inside the strip-mined loop (and the row loop of a 2-D body)."""
    cols = space.cols
    avl = f"{cols} - j"
    if loop.spills:
        avl = f"std::min<int64_t>({cols} - j, {SPILL_LANES})"
    inner = [
        f"for (int64_t j = 0; j < {cols};) {{",
        f"    const size_t vl = vsetvl_e{loop.sew}m1(size_t({avl}));",
        *[f"    {line}" for line in loop.lines],
        "    j += int64_t(vl);",
        "}",
    ]
    head = [f"float spill[{SPILL_LANES}];"] if loop.spills else []
    if space.rows is None:
        return [*head, *inner]
    return [*head, f"for (int64_t r = 0; r < {space.rows}; ++r) {{", *[f"    {x}" for x in inner], "}"]


def guarded(rvv: Sequence[str] | None, portable: Sequence[str], indent: str = "") -> list[str]:
    """Return the `portable` lines, preceded by the `rvv` lines (indented by `indent`) under
    `#ifdef __riscv_vector` when there is an RVV form (`#if defined(__riscv_vector) && defined(__riscv_zfh)`
    when it converts f16: clang 14 has RVV f16 types only with the Zfh extension)."""
    if rvv is None:
        return list(portable)
    uses_f16 = any("f16mf2" in x for x in rvv)
    cond = "#if defined(__riscv_vector) && defined(__riscv_zfh)" if uses_f16 else "#ifdef __riscv_vector"
    return [cond, *[f"{indent}{x}" for x in rvv], "#else", *portable, "#endif"]

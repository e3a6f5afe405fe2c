"""C++ emitter (`mtia-opt -t mtia-cpp`, `asm["cpp"]`): one readable translation unit per kernel.

Input: a buffer-level `mtia` program (after `mtia-cb-allocate`). Output: C++17 calling the runtime API of
`backend/runtime/mtia_runtime.h`:
- the scalar core's control flow as structured C++ (`scf.for` -> for, `scf.while` -> while, `scf.if` -> if),
  program ids and the grid as arguments of the kernel function, a `// kernel.py:LINE` comment above the code
  each kernel line produced, names from the IR's name hints (else `vN`);
- CBs as `mtia_cb_alloc` with the CB IDs, depths and LS offsets mtia-cb-allocate chose, the CB protocol as
  `mtia_cb_reserve/push/wait/pop`, DMA as descriptors (base, strides, shape, bounds);
- engine commands as `mtia_cmd_begin` / `mtia_cmd_in` / `mtia_cmd_out` around the engine's work in C++ and an
  `*_end` call carrying the command's static work (machine/work.py: elements, dtype, LUT, MACs) as arguments a
  user can read and edit; SE / VEC / MLU bodies are strip-mined in the RVV shape (per chunk of the innermost
  dimension: set the vector length, load, compute, store), so a fused body keeps its intermediates in locals.
  where backend/rvv.py has an RVV form of a body (`rvv_body_loop`), it comes first under `#ifdef __riscv_vector`
  and the portable loop (`emit_body_loop`) after `#else`;
- scalar-core instruction counts (`mtia_scalar_instrs`) where the model's ScalarCoreCounter counts them (every
  op outside an engine body but the engine commands), so the host runtime reproduces the model's commands.

Integers wrap as in Triton: build with `-fwrapv` (backend/host.py does). f16 and bf16 values are `float`s
rounded after each operation (exact: float has more than twice their precision).

Raises: CppEmitError naming the kernel line (`file:line:col: error: ...`) for a construct the emitter does not
handle; it never emits code it cannot vouch for.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from string import Template
from typing import IO, Any, cast

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.utils.target import Target

from mtia_xdsl.backend.runtime_api import MAX_RANK
from mtia_xdsl.backend.rvv import guarded, rvv_body_loop
from mtia_xdsl.dialects import mtia
from mtia_xdsl.semantics.atomic import FLOAT_RMW_MAX_MIN
from mtia_xdsl.semantics.reduce import PAIRWISE_ACCUMULATORS, PAIRWISE_BLOCK
from mtia_xdsl.semantics.scalar import INT_DIV_BY_ZERO, MAX_MIN, TF32_DROPPED_BITS, TF32_MANTISSA_BITS
from mtia_xdsl.utils.locations import location_str


def np_prod(shape: Sequence[int]) -> int:
    """Elements of a tile of `shape` (1 for a scalar)."""
    n = 1
    for d in shape:
        n *= d
    return n


class CppEmitError(Exception):
    """A construct the C++ emitter does not handle; the message names the kernel line."""


def _error(op: Operation, what: str) -> CppEmitError:
    return CppEmitError(
        f"{location_str(op.location)}: error: the C++ emitter (mtia-cpp) does not handle {what} ({op.name}); "
        "run this kernel on the machine model (MTIA_EXECUTOR=model)"
    )


# -- types -----------------------------------------------------------------------------------------------


def _elem(t: Attribute) -> Attribute:
    t = mtia.tile_type(t)
    return cast(TensorType[Attribute], t).element_type if isinstance(t, TensorType) else t


def _shape(t: Attribute) -> list[int]:
    t = mtia.tile_type(t)
    return list(t.get_shape()) if isinstance(t, TensorType) else []


def _is_tensor(t: Attribute) -> bool:
    """Whether `t` is a tensor type (a helper, so callers keep `t` an Attribute for the type checker)."""
    return isinstance(t, TensorType)


def _is_int_or_index(t: Attribute) -> bool:
    return isinstance(t, builtin.IntegerType | builtin.IndexType)


def _is_i1(t: Attribute) -> bool:
    return isinstance(t, builtin.IntegerType) and cast(builtin.IntegerType[Any, Any], t).bitwidth == 1


def _is_ptr(t: Attribute) -> bool:
    return getattr(t, "name", "") == "tt.ptr"


def _is_float(t: Attribute) -> bool:
    return isinstance(t, builtin.AnyFloat)


def _width(t: Attribute) -> int:
    if isinstance(t, builtin.IntegerType):
        return cast(builtin.IntegerType[Any, Any], t).bitwidth
    if isinstance(t, builtin.IndexType) or _is_ptr(t):
        return 64
    if isinstance(t, builtin.AnyFloat):
        return t.bitwidth
    raise TypeError(t)


def _ctype(t: Attribute, op: Operation) -> str:
    """The C++ type of a value of element type `t` (f16/bf16 compute as float)."""
    if _is_ptr(t):
        return "mtia_addr"
    if isinstance(t, builtin.IndexType):
        return "int64_t"
    if isinstance(t, builtin.IntegerType):
        w = t.bitwidth
        if w == 1:
            return "bool"
        if w in (8, 16, 32, 64):
            return f"int{w}_t"
    if isinstance(t, builtin.Float32Type | builtin.Float16Type | builtin.BFloat16Type):
        return "float"
    if isinstance(t, builtin.Float64Type):
        return "double"
    raise _error(op, f"values of type {t}")


def _storage(t: Attribute, op: Operation) -> str:
    """The C++ type of one element of type `t` in LS or global memory."""
    if isinstance(t, builtin.Float16Type | builtin.BFloat16Type):
        return "uint16_t"
    if _is_i1(t):
        return "uint8_t"
    return _ctype(t, op)


def _load(t: Attribute, expr: str) -> str:
    """Read a stored element as its compute value."""
    if isinstance(t, builtin.Float16Type):
        return f"mtia_f16_to_f32({expr})"
    if isinstance(t, builtin.BFloat16Type):
        return f"mtia_bf16_to_f32({expr})"
    if _is_i1(t):
        return f"({expr} != 0)"
    return expr


def _store(t: Attribute, expr: str) -> str:
    """Turn a compute value into its stored element."""
    if isinstance(t, builtin.Float16Type):
        return f"mtia_f32_to_f16({expr})"
    if isinstance(t, builtin.BFloat16Type):
        return f"mtia_f32_to_bf16({expr})"
    if _is_i1(t):
        return f"(uint8_t)({expr})"
    return expr


def _round(t: Attribute, expr: str) -> str:
    """Round a float computed in float to element type `t` (f16/bf16); other types unchanged."""
    if isinstance(t, builtin.Float16Type):
        return f"mtia_round_f16({expr})"
    if isinstance(t, builtin.BFloat16Type):
        return f"mtia_round_bf16({expr})"
    return expr


def _literal(value: Any, t: Attribute, op: Operation) -> str:
    if _is_i1(t):
        return "true" if int(value) & 1 else "false"
    if _is_int_or_index(t):
        v = int(value)
        w = _width(t)
        v &= (1 << w) - 1
        if v >= 1 << (w - 1):
            v -= 1 << w
        if w == 64:
            return f"INT64_C({v})" if v != -(1 << 63) else "INT64_MIN"
        return f"({_ctype(t, op)}){v}" if w < 32 else (str(v) if v != -(1 << 31) else "INT32_MIN")
    if _is_float(t):
        f = float(value)
        if f != f:
            return "NAN" if _ctype(t, op) == "float" else "(double)NAN"
        if f in (float("inf"), float("-inf")):
            s = "INFINITY" if f > 0 else "-INFINITY"
            return s if _ctype(t, op) == "float" else f"(double){s}"
        text = repr(f)
        if "e" not in text and "." not in text:
            text += ".0"
        return text + ("f" if _ctype(t, op) == "float" else "")
    raise _error(op, f"a constant of type {t}")


# -- element-wise operations (scalar core and engine bodies share them) -------------------------------------

_INT_BIN = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*", "arith.andi": "&", "arith.ori": "|",
            "arith.xori": "^"}  # fmt: skip
_FLOAT_BIN = {"arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/"}
_CMPI = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">=", 6: "<", 7: "<=", 8: ">", 9: ">="}
"""arith.cmpi predicate -> C++ operator (6-9 unsigned: operands cast to unsigned)."""
_CMPF = {1: ("==", False), 2: (">", False), 3: (">=", False), 4: ("<", False), 5: ("<=", False),
         6: ("!=", False), 8: ("==", True), 9: (">", True), 10: (">=", True), 11: ("<", True),
         12: ("<=", True), 13: ("!=", True)}  # fmt: skip
"""arith.cmpf predicate -> (C++ operator, unordered); 0 false, 7 ord, 14 uno, 15 true handled apart."""
_MATH1 = {"math.exp": "exp", "math.exp2": "exp2", "math.log": "log", "math.log2": "log2", "math.sqrt": "sqrt",
          "math.sin": "sin", "math.cos": "cos", "math.tanh": "tanh", "math.erf": "erf", "math.absf": "fabs",
          "math.floor": "floor", "math.ceil": "ceil", "math.log1p": "log1p", "math.expm1": "expm1",
          "tt.precise_sqrt": "sqrt", "math.trunc": "trunc", "math.round": "round", "math.log10": "log10",
          "math.cbrt": "cbrt", "math.tan": "tan", "math.asin": "asin", "math.acos": "acos", "math.atan": "atan",
          "math.sinh": "sinh", "math.cosh": "cosh", "math.asinh": "asinh", "math.acosh": "acosh",
          "math.atanh": "atanh", "math.roundeven": "nearbyint"}  # fmt: skip
_MATH2 = {"math.powf": "pow", "math.atan2": "atan2", "math.copysign": "copysign"}
_LIBDEVICE_EXTRA = {
    "hypot": "std::hypot({0}, {1})",
    "exp10": "std::pow(({t})10, {0})", "isnan": "std::isnan({0})", "isinf": "std::isinf({0})",
    "isfinite": "std::isfinite({0})", "finite": "std::isfinite({0})", "signbit": "std::signbit({0})",
    "frcp_rn": "(({t})1 / {0})", "drcp_rn": "(({t})1 / {0})", "nextafter": "std::nextafter({0}, {1})",
    "fdim": "(std::isnan({0}) || std::isnan({1}) ? {0} + {1} : {0} > {1} ? {0} - {1} : ({t})0)",
    "saturate": "(std::isnan({0}) ? ({t})0 : std::min(std::max({0}, ({t})0), ({t})1))",
    "ldexp": "std::ldexp({0}, (int){1})", "scalbn": "std::ldexp({0}, (int){1})",
    "erfc": "({t})std::erfc((double){0})", "lgamma": "({t})std::lgamma((double){0})",
}  # fmt: skip
"""libdevice stems (semantics/libdevice.py) that are no arith/math op, as C++ templates ({t}: the float type)."""


def _math1(name: str, rt: Attribute, x: str) -> str:
    """Math op `name` of one operand `x` with result type `rt`; semantics.scalar.WIDENED_F32 ops on f32 (and bf16,
    which the model holds as f32 values) in double."""
    from mtia_xdsl.semantics.scalar import WIDENED_F32

    if name in WIDENED_F32 and isinstance(rt, builtin.Float32Type | builtin.BFloat16Type):  # bf16: f32 values
        return _round(rt, f"(float)std::{_MATH1[name]}((double)({x}))")
    return _round(rt, f"std::{_MATH1[name]}({x})")


def _int_prop(op: Operation, name: str, default: int) -> int:
    """An integer (or enum) property or attribute of `op`, as the interpreter reads it."""
    attr = op.properties.get(name)
    if attr is None:
        attr = op.attributes.get(name)
    value = getattr(attr, "value", None)
    data = getattr(value, "data", value)
    return int(data) if isinstance(data, int) else default


def _libdevice(op: Operation, a: Sequence[str], ct: str) -> str | None:
    """A libdevice call (tt.extern_elementwise) as the arith/math op of the same semantics, or a C++ template."""
    from xdsl.dialects.builtin import StringAttr

    from mtia_xdsl.semantics.libdevice import SAME_AS_OP, libdevice_stem

    symbol = op.properties.get("symbol", op.attributes.get("symbol"))
    stem = libdevice_stem(symbol.data if isinstance(symbol, StringAttr) else "?")
    rt = _elem(op.results[0].type)
    as_op = SAME_AS_OP.get(stem)
    if as_op is not None:
        if as_op in _MATH1:
            return _math1(as_op, rt, a[0])
        if as_op in _MATH2:
            return _round(rt, f"std::{_MATH2[as_op]}({a[0]}, {a[1]})")
        if as_op == "math.rsqrt":
            return _round(rt, f"(({ct})1 / std::sqrt({a[0]}))")
        if as_op == "arith.remf":
            return _round(rt, f"std::fmod({a[0]}, {a[1]})")
        if as_op in _FLOAT_BIN:
            return _round(rt, f"({a[0]} {_FLOAT_BIN[as_op]} {a[1]})")
        if as_op in MAX_MIN:
            return f"mtia_{MAX_MIN[as_op].stem}({a[0]}, {a[1]})"
        return None
    template = _LIBDEVICE_EXTRA.get(stem)
    if template is None:
        return None
    ft = _ctype(_elem(op.operands[0].type), op)
    return _round(rt, template.format(*a, t=ft)) if _is_float(rt) else template.format(*a, t=ft)


def _unsigned(t: Attribute) -> str:
    return {1: "bool", 8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "uint64_t"}[_width(t)]


def elementwise(op: Operation, a: Sequence[str]) -> str | None:  # noqa: C901  (a dispatch over the op families)
    """The C++ expression of element-wise op `op` on operand expressions `a` (None: not element-wise)."""
    name = op.name
    if not op.results:
        return None
    rt = _elem(op.results[0].type)
    ct = _ctype(rt, op) if not _is_tensor(rt) else ""
    it = _elem(op.operands[0].type) if op.operands else rt
    if name in _INT_BIN:
        if _is_i1(rt):
            return f"({a[0]} {_INT_BIN[name]} {a[1]})" if name != "arith.subi" else f"({a[0]} ^ {a[1]})"
        return f"({ct})({a[0]} {_INT_BIN[name]} {a[1]})"
    if name in _FLOAT_BIN:
        return _round(rt, f"({a[0]} {_FLOAT_BIN[name]} {a[1]})")
    if name == "arith.divsi":
        return f"mtia_divsi<{ct}>({a[0]}, {a[1]})"
    if name == "arith.remsi":
        return f"mtia_remsi<{ct}>({a[0]}, {a[1]})"
    if name in ("arith.divui", "arith.remui"):
        u = _unsigned(rt)
        fn = "mtia_divui" if name == "arith.divui" else "mtia_remui"
        return f"({ct}){fn}<{u}>(({u}){a[0]}, ({u}){a[1]})"
    if name in ("arith.maxsi", "arith.minsi"):
        return f"({a[0]} {'>' if name == 'arith.maxsi' else '<'} {a[1]} ? {a[0]} : {a[1]})"
    if name in ("arith.maxui", "arith.minui"):
        u = _unsigned(rt)
        return f"(({u}){a[0]} {'>' if name == 'arith.maxui' else '<'} ({u}){a[1]} ? {a[0]} : {a[1]})"
    if name in ("arith.shli", "arith.shrsi", "arith.shrui"):
        fn = {"arith.shli": "mtia_shl", "arith.shrsi": "mtia_shrs", "arith.shrui": "mtia_shru"}[name]
        return f"{fn}<{ct}, {_unsigned(rt)}>({a[0]}, {a[1]})"
    if name == "arith.cmpi":
        pred = op.predicate.value.data  # type: ignore[attr-defined]
        if pred >= 6:
            u = _unsigned(it)
            return f"(({u}){a[0]} {_CMPI[pred]} ({u}){a[1]})"
        return f"({a[0]} {_CMPI[pred]} {a[1]})"
    if name == "arith.cmpf":
        pred = op.predicate.value.data  # type: ignore[attr-defined]
        if pred == 0:
            return "false"
        if pred == 15:
            return "true"
        if pred == 7:
            return f"(!std::isnan({a[0]}) && !std::isnan({a[1]}))"
        if pred == 14:
            return f"(std::isnan({a[0]}) || std::isnan({a[1]}))"
        cmp, unordered = _CMPF[pred]
        if pred == 6:
            return f"(!std::isnan({a[0]}) && !std::isnan({a[1]}) && {a[0]} != {a[1]})"
        if unordered:
            return f"(std::isnan({a[0]}) || std::isnan({a[1]}) || {a[0]} {cmp} {a[1]})"
        return f"({a[0]} {cmp} {a[1]})"
    if name == "arith.select":
        return f"({a[0]} ? {a[1]} : {a[2]})"
    if name in MAX_MIN:
        return f"mtia_{MAX_MIN[name].stem}({a[0]}, {a[1]})"
    if name == "arith.negf":
        return f"(-{a[0]})"
    if name in ("arith.extsi", "arith.trunci", "arith.index_cast"):
        if _is_i1(rt):
            return f"(({a[0]} & 1) != 0)"
        return f"({ct})({a[0]})"
    if name in ("arith.extui", "arith.index_castui"):
        return f"({ct})({_unsigned(it)})({a[0]})"
    if name in ("arith.sitofp",):
        return _round(rt, f"({ct})({a[0]})")
    if name == "arith.uitofp":
        return _round(rt, f"({ct})({_unsigned(it)})({a[0]})")
    if name in ("arith.fptosi", "arith.fptoui"):
        return f"mtia_fptoi<{ct}>({a[0]})"
    if name in ("arith.extf", "arith.truncf"):
        return _round(rt, f"({ct})({a[0]})")
    if name == "tt.bitcast" and (_is_ptr(it) or _is_ptr(rt)):
        return a[0]
    if name == "arith.remf":
        return _round(rt, f"std::fmod({a[0]}, {a[1]})")
    if name == "tt.clampf":
        nan = _int_prop(op, "propagateNan", 0)
        hi, lo = (MAX_MIN["arith.maximumf"], MAX_MIN["arith.minimumf"]) if nan else (
            MAX_MIN["arith.maxnumf"], MAX_MIN["arith.minnumf"])  # fmt: skip
        return _round(rt, f"mtia_{lo.stem}(mtia_{hi.stem}({a[0]}, {a[1]}), {a[2]})")
    if name == "tt.fp_to_fp":
        if _int_prop(op, "rounding", 1) == 0 and _width(rt) < _width(it):
            fn = {16: "mtia_round_f16_rtz" if isinstance(rt, builtin.Float16Type) else "mtia_round_bf16_rtz",
                  32: "mtia_round_f32_rtz"}.get(_width(rt))  # fmt: skip
            if fn is None:
                return None
            return f"{fn}({a[0]})"
        return _round(rt, f"({ct})({a[0]})")
    if name == "tt.mulhiui":
        w = _width(rt)
        wide = "uint64_t" if w <= 32 else "unsigned __int128"
        return f"({ct})((({wide})({_unsigned(rt)}){a[0]} * ({wide})({_unsigned(rt)}){a[1]}) >> {w})"
    if name in ("arith.bitcast", "tt.bitcast"):
        src = _storage(it, op)
        dst = _storage(rt, op)
        return _load(rt, f"mtia_bitcast<{dst}>(({src}){_store(it, a[0])})")
    if name in _MATH1:
        return _math1(name, rt, a[0])
    if name in _MATH2:
        return _round(rt, f"std::{_MATH2[name]}({a[0]}, {a[1]})")
    if name == "tt.extern_elementwise":
        return _libdevice(op, a, ct)
    if name == "math.rsqrt":
        one = "1.0f" if ct == "float" else "1.0"
        return _round(rt, f"({one} / std::sqrt({a[0]}))")
    if name == "math.fma":
        return _round(rt, f"std::fma({a[0]}, {a[1]}, {a[2]})")
    if name == "math.absi":
        return f"({ct})({a[0]} < 0 ? -{a[0]} : {a[0]})"
    if name == "tt.precise_divf":
        return _round(rt, f"({a[0]} / {a[1]})")
    if name == "tt.addptr":
        pointee = op.results[0].type
        pointee = _elem(pointee)
        elem_bytes = mtia.element_bytes(pointee.pointee_type)  # type: ignore[attr-defined]
        return f"(mtia_addr)({a[0]} + (mtia_addr)((int64_t)({a[1]}) * {elem_bytes}))"
    if name in ("tt.ptr_to_int", "tt.int_to_ptr"):
        return f"({ct})({a[0]})"
    return None


# -- names and locations -----------------------------------------------------------------------------------

_IDENT = re.compile(r"[^A-Za-z0-9_]")
_RESERVED = frozenset({"pe", "auto", "int", "float", "double", "char", "long", "short", "signed", "unsigned",
                       "new", "delete", "class", "struct", "union", "this", "default", "case", "switch", "for",
                       "while", "do", "if", "else", "return", "break", "continue", "const", "static", "void",
                       "bool", "true", "false", "register", "template", "typename", "operator", "private",
                       "public", "protected", "friend", "virtual", "volatile", "inline", "and", "or", "not",
                       "xor", "goto", "sizeof", "namespace", "using", "try", "catch", "throw", "enum",
                       "extern", "mutable", "explicit", "export", "typedef", "asm", "min", "max", "nullptr",
                       "alignas", "alignof", "constexpr", "decltype", "noexcept", "static_assert", "thread_local",
                       "std", "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
                       "uint32_t", "uint64_t", "NAN", "INFINITY",
                       # names the emitted code declares itself, in scopes that read kernel values
                       "args", "pid_x", "pid_y", "pid_z", "grid_x", "grid_y", "grid_z", "i", "j", "q", "r", "lane",
                       "len", "vl", "work", "bb", "mm", "nn", "kk", "bin", "step", "red_row", "valid", "in_shape",
                       "spill", "dot_acc", "red_acc", "p", "old"})  # fmt: skip
_INTERNAL = re.compile(r"(rvv_)?[svmi][0-9]+")
"""Names the RVV chunks and lane loops declare (`rvv_v3`, `rvv_m2`, `i0`) without reserving them."""


@dataclass
class _Names:
    used: set[str] = field(default_factory=set[str])
    counter: int = 0

    def fresh(self, hint: str | None, prefix: str = "v") -> str:
        if hint:
            base = _IDENT.sub("_", hint)
            if base[0].isdigit():
                base = "_" + base
            if base in _RESERVED or base.startswith(("mtia", "MTIA", "__")) or _INTERNAL.fullmatch(base):
                base += "_"
        else:
            base = f"{prefix}{self.counter}"
            self.counter += 1
        name, k = base, 1
        while name in self.used:
            name = f"{base}_{k}"
            k += 1
        self.used.add(name)
        return name


def _line(op: Operation) -> tuple[str, int] | None:
    loc = op.location
    if isinstance(loc, builtin.FileLineColLoc):
        return loc.filename.data, loc.line.data
    text = location_str(loc)
    m = re.match(r"(.*):(\d+):\d+$", text)
    return (m.group(1), int(m.group(2))) if m else None


# -- the emitter ---------------------------------------------------------------------------------------------


@dataclass
class BodyLoop:
    """One strip-mined loop of an engine body: what `emit_body_loop` writes, and what a hook may read."""

    op: Operation
    """The engine compute op."""
    shape: list[int]
    """The iteration space (an output tile's shape)."""
    extents: list[str]
    """C++ extent of each dimension (the valid extent under an effective shape, else the shape)."""
    index: list[str]
    """The loop index names, outermost first."""
    lane_lines: list[str]
    """The statements computing one lane (reading inputs, computing, storing outputs)."""
    dtype: str
    """The output's element C type."""


def emit_body_loop(loop: BodyLoop, indent: str) -> list[str]:
    """Strip-mine `loop` in the RVV shape: outer dimensions as plain loops, the innermost in chunks of the
    vector length `vl` (mtia_vsetvl: elements of `dtype` one vector register holds), each chunk loading,
    computing and storing its lanes."""
    out: list[str] = []
    pad = indent
    if not loop.shape:
        out += [pad + ln for ln in loop.lane_lines]
        return out
    for d in range(len(loop.shape) - 1):
        i = loop.index[d]
        out.append(f"{pad}for (int64_t {i} = 0; {i} < {loop.extents[d]}; ++{i}) {{")
        pad += "    "
    i = loop.index[-1]
    n = loop.extents[-1]
    out.append(f"{pad}for (int64_t {i}0 = 0; {i}0 < {n}; {i}0 += MTIA_VLMAX({loop.dtype})) {{")
    out.append(f"{pad}    const int64_t vl = mtia_vsetvl({n} - {i}0, MTIA_VLMAX({loop.dtype}));")
    out.append(f"{pad}    for (int64_t {i} = {i}0; {i} < {i}0 + vl; ++{i}) {{")
    out += [f"{pad}        {ln}" for ln in loop.lane_lines]
    out.append(f"{pad}    }}")
    out.append(f"{pad}}}")
    for _ in range(len(loop.shape) - 1):
        pad = pad[:-4]
        out.append(f"{pad}}}")
    return out


def _linear(idx: list[str], shape: list[int]) -> str:
    if not shape:
        return "0"
    expr = idx[0]
    for d in range(1, len(shape)):
        expr = f"({expr}) * {shape[d]} + {idx[d]}" if expr != "0" else idx[d]
    return expr


def _call_return_type(types: Sequence[Attribute], op: Operation) -> str:
    """The C++ return type of a called function with result `types`: void, the one type, or a std::tuple."""
    if len(types) <= 1:
        return _ctype(types[0], op) if types else "void"
    return f"std::tuple<{', '.join(_ctype(t, op) for t in types)}>"


class _Kernel:
    """Emits one tt.func."""

    def __init__(self, func: Operation, module: ModuleOp, helpers: dict[str, list[str]] | None = None) -> None:
        self.func = func
        self.module = module
        self.helpers: dict[str, list[str]] = helpers if helpers is not None else {}
        """C++ function name -> lines of each function a tt.call reaches (callees first), shared by all emitters."""
        self.names = _Names()
        self.value: dict[SSAValue, str] = {}
        self.lines: list[str] = []
        self.pending = 0
        """Scalar-core instructions counted since the last flush."""
        self.last_line: list[tuple[str, int] | None] = [None]
        self.comment: str | None = None
        """A `// kernel.py:LINE` comment to write above the next line emitted."""
        where = _line(func)
        self.file = where[0] if where is not None else ""

    # -- helpers
    def loc(self, op: Operation) -> str:
        text = location_str(op.location)
        if self.file and text.startswith(self.file + ":"):
            return f'MTIA_KERNEL_FILE "{text[len(self.file) :]}"'
        return json.dumps(text)

    def emit(self, indent: str, text: str) -> None:
        if self.comment is not None:  # the kernel line of the code that follows (only once code follows)
            self.lines.append(indent + self.comment)
            self.comment = None
        self.lines.append(indent + text)

    def comment_line(self, op: Operation, indent: str) -> None:
        where = _line(op)
        if where is None or where == self.last_line[-1]:
            return
        self.last_line[-1] = where
        name = os.path.basename(where[0]) if where[0] == self.file else where[0]
        self.comment = f"// {name}:{where[1]}"

    def flush(self, indent: str) -> None:
        if self.pending:
            self.emit(indent, f"mtia_scalar_instrs(pe, {self.pending});")
            self.pending = 0

    def name_for(self, v: SSAValue, prefix: str = "v") -> str:
        n = self.names.fresh(v.name_hint, prefix)
        self.value[v] = n
        return n

    def get(self, v: SSAValue, user: Operation) -> str:
        try:
            return self.value[v]
        except KeyError:
            raise _error(user, "a value defined where the emitter cannot reach it") from None

    # -- kernel
    def emit_kernel(self) -> list[str]:
        func = self.func
        name = func.properties["sym_name"].data  # type: ignore[union-attr]
        block = func.regions[0].blocks.first
        assert block is not None
        if len(func.regions[0].blocks) != 1:
            raise _error(func, "a kernel of more than one block (run tt-lift-early-returns)")
        sig = self.signature(block, "tensor kernel arguments")
        self.lines.append(f"static void {name}({sig}) {{")
        self.emit_block(block, "    ")
        self.flush("    ")
        self.lines.append("}")
        return self.lines

    def signature(self, block: Block, tensor_refusal: str) -> str:
        """The C++ parameter list of a kernel or called function: the PE, program ids and grid, then `block`'s
        scalar arguments by their names. Raises CppEmitError (`tensor_refusal`) for a tensor argument."""
        params: list[str] = []
        for arg in block.args:
            if isinstance(arg.type, TensorType):
                raise _error(self.func, tensor_refusal)
            params.append(f"[[maybe_unused]] {_ctype(arg.type, self.func)} {self.name_for(arg, 'arg')}")
        pid = ["pid_x", "pid_y", "pid_z", "grid_x", "grid_y", "grid_z"]
        self.names.used.update(pid)
        return ", ".join(["mtia_pe *pe"] + [f"[[maybe_unused]] int32_t {p}" for p in pid] + params)

    def emit_function(self, cname: str) -> list[str]:
        """The callee of a tt.call as a static C++ function `cname` taking the PE, program ids, grid and its
        arguments, returning its scalar results: void, the one result, or a `std::tuple` of several
        (`_call_results` reads them back)."""
        func = self.func
        block = func.regions[0].blocks.first
        assert block is not None
        if len(func.regions[0].blocks) != 1:
            raise _error(func, "a function of more than one block (run tt-lift-early-returns)")
        ret = block.last_op
        assert ret is not None
        results = list(ret.operands)
        if any(isinstance(v.type, TensorType) for v in results):
            raise _error(func, "a called function returning a tensor (tt.call)")
        sig = self.signature(block, "a called function taking a tensor (tt.call)")
        rtype = _call_return_type([v.type for v in results], func)
        self.lines.append(f"static {rtype} {cname}({sig}) {{")
        self.emit_block(block, "    ")
        self.flush("    ")
        values = ", ".join(self.get(v, ret) for v in results)
        if len(results) == 1:
            self.lines.append(f"    return {values};")
        elif results:
            self.lines.append(f"    return {rtype}({values});")
        self.lines.append("}")
        return self.lines

    def op_tt_call(self, op: Operation, indent: str) -> None:
        """A call of a non-inlined function (@triton.jit(noinline=True)): a static C++ function of its own."""
        callee = op.properties.get("callee", op.attributes.get("callee"))
        assert isinstance(callee, builtin.SymbolRefAttr), "verified tt.call has a callee"
        symbol = callee.root_reference.data
        func = next((f for f in self.module.ops if f.name == "tt.func" and _sym_name(f) == symbol), None)
        if func is None:
            raise _error(op, f"a call of @{symbol}, which is not in the module")
        cname = "fn_" + _IDENT.sub("_", symbol)
        if cname not in self.helpers:
            self.helpers[cname] = []  # a recursive call finds it declared
            callee_emitter = _Kernel(func, self.module, self.helpers)
            callee_emitter.file = self.file  # MTIA_KERNEL_FILE is the kernel's file
            self.helpers[cname] = callee_emitter.emit_function(cname)
        if any(isinstance(r.type, TensorType) for r in op.results):
            raise _error(op, "a call returning a tensor (tt.call)")
        args = ", ".join(["pe", "pid_x", "pid_y", "pid_z", "grid_x", "grid_y", "grid_z"]
                         + [self.get(v, op) for v in op.operands])  # fmt: skip
        self.flush(indent)
        if not op.results:
            self.emit(indent, f"{cname}({args});")
            return
        if len(op.results) == 1:
            r = op.results[0]
            unused = "" if r.uses else "[[maybe_unused]] "
            self.emit(indent, f"{unused}const {_ctype(r.type, op)} {self.name_for(r)} = {cname}({args});")
            return
        tuple_name = self.names.fresh(None, "ret")  # the callee's std::tuple, one named value per result
        self.emit(
            indent, f"const {_call_return_type([r.type for r in op.results], op)} {tuple_name} = {cname}({args});"
        )
        for i, r in enumerate(op.results):
            unused = "" if r.uses else "[[maybe_unused]] "
            self.emit(indent, f"{unused}const {_ctype(r.type, op)} {self.name_for(r)} = std::get<{i}>({tuple_name});")

    def emit_block(self, block: Block, indent: str) -> None:
        self.last_line.append(None)
        for op in block.ops:
            self.emit_op(op, indent)
        self.last_line.pop()

    def emit_op(self, op: Operation, indent: str) -> None:
        is_engine = isinstance(op, mtia.ENGINE_OPS)
        if not is_engine:
            self.pending += 1  # ScalarCoreCounter: every op outside an engine body but the engine commands
        if op.name == "arith.constant" and not isinstance(op.results[0].type, TensorType):
            self.value[op.results[0]] = _literal(op.value.value.data, op.results[0].type, op)  # type: ignore[attr-defined]
            return
        if op.name in ("tt.return", "scf.yield", "scf.condition", "mtia.yield"):
            return  # handled by the parent
        self.comment_line(op, indent)
        method = getattr(self, "op_" + op.name.replace(".", "_"), None)
        if method is not None:
            method(op, indent)
            return
        if any(isinstance(r.type, TensorType) for r in op.results) or op.regions:
            raise _error(op, "this op outside an engine command body")
        expr = elementwise(op, [self.get(v, op) for v in op.operands])
        if expr is None:
            raise _error(op, "this op")
        r = op.results[0]
        unused = "" if r.uses else "[[maybe_unused]] "
        self.emit(indent, f"{unused}const {_ctype(r.type, op)} {self.name_for(r)} = {expr};")

    # -- scalar core ops
    def op_tt_assert(self, op: Operation, indent: str) -> None:
        msg = op.properties.get("message", op.attributes.get("message"))
        text = json.dumps(msg.data if isinstance(msg, builtin.StringAttr) else "")
        cond = op.operands[0]
        if _is_tensor(cond.type):  # a tile the scalar core read (mtia.cb_read): every lane must hold
            owner = cond.owner
            if not (isinstance(owner, Operation) and owner.name == "mtia.cb_read"):
                raise _error(op, "an assert on a tensor outside an engine body that was not read from a CB")
            arr, n = self.get(cond, op), np_prod(_shape(cond.type))
            self.emit(indent, f"for (int64_t q = 0; q < {n}; ++q)")
            self.emit(indent, f"    if (!{arr}[q]) mtia_assert_fail(pe, {text}, {self.loc(op)});")
            return
        self.emit(indent, f"if (!({self.get(cond, op)})) mtia_assert_fail(pe, {text}, {self.loc(op)});")

    def op_tt_reduce(self, op: Operation, indent: str) -> None:
        """A reduction on the scalar core of tiles it read (mtia.cb_read), one operand or several reduced together
        (argmax: values and indices): the model's pairwise tree (machine/interpret/tt.py _tree_reduce)."""
        from mtia_xdsl.machine.interpret.tt import fast_combiner

        srcs = list(op.operands)
        _check_scalar_reduce(op)
        n = _shape(srcs[0].type)[0]
        region = op.regions[0]
        block = region.blocks.first
        assert block is not None
        levels, m = 0, n
        while m > 1:
            levels, m = levels + 1, m // 2 + m % 2
        if len(srcs) > 1 or fast_combiner(region) is None:  # the model runs the region once per level
            self.pending += levels * len(block.ops)
        bufs: list[tuple[str, str]] = []
        for src in srcs:
            et = _elem(src.type)
            buf = self.names.fresh(None, "buf")
            bufs.append((buf, _ctype(et, op)))
            self.emit(indent, f"{_ctype(et, op)} {buf}[{n}];")
            self.emit(indent, f"for (int64_t q = 0; q < {n}; ++q) {buf}[q] = {_load(et, f'{self.get(src, op)}[q]')};")
        self.emit(indent, f"for (int64_t len = {n}; len > 1; len = len / 2 + len % 2) {{")
        self.emit(indent, "    for (int64_t q = 0; q < len / 2; ++q) {")
        pairs = [f"{b}[2 * q]" for b, _ in bufs] + [f"{b}[2 * q + 1]" for b, _ in bufs]
        body = indent + "        "
        results = self._combine(block, pairs, body)
        finals: list[tuple[str, str]] = []
        for (buf, ct), res in zip(bufs, results, strict=True):  # all read before any is written
            r = self.names.fresh(None, "r")
            self.emit(body, f"const {ct} {r} = {res};")
            finals.append((buf, r))
        for buf, r in finals:
            self.emit(body, f"{buf}[q] = {r};")
        self.emit(indent, "    }")
        for buf, _ in bufs:
            self.emit(indent, f"    if (len % 2) {buf}[len / 2] = {buf}[len - 1];")
        self.emit(indent, "}")
        for (buf, ct), r in zip(bufs, op.results, strict=True):
            unused = "" if r.uses else "[[maybe_unused]] "
            self.emit(indent, f"{unused}const {ct} {self.name_for(r)} = {buf}[0];")

    def _combine(self, block: Block, args: list[str], indent: str) -> list[str]:
        """Emit a combine region's ops on the C++ expressions `args` of its block arguments; return its results."""
        env: dict[SSAValue, str] = dict(zip(block.args, args, strict=True))
        for inner in block.ops:
            if inner.name == "tt.reduce.return":
                return [env[v] for v in inner.operands]
            expr = elementwise(inner, [env[v] for v in inner.operands]) if len(inner.results) == 1 else None
            if expr is None:
                raise _error(inner, "this op in a reduction's combine region")
            c = self.names.fresh(None, "c")
            self.emit(indent, f"const {_ctype(inner.results[0].type, inner)} {c} = {expr};")
            env[inner.results[0]] = c
        raise _error(block.parent_op() or self.func, "a combine region without tt.reduce.return")

    def op_ttg_barrier(self, op: Operation, indent: str) -> None:
        self.emit(indent, "// tl.debug_barrier: a program's commands are issued in order; nothing to wait for")

    def op_llvm_intr_assume(self, op: Operation, indent: str) -> None:
        self.emit(indent, f"(void)({self.get(op.operands[0], op)});  // tl.assume: a hint, nothing is checked")

    def op_tt_get_program_id(self, op: Operation, indent: str) -> None:
        axis = op.axis.value.data  # type: ignore[attr-defined]
        self.value[op.results[0]] = ["pid_x", "pid_y", "pid_z"][axis]

    def op_tt_get_num_programs(self, op: Operation, indent: str) -> None:
        axis = op.axis.value.data  # type: ignore[attr-defined]
        self.value[op.results[0]] = ["grid_x", "grid_y", "grid_z"][axis]

    def op_mtia_pe_id(self, op: Operation, indent: str) -> None:
        r = op.results[0]
        self.emit(indent, f"const int32_t {self.name_for(r, 'pe_id')} = mtia_pe_id(pe, {op.axis.value.data});")  # type: ignore[attr-defined]

    def op_mtia_storage_extent(self, op: Operation, indent: str) -> None:
        r, base = op.results[0], self.get(op.operands[0], op)
        eb = mtia.element_bytes(op.operands[0].type.pointee_type)  # type: ignore[attr-defined]
        self.emit(indent, f"const int64_t {self.name_for(r, 'extent')} = mtia_storage_extent(pe, {base}, {eb});")

    def op_mtia_num_pes(self, op: Operation, indent: str) -> None:
        r = op.results[0]
        self.emit(indent, f"const int32_t {self.name_for(r, 'num_pes')} = mtia_num_pes(pe, {op.axis.value.data});")  # type: ignore[attr-defined]

    def op_scf_for(self, op: Operation, indent: str) -> None:
        lb, ub, step, *inits = (self.get(v, op) for v in op.operands)
        body = op.regions[0].blocks.first
        assert body is not None
        iv, *carried = body.args
        iv_t = _ctype(iv.type, op)
        carried_names: list[str] = []
        for arg, init, res in zip(carried, inits, op.results, strict=True):
            if isinstance(arg.type, TensorType):
                raise _error(op, "a loop carrying a tensor")
            n = self.name_for(res, "acc")
            self.value[arg] = n
            carried_names.append(n)
            self.emit(indent, f"[[maybe_unused]] {_ctype(arg.type, op)} {n} = {init};")
        i = self.names.fresh(iv.name_hint, "i")
        self.flush(indent)
        self.emit(indent, f"for (int64_t {i}_ = {lb}; {i}_ < {ub}; {i}_ += {step}) {{")
        self.emit(indent + "    ", f"[[maybe_unused]] const {iv_t} {i} = ({iv_t}){i}_;")
        self.value[iv] = i
        self.emit_block(body, indent + "    ")
        self.assign_yield(body.last_op, carried_names, indent + "    ")
        self.flush(indent + "    ")
        self.emit(indent, "}")

    def assign_yield(self, term: Operation | None, targets: list[str], indent: str) -> None:
        if term is None or not targets:
            return
        values = [self.get(v, term) for v in term.operands]
        if len(targets) == 1:
            self.emit(indent, f"{targets[0]} = {values[0]};")
            return
        temps: list[str] = []
        for v, t in zip(term.operands, values, strict=True):
            n = self.names.fresh(None, "next")
            temps.append(n)
            self.emit(indent, f"const {_ctype(v.type, term)} {n} = {t};")
        for t, n in zip(targets, temps, strict=True):
            self.emit(indent, f"{t} = {n};")

    def op_scf_if(self, op: Operation, indent: str) -> None:
        cond = self.get(op.operands[0], op)
        names: list[str] = []
        for r in op.results:
            if isinstance(r.type, TensorType):
                raise _error(op, "an if yielding a tensor")
            n = self.name_for(r, "r")
            names.append(n)
            self.emit(indent, f"[[maybe_unused]] {_ctype(r.type, op)} {n}{{}};")
        self.flush(indent)
        self.emit(indent, f"if ({cond}) {{")
        for k, region in enumerate(op.regions):
            block = region.blocks.first
            if k == 1:
                if block is None or (not names and len(block.ops) <= 1):
                    if block is not None and block.ops:  # an empty else still runs its scf.yield
                        self.emit(indent, "} else {")
                        self.pending += len(block.ops)
                        self.flush(indent + "    ")
                    break
                self.emit(indent, "} else {")
            if block is None:
                continue
            self.emit_block(block, indent + "    ")
            self.assign_yield(block.last_op, names, indent + "    ")
            self.flush(indent + "    ")
        self.emit(indent, "}")

    def op_scf_while(self, op: Operation, indent: str) -> None:
        before, after = (r.blocks.first for r in op.regions)
        assert before is not None and after is not None
        carried: list[str] = []
        for arg, init in zip(before.args, op.operands, strict=True):
            n = self.name_for(arg, "w")
            carried.append(n)
            self.emit(indent, f"[[maybe_unused]] {_ctype(arg.type, op)} {n} = {self.get(init, op)};")
        results: list[str] = []
        for r in op.results:
            n = self.name_for(r, "r")
            results.append(n)
            self.emit(indent, f"[[maybe_unused]] {_ctype(r.type, op)} {n}{{}};")
        self.flush(indent)
        self.emit(indent, "while (true) {")
        inner = indent + "    "
        self.emit_block(before, inner)
        cond_op = before.last_op
        assert cond_op is not None
        cond, *fwd = (self.get(v, cond_op) for v in cond_op.operands)
        self.flush(inner)
        self.emit(inner, f"if (!({cond})) {{")
        for n, f in zip(results, fwd, strict=True):
            self.emit(inner + "    ", f"{n} = {f};")
        self.emit(inner + "    ", "break;")
        self.emit(inner, "}")
        for arg, f in zip(after.args, fwd, strict=True):
            self.emit(inner, f"[[maybe_unused]] const {_ctype(arg.type, op)} {self.name_for(arg)} = {f};")
        self.emit_block(after, inner)
        self.assign_yield(after.last_op, carried, inner)
        self.flush(inner)
        self.emit(indent, "}")

    # -- CBs
    def op_mtia_cb_alloc(self, op: Operation, indent: str) -> None:
        t = op.results[0].type
        if op.cb_id is None or op.ls_offset is None:  # type: ignore[attr-defined]
            raise _error(op, "a CB without a CB ID and LS offset (run mtia-cb-allocate)")
        n = self.name_for(op.results[0], "cb")
        depth = t.depth.data  # type: ignore[attr-defined]
        self.emit(
            indent,
            f"const int32_t {n} = mtia_cb_alloc(pe, /*CB ID*/ {op.cb_id.value.data}, /*depth*/ {depth}, "  # type: ignore[attr-defined]
            f"/*slot bytes*/ {mtia.tile_bytes(t.tile)}, /*LS offset*/ {op.ls_offset.value.data}, {self.loc(op)});"  # type: ignore[attr-defined]
            f"  // {t}",
        )

    def _cb_count(self, op: Operation, indent: str, fn: str) -> None:
        self.emit(indent, f"{fn}(pe, {self.get(op.operands[0], op)}, {op.count.value.data}, {self.loc(op)});")  # type: ignore[attr-defined]

    def op_mtia_cb_reserve(self, op: Operation, indent: str) -> None:
        self._cb_count(op, indent, "mtia_cb_reserve")

    def op_mtia_cb_push(self, op: Operation, indent: str) -> None:
        self._cb_count(op, indent, "mtia_cb_push")

    def op_mtia_cb_wait(self, op: Operation, indent: str) -> None:
        self._cb_count(op, indent, "mtia_cb_wait")

    def op_mtia_cb_pop(self, op: Operation, indent: str) -> None:
        self._cb_count(op, indent, "mtia_cb_pop")

    def op_mtia_cb_read(self, op: Operation, indent: str) -> None:
        r = op.results[0]
        t: Attribute = r.type
        if _is_tensor(t):  # the whole tile, into a local array of the scalar core
            et = _elem(t)
            n = self.name_for(r, "tile")
            self.flush(indent)
            self.emit(indent, f"{_storage(et, op)} {n}[{np_prod(_shape(t))}];")
            self.emit(indent, f"mtia_cb_read(pe, {self.get(op.operands[0], op)}, {n}, sizeof {n}, {self.loc(op)});")
            return
        st = _storage(t, op)
        n = self.name_for(r)
        raw = self.names.fresh(None, "raw")
        self.flush(indent)
        self.emit(indent, f"{st} {raw};")
        self.emit(indent, f"mtia_cb_read(pe, {self.get(op.operands[0], op)}, &{raw}, sizeof {raw}, {self.loc(op)});")
        self.emit(indent, f"const {_ctype(t, op)} {n} = {_load(t, raw)};")

    # -- DMA
    def _desc(self, op: Any, t: Attribute, indent: str) -> str:
        shape = _shape(t)
        rank = len(shape)
        if rank > MAX_RANK:
            raise _error(op, f"a DMA block of rank {rank} (at most {MAX_RANK})")
        elem = _elem(t)

        def arr(vals: list[str]) -> str:
            return "{" + ", ".join(vals + ["0"] * (MAX_RANK - len(vals))) + "}"

        strides = [self.get(v, op) for v in op.strides]
        bounds = [self.get(v, op) for v in op.bounds]
        starts = [self.get(v, op) for v in getattr(op, "starts", ())]  # dma_gather_rows has none
        from mtia_xdsl.machine.interpret.formats import dtype_name

        d = self.names.fresh(None, "dma")
        self.emit(
            indent,
            f"const mtia_dma_desc {d} = {{/*base*/ {self.get(op.base, op)}, /*rank*/ {rank}, /*elem bytes*/ "
            f"{mtia.element_bytes(elem)}, /*shape*/ {arr([str(s) for s in shape])}, /*strides*/ {arr(strides)}, "
            f"/*bounds*/ {arr(bounds)}, /*starts*/ {arr(starts)}, /*has starts*/ {int(bool(starts))}, "
            f'/*is float*/ {int(_is_float(elem))}, "{dtype_name(t)}"}};',
        )
        return d

    def op_mtia_re_allreduce(self, op: Any, indent: str) -> None:
        """Cross-PE reduction of a scalar or of a tile the scalar core holds (mtia_re_allreduce)."""
        from mtia_xdsl.machine.interpret.formats import dtype_name

        t: Attribute = op.input.type
        r = op.results[0]
        axis, kind = op.pe_axis.value.data, op.kind.data
        self.flush(indent)
        if _is_tensor(t):
            et = _elem(t)
            n = np_prod(_shape(t))
            out = self.name_for(r, "tile")
            self.emit(indent, f"{_storage(et, op)} {out}[{n}];")
            self.emit(indent, f"memcpy({out}, {self.get(op.input, op)}, sizeof {out});")
            self.emit(
                indent,
                f'mtia_re_allreduce(pe, {out}, {n}, sizeof {out}[0], "{dtype_name(et)}", "{kind}", {axis}, '
                f"{self.loc(op)});",
            )
            return
        raw = self.names.fresh(None, "raw")
        self.emit(indent, f"{_storage(t, op)} {raw} = {_store(t, self.get(op.input, op))};")
        self.emit(
            indent,
            f'mtia_re_allreduce(pe, &{raw}, 1, sizeof {raw}, "{dtype_name(t)}", "{kind}", {axis}, {self.loc(op)});',
        )
        self.emit(indent, f"const {_ctype(t, op)} {self.name_for(r)} = {_load(t, raw)};")

    def op_mtia_dma_load(self, op: Any, indent: str) -> None:
        if op.out is None:
            raise _error(op, "a tensor-level DMA load (run mtia-cb-bufferize)")
        self.flush(indent)
        self.emit(indent, "{")
        inner = indent + "    "
        d = self._desc(op, op.block_type, inner)
        other = self._other(op, inner)
        self.emit(inner, f"mtia_dma_load(pe, {self.get(op.out, op)}, &{d}, {other}, {self.loc(op)});")
        self.emit(indent, "}")

    def _other(self, op: Any, indent: str) -> str:
        """A pointer to the element masked lanes of DMA load `op` get (its `other`), or nullptr."""
        if op.other is None:
            return "nullptr"
        if isinstance(op.other.type, TensorType):
            raise _error(op, "a DMA load whose `other` is a tensor")
        elem = _elem(op.block_type)
        o = self.names.fresh(None, "other")
        self.emit(indent, f"const {_storage(elem, op)} {o} = {_store(elem, self.get(op.other, op))};")
        return f"&{o}"

    def op_mtia_dma_gather_rows(self, op: Any, indent: str) -> None:
        """Indexed DMA: rows picked by the index tile in a CB (mtia_dma_gather_rows)."""
        if op.out is None or not mtia.is_cb(op.index):
            raise _error(op, "a tensor-level indexed DMA (run mtia-cb-bufferize)")
        block = op.block_type
        index = mtia.tile_type(op.index.type)
        self.flush(indent)
        self.emit(indent, "{")
        inner = indent + "    "
        d = self._desc(op, block, inner)
        other = self._other(op, inner)
        shape = self.names.fresh(None, "index_shape")
        extents = [str(x) for x in _shape(index)] + ["1"] * (MAX_RANK - len(_shape(index)))
        self.emit(inner, f"const int64_t {shape}[{MAX_RANK}] = {{{', '.join(extents)}}};")
        ls_bytes = mtia.tile_bytes(block) + mtia.tile_bytes(index)
        self.emit(
            inner,
            f"mtia_dma_gather_rows(pe, {self.get(op.out, op)}, {self.get(op.index, op)}, {shape}, "
            f"{mtia.element_bytes(_elem(index))}, {self.get(op.row_stride, op)}, &{d}, {other}, "
            f"/*ls bytes*/ {ls_bytes}, {self.loc(op)});",
        )
        self.emit(indent, "}")

    def op_mtia_dma_store(self, op: Any, indent: str) -> None:
        self.flush(indent)
        self.emit(indent, "{")
        inner = indent + "    "
        t = mtia.tile_type(op.value.type)
        d = self._desc(op, t, inner)
        if mtia.is_cb(op.value):
            self.emit(inner, f"mtia_dma_store(pe, {self.get(op.value, op)}, &{d}, {self.loc(op)});")
        elif _shape(t):  # a tile the scalar core holds (a whole-tile cb_read, a re_reduce result)
            self.emit(inner, f"mtia_dma_store_value(pe, {self.get(op.value, op)}, &{d}, {self.loc(op)});")
        else:
            v = self.names.fresh(None, "value")
            self.emit(inner, f"const {_storage(t, op)} {v} = {_store(t, self.get(op.value, op))};")
            self.emit(inner, f"mtia_dma_store_scalar(pe, &{v}, &{d}, {self.loc(op)});")
        self.emit(indent, "}")

    def op_mtia_scalar_load(self, op: Any, indent: str) -> None:
        from mtia_xdsl.machine.interpret.formats import dtype_name

        r = op.results[0]
        t = r.type
        raw = self.names.fresh(None, "raw")
        self.flush(indent)
        self.emit(indent, f"{_storage(t, op)} {raw};")
        self.emit(
            indent,
            f'mtia_scalar_load(pe, {self.get(op.operands[0], op)}, &{raw}, sizeof {raw}, "{dtype_name(t)}", '
            f"{self.loc(op)});",
        )
        self.emit(indent, f"const {_ctype(t, op)} {self.name_for(r)} = {_load(t, raw)};")

    def op_mtia_scalar_store(self, op: Any, indent: str) -> None:
        from mtia_xdsl.machine.interpret.formats import dtype_name

        t = op.value.type
        raw = self.names.fresh(None, "raw")
        self.flush(indent)
        self.emit(indent, f"const {_storage(t, op)} {raw} = {_store(t, self.get(op.value, op))};")
        self.emit(
            indent,
            f'mtia_scalar_store(pe, {self.get(op.operands[0], op)}, &{raw}, sizeof {raw}, "{dtype_name(t)}", '
            f"{self.loc(op)});",
        )

    # -- engine commands
    def _ins(
        self, op: Any, operands: list[SSAValue], indent: str, inout: bool = False, hints: Sequence[SSAValue] = ()
    ) -> list[str]:
        """Pointers to the tiles of CB operands (`mtia_cmd_in`), or the scalar values of others; a pointer is
        named after the body argument in `hints` that reads it (the kernel's `x`), else `inN`."""
        out: list[str] = []
        for k, v in enumerate(operands):
            if mtia.is_cb(v):
                t = mtia.tile_type(v.type)
                p = self.names.fresh(hints[k].name_hint if k < len(hints) else None, "in")
                st = _storage(_elem(t), op)
                self.emit(
                    indent, f"[[maybe_unused]] const {st} *{p} = (const {st} *)mtia_cmd_in(pe, {self.get(v, op)});"
                )
                out.append(p)
            else:
                if isinstance(v.type, TensorType):
                    raise _error(op, "an engine command reading a tensor outside a CB")
                out.append(self.get(v, op))
        return out

    def _outs(self, op: Any, outs: list[SSAValue], indent: str, inplace: bool) -> list[str]:
        ptrs: list[str] = []
        for v in outs:
            t = mtia.tile_type(v.type)
            p = self.names.fresh(None, "out")
            fn = "mtia_cmd_inout" if inplace else "mtia_cmd_out"
            st = _storage(_elem(t), op)
            self.emit(indent, f"{st} *{p} = ({st} *){fn}(pe, {self.get(v, op)});")
            ptrs.append(p)
        return ptrs

    # -- gathers, scatters and atomics: lane loops on the scalar core over global memory (mtia_global)
    def _lanes(self, op: Any, v: SSAValue | None, indent: str, what: str) -> tuple[str, str]:
        """(array of the lanes, C expression of lane i) of operand `v`: a CB tile (read by the command) or a
        scalar (one lane, broadcast)."""
        if v is None:
            return "nullptr", "true"
        t = mtia.tile_type(v.type)
        st = _storage(_elem(t), op)
        if mtia.is_cb(v):
            p = self.names.fresh(None, what)
            self.emit(indent, f"const {st} *{p} = (const {st} *)mtia_cmd_in(pe, {self.get(v, op)});")
            return p, _load(_elem(t), f"{p}[i]")
        if isinstance(v.type, TensorType):
            raise _error(op, "a gather, scatter or atomic on a tensor outside a CB")
        p = self.names.fresh(None, what)
        self.emit(indent, f"[[maybe_unused]] const {st} {p}[1] = {{{_store(_elem(t), self.get(v, op))}}};")
        return p, self.get(v, op)

    def _lanes_begin(self, op: Any, indent: str) -> str:
        from mtia_xdsl.machine.commands import command_kind

        self.flush(indent)
        self.emit(indent, "{")
        inner = indent + "    "
        if getattr(op, "out", None) is not None or isinstance(op, mtia.ScatterOp):
            self.emit(inner, f'mtia_cmd_begin(pe, MTIA_SCALAR, "{command_kind(op.name)}", {self.loc(op)});')
        return inner

    def _lane_count(self, op: Any, values: list[SSAValue | None]) -> int:
        n = 1
        for v in values:
            if v is not None:
                shape = _shape(v.type)
                n = max(n, int(np_prod(shape)))
        return n

    def op_mtia_gather(self, op: Any, indent: str) -> None:
        from mtia_xdsl.machine.interpret.formats import dtype_name

        if op.out is None:
            raise _error(op, "a tensor-level gather (run mtia-cb-bufferize)")
        t = mtia.tile_type(op.out.type)
        et = _elem(t)
        inner = self._lanes_begin(op, indent)
        ptrs, ptr_i = self._lanes(op, op.ptrs, inner, "ptrs")
        mask, mask_i = self._lanes(op, op.mask, inner, "mask")
        other = self.get(op.other, op) if op.other is not None else ("NAN" if _is_float(et) else "0")
        st = _storage(et, op)
        out = self.names.fresh(None, "out")
        self.emit(inner, f"{st} *{out} = ({st} *)mtia_cmd_out(pe, {self.get(op.out, op)});")
        n = self._lane_count(op, [op.out])
        eb = mtia.element_bytes(et)
        self.emit(inner, f"for (int64_t i = 0; i < {n}; ++i) {{")
        read = f"*(const {st} *)mtia_global(pe, {ptr_i}, {eb}, nullptr)"
        self.emit(inner, f"    {out}[i] = {mask_i} ? {read} : {_store(et, other)};")
        self.emit(inner, "}")
        self.emit(
            inner,
            f"mtia_lanes_end(pe, {ptrs}, {mask}, {n}, {eb}, /*read*/ 1, /*write*/ 0, "
            f'/*LS bytes*/ {mtia.tile_bytes(t)}, "{dtype_name(t)}");',
        )
        self.emit(indent, "}")

    def op_mtia_scatter(self, op: Any, indent: str) -> None:
        from mtia_xdsl.machine.interpret.formats import dtype_name

        t = mtia.tile_type(op.value.type)
        et = _elem(t)
        inner = self._lanes_begin(op, indent)
        ptrs, ptr_i = self._lanes(op, op.ptrs, inner, "ptrs")
        _, value_i = self._lanes(op, op.value, inner, "value")
        mask, mask_i = self._lanes(op, op.mask, inner, "mask")
        n = self._lane_count(op, [op.ptrs, op.value, op.mask])
        eb = mtia.element_bytes(et)
        st = _storage(et, op)
        self.emit(inner, f"for (int64_t i = 0; i < {n}; ++i) {{")
        dst = f"*({st} *)mtia_global(pe, {ptr_i}, {eb}, nullptr)"
        self.emit(inner, f"    if ({mask_i}) {dst} = {_store(et, value_i)};")
        self.emit(inner, "}")
        self.emit(
            inner,
            f"mtia_lanes_end(pe, {ptrs}, {mask}, {n}, {eb}, /*read*/ 0, /*write*/ 1, "
            f'/*LS bytes*/ 0, "{dtype_name(t)}");',
        )
        self.emit(indent, "}")

    def op_mtia_atomic_rmw(self, op: Any, indent: str) -> None:
        self._atomic(op, indent, [op.ptr, op.val, op.mask])

    def op_mtia_atomic_cas(self, op: Any, indent: str) -> None:
        self._atomic(op, indent, [op.ptr, op.cmp, op.val])

    def _atomic(self, op: Any, indent: str, operands: list[SSAValue | None]) -> None:
        from mtia_xdsl.machine.interpret.formats import dtype_name

        t = mtia.tile_type(op.out.type) if op.out is not None else op.result[0].type
        et = _elem(t)
        st, ct = _storage(et, op), _ctype(et, op)
        eb = mtia.element_bytes(et)
        n = self._lane_count(op, [*operands, op.out])
        result = None
        if op.out is None:
            if isinstance(t, TensorType):
                raise _error(op, "a tensor-level atomic (run mtia-cb-bufferize)")
            result = self.name_for(op.result[0], "old")
            self.emit(indent, f"{ct} {result}{{}};")
        inner = self._lanes_begin(op, indent)
        ptrs, ptr_i = self._lanes(op, operands[0], inner, "ptrs")
        _, a_i = self._lanes(op, operands[1], inner, "arg")
        if isinstance(op, mtia.AtomicCasOp):
            _, b_i = self._lanes(op, operands[2], inner, "arg")
            mask, mask_i = "nullptr", "true"
            update = f"(old == {a_i} ? {b_i} : old)"
        else:
            mask, mask_i = self._lanes(op, operands[2], inner, "mask")
            update = self._rmw(op, et, "old", a_i)
        out = None
        if op.out is not None:
            out = self.names.fresh(None, "out")
            self.emit(inner, f"{st} *{out} = ({st} *)mtia_cmd_out(pe, {self.get(op.out, op)});")
        self.emit(inner, f"for (int64_t i = 0; i < {n}; ++i) {{")
        store_old = f"{out}[i] = {_store(et, '0')}; " if out else ""
        self.emit(inner, f"    if (!({mask_i})) {{ {store_old}continue; }}")
        self.emit(inner, f"    {st} *p = ({st} *)mtia_global(pe, {ptr_i}, {eb}, nullptr);")
        self.emit(inner, f"    const {ct} old = {_load(et, '*p')};")
        self.emit(inner, f"    *p = {_store(et, _round(et, update))};")
        self.emit(inner, f"    {out}[i] = {_store(et, 'old')};" if out else f"    {result} = old;")
        self.emit(inner, "}")
        if op.out is not None:
            self.emit(
                inner,
                f"mtia_lanes_end(pe, {ptrs}, {mask}, {n}, {eb}, /*read*/ 1, /*write*/ 1, /*LS bytes*/ "
                f'{mtia.tile_bytes(t)}, "{dtype_name(t)}");',
            )
        self.emit(indent, "}")

    @staticmethod
    def _rmw(op: Any, et: Attribute, old: str, val: str) -> str:
        code = op.atomic_rmw_op.value.data
        if code in (1, 2, 3):
            return f"({old} {'&|^'[code - 1]} {val})"
        if code in (4, 5):
            return f"({old} + {val})"
        if code in (6, 7):
            if _is_float(et):
                rule = FLOAT_RMW_MAX_MIN["max" if code == 6 else "min"]
                return f"mtia_{rule.stem}({old}, {val})"
            return f"({old} {'>' if code == 6 else '<'} {val} ? {old} : {val})"
        if code in (8, 9):
            cmp = ">" if code == 8 else "<"
            if _is_float(et):  # semantics.atomic: the bit patterns as unsigned integers
                u = "uint64_t" if _ctype(et, op) == "double" else "uint32_t"  # f16/bf16 compute as float
                return f"(mtia_bitcast<{u}>({old}) {cmp} mtia_bitcast<{u}>({val}) ? {old} : {val})"
            u = _unsigned(et)
            return f"(({u}){old} {cmp} ({u}){val} ? {old} : {val})"
        if code == 10:
            return val
        raise _error(op, f"atomic_rmw kind {code}")

    def op_mtia_se_compute(self, op: Any, indent: str) -> None:
        self._compute(op, indent, "MTIA_SE")

    def op_mtia_vec_compute(self, op: Any, indent: str) -> None:
        self._compute(op, indent, "MTIA_VEC")

    def op_mtia_mlu_compute(self, op: Any, indent: str) -> None:
        self._compute(op, indent, "MTIA_MLU")

    def _compute(self, op: Any, indent: str, engine: str) -> None:
        from mtia_xdsl.machine.commands import command_kind
        from mtia_xdsl.machine.interpret.command_work import ComputeInfo

        if not op.outs:
            self._print_only(op, indent)
            return
        for inner in op.body.walk():  # ops with effects (or not translated) must not be dropped as unused values
            if inner.name in _BODY_UNSUPPORTED:
                raise _error(inner, "this op in an engine body")
        info = ComputeInfo.of(op)
        self.flush(indent)
        self.emit(indent, "{")
        inner = indent + "    "
        self.emit(inner, f'mtia_cmd_begin(pe, {engine}, "{command_kind(op.name)}", {self.loc(op)});')
        ins = self._ins(op, list(op.inputs), inner, hints=list(op.body.block.args))
        outs = self._outs(op, list(op.outs), inner, op.inplace is not None)
        valid = [self.get(v, op) for v in op.valid]
        body = _Body(self, op, ins)
        rvv_ins = [body.scalar.get(a, p) for a, p in zip(op.body.block.args, ins, strict=True)]
        yield_op = op.body.block.last_op
        loops: list[str] = []
        for k, (res, ptr) in enumerate(zip(yield_op.operands, outs, strict=True)):
            out_t = mtia.tile_type(op.outs[k].type)
            portable = body.emit_output(res, ptr, out_t, valid)
            try:
                rvv = rvv_body_loop(op, rvv_ins, [ptr], valid, elementwise, [res])
            except KeyError:  # backend/rvv.py lacks this element type (a compare of i1 values): the portable loop
                rvv = None
            loops += guarded(rvv, portable, inner)
        self.lines += [inner + ln for ln in body.pre]
        self.lines += loops
        out_t = mtia.tile_type(op.outs[0].type)
        shape = _shape(out_t)
        if len(shape) > MAX_RANK:  # the output shape only scales the work of an effective shape
            if valid:
                raise _error(op, f"an effective shape of rank {len(shape)} (at most {MAX_RANK})")
            shape = []
        vals = ", ".join(valid + ["0"] * (MAX_RANK - len(valid)))
        shp = ", ".join([str(s) for s in shape] + ["0"] * (MAX_RANK - len(shape)))
        self.emit(
            inner,
            f'const mtia_work work = {{/*elems*/ {info.elems}, /*dtype*/ "{info.dtype}", /*lut*/ {int(info.lut)}, '
            f"/*out rank*/ {len(shape)}, /*out shape*/ {{{shp}}}, /*nvalid*/ {len(valid)}, /*valid*/ {{{vals}}}, "
            f"/*LS bytes*/ {info.ls_bytes}}};",
        )
        self.emit(inner, "mtia_compute_end(pe, &work);")
        self.emit(indent, "}")

    def _print_only(self, op: Any, indent: str) -> None:
        """A body without outputs that only prints CB tiles (tl.device_print): the model records no command
        for it, so neither does this; it prints each tile's elements after the program id and prefix."""
        block = op.body.block
        prints = [inner for inner in block.ops if inner.name != "mtia.yield"]
        if any(inner.name != "tt.print" for inner in prints) or block.last_op.operands:
            raise _error(op, "an engine command whose results stay in registers")
        tiles = dict(zip(block.args, op.inputs, strict=True))
        self.flush(indent)
        self.emit(indent, "{  // tl.device_print: no command (the model records none)")
        inner = indent + "    "
        for pr in prints:
            prefix = pr.properties.get("prefix", pr.attributes.get("prefix"))
            text = prefix.data if isinstance(prefix, builtin.StringAttr) else ""
            self.emit(inner, f'printf("pid (%d, %d, %d)%s", pid_x, pid_y, pid_z, {json.dumps(text)});')
            for v in pr.operands:
                cb = tiles.get(v)  # type: ignore[call-overload]
                if cb is None or not mtia.is_cb(cb):
                    raise _error(pr, "a print of a value other than a tile the command reads from a CB")
                t = mtia.tile_type(cb.type)
                et = _elem(t)
                st = _storage(et, pr)
                ptr = self.names.fresh(None, "tile")
                self.emit(inner, f"const {st} *{ptr} = (const {st} *)mtia_cb_front_ptr(pe, {self.get(cb, op)}, "
                                 f"{self.loc(pr)});")  # fmt: skip
                value = _load(et, f"{ptr}[q]")
                fmt, cast = (" %.9g", "double") if _is_float(et) else (" %lld", "long long")
                self.emit(inner, f"for (int64_t q = 0; q < {np_prod(_shape(t))}; ++q)")
                self.emit(inner, f'    printf("{fmt}", ({cast})({value}));')
            self.emit(inner, 'printf("\\n");')
        self.emit(indent, "}")

    def op_mtia_dpe_matmul(self, op: Any, indent: str) -> None:
        from mtia_xdsl.machine.interpret.command_work import dpe_ls_bytes
        from mtia_xdsl.machine.interpret.formats import dtype_name

        if op.out is None:
            raise _error(op, "a DPE matmul whose result stays in registers")
        t_a, t_b = mtia.tile_type(op.a.type), mtia.tile_type(op.b.type)
        out_t = mtia.tile_type(op.out.type)
        *batch, m, k = _shape(t_a)
        n = _shape(t_b)[-1]
        if len(batch) > 1:
            raise _error(op, "a DPE matmul with more than one batch dimension")
        nb = batch[0] if batch else 1
        self.flush(indent)
        self.emit(indent, "{")
        inner = indent + "    "
        self.emit(inner, f'mtia_cmd_begin(pe, MTIA_DPE, "dpe_matmul", {self.loc(op)});')
        a, b = self._ins(op, [op.a, op.b], inner)
        inplace = op.inplace is not None
        c = self._ins(op, [op.c], inner)[0]  # inplace: C is the tile D overwrites (read, then filled)
        (d,) = self._outs(op, [op.out], inner, inplace)
        valid = [self.get(v, op) for v in op.valid]
        vm, vn, vk = (f"mtia_extent({v}, {s})" for v, s in zip(valid, (m, n, k), strict=True)) if valid else (m, n, k)
        ea, eb, ec, ed = _elem(t_a), _elem(t_b), _elem(op.c.type), _elem(out_t)
        integer = isinstance(ea, builtin.IntegerType)
        acc_t = "int64_t" if integer else "double"
        tf32 = op.input_precision.value.data == 0 and isinstance(ea, builtin.Float32Type)

        def rd(e: str) -> str:
            return f"mtia_round_tf32({e})" if tf32 else e

        c_is_cb = mtia.is_cb(op.c) or inplace
        self.emit(inner, f"// D[{nb}x{m}x{n}] = A[{m}x{k}] @ B[{k}x{n}] + C, exact accumulation, rounded once")
        self.emit(inner, f"for (int64_t bb = 0; bb < {nb}; ++bb) {{")
        self.emit(inner, f"    for (int64_t mm = 0; mm < {vm}; ++mm) {{")
        self.emit(inner, f"        for (int64_t nn = 0; nn < {vn}; ++nn) {{")
        ci = f"(bb * {m} + mm) * {n} + nn"
        c0 = _load(ec, f"{c}[{ci}]") if c_is_cb else c
        self.emit(inner, f"            {acc_t} dot_acc = ({acc_t})({c0});")
        self.emit(inner, f"            for (int64_t kk = 0; kk < {vk}; ++kk) {{")
        av = _load(ea, f"{a}[(bb * {m} + mm) * {k} + kk]")
        bv = _load(eb, f"{b}[(bb * {k} + kk) * {n} + nn]")
        self.emit(inner, f"                dot_acc += ({acc_t}){rd(av)} * ({acc_t}){rd(bv)};")
        self.emit(inner, "            }")
        cd = _ctype(ed, op)
        self.emit(inner, f"            {d}[{ci}] = {_store(ed, _round(ed, f'({cd})dot_acc'))};")
        self.emit(inner, "        }")
        self.emit(inner, "    }")
        self.emit(inner, "}")
        vals = ", ".join(valid) if valid else "0"
        self.emit(inner, f"const int64_t valid[3] = {{{vals}{', 0, 0' if not valid else ''}}};")
        self.emit(
            inner,
            f'mtia_dpe_end(pe, /*batch*/ {nb}, /*M*/ {m}, /*N*/ {n}, /*K*/ {k}, "{dtype_name(t_a)}", '
            f"/*input precision*/ {op.input_precision.value.data}, /*LS bytes*/ {dpe_ls_bytes(op)}, "
            f"/*nvalid*/ {len(valid)}, valid);",
        )
        self.emit(indent, "}")

    def op_mtia_re_reduce(self, op: Any, indent: str) -> None:
        from mtia_xdsl.machine.interpret.command_work import re_ls_bytes
        from mtia_xdsl.machine.interpret.formats import dtype_name

        if op.out is None:
            raise _error(op, "an RE reduce whose result stays in registers")
        t_in = mtia.tile_type(op.input.type)
        out_t = mtia.tile_type(op.out.type)
        shape = _shape(t_in)
        axis = op.axis.value.data
        kind = op.kind.data
        combine = _REDUCE_COMBINE.get(kind)
        if combine is None:
            raise _error(op, f"an RE reduction of kind {kind}")
        self.flush(indent)
        self.emit(indent, "{")
        inner = indent + "    "
        self.emit(inner, f'mtia_cmd_begin(pe, MTIA_RE, "re_reduce", {self.loc(op)});')
        (x,) = self._ins(op, [op.input], inner)
        (y,) = self._outs(op, [op.out], inner, False)
        valid = [self.get(v, op) for v in op.valid]
        ext = (
            [f"mtia_extent({v}, {s})" for v, s in zip(valid, shape, strict=True)] if valid else [str(s) for s in shape]
        )
        et = _elem(t_in)
        ct = _ctype(et, op)
        idx = [f"i{d}" for d in range(len(shape))]
        outer = [d for d in range(len(shape)) if d != axis]
        pad = inner
        self.emit(inner, f"// reduce axis {axis} ({kind}); lanes outside the valid extents are not read")
        for d in outer:
            lim = f"{shape[d]}"
            self.emit(pad, f"for (int64_t {idx[d]} = 0; {idx[d]} < {lim}; ++{idx[d]}) {{")
            pad += "    "
        cond = " && ".join(f"{idx[d]} < {ext[d]}" for d in outer) if valid and outer else ""
        x_at = _load(et, f"{x}[{_linear(idx, shape)}]")
        init = _REDUCE_INIT[kind](et, op)
        if kind == "addf" and axis == len(shape) - 1 and ct in ("float", "double"):
            # numpy's pairwise summation over the whole row, lanes outside the valid extents as 0 (the model's)
            n_row = shape[int(axis)]
            inside = " && ".join(x for x in [cond, f"{idx[axis]} < {ext[axis]}"] if x)
            self.emit(pad, f"{ct} red_row[{n_row}];")
            self.emit(pad, f"for (int64_t {idx[axis]} = 0; {idx[axis]} < {n_row}; ++{idx[axis]}) {{")
            self.emit(
                pad + "    ",
                f"red_row[{idx[axis]}] = {inside} ? {x_at} : {init};" if valid else f"red_row[{idx[axis]}] = {x_at};",
            )
            self.emit(pad, "}")
            self.emit(pad, f"const {ct} red_acc = mtia_pairwise_sum(red_row, {n_row});")
        else:  # numpy's reduce (semantics.reduce): from the first lane on, lanes outside the extents as identity
            inside = " && ".join(x for x in [cond, f"{idx[axis]} < {ext[axis]}"] if x)
            self.emit(pad, f"{ct} red_acc = {init};")
            self.emit(pad, f"for (int64_t {idx[axis]} = 0; {idx[axis]} < {shape[axis]}; ++{idx[axis]}) {{")
            lane = f"{inside} ? {x_at} : {init}" if valid else x_at
            self.emit(pad + "    ", f"const {ct} lane = {lane};")
            upd = f"{idx[axis]} == 0 ? lane : {_round(et, combine('red_acc', 'lane', et))}"
            self.emit(pad + "    ", f"red_acc = {upd};")
            self.emit(pad, "}")
        out_shape = _shape(out_t)
        out_idx = [idx[d] for d in outer]
        self.emit(pad, f"{y}[{_linear(out_idx, out_shape)}] = {_store(_elem(out_t), 'red_acc')};")
        for _ in outer:
            pad = pad[:-4]
            self.emit(pad, "}")
        size = max(len(shape), MAX_RANK)
        shp = ", ".join([str(s) for s in shape] + ["0"] * (size - len(shape)))
        vals = ", ".join(valid + ["0"] * (size - len(valid)))
        self.emit(inner, f"const int64_t in_shape[{size}] = {{{shp}}}, valid[{size}] = {{{vals}}};")
        self.emit(
            inner,
            f'mtia_re_end(pe, {len(shape)}, in_shape, "{dtype_name(out_t)}", /*LS bytes*/ {re_ls_bytes(op)}, '
            f"/*nvalid*/ {len(valid)}, valid);",
        )
        self.emit(indent, "}")


def _minmax(fn: str) -> Callable[[str, str, Attribute], str]:
    return lambda a, b, t: f"{fn}({a}, {b})"


_REDUCE_COMBINE: dict[str, Callable[[str, str, Attribute], str]] = {
    "addf": lambda a, b, t: f"({a} + {b})",
    "addi": lambda a, b, t: f"({a} + {b})",
    **{name[len("arith.") :]: _minmax(f"mtia_{rule.stem}") for name, rule in MAX_MIN.items()},
    "maxsi": lambda a, b, t: f"({a} > {b} ? {a} : {b})",
    "minsi": lambda a, b, t: f"({a} < {b} ? {a} : {b})",
}
_REDUCE_INIT: dict[str, Callable[[Attribute, Operation], str]] = {
    "addf": lambda t, op: _literal(0.0, t, op),
    "addi": lambda t, op: _literal(0, t, op),
    "maxnumf": lambda t, op: "-INFINITY",
    "maximumf": lambda t, op: "-INFINITY",
    "minnumf": lambda t, op: "INFINITY",
    "minimumf": lambda t, op: "INFINITY",
    "maxsi": lambda t, op: f"std::numeric_limits<{_ctype(t, op)}>::min()",
    "minsi": lambda t, op: f"std::numeric_limits<{_ctype(t, op)}>::max()",
}


_BODY_UNSUPPORTED = frozenset(
    ("tt.print", "tt.assert", "tt.dot", "tt.map_elementwise", "tt.atomic_rmw", "tt.atomic_cas", "tt.atomic_load",
     "tt.atomic_store", "tt.atomic_poll", "tt.unsplat")
)  # fmt: skip
"""Ops of mtia.ENGINE_BODY_OPS the emitter does not translate in a body (side effects, or not written yet)."""


class _Body:
    """An engine compute body as lane expressions: each tensor value is a function from lane indices (of its
    own shape) to a C++ expression; shape ops (splat, broadcast, expand_dims, trans, reshape) only remap
    indices, element-wise ops compose expressions, and the values of the output's shape become locals of the
    strip-mined loop."""

    def __init__(self, k: _Kernel, op: Any, ins: list[str]) -> None:
        self.k = k
        self.op = op
        self.block = op.body.block
        self.scalar: dict[SSAValue, str] = {}
        self.tile: dict[SSAValue, tuple[str, list[int], Attribute]] = {}
        for arg, v, src in zip(self.block.args, ins, op.inputs, strict=True):
            if mtia.is_cb(src):
                t = mtia.tile_type(src.type)
                if _shape(t):
                    self.tile[arg] = (v, _shape(t), _elem(t))
                else:
                    self.scalar[arg] = _load(_elem(t), f"{v}[0]")
            else:
                self.scalar[arg] = v
        self.defs: dict[SSAValue, Operation] = {r: o for o in self.block.ops for r in o.results}
        self.pre: list[str] = []
        """Lines before the output loops: reductions and scans materialized into local arrays."""
        self.arrays: dict[SSAValue, str] = {}
        self.slice_checks: set[tuple[Operation, int]] = set()
        """(extract_slice, dimension) pairs whose dynamic offset has its mtia_slice_check in `pre`."""

    def _combine(self, op: Operation, lhs: list[str], rhs: list[str], pad: str) -> list[str]:
        """Emit the combine region of a tt.reduce / tt.scan on (lhs, rhs) element names; return the results."""
        block = op.regions[0].blocks.first
        assert block is not None
        env: dict[SSAValue, str] = dict(zip(block.args, [*lhs, *rhs], strict=True))
        for inner in block.ops:
            if inner.name in ("tt.reduce.return", "tt.scan.return"):
                return [env[v] for v in inner.operands]
            if inner.name == "arith.constant" and not _is_tensor(inner.results[0].type):
                env[inner.results[0]] = _literal(inner.value.value.data, inner.results[0].type, inner)  # type: ignore[attr-defined]
                continue
            if len(inner.results) != 1 or inner.regions:
                raise _error(inner, "this op in a reduction's combine region")
            expr = elementwise(inner, [env[v] for v in inner.operands])
            if expr is None:
                raise _error(inner, "this op in a reduction's combine region")
            n = self.k.names.fresh(None, "c")
            self.pre.append(f"{pad}const {_ctype(inner.results[0].type, inner)} {n} = {expr};")
            env[inner.results[0]] = n
        raise _error(op, "a combine region without a return")

    def _histogram(self, op: Operation, v: SSAValue) -> None:
        """Count the source's lanes (where the mask holds) per bin [0, bins) into a local array."""
        bins = _shape(v.type)[0]
        src = op.operands[0]
        mask = op.operands[1] if len(op.operands) > 1 else None
        a = self.k.names.fresh(None, "hist")
        self.arrays[v] = a
        ct = _ctype(_elem(v.type), op)
        self.pre.append(f"{ct} {a}[{bins}] = {{}};")
        shape = _shape(src.type)
        idx = [self.k.names.fresh(None, "h") for _ in shape]
        pad = ""
        for i, n in zip(idx, shape, strict=True):
            self.pre.append(f"{pad}for (int64_t {i} = 0; {i} < {n}; ++{i}) {{")
            pad += "    "
        x = f"(int64_t)({self.at(src, idx, {})})"
        keep = f"{self.at(mask, idx, {})} && " if mask is not None else ""
        self.pre.append(f"{pad}const int64_t bin = {x};")
        self.pre.append(f"{pad}if ({keep}bin >= 0 && bin < {bins}) {a}[bin] += 1;")
        for _ in shape:
            pad = pad[:-4]
            self.pre.append(f"{pad}}}")

    def _materialize(self, op: Operation) -> None:  # noqa: C901  (reduce and scan, forward and reverse)
        """Compute a tt.reduce (the model's pairwise tree: neighbours combined level by level, an odd last
        element carried) or tt.scan (Hillis-Steele, as the model) into local arrays, one per result."""
        ins = list(op.operands)
        in_shape = _shape(ins[0].type)
        axis = _int_prop(op, "axis", 0)
        n = in_shape[axis]
        outer = [d for d in range(len(in_shape)) if d != axis]
        idx = [self.k.names.fresh(None, "r") for _ in in_shape]
        is_scan = op.name == "tt.scan"
        reverse = is_scan and bool(_int_prop(op, "reverse", 0))
        lane = f"{n - 1} - {idx[axis]}" if reverse else idx[axis]  # a reverse scan runs from the last lane
        types = [_ctype(_elem(v.type), op) for v in ins]
        names: list[str] = []
        for r in op.results:
            a = self.k.names.fresh(None, "scan" if is_scan else "red")
            names.append(a)
            self.arrays[r] = a
            self.pre.append(f"{_ctype(_elem(r.type), op)} {a}[{max(np_prod(_shape(r.type)), 1)}];")
        pad = ""
        for d in outer:
            self.pre.append(f"{pad}for (int64_t {idx[d]} = 0; {idx[d]} < {in_shape[d]}; ++{idx[d]}) {{")
            pad += "    "
        bufs = [self.k.names.fresh(None, "buf") for _ in ins]
        j = idx[axis]
        for b, t in zip(bufs, types, strict=True):
            self.pre.append(f"{pad}{t} {b}[{n}];")
        self.pre.append(f"{pad}for (int64_t {j} = 0; {j} < {n}; ++{j}) {{")
        at_idx = [lane if d == axis else i for d, i in enumerate(idx)]
        for b, v in zip(bufs, ins, strict=True):
            self.pre.append(f"{pad}    {b}[{j}] = {self.at(v, at_idx, {})};")
        self.pre.append(f"{pad}}}")
        if not is_scan:
            self.pre.append(f"{pad}for (int64_t len = {n}; len > 1; len = len / 2 + len % 2) {{")
            self.pre.append(f"{pad}    for (int64_t q = 0; q < len / 2; ++q) {{")
            res = self._combine(op, [f"{b}[2 * q]" for b in bufs], [f"{b}[2 * q + 1]" for b in bufs], pad + "        ")
            tmp = [self.k.names.fresh(None, "t") for _ in res]
            for t, r, ty in zip(tmp, res, types, strict=True):
                self.pre.append(f"{pad}        const {ty} {t} = {r};")
            for b, t in zip(bufs, tmp, strict=True):
                self.pre.append(f"{pad}        {b}[q] = {t};")
            self.pre.append(f"{pad}    }}")
            for b in bufs:
                self.pre.append(f"{pad}    if (len % 2) {b}[len / 2] = {b}[len - 1];")
            self.pre.append(f"{pad}}}")
            out_idx = [idx[d] for d in outer]
            out_shape = [in_shape[d] for d in outer]
            for a, b in zip(names, bufs, strict=True):
                self.pre.append(f"{pad}{a}[{_linear(out_idx, out_shape)}] = {b}[0];")
        else:
            nxt = [self.k.names.fresh(None, "nxt") for _ in ins]
            for b, t in zip(nxt, types, strict=True):
                self.pre.append(f"{pad}{t} {b}[{n}];")
            self.pre.append(f"{pad}for (int64_t step = 1; step < {n}; step *= 2) {{")
            self.pre.append(f"{pad}    for (int64_t q = 0; q < {n}; ++q) {{")
            self.pre.append(f"{pad}        if (q < step) {{")
            for b, x in zip(nxt, bufs, strict=True):
                self.pre.append(f"{pad}            {b}[q] = {x}[q];")
            self.pre.append(f"{pad}            continue;")
            self.pre.append(f"{pad}        }}")
            res = self._combine(op, [f"{b}[q - step]" for b in bufs], [f"{b}[q]" for b in bufs], pad + "        ")
            for b, r in zip(nxt, res, strict=True):
                self.pre.append(f"{pad}        {b}[q] = {r};")
            self.pre.append(f"{pad}    }}")
            self.pre.append(f"{pad}    for (int64_t q = 0; q < {n}; ++q) {{")
            for b, x in zip(bufs, nxt, strict=True):
                self.pre.append(f"{pad}        {b}[q] = {x}[q];")
            self.pre.append(f"{pad}    }}")
            self.pre.append(f"{pad}}}")
            for a, b in zip(names, bufs, strict=True):
                self.pre.append(
                    f"{pad}for (int64_t {j} = 0; {j} < {n}; ++{j}) {a}[{_linear(at_idx, in_shape)}] = {b}[{j}];"
                )
        for _ in outer:
            pad = pad[:-4]
            self.pre.append(f"{pad}}}")

    def at(self, v: SSAValue, idx: list[str], local: dict[SSAValue, str]) -> str:  # noqa: C901  (a dispatch)
        """The C++ expression of value `v` at lane `idx` (empty for scalars)."""
        if v in self.scalar:
            return self.scalar[v]
        if v in local:
            return local[v]
        if v in self.tile:
            ptr, shape, et = self.tile[v]
            return _load(et, f"{ptr}[{_linear(idx, shape)}]")
        if isinstance(v, BlockArgument) or v not in self.defs:
            return self.k.get(v, self.op)  # a value of the scalar core
        op = self.defs[v]
        name = op.name
        shape = _shape(v.type)
        if name in ("tt.reduce", "tt.scan"):
            if v not in self.arrays:
                self._materialize(op)
            return f"{self.arrays[v]}[{_linear(idx, shape)}]"
        if name == "arith.constant":
            attr = op.value  # type: ignore[attr-defined]
            t = _elem(v.type)
            if isinstance(attr, builtin.DenseIntOrFPElementsAttr):
                values = attr.get_values()
                if all(x == values[0] for x in values) or len(values) == 1:
                    return _literal(values[0], t, op)
                if v not in self.arrays:  # a constant tile: a static array of its values
                    a = self.k.names.fresh(None, "const")
                    self.arrays[v] = a
                    items = ", ".join(_literal(x, t, op) for x in values)
                    self.pre.append(f"static const {_ctype(t, op)} {a}[{len(values)}] = {{{items}}};")
                return f"{self.arrays[v]}[{_linear(idx, shape)}]"
            return _literal(cast(Any, attr).value.data, t, op)
        if name == "tt.splat":
            return self.at(op.operands[0], [], local)
        if name == "tt.expand_dims":
            axis = op.axis.value.data  # type: ignore[attr-defined]
            return self.at(op.operands[0], idx[:axis] + idx[axis + 1 :], local)
        if name == "tt.broadcast":
            src_shape = _shape(op.operands[0].type)
            return self.at(op.operands[0], [i if s != 1 else "0" for i, s in zip(idx, src_shape, strict=True)], local)
        if name == "tt.trans":
            order: list[int] = list(op.order.get_values())  # type: ignore[attr-defined]
            src_idx = ["0"] * len(order)
            for d, o in enumerate(order):
                src_idx[o] = idx[d]
            return self.at(op.operands[0], src_idx, local)
        if name == "tt.reshape":
            src_shape = _shape(op.operands[0].type)
            flat = _linear(idx, shape)
            src_idx: list[str] = []
            for d in range(len(src_shape)):
                inner = 1
                for s in src_shape[d + 1 :]:
                    inner *= s
                src_idx.append(f"(({flat}) / {inner}) % {src_shape[d]}")
            return self.at(op.operands[0], src_idx, local)
        if name == "mtia.extract_slice":
            src_idx: list[str] = []
            for d, off in enumerate(op.offsets_per_dim()):  # type: ignore[attr-defined]
                o = str(off) if isinstance(off, int) else self.at(cast(SSAValue, off), [], local)
                if not isinstance(off, int) and off not in local and (op, d) not in self.slice_checks:
                    self.slice_checks.add((op, d))  # the model's range check, once per command, before the loops
                    size, extent = _shape(op.results[0].type)[d], _shape(op.operands[0].type)[d]
                    self.pre.append(f"mtia_slice_check(pe, (int64_t)({o}), {size}, {extent}, {d});")
                src_idx.append(f"({idx[d]} + {o})")
            return self.at(op.operands[0], src_idx, local)
        if name == "tt.join":  # a new last dimension of 2: lane 0 from the first operand, lane 1 from the second
            a = self.at(op.operands[0], idx[:-1], local)
            b = self.at(op.operands[1], idx[:-1], local)
            return f"(({idx[-1]}) == 0 ? {a} : {b})"
        if name == "tt.split":  # result k: lane k of the source's last dimension (of 2)
            k = next(j for j, r in enumerate(op.results) if r is v)
            return self.at(op.operands[0], [*idx, str(k)], local)
        if name == "tt.cat":  # along dimension 0
            n0 = _shape(op.operands[0].type)[0]
            a = self.at(op.operands[0], idx, local)
            b = self.at(op.operands[1], [f"(({idx[0]}) - {n0})", *idx[1:]], local)
            return f"(({idx[0]}) < {n0} ? {a} : {b})"
        if name == "tt.gather":  # lane i of the result reads the source at index[i] along `axis`
            axis = _int_prop(op, "axis", 0)
            at_idx = list(idx)
            at_idx[axis] = f"(int64_t)({self.at(op.operands[1], idx, local)})"
            return self.at(op.operands[0], at_idx, local)
        if name == "tt.histogram":
            if v not in self.arrays:
                self._histogram(op, v)
            return f"{self.arrays[v]}[{idx[0]}]"
        if name == "tt.make_range":
            start = op.start.value.data  # type: ignore[attr-defined]
            return f"(int32_t)({start} + {idx[0]})"
        if name == "builtin.unrealized_conversion_cast":
            return self.at(op.operands[0], idx, local)
        if len(op.results) != 1 or elementwise(op, ["x"] * len(op.operands)) is None:
            raise _error(op, "this op in an engine body")
        operands: list[str] = []
        for o in op.operands:
            oshape = _shape(o.type)
            if oshape and oshape != shape:
                raise _error(op, "an element-wise op whose operands have other shapes than its result")
            operands.append(self.at(o, idx if oshape else [], local))
        expr = elementwise(op, operands)
        if expr is None:
            raise _error(op, "this op in an engine body")
        return expr

    def emit_output(self, res: SSAValue, ptr: str, out_t: Attribute, valid: list[str]) -> list[str]:
        """The portable strip-mined loop storing body value `res` into the output tile at `ptr`."""
        shape = _shape(out_t)
        et = _elem(out_t)
        idx = [f"i{d}" for d in range(len(shape))]
        local: dict[SSAValue, str] = {}
        lines: list[str] = []
        # values of the output's shape, in body order, become lane locals (the fused loop keeps them in registers)
        for o in self.block.ops:
            if o.name in ("mtia.yield", "arith.constant") or len(o.results) != 1:
                continue
            r = o.results[0]
            if _shape(r.type) != shape or o.name in ("tt.splat", "tt.broadcast", "tt.expand_dims"):
                continue
            if not self._reaches(r, res):
                continue
            expr = self.at(r, idx, local)
            n = self.k.names.fresh(r.name_hint, "t")
            lines.append(f"const {_ctype(_elem(r.type), o)} {n} = {expr};")
            local[r] = n
        val = self.at(res, idx, local)
        lines.append(f"{ptr}[{_linear(idx, shape)}] = {_store(et, val)};")
        extents = [f"mtia_extent({v}, {s})" for v, s in zip(valid, shape, strict=False)] if valid else []
        if not extents:
            extents = [str(s) for s in shape]
        loop = BodyLoop(self.op, shape, extents, idx, lines, _storage(et, self.op))
        return emit_body_loop(loop, "")

    def _reaches(self, v: SSAValue, target: SSAValue) -> bool:
        """Whether `target` depends on `v` (so computing `v` per lane is not wasted)."""
        seen: set[SSAValue] = set()
        stack = [target]
        while stack:
            x = stack.pop()
            if x is v:
                return True
            if x in seen or x not in self.defs:
                continue
            seen.add(x)
            stack.extend(self.defs[x].operands)
        return False


# -- the translation unit ----------------------------------------------------------------------------------

_PRELUDE = Template(r"""#include "mtia_runtime.h"
#ifdef __riscv_vector
#include <riscv_vector.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <tuple>

// Element helpers (the rules of mtia_xdsl/semantics): an integer division or remainder by zero gives
// $div0 (semantics.scalar.INT_DIV_BY_ZERO), INT_MIN / -1 wraps; shifts past the width give 0.
template <class T> [[maybe_unused]] static inline T mtia_divsi(T a, T b) {
    return b == 0 ? T($div0) : (b == T(-1) ? T(T(0) - a) : T(a / b));
}
template <class T> [[maybe_unused]] static inline T mtia_remsi(T a, T b) {
    return b == 0 ? T($div0) : b == T(-1) ? T(0) : T(a % b);
}
template <class U> [[maybe_unused]] static inline U mtia_divui(U a, U b) { return b == 0 ? U($div0) : U(a / b); }
template <class U> [[maybe_unused]] static inline U mtia_remui(U a, U b) { return b == 0 ? U($div0) : U(a % b); }
template <class T, class U> [[maybe_unused]] static inline T mtia_shl(T a, T b) {
    return (U)b >= sizeof(T) * 8 ? T(0) : T((U)a << (U)b);
}
template <class T, class U> [[maybe_unused]] static inline T mtia_shru(T a, T b) {
    return (U)b >= sizeof(T) * 8 ? T(0) : T((U)a >> (U)b);
}
template <class T, class U> [[maybe_unused]] static inline T mtia_shrs(T a, T b) {
    return (U)b >= sizeof(T) * 8 ? T(a < 0 ? -1 : 0) : T(a >> b);
}
template <class To, class From> [[maybe_unused]] static inline To mtia_bitcast(From x) {
    static_assert(sizeof(To) == sizeof(From), "bitcast between types of one size");
    To y;
    std::memcpy(&y, &x, sizeof y);
    return y;
}
template <class T, class F> [[maybe_unused]] static inline T mtia_fptoi(F x) {
    if (std::isnan(x)) return std::numeric_limits<T>::min();
    if (x >= (F)std::numeric_limits<T>::max()) return std::numeric_limits<T>::max();
    if (x <= (F)std::numeric_limits<T>::min()) return std::numeric_limits<T>::min();
    return (T)x;
}
// Float max/min (semantics.scalar.MAX_MIN): the *num forms ignore a NaN operand, the *imum forms propagate
// it; -0.0 < +0.0.
template <class F> [[maybe_unused]] static inline F mtia_maxnum(F a, F b) {
    return std::isnan(a) ? b : std::isnan(b) ? a : (a > b || (a == b && !std::signbit(a))) ? a : b;
}
template <class F> [[maybe_unused]] static inline F mtia_minnum(F a, F b) {
    return std::isnan(a) ? b : std::isnan(b) ? a : (a < b || (a == b && std::signbit(a))) ? a : b;
}
template <class F> [[maybe_unused]] static inline F mtia_maximum(F a, F b) {
    return std::isnan(a) || std::isnan(b) ? (F)NAN : mtia_maxnum(a, b);
}
template <class F> [[maybe_unused]] static inline F mtia_minimum(F a, F b) {
    return std::isnan(a) || std::isnan(b) ? (F)NAN : mtia_minnum(a, b);
}
[[maybe_unused]] static inline float mtia_round_f16(float x) { return mtia_f16_to_f32(mtia_f32_to_f16(x)); }
[[maybe_unused]] static inline float mtia_round_bf16(float x) { return mtia_bf16_to_f32(mtia_f32_to_bf16(x)); }
// tf32: nearest even to $tf32_bits mantissa bits (semantics.scalar.round_tf32)
[[maybe_unused]] static inline float mtia_round_tf32(float x) {
    uint32_t b = mtia_bitcast<uint32_t>(x);
    if ((b & 0x7f800000u) == 0x7f800000u) return x;
    b = (b + $tf32_half + ((b >> $tf32_drop) & 1u)) & ~$tf32_low;
    return mtia_bitcast<float>(b);
}
// numpy's pairwise summation of n contiguous values (float32 and float64 add.reduce along the last axis;
// semantics.reduce.pairwise_sum): blocks of at most $pw_block summed with $pw_acc accumulators (combined in
// adjacent pairs), halves (multiples of $pw_acc) added recursively.
template <class T> [[maybe_unused]] static inline T mtia_pairwise_sum(const T *a, int64_t n) {
    if (n < $pw_acc) {
        T res = 0;
        for (int64_t i = 0; i < n; ++i) res += a[i];
        return res;
    }
    if (n <= $pw_block) {
        T r[$pw_acc];
        for (int j = 0; j < $pw_acc; ++j) r[j] = a[j];
        int64_t i = $pw_acc;
        for (; i < n - (n % $pw_acc); i += $pw_acc)
            for (int j = 0; j < $pw_acc; ++j) r[j] += a[i + j];
        for (int w = $pw_acc / 2; w >= 1; w /= 2)
            for (int j = 0; j < w; ++j) r[j] = r[2 * j] + r[2 * j + 1];
        T res = r[0];
        for (; i < n; ++i) res += a[i];
        return res;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % $pw_acc;
    return mtia_pairwise_sum(a, n2) + mtia_pairwise_sum(a + n2, n - n2);
}
// Rounding toward zero (tt.fp_to_fp rounding = rtz; semantics.scalar.round_toward_zero): the nearest value,
// stepped toward zero if it is farther.
// x in double: no rounding before the one toward zero
[[maybe_unused]] static inline float mtia_round_f16_rtz(double x) {
    if (std::isnan(x) || std::isinf(x)) return mtia_round_f16((float)x);
    uint16_t h = mtia_f32_to_f16((float)x);
    if (std::fabs((double)mtia_f16_to_f32(h)) > std::fabs(x)) --h;  // one ulp toward zero (the magnitude bits)
    return mtia_f16_to_f32(h);
}
[[maybe_unused]] static inline float mtia_round_bf16_rtz(double x) {
    if (std::isnan(x)) return (float)x;
    uint16_t h = (uint16_t)(mtia_bitcast<uint32_t>((float)x) >> 16);
    if (std::fabs((double)mtia_bf16_to_f32(h)) > std::fabs(x)) --h;
    return mtia_bf16_to_f32(h);
}
[[maybe_unused]] static inline float mtia_round_f32_rtz(double x) {
    float r = (float)x;
    if (std::isfinite(x) && std::fabs((double)r) > std::fabs(x)) r = std::nextafter(r, 0.0f);
    return r;
}
// The vector core's RVV shape: one vector register (MTIA_VLEN_BYTES, above) holds MTIA_VLMAX(T) elements of T.
#define MTIA_VLMAX(T) ((int64_t)(MTIA_VLEN_BYTES / sizeof(T)))
// The lanes of a dimension of `size` inside an effective shape's extent `valid` (clamped to [0, size]).
[[maybe_unused]] static inline int64_t mtia_extent(int64_t valid, int64_t size) {
    return valid < 0 ? 0 : valid > size ? size : valid;
}
[[maybe_unused]] static inline int64_t mtia_vsetvl(int64_t remaining, int64_t vlmax) {
    return remaining < vlmax ? remaining : vlmax;
}
""").substitute(
    div0=INT_DIV_BY_ZERO,
    tf32_bits=TF32_MANTISSA_BITS,
    tf32_drop=TF32_DROPPED_BITS,
    tf32_half=f"{(1 << (TF32_DROPPED_BITS - 1)) - 1:#x}u",
    tf32_low=f"{(1 << TF32_DROPPED_BITS) - 1:#x}u",
    pw_block=PAIRWISE_BLOCK,
    pw_acc=PAIRWISE_ACCUMULATORS,
)
"""The helpers every kernel's C++ starts with; the rules they encode come from mtia_xdsl/semantics."""


def _param_spec(arg: BlockArgument) -> str:
    t = arg.type
    if _is_ptr(t):
        return "ptr"
    if isinstance(t, builtin.IntegerType):
        return f"i{t.bitwidth}"
    if isinstance(t, builtin.Float32Type):
        return "f32"
    if isinstance(t, builtin.Float64Type):
        return "f64"
    if isinstance(t, builtin.Float16Type):
        return "f16"
    if isinstance(t, builtin.BFloat16Type):
        return "bf16"
    return str(t)


def _kernel_meta(func: Operation, module: ModuleOp) -> dict[str, Any]:
    from mtia_xdsl.machine.placement import has_collective, reads_pe_id

    block = func.regions[0].blocks.first
    assert block is not None
    target = module.attributes.get(mtia.TARGET_ATTR)
    chip = target.chip.data if isinstance(target, mtia.TargetAttr) else None
    overrides = module.attributes.get(mtia.MACHINE_OVERRIDES_ATTR)
    if isinstance(overrides, builtin.DictionaryAttr):
        from mtia_xdsl.machine.config import override_value

        overrides = {k: override_value(k, v) for k, v in overrides.data.items()}
    else:
        overrides = None
    subgrid = func.attributes.get("mtia.pe_subgrid")
    mapping = func.attributes.get(mtia.PE_MAPPING_ATTR)
    return {
        "kernel": func.properties["sym_name"].data,  # type: ignore[union-attr]
        "loc": location_str(func.location),
        "params": [{"name": a.name_hint or f"#{i}", "type": _param_spec(a)} for i, a in enumerate(block.args)],
        "chip": chip,
        "machine_overrides": overrides,
        "pe_mapping": mapping.data if isinstance(mapping, builtin.StringAttr) else None,
        "pe_subgrid": [int(v) for v in subgrid.get_values()] if subgrid is not None else None,  # type: ignore[attr-defined]
        "reads_pe_id": reads_pe_id(func),
        "collective": has_collective(func),
    }


def _check_scalar_reduce(op: Operation) -> None:
    """Raise CppEmitError unless tt.reduce `op` reduces 1-D tiles the scalar core read from CBs to scalars."""
    shapes = {tuple(_shape(v.type)) for v in op.operands}
    if len(shapes) != 1 or len(next(iter(shapes))) != 1 or any(isinstance(r.type, TensorType) for r in op.results):
        raise _error(op, "a reduction on the scalar core other than of 1-D tiles to scalars")
    for src in op.operands:
        owner = src.owner
        if not (isinstance(owner, Operation) and owner.name == "mtia.cb_read"):
            raise _error(op, "a reduction on the scalar core of a tile it did not read from a CB")


def _sym_name(func: Operation) -> str:
    name = func.properties.get("sym_name", func.attributes.get("sym_name"))
    return name.data if isinstance(name, builtin.StringAttr) else ""


def _find_kernel(module: ModuleOp) -> Operation:
    funcs = [op for op in module.ops if op.name == "tt.func"]
    public = [f for f in funcs if getattr(f.properties.get("sym_visibility"), "data", "public") == "public"]
    if not public:
        raise CppEmitError(f"{location_str(module.location)}: error: no public tt.func kernel to emit")
    if len(public) > 1:
        raise CppEmitError(f"{location_str(public[1].location)}: error: the C++ emitter takes one kernel per module")
    return public[0]


def _vector_register_bytes(module: ModuleOp) -> int:
    """Bytes of one vector register of the chip `module` is compiled for (`MachineConfig.vec_register_bits`
    of its `mtia.target` and overrides; the default chip's when it has no target)."""
    from mtia_xdsl.machine.config import module_or_default_config

    return module_or_default_config(module).vec_register_bits // 8


def emit_cpp(module: ModuleOp) -> str:
    """Return the C++ translation unit of the buffer-level kernel in `module` (see the module docstring).

    Raises: CppEmitError naming the kernel line for a construct the emitter does not handle.
    """
    func = _find_kernel(module)
    for op in func.walk():
        if op.name == "tt.func" or op is func:
            continue
        if op.name in ("tt.load", "tt.store") or op.name.startswith("tt.descriptor"):
            raise _error(op, "a tensor-level program (lower it with the default pipeline to the buffer level)")
    k = _Kernel(func, module)
    body = k.emit_kernel()
    callees = reversed(list(k.helpers.values()))  # a callee's own callees were added after it: they come first
    body = [line for lines in callees for line in [*lines, ""]] + body
    meta = _kernel_meta(func, module)
    block = func.regions[0].blocks.first
    assert block is not None
    unpack: list[str] = []
    for i, a in enumerate(block.args):
        spec = _param_spec(a)
        if spec == "ptr":
            unpack.append(f"(mtia_addr)args[{i}]")
        elif spec == "f32":
            unpack.append(f"mtia_bitcast<float>((uint32_t)args[{i}])")
        elif spec == "f64":
            unpack.append(f"mtia_bitcast<double>(args[{i}])")
        elif spec in ("f16", "bf16"):
            unpack.append(f"mtia_{spec}_to_f32((uint16_t)args[{i}])")
        elif spec == "i1":
            unpack.append(f"args[{i}] != 0")
        else:
            unpack.append(f"({_ctype(a.type, func)})args[{i}]")
    pid = ", ".join(f"mtia_program_id(pe, {d})" for d in range(3))
    grid = ", ".join(f"mtia_num_programs(pe, {d})" for d in range(3))
    call = ", ".join(["pe", pid, grid, *unpack])
    header = [
        f"// {meta['kernel']}: generated by mtia_xdsl (mtia-opt -t mtia-cpp) from {meta['loc']}",
        "// Build: c++ -std=c++17 -fwrapv -Wall -Wextra -Werror -I<mtia_xdsl>/backend/runtime; run: mtia-run THIS.cpp",
        f'#define MTIA_KERNEL_FILE "{k.file}"',
        f"#define MTIA_VLEN_BYTES {_vector_register_bytes(module)}  // MachineConfig.vec_register_bits / 8",
        "",
    ]
    footer = [
        "",
        "// Entry for the runtime (mtia_host_call): arguments as int64 words (pointers as addresses, floats as bits).",
        'extern "C" void mtia_kernel_entry(mtia_pe *pe, const int64_t *args) {',
        f"    {meta['kernel']}({call});",
        "}",
        "",
        "// What the launcher needs to place and time the programs (parameters, chip, PE mapping).",
        'extern "C" const char *mtia_kernel_meta(void) {',
        f'    return R"json({json.dumps(meta)})json";',
        "}",
        "",
    ]
    return "\n".join(header) + _PRELUDE + "\n" + "\n".join(body) + "\n" + "\n".join(footer)


class CppTarget(Target):
    """`mtia-opt -t mtia-cpp`: the C++ translation unit of the kernel (backend/cpp.py)."""

    name = "mtia-cpp"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(emit_cpp(module))

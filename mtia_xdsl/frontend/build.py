"""build_tt_module: run Triton's own code generator on a `@triton.jit` function with the xDSL builder.

Triton's `ast_to_ttir` looks up `ir.builder` (and `ir.value`, `ir.block_argument`, `ir.make_attr`) on
the `ir` name of `triton.compiler.code_generator` and `triton.language.semantic`. For the duration of one
build, that name is rebound to a proxy that serves our handle classes and falls back to libtriton's `ir`
module for everything else (enums such as `ir.CACHE_MODIFIER`); the original is restored afterwards.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    ModuleOp,
    TensorType,
    i32,
)

from mtia_xdsl.frontend.builder import XdslBuilder
from mtia_xdsl.frontend.errors import KernelError, located_error_class
from mtia_xdsl.frontend.handles import Attr, BlockArg, Value
from mtia_xdsl.machine.config import DEFAULT_CHIP, MachineConfig
from mtia_xdsl.utils.heap import old_objects_frozen

_BUILD_LOCK = threading.Lock()
"""Serialises builds: the `ir` rebinding is process-wide while a build runs."""


@dataclass(frozen=True)
class FrontendOptions:
    """What Triton's code generator and semantic layer read from the backend options."""

    num_warps: int = 4
    num_ctas: int = 1
    debug: bool = False
    sanitize_overflow: bool = True
    default_dot_input_precision: str = "ieee"
    allowed_dot_input_precisions: tuple[str, ...] = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")
    max_num_imprecise_acc_default: int | None = None
    supported_fp8_dtypes: tuple[str, ...] = MachineConfig.TRITON_FP8_DTYPES
    deprecated_fp8_dot_operand_dtypes: tuple[str, ...] = ()
    arch: str = DEFAULT_CHIP
    extra: dict[str, Any] = field(default_factory=dict[str, Any])

    @staticmethod
    def from_options(options: object | None) -> FrontendOptions:
        """Take every field the caller's options object (an MtiaOptions; None: the defaults) has; default
        the rest. A FrontendOptions is returned as it is.

        `sanitize_overflow` is kept only with `debug`: without it Triton's `device_assert` emits nothing,
        so the overflow checks it builds (an i64 copy of every i32 add/sub/mul, bounds, compares) are dead
        code that tt-inline erases; not building them was a quarter to half of some kernels' frontend time.
        """
        if isinstance(options, FrontendOptions):
            return options
        defaults = FrontendOptions()
        values = {
            name: getattr(options, name, getattr(defaults, name))
            for name in FrontendOptions.__dataclass_fields__
            if name != "extra"
        }
        values["sanitize_overflow"] = values["sanitize_overflow"] and values["debug"]
        return FrontendOptions(**values)


class _IrProxy:
    """Stands in for `triton._C.libtriton.ir` during a build (see the module docstring).

    `builder(context)` makes XdslBuilders that share `self.last_loc`: the location most recently set by
    any of them, i.e. the AST node being visited when an error escapes (visit restores it only on success).
    """

    value = Value
    block_argument = BlockArg

    def __init__(self, real: Any, verify: bool = True):
        self._real = real
        self.verify = verify
        """Whether the module handle verifies the built module when Triton's code generator asks."""
        self.last_loc: list[Any] = [None]

    def builder(self, context: Any) -> XdslBuilder:
        """Return a new XdslBuilder reporting its locations to this build."""
        builder = XdslBuilder(context, self.last_loc)
        builder.verify_module = self.verify
        return builder

    @staticmethod
    def make_attr(values: list[int], context: Any) -> Attr:
        """Return `dense<values> : tensor<N x i32>`, as libtriton does (tt.divisibility/contiguity hints)."""
        return Attr(DenseIntOrFPElementsAttr.from_list(TensorType(i32, [len(values)]), list(values)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@contextmanager
def _patched_ir(verify: bool = True) -> Iterator[_IrProxy]:
    import triton.compiler.code_generator as code_generator
    import triton.language.semantic as semantic

    from mtia_xdsl.frontend.dot_scaled import emulated_dot_scaled

    modules = (code_generator, semantic)
    saved = [m.ir for m in modules]
    proxy = _IrProxy(saved[0], verify)
    saved_dot_scaled = semantic.TritonSemantic.dot_scaled
    with _BUILD_LOCK:
        for m in modules:
            m.ir = proxy  # type: ignore[attr-defined]
        semantic.TritonSemantic.dot_scaled = emulated_dot_scaled  # type: ignore[method-assign]
        try:
            yield proxy
        finally:
            for m, old in zip(modules, saved):
                m.ir = old  # type: ignore[attr-defined]
            semantic.TritonSemantic.dot_scaled = saved_dot_scaled  # type: ignore[method-assign]


def _min_dot_size(lhs_type: Any, rhs_type: Any) -> tuple[int, int, int]:
    bits = lhs_type.scalar.primitive_bitwidth
    return {8: (1, 1, 32), 32: (1, 1, 8), 64: (1, 1, 4)}.get(bits, (1, 1, 16))


def _convert_custom_types() -> Any:
    """Return Triton's `convert_custom_types` hook: fp8e4b15 <-> fp16/fp32 in integer ops, not inline PTX.

    fp8e4b15 values are i8 in the IR, as upstream. Its exponent bias is fp16's, so the conversions are
    bit moves; these compute exactly what CUDA's PTX (`triton.language.extra.cuda.utils`) computes:
    decode h = (b & 0x80) << 8 | (b & 0x7f) << 7; encode b = (h >> 8 & 0x80) | ((min(h & 0x7fff, 0x3f00) * 2 +
    0x80) >> 8) (magnitudes clamp to the largest finite value, NaN and inf included). fp32 goes through
    fp16 rounded towards zero, as upstream.
    """
    from triton.language import core

    def i16(sem: Any, value: int) -> Any:
        return sem.make_scalar(value, core.int16)

    def decode(sem: Any, arg: Any) -> Any:
        b = sem.cast(sem.bitcast(arg, core.uint8), core.int16)
        sign = sem.shl(sem.and_(b, i16(sem, 0x80)), i16(sem, 8))
        rest = sem.shl(sem.and_(b, i16(sem, 0x7F)), i16(sem, 7))
        return sem.bitcast(sem.or_(sign, rest), core.float16)

    def encode(sem: Any, half: Any) -> Any:
        h = sem.bitcast(half, core.int16)
        sign = sem.and_(sem.lshr(h, i16(sem, 8)), i16(sem, 0x80))
        mag = sem.minimum(sem.and_(h, i16(sem, 0x7FFF)), i16(sem, 0x3F00), core.PropagateNan.NONE)
        rounded = sem.lshr(sem.add(sem.mul(mag, i16(sem, 2), False), i16(sem, 0x80), False), i16(sem, 8))
        return sem.bitcast(sem.cast(sem.or_(sign, rounded), core.int8), core.float8e4b15)

    @core.builtin
    def convert_fp8e4b15(arg: Any, dst_ty: Any, fp_downcast_rounding: Any = None, _semantic: Any = None) -> Any:
        if arg.type.scalar.is_fp8e4b15():
            half = decode(_semantic, arg)
            return half if dst_ty.scalar.is_fp16() else _semantic.cast(half, dst_ty.scalar)
        if not (arg.type.scalar.is_fp16() or arg.type.scalar.is_fp32()):
            raise TypeError(f"cannot cast {arg.type.scalar} to fp8e4b15; cast to fp16 or fp32 first")
        half = arg if arg.type.scalar.is_fp16() else _semantic.cast(arg, core.float16, "rtz")
        return encode(_semantic, half)

    return convert_fp8e4b15


def _codegen_fns() -> dict[str, Any]:
    return {"convert_custom_types": _convert_custom_types(), "min_dot_size": _min_dot_size}


def _module_map() -> dict[str, Any]:
    from triton.language.extra.cuda import libdevice

    return {"triton.language.extra.libdevice": libdevice}


def _innermost(exc: BaseException) -> BaseException:
    seen: set[int] = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        nxt = exc.__cause__ or exc.__context__
        if nxt is None or isinstance(exc, KernelError):
            break
        exc = nxt
    return exc


def _message(exc: BaseException) -> str:
    from triton.compiler.errors import CompilationError

    if isinstance(exc, KernelError):
        return exc.message
    if isinstance(exc, CompilationError):
        return str(exc.error_message or exc)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _kernel_error(exc: BaseException, last_loc: Any, fn: Any) -> KernelError:
    """Return the located error for `exc`, of the CompilationError subclass Triton raised (if any)."""
    from triton.compiler.errors import CompilationError

    cls = located_error_class(type(exc)) if isinstance(exc, CompilationError) else KernelError
    inner = _innermost(exc)
    if isinstance(inner, KernelError) and inner.file is not None:
        return cls(inner.message, inner.file, inner.line, inner.col)
    loc = last_loc.attr if last_loc is not None else None
    if isinstance(loc, FileLineColLoc):
        return cls(_message(inner), loc.filename.data, loc.line.data, loc.column.data)
    return cls(_message(inner), getattr(fn, "file_name", None), getattr(fn, "def_file_line_number", None), 0)


def _upstream_cause(exc: BaseException) -> BaseException:
    """The exception upstream's error would chain: a CompilationError's own cause, else `exc`."""
    from triton.compiler.errors import CompilationError

    if isinstance(exc, CompilationError) and not isinstance(exc, KernelError) and exc.__cause__ is not None:
        return exc.__cause__
    return exc


def _with_none_argument_hint(error: KernelError, fn: Any, constants: dict[Any, object]) -> KernelError:
    """Add what to do to an error about None when a kernel argument was passed as None."""
    if "NoneType" not in error.message:
        return error
    names = [fn.arg_names[key[0]] for key, value in constants.items() if value is None and len(key) == 1]
    if not names:
        return error
    hint = (
        f"; argument {', '.join(repr(n) for n in names)} is None, which Triton specializes as a constexpr: pass a "
        "tensor, or guard its uses with `if <arg> is not None:`"
    )
    return type(error)(error.message + hint, error.file, error.line, error.col)


def _normalise_constexprs(fn: Any, constexprs: dict[Any, object] | None) -> dict[Any, object]:
    out: dict[Any, object] = {}
    for key, value in (constexprs or {}).items():
        out[(fn.arg_names.index(key),) if isinstance(key, str) else key] = value
    return out


def check_kernel_inputs(caller: str, fn: object, signature: object, constexprs: object) -> None:
    """Raise TypeError naming `caller` unless `fn` is a `@triton.jit` function, `signature` a dict (or None) and
    `constexprs` a dict (or None)."""
    from collections.abc import Mapping

    from triton.runtime.jit import JITFunction

    if not isinstance(fn, JITFunction):
        raise TypeError(f"{caller} expects a @triton.jit function, got {type(fn).__name__}")
    if signature is not None and not isinstance(signature, Mapping):
        raise TypeError(
            f"{caller}: signature must be a dict of parameter name -> Triton type string (such as "
            f'{{"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}}), got {type(signature).__name__}'
        )
    if constexprs is not None and not isinstance(constexprs, Mapping):
        raise TypeError(
            f"{caller}: constexprs must be a dict of parameter name (or position) -> value, got "
            f"{type(constexprs).__name__}"
        )


def build_tt_module(
    fn: Any,
    signature: dict[str, str],
    constexprs: dict[str, object] | None = None,
    attrs: dict[Any, Any] | None = None,
    options: object | None = None,
    verify: bool = True,
) -> ModuleOp:
    """Build the tt module of `fn` with Triton's own code generator driving the xDSL builder.

    `signature` maps every argument name to a Triton type string ("*fp32", "i32", "constexpr", ...) as
    `triton.compiler.ASTSource` takes it; `constexprs` gives constexpr values by name (or path tuple).
    `verify=False` skips verifying the built module (the compile driver verifies the lowered one with
    `MTIA_VERIFY_IR=1` or the debug option; verifying here too was ~20 % of a build).
    Raises: KernelError naming the kernel file:line for any failure inside the code generator; TypeError if
    `fn` is not a `@triton.jit` function or `signature`/`constexprs` are not dicts.
    Example: build_tt_module(add_kernel, {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 64})
    """
    from triton.compiler import code_generator
    from triton.compiler.compiler import ASTSource

    from mtia_xdsl.dialects import make_context

    check_kernel_inputs("build_tt_module", fn, signature, constexprs)
    _check_signature(fn, signature)
    src = ASTSource(fn, dict(signature), _normalise_constexprs(fn, constexprs), attrs)
    _check_constexpr_values(fn, src.constants)
    opts = FrontendOptions.from_options(options)
    ctx = make_context()
    with old_objects_frozen(), _patched_ir(verify) as proxy:
        try:
            handle = code_generator.ast_to_ttir(
                fn, src, context=ctx, options=opts, codegen_fns=_codegen_fns(), module_map=_module_map()
            )
        except Exception as e:
            error = _kernel_error(e, proxy.last_loc[0], fn)
            raise _with_none_argument_hint(error, fn, src.constants) from _upstream_cause(e)
    return handle.op


def _check_signature(fn: Any, signature: dict[str, str]) -> None:
    """Raise KernelError at the kernel's def for unknown argument names or type strings."""
    from triton.language import str_to_ty

    where = (getattr(fn, "file_name", "<kernel>"), getattr(fn, "def_file_line_number", None), 1)
    unknown = [name for name in signature if name not in fn.arg_names]
    if unknown:
        raise KernelError(f"the signature names {unknown}, which are not arguments of '{fn.__name__}'", *where)
    for name, ty in signature.items():
        if ty == "constexpr":
            continue
        try:
            str_to_ty(ty, None)
        except Exception:  # Triton raises KeyError/TypeError/AssertionError for unknown strings
            raise KernelError(
                f"unknown type {ty!r} for argument '{name}'; use Triton type strings such as i32, i64, fp32, "
                "bf16, *fp16 (a pointer) or constexpr",
                *where,
            ) from None


def _check_constexpr_values(fn: Any, constants: dict[Any, object]) -> None:
    """Raise KernelError at the kernel's def for a tensor given as a constexpr value.

    Triton keeps any value passed for a `tl.constexpr` parameter as that constant; a tensor there fails
    deep inside the code generator (upstream: "'torch.dtype' object has no attribute 'is_ptr'").
    """
    for key, value in constants.items():
        value = getattr(value, "value", value)  # a tl.constexpr wraps its value
        if not hasattr(value, "data_ptr"):
            continue
        name = fn.arg_names[key[0]] + "".join(f"[{i}]" for i in key[1:])
        what = f"{type(value).__module__}.{type(value).__name__}"
        raise KernelError(
            f"argument '{name}' is a tl.constexpr but was passed a {what}; a constexpr is a Python value known "
            f"at compile time: pass a Python int/float/bool (e.g. {name}=64, or {name}=t.item() for a "
            "one-element tensor t), or drop tl.constexpr from the parameter to pass a tensor",
            getattr(fn, "file_name", "<kernel>"),
            getattr(fn, "def_file_line_number", None),
            1,
        )

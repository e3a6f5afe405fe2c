"""Kernel arguments and grids: from what a caller passes to what the machine model runs on.

Pointer arguments are raw addresses in Triton: a kernel offsets them by element counts it computes
itself (often from strides), so a tensor view reaches memory outside its logical shape. The machine
model therefore receives, for each pointer, a flat 1-D tensor that starts at the view's first element
(`data_ptr()`, honouring the storage offset) and runs to the end of its storage, sharing memory with
the caller's tensor so results land in place.
"""

from collections.abc import Callable, Sequence
from typing import Any

from mtia_xdsl.utils.locations import argument_count_error

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_UINT64_MAX = 2**64 - 1


class KernelLaunchError(ValueError):
    """A kernel was launched with arguments or a grid it cannot run with."""


def kernel_location(fn: Any) -> str:
    """Return `file:line:col` of a `@triton.jit` function's `def`, or its name when unknown."""
    file_name = getattr(fn, "file_name", None)
    line = getattr(fn, "def_file_line_number", None) or getattr(fn, "starting_line_number", None)
    col = getattr(fn, "def_file_col_number", None) or 1
    if file_name is None:
        return str(getattr(fn, "__name__", fn))
    return f"{file_name}:{line}:{col}"


def flat_view(tensor: Any) -> Any:
    """Return a 1-D view from `tensor.data_ptr()` to the end of its storage (shares memory).

    Shapes: tensor<any x dtype> -> tensor<(storage_elems - storage_offset) x dtype>.
    """
    import torch

    storage_elems = tensor.untyped_storage().nbytes() // tensor.element_size()
    length = max(storage_elems - tensor.storage_offset(), 0)
    return torch.as_strided(tensor, (length,), (1,), tensor.storage_offset())


def runtime_args(fn: Any, signature: dict[Any, Any], args: Sequence[Any]) -> list[Any]:
    """Check `args` against `signature` and return the machine model's arguments.

    `args` holds one value per signature entry, constexprs included (Triton's launcher convention);
    constexpr entries are dropped, pointers become flat CPU tensor views, scalars stay Python values.
    Raises: KernelLaunchError naming the kernel's file:line for a wrong count, a tensor not on the
    CPU, or a value of the wrong kind.
    """
    where = kernel_location(fn)
    if len(args) != len(signature):
        raise KernelLaunchError(argument_count_error(where, _name(fn), list(map(str, signature)), len(args)))
    out: list[Any] = []
    tensors = [a for a in args if hasattr(a, "untyped_storage")]
    for (name, ty), value in zip(signature.items(), args):
        if ty == "constexpr":
            continue
        for path, leaf_ty, leaf in _leaves(where, str(name), ty, value, tensors):
            if leaf_ty != "constexpr":
                out.append(_convert(where, path, leaf_ty, leaf))
    return out


def _leaves(where: str, name: str, ty: Any, value: Any, tensors: list[Any]) -> list[tuple[str, Any, Any]]:
    """Return (name, type, value) of each leaf of an argument, in the order the kernel's parameters take them.

    Tuples and named tuples are passed by element, as Triton 3.9 does; a ctypes.Structure by field
    (mtia_xdsl.utils.structs), its pointer fields becoming tensor views; a host tensor descriptor
    (`tensordesc<...>`) as its base, padding flag, shape and strides (`_descriptor_leaves`).
    Raises: KernelLaunchError naming the argument or field when the value does not have the type's shape.
    """
    if isinstance(ty, str) and ty.startswith("tensordesc"):
        return _descriptor_leaves(where, name, ty, value)
    if isinstance(ty, str):
        return [(name, ty, value)]
    from mtia_xdsl.utils.structs import StructFieldError, is_struct, struct_leaves

    if is_struct(value):
        try:
            return [(p, t, v) for p, t, v in struct_leaves(value, ty, name, tensors)]
        except StructFieldError as e:
            raise KernelLaunchError(f"{where}: error: argument '{name}': {e}") from None
    if not isinstance(value, tuple) or len(value) != len(ty):
        raise KernelLaunchError(f"{where}: error: argument '{name}' must be a tuple of {len(ty)} values like {ty}")
    fields = getattr(ty, "_fields", None)
    out: list[tuple[str, Any, Any]] = []
    for i, (sub_ty, sub) in enumerate(zip(ty, value, strict=True)):
        label = f"{name}.{fields[i]}" if fields else f"{name}[{i}]"
        out.extend(_leaves(where, label, sub_ty, sub, tensors))
    return out


def _descriptor_leaves(where: str, name: str, ty: str, value: Any) -> list[tuple[str, Any, Any]]:
    """Return the leaves of a host `TensorDescriptor` argument of type `tensordesc<dtype[block]>`.

    In the order tt-rewrite-tensor-descriptor-to-pointer gives the kernel's parameters: the base pointer,
    an i1 that is true for `padding="nan"`, then the shape (i32 each) and strides (i64 each), which
    Triton's frontend passes after every descriptor.
    Raises: KernelLaunchError naming the argument when `value` is not a tensor descriptor of the block's rank.
    """
    rank = ty[ty.index("[") :].count(",") + 1
    parts = [getattr(value, f, None) for f in ("base", "shape", "strides", "padding")]
    if any(p is None for p in parts) or len(parts[1]) != rank or len(parts[2]) != rank:
        raise KernelLaunchError(
            f"{where}: error: argument '{name}' must be a triton.tools.tensor_descriptor.TensorDescriptor of "
            f"rank {rank} ({ty}), got {type(value).__name__}"
        )
    base, shape, strides, padding = parts
    dtype = ty[len("tensordesc<") : ty.index("[")]
    return [
        (f"{name}.base", f"*{dtype}", base),
        (f"{name}.padding", "i1", padding == "nan"),
        *((f"{name}.shape[{d}]", "i32", int(s)) for d, s in enumerate(shape)),
        *((f"{name}.strides[{d}]", "i64", int(s)) for d, s in enumerate(strides)),
    ]


def _convert(where: str, name: str, ty: str, value: Any) -> Any:
    if ty.startswith("*"):
        return _pointer(where, name, ty, value)
    if hasattr(value, "data_ptr"):
        raise KernelLaunchError(
            f"{where}: error: argument '{name}' is a tensor but the kernel expects a scalar of type {ty}"
        )
    if ty == "i1":
        return bool(value)
    if ty.startswith(("fp", "bf")):
        if not isinstance(value, int | float):
            raise KernelLaunchError(f"{where}: error: argument '{name}' must be a number, got {type(value).__name__}")
        return float(value)
    if not isinstance(value, int):
        raise KernelLaunchError(
            f"{where}: error: argument '{name}' must be an integer ({ty}), got {type(value).__name__}"
        )
    return int(value)


def _pointer(where: str, name: str, ty: str, value: Any) -> Any:
    import torch

    value = _underlying_tensor(value)
    if value is None:
        return None  # a null pointer (an object whose data_ptr() is 0)
    if not isinstance(value, torch.Tensor):
        raise KernelLaunchError(
            f"{where}: error: argument '{name}' ({ty}) must be a torch tensor, or an object with data_ptr() "
            f"and dtype wrapping one in `.base` (as triton.reinterpret makes), got {type(value).__name__}"
        )
    if value.device.type != "cpu":
        raise KernelLaunchError(
            f"{where}: error: argument '{name}' is on device {value.device}; the "
            "MTIA machine model runs on CPU tensors, move it with .cpu()"
        )
    return flat_view(value)


def _underlying_tensor(value: Any) -> Any:
    """Return the torch tensor behind a pointer argument, None for a null one, else `value` unchanged.

    Triton takes any object with `data_ptr()` and `dtype` as a pointer: `triton.reinterpret` makes a
    `TensorWrapper` (the same memory under another element type, the tensor in `.base`); the kernel's
    signature already carries the wrapper's dtype, and the machine model's memory is byte-addressed, so
    the wrapped tensor's storage is what the kernel reads and writes.
    """
    import torch

    seen = 0
    while not isinstance(value, torch.Tensor) and hasattr(value, "data_ptr") and seen < 8:
        base = getattr(value, "base", None)
        if base is None:
            return None if value.data_ptr() == 0 else value
        if base.data_ptr() != value.data_ptr():
            return value  # a wrapper that points elsewhere than its base: refused by the caller
        value, seen = base, seen + 1
    return value


def _name(fn: Any) -> str:
    return str(getattr(fn, "__name__", fn))


def normalize_grid(
    fn: Any, grid: int | Sequence[int] | Callable[[dict[str, Any]], Any], meta: dict[str, Any]
) -> tuple[int, int, int]:
    """Return the launch grid as three program counts; `grid` may be an int, tuple or callable of meta.

    Raises: KernelLaunchError for more than three dimensions or a negative or non-integer count.
    """
    from mtia_xdsl.machine.placement import launch_grid  # the rule's home; imported late: launch.py stays light

    if callable(grid):
        grid = grid(meta)
    try:
        return launch_grid(grid)
    except ValueError as e:
        raise KernelLaunchError(f"{kernel_location(fn)}: error: {e}") from None


def pointer_fits(signature_type: str, pointer: Any) -> bool:
    """Whether a tensor of Triton signature type `signature_type` (`scalar_type`, e.g. "*u8") may be passed for
    a pointer parameter of TTIR type `pointer` (a `tt.PointerType`), by Triton's rule.

    Triton gives a tensor the signature of its dtype and lowers it to TTIR's pointee, where integers are
    signless: `*u8` and `*i8` are both `!tt.ptr<i8>`, so a uint8 tensor fits an `!tt.ptr<i8>` parameter, a
    bool tensor (`*u1`) only `!tt.ptr<i1>`, a float64 one not `!tt.ptr<f32>`, an fp8 tensor only its own
    format. A pointer to pointers, which no tensor's signature gives, takes 64-bit integers (addresses).
    For a kernel compiled from a Triton signature, where `*u8` and `*i8` differ (in conversions and
    comparisons), compare the signature types themselves.
    """
    from triton.language import str_to_ty

    from mtia_xdsl.dialects import tt
    from mtia_xdsl.frontend.builder import XdslBuilder
    from mtia_xdsl.options import MtiaOptions

    pointee = pointer.pointee_type
    if isinstance(pointee, tt.PointerType):
        return signature_type in ("*i64", "*u64")
    builder = XdslBuilder(None)
    builder.options = MtiaOptions()  # the fp8 formats Triton may lower
    return str_to_ty(signature_type, None).to_ir(builder).attr.pointee_type == pointee


def no_triton_dtype(value: Any) -> str | None:
    """Why the tensor `value` cannot be a kernel argument (its dtype is complex), or None.

    Triton has no complex dtypes: its launcher's `canonicalize_dtype` fails with `KeyError: 'complex64'`
    (on GPUs too), so the launches here refuse such a tensor first, saying how to pass it.
    """
    dtype = getattr(value, "dtype", None)
    if hasattr(value, "data_ptr") and getattr(dtype, "is_complex", False):
        return (
            f"a {dtype} tensor has no Triton type (Triton, and so MTIA, has no complex dtypes); pass "
            "torch.view_as_real(x), a float tensor whose last dimension of 2 holds the real and imaginary parts"
        )
    return None


def argument_type(where: str, name: str, value: Any) -> Any:
    """Return `scalar_type(value)` for argument `name` of the kernel at `where` (`file:line:col`).

    Raises: TypeError naming the kernel and the argument for a value with no Triton type (a complex tensor).
    """
    try:
        return scalar_type(value)
    except TypeError as e:
        raise TypeError(f"{where}: error: argument '{name}': {e}") from None


def install_binder_check(jit_module: Any) -> None:
    """Make Triton's launch binder (`jit_module.native_specialize_impl`, called per argument) refuse a tensor
    with no Triton type (`no_triton_dtype`) with a TypeError naming the kernel and the argument."""
    import functools
    import sys

    native = jit_module.native_specialize_impl
    if getattr(native, "__mtia_dtypes__", False):
        return

    @functools.wraps(native)  # keeps the marks of other wrappers (utils.structs.install)
    def specialize_impl(backend: Any, arg: Any, *rest: Any) -> Any:
        why = no_triton_dtype(arg)
        if why is not None:
            raise TypeError(_binder_argument(sys._getframe(1), arg) + why)  # pyright: ignore[reportPrivateUsage]
        return native(backend, arg, *rest)

    specialize_impl.__mtia_dtypes__ = True  # type: ignore[attr-defined]
    jit_module.native_specialize_impl = specialize_impl


def _binder_argument(frame: Any, arg: Any) -> str:
    """`file:line:col: error: argument 'name': ` for `arg` in Triton's binder `frame` (generated code holding
    the bound `params`, called by `JITFunction.run`); a part it does not find is left out."""
    params = frame.f_locals.get("params", {})
    names = [n for n, v in params.items() if v is arg]
    fn = frame.f_back.f_locals.get("self") if frame.f_back is not None else None
    where = f"{kernel_location(fn)}: error: " if hasattr(fn, "arg_names") else ""
    return where + (f"argument '{names[0]}': " if names else "")


def scalar_type(value: Any) -> Any:
    """Return Triton's signature type for a Python scalar or torch tensor argument.

    Example: scalar_type(torch.empty(4)) == "*fp32"; scalar_type(7) == "i32". A ctypes.Structure gives the
    named tuple of its field types (mtia_xdsl.utils.structs).
    Raises: TypeError for a value with no Triton type (naming the field of a structure; a complex tensor).
    """
    from mtia_xdsl.utils.structs import is_struct, struct_type

    if is_struct(value):
        return struct_type(value, type(value).__name__)
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        from triton.runtime.jit import mangle_type

        why = no_triton_dtype(value)
        if why is not None:
            raise TypeError(why)

        return str(mangle_type(value))
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        if _INT32_MIN <= value <= _INT32_MAX:
            return "i32"
        if value > 2**63 - 1 and value <= _UINT64_MAX:
            return "u64"
        return "i64"
    if isinstance(value, float):
        return "fp32"
    raise TypeError(f"no Triton type for a value of type {type(value).__name__}")

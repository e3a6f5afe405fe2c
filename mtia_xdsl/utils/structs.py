"""ctypes.Structure kernel arguments (a language extension): a structure instance is passed by field.

A kernel parameter may receive an instance of a `ctypes.Structure` subclass. Triton 3.9 passes tuples and
named tuples by element, and its frontend reads their elements by name, so a structure becomes the named
tuple of its fields and the kernel reads them as attributes: `view.data`, `view.sizes[0]`,
`view.inner.scale`. Field types map to Triton types by their ctypes declaration (`FIELD_TYPES`), not by
their values:

- integers: c_int8/16/32/64 (c_int, c_long, ...) -> i8..i64, unsigned ones -> u8..u64, c_bool -> i1,
  c_char -> i8; floats: c_float -> fp32, c_double -> fp64;
- pointers: POINTER(c_float) -> *fp32 (any scalar above), c_void_p and c_char_p -> *i8;
- nested structures -> nested named tuples; fixed arrays (c_int64 * 2) -> tuples.

A pointer field holds an address; it must point into a torch tensor the launch can see (a tensor argument
of the launch, or a tensor kept on the structure instance as a Python attribute, the usual ctypes idiom
for keeping a buffer alive), so the machine model can check every access. Anything else (unions, bit
fields, c_longdouble, wide chars, py_object, pointers to structures, NULL pointers) is an error naming the
field. `install(jit_module)` lets Triton's launch binder specialise structure arguments this way, and makes
Triton's interpreter (TRITON_INTERPRET=1) refuse them at the launch line.
"""

from __future__ import annotations

import collections
import ctypes
from collections.abc import Callable, Iterator
from typing import Any

_SCALAR_CODES = {"?": "i1", "c": "i8", "f": "fp32", "d": "fp64", "P": "*i8", "z": "*i8"}
"""ctypes `_type_` codes that map directly; signed codes bhilq -> i<bits>, unsigned BHILQ -> u<bits>."""

FIELD_TYPES = (
    "c_bool -> i1, c_char -> i8, c_int8..c_int64 (c_short, c_int, c_long, c_longlong) -> i8..i64, "
    "c_uint8..c_uint64 -> u8..u64, c_float -> fp32, c_double -> fp64, POINTER(<one of those>) -> *<its type>, "
    "c_void_p / c_char_p -> *i8, nested Structure, fixed arrays (ctype * n)"
)
"""The mapping, as error messages quote it."""


class StructFieldError(TypeError):
    """A field of a ctypes.Structure kernel argument that has no Triton type or no valid value."""


def is_struct(value: Any) -> bool:
    """Return whether `value` is an instance of a ctypes.Structure subclass."""
    return isinstance(value, ctypes.Structure)


def _scalar_type(ctype: Any) -> str | None:
    code = getattr(ctype, "_type_", None)
    if not isinstance(code, str) or not issubclass(ctype, ctypes._SimpleCData):  # pyright: ignore[reportPrivateUsage]
        return None
    bits = 8 * ctypes.sizeof(ctype)
    if code in "bhilq":
        return f"i{bits}"
    if code in "BHILQ":
        return f"u{bits}"
    return _SCALAR_CODES.get(code)


def _refuse(path: str, ctype: Any, why: str = "") -> StructFieldError:
    name = getattr(ctype, "__name__", repr(ctype))
    return StructFieldError(
        f"field '{path}' has ctypes type {name}, which has no Triton type{why}; use one of: {FIELD_TYPES}"
    )


def field_type(ctype: Any, path: str) -> Any:
    """Return the Triton signature type of a field declared as `ctype` ('i32', '*fp32', tuples, named tuples).

    Raises: StructFieldError naming `path` (e.g. 'view.sizes') for a type with no Triton type.
    """
    if isinstance(ctype, type) and issubclass(ctype, ctypes.Structure):
        names, types = [], []
        for entry in getattr(ctype, "_fields_", ()):
            if len(entry) != 2:
                raise _refuse(f"{path}.{entry[0]}", entry[1], " (a bit field)")
            names.append(entry[0])
            types.append(field_type(entry[1], f"{path}.{entry[0]}"))
        return collections.namedtuple(ctype.__name__, names, rename=True)(*types)
    if isinstance(ctype, type) and issubclass(ctype, ctypes.Array):
        element = field_type(ctype._type_, f"{path}[]")
        return tuple(element for _ in range(ctype._length_))
    if isinstance(ctype, type) and issubclass(ctype, ctypes._Pointer):  # pyright: ignore[reportPrivateUsage]
        pointee = _scalar_type(ctype._type_)
        if pointee is None or pointee.startswith("*"):
            raise _refuse(path, ctype, f" (a pointer to {getattr(ctype._type_, '__name__', ctype._type_)})")
        return f"*{pointee}"
    scalar = _scalar_type(ctype) if isinstance(ctype, type) else None
    if scalar is None:
        raise _refuse(path, ctype)
    return scalar


def _address(value: Any) -> int | None:
    """The address held by a pointer field's value (None for NULL)."""
    if value is None or isinstance(value, int):
        return value
    if isinstance(value, bytes):  # c_char_p reads back as the bytes it points to
        raise StructFieldError("c_char_p fields holding Python bytes cannot be read by a kernel")
    return ctypes.cast(value, ctypes.c_void_p).value


def walk_fields(struct: Any, ty: Any, path: str) -> Iterator[tuple[str, str, Any]]:
    """Yield (path, Triton type, raw value) for every leaf field of `struct` of Triton type `ty`, in order.

    Raw values: int or float for scalars, an int address (or None) for pointers.
    """
    if isinstance(ty, tuple) and hasattr(ty, "_fields"):
        for (name, _), sub in zip(type(struct)._fields_, ty, strict=True):
            yield from walk_fields(getattr(struct, name), sub, f"{path}.{name}")
    elif isinstance(ty, tuple):
        for i, sub in enumerate(ty):
            yield from walk_fields(struct[i], sub, f"{path}[{i}]")
    elif ty.startswith("*"):
        yield path, ty, _address(struct)
    elif isinstance(struct, bytes):  # c_char
        yield path, ty, struct[0] if struct else 0
    else:
        yield path, ty, struct


def _rebuild(ty: Any, leaves: Iterator[Any]) -> Any:
    if isinstance(ty, tuple):
        items = [_rebuild(sub, leaves) for sub in ty]
        return type(ty)(*items) if hasattr(ty, "_fields") else tuple(items)
    return next(leaves)


def struct_type(struct: Any, name: str) -> Any:
    """Return the Triton signature type (a named tuple) of the structure argument `name`.

    Raises: StructFieldError naming the field for a field with no Triton type.
    """
    return field_type(type(struct), name)


def specialize_struct(struct: Any, name: str, pointer_spec: Callable[[int], str]) -> tuple[Any, Any]:
    """Return (type, specialization) of a structure argument, as Triton's binder does for a named tuple.

    Types come from the declarations; integers are not specialised (a structure is data); a pointer is
    `pointer_spec(address)` ('D' when 16-byte aligned, as Triton does for tensors).
    Raises: StructFieldError naming the field (no Triton type, NULL pointer).
    """
    ty = struct_type(struct, name)
    specs = []
    for path, leaf_ty, value in walk_fields(struct, ty, name):
        if leaf_ty.startswith("*"):
            if not value:
                raise StructFieldError(f"field '{path}' is a NULL pointer; point it into a torch tensor")
            specs.append(pointer_spec(value))
        else:
            specs.append("")
    return ty, _rebuild(ty, iter(specs))


def struct_leaves(struct: Any, ty: Any, name: str, tensors: list[Any]) -> list[tuple[str, str, Any]]:
    """Return (path, Triton type, value) per leaf field, pointers as 1-D tensor views starting at their address.

    `tensors` are the torch tensors the launch can see besides those kept on `struct` (its Python
    attributes, also searched). A pointer's view has its pointee's dtype and runs to the end of the storage.
    Raises: StructFieldError naming the field for a NULL pointer, an address in no visible tensor, or one
    not aligned to its element size.
    """
    visible = list(tensors) + _kept_tensors(struct)
    out = []
    for path, leaf_ty, value in walk_fields(struct, ty, name):
        if leaf_ty.startswith("*"):
            value = _pointer_view(path, leaf_ty, value, visible)
        out.append((path, leaf_ty, value))
    return out


def _kept_tensors(struct: Any) -> list[Any]:
    import torch

    found: list[Any] = []
    for value in getattr(struct, "__dict__", {}).values():
        items = value if isinstance(value, list | tuple) else [value]
        found.extend(v for v in items if isinstance(v, torch.Tensor))
    return found


def _pointer_view(path: str, ty: str, address: int | None, tensors: list[Any]) -> Any:
    import torch
    from triton.language import str_to_ty

    if not address:
        raise StructFieldError(f"field '{path}' is a NULL pointer; point it into a torch tensor")
    dtype = getattr(torch, _TORCH_DTYPES[str(str_to_ty(ty[1:], None))])
    for t in tensors:
        storage = t.untyped_storage()
        base = storage.data_ptr()
        if base <= address < base + storage.nbytes():
            size = torch.empty(0, dtype=dtype).element_size()
            if (address - base) % size:
                raise StructFieldError(
                    f"field '{path}' ({ty}) points {address - base} bytes into a tensor's storage, not a multiple "
                    f"of its element size {size}"
                )
            flat = torch.empty(0, dtype=dtype, device=t.device)
            n = (storage.nbytes() - (address - base)) // size
            return flat.set_(storage, (address - base) // size, (n,), (1,))
    raise StructFieldError(
        f"field '{path}' points to {address:#x}, inside no tensor the launch can see; keep the tensor it points "
        "into on the structure (e.g. view.tensor = x) or pass it as an argument"
    )


_TORCH_DTYPES = {
    "int1": "bool", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8",
    "uint16": "uint16", "uint32": "uint32", "uint64": "uint64", "fp32": "float32", "fp64": "float64",
}  # fmt: skip
"""Triton scalar type name -> torch dtype name, for the pointee of a pointer field."""


def install(jit_module: Any) -> None:
    """Let Triton's launch binder specialise ctypes.Structure arguments (see the module docstring).

    Wraps `jit_module.native_specialize_impl`, which the binder calls per argument; every other argument
    goes to Triton's own specialisation unchanged.
    """
    native = jit_module.native_specialize_impl
    if getattr(native, "__mtia_structs__", False):
        return

    def specialize_impl(backend: Any, arg: Any, is_const: bool, specialize: bool, align: bool) -> Any:
        if is_struct(arg):
            return specialize_struct(arg, type(arg).__name__, lambda a: "D" if align and a % 16 == 0 else "")
        return native(backend, arg, is_const, specialize, align)

    specialize_impl.__mtia_structs__ = True  # type: ignore[attr-defined]
    jit_module.native_specialize_impl = specialize_impl
    _refuse_in_interpreter()


def _refuse_in_interpreter() -> None:
    """Make Triton's interpreter (TRITON_INTERPRET=1) refuse a structure argument at the launch line."""
    import triton.runtime.interpreter as interpreter

    convert = interpreter._implicit_cvt  # pyright: ignore[reportPrivateUsage]
    if getattr(convert, "__mtia_structs__", False):
        return

    def implicit_cvt(arg: Any) -> Any:
        if is_struct(arg):
            from mtia_xdsl.utils.caller import ExtensionError, caller_line

            raise ExtensionError(
                f"{caller_line()}: error: a ctypes.Structure argument ({type(arg).__name__}) is an MTIA language "
                "extension and cannot run under Triton's interpreter (TRITON_INTERPRET=1); launch the kernel "
                "with mtia_xdsl's backend (unset TRITON_INTERPRET) or pass the fields as separate arguments"
            )
        return convert(arg)

    implicit_cvt.__mtia_structs__ = True  # type: ignore[attr-defined]
    interpreter._implicit_cvt = implicit_cvt  # pyright: ignore[reportPrivateUsage]

"""Element type names ("f32", "bf16", "i8", ...) of xDSL types, as `MachineConfig`'s dtype facts spell them."""

from typing import cast

from xdsl.dialects import builtin
from xdsl.ir import Attribute

_FLOAT_NAMES: dict[type[Attribute], str] = {
    builtin.Float16Type: "f16",
    builtin.BFloat16Type: "bf16",
    builtin.Float32Type: "f32",
    builtin.Float64Type: "f64",
}


_NAMES: dict[int, tuple[Attribute, str]] = {}
"""id(type) -> (the type, its element type name): types are immutable, and the compiler shares one instance
per type (the frontend interns them), so the passes ask about the same few objects again and again."""

_NAMES_MAX = 1 << 12


def element_dtype_name(t: Attribute) -> str:
    """Return the name of the element type of `t` (a scalar, tensor or vector type): "i<width>" for integers,
    "f16", "bf16", "f32", "f64" for floats, else the type as MLIR prints it."""
    known = _NAMES.get(id(t))
    if known is not None and known[0] is t:
        return known[1]
    if len(_NAMES) >= _NAMES_MAX:
        _NAMES.clear()
    name = _element_dtype_name(t)
    _NAMES[id(t)] = (t, name)  # the entry keeps `t` alive, so its id is not reused while cached
    return name


def _element_dtype_name(t: Attribute) -> str:
    element: Attribute = t
    if isinstance(t, builtin.TensorType):
        element = cast(builtin.TensorType[Attribute], t).element_type
    elif isinstance(t, builtin.VectorType):
        element = cast(builtin.VectorType[Attribute], t).element_type
    if isinstance(element, builtin.IntegerType):
        width: int = element.bitwidth
        return f"i{width}"
    return _FLOAT_NAMES.get(type(element), str(element))

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


def element_dtype_name(t: Attribute) -> str:
    """Return the name of the element type of `t` (a scalar, tensor or vector type): "i<width>" for integers,
    "f16", "bf16", "f32", "f64" for floats, else the type as MLIR prints it."""
    element: Attribute = t
    if isinstance(t, builtin.TensorType):
        element = cast(builtin.TensorType[Attribute], t).element_type
    elif isinstance(t, builtin.VectorType):
        element = cast(builtin.VectorType[Attribute], t).element_type
    if isinstance(element, builtin.IntegerType):
        width: int = element.bitwidth
        return f"i{width}"
    return _FLOAT_NAMES.get(type(element), str(element))

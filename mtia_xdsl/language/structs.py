"""ctypes.Structure kernel arguments: see `mtia_xdsl.utils.structs` (below the frontend and runtime, which
read it)."""

from mtia_xdsl.utils.structs import FIELD_TYPES, StructFieldError, field_type, install, is_struct

__all__ = ["FIELD_TYPES", "StructFieldError", "field_type", "install", "is_struct"]

"""Element formats of runtime values: numpy storage and compute dtypes per IR element type, bf16 and fp8
rounding (bf16 and fp8 values are float32 arrays holding representable values; memory holds their bits).
See `values.py` for the conventions every interpreter shares.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import builtin
from xdsl.ir import Attribute
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.semantics.scalar import bf16_bits_to_f32, f32_to_bf16_bits
from mtia_xdsl.utils.fp8 import FP8_FORMATS, decode_fp8_np, encode_fp8_np

FP8_BY_NAME = {str(kind()): fmt for kind, fmt in FP8_FORMATS.items()}
"""fp8 formats by MLIR spelling ("f8E4M3FN", ...): fp8 values are float32 holding fp8 values, bits in memory."""

# ----------------------------------------------------------------------------------------------------
# bf16 helpers (the bit-level rounding is semantics.scalar's)
# ----------------------------------------------------------------------------------------------------


def _f64_to_f32_round_to_odd(a: np.ndarray) -> np.ndarray:
    """Narrow float64 to float32 rounding to odd, so a later f32 -> bf16 rounding is not a double one."""
    f = a.astype(np.float32)
    with np.errstate(invalid="ignore"):
        too_far = np.abs(f.astype(np.float64)) > np.abs(a)
    f = np.where(too_far, np.nextafter(f, np.float32(0)), f).astype(np.float32)
    with np.errstate(invalid="ignore"):
        inexact = (f.astype(np.float64) != a) & ~np.isnan(a)
    bits = f.view(np.uint32) | inexact.astype(np.uint32)
    return bits.view(np.float32)


def to_bf16_f32(a: Any) -> Any:
    """Round values to bf16 (nearest even), returned as float32 (array in, array out; scalar in, scalar out).

    float64 input is rounded once (through round-to-odd float32), not twice.
    """
    arr = np.asarray(a)
    if arr.dtype == np.float64:
        arr = _f64_to_f32_round_to_odd(arr)
    out = bf16_bits_to_f32(f32_to_bf16_bits(arr))
    return out[()] if np.ndim(a) == 0 else out


# ----------------------------------------------------------------------------------------------------
# element formats
# ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ElementFormat:
    """How one element type lives in memory (`storage`) and in the interpreter (`compute`)."""

    name: str
    """MLIR spelling, e.g. "f32", "bf16", "i1", "ptr"."""
    storage: np.dtype[Any]
    """numpy dtype of the bytes in global memory (uint16 for bf16, int8 for i1, int64 for pointers)."""
    compute: np.dtype[Any]
    """numpy dtype of runtime values (float32 for bf16, bool for i1)."""

    @property
    def size_bytes(self) -> int:
        """Size of one element in global memory."""
        return self.storage.itemsize

    def from_storage(self, raw: np.ndarray) -> np.ndarray:
        """Convert raw stored elements (dtype `storage`) to runtime values."""
        if self.name == "bf16":
            return bf16_bits_to_f32(raw)
        if self.name in FP8_BY_NAME:
            return decode_fp8_np(raw, FP8_BY_NAME[self.name])
        if self.name == "i1":
            return raw != 0
        return raw.astype(self.compute, copy=False)

    def to_storage(self, values: Any) -> np.ndarray:
        """Convert runtime values to the stored representation (bf16 rounds to nearest even)."""
        if self.name == "bf16":
            return f32_to_bf16_bits(values)
        if self.name in FP8_BY_NAME:
            return encode_fp8_np(values, FP8_BY_NAME[self.name])
        return np.asarray(values).astype(self.storage, copy=False)  # callers only read it


def _fmt(name: str, storage: Any, compute: Any = None) -> ElementFormat:
    return ElementFormat(name, np.dtype(storage), np.dtype(compute if compute is not None else storage))


_INT_FORMATS = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


@functools.lru_cache(maxsize=1024)
def element_format(t: Attribute | np.dtype[Any] | str) -> ElementFormat:
    """Return the ElementFormat of an xDSL element type (or a numpy dtype, or a name like "bf16").

    Raises: InterpretationError for element types the machine model does not represent (fp8, i128, ...).
    """
    if isinstance(t, str):
        if t == "bf16":
            return _fmt("bf16", np.uint16, np.float32)
        if t == "ptr":
            return _fmt("ptr", np.int64)
        t = np.dtype({"f16": "float16", "f32": "float32", "f64": "float64", "i1": "bool"}.get(t, t))
    if isinstance(t, np.dtype):
        if t == np.bool_:
            return _fmt("i1", np.int8, np.bool_)
        kind = {"f": "f", "i": "i", "u": "ui"}.get(t.kind)
        if kind is None:
            raise InterpretationError(f"numpy dtype {t} has no representation in the machine model")
        return _fmt(f"{kind}{t.itemsize * 8}", t)
    if isinstance(t, builtin.IntegerType):
        width = t.width.data
        if width == 1:
            return _fmt("i1", np.int8, np.bool_)
        if width in _INT_FORMATS:
            return _fmt(f"i{width}", _INT_FORMATS[width])
    elif isinstance(t, builtin.IndexType):
        return _fmt("index", np.int64)
    elif isinstance(t, builtin.BFloat16Type):
        return _fmt("bf16", np.uint16, np.float32)
    elif isinstance(t, builtin.Float16Type):
        return _fmt("f16", np.float16)
    elif isinstance(t, builtin.Float32Type):
        return _fmt("f32", np.float32)
    elif isinstance(t, builtin.Float64Type):
        return _fmt("f64", np.float64)
    elif t.name == "tt.ptr":
        return _fmt("ptr", np.int64)
    elif type(t) in FP8_FORMATS:
        return _fmt(str(t), np.uint8, np.float32)
    raise InterpretationError(f"element type {t} has no representation in the machine model")


def element_type_of(t: Attribute) -> Attribute:
    """Return the element type of a tensor/vector type, or `t` itself for a scalar type."""
    if isinstance(t, builtin.TensorType | builtin.VectorType):
        return t.element_type
    return t


def numpy_dtype(t: Attribute) -> np.dtype[Any]:
    """Return the numpy dtype of runtime values of xDSL type `t` (scalar or shaped)."""
    return element_format(element_type_of(t)).compute


def is_bf16(t: Attribute) -> bool:
    """Return whether `t` is bf16 or a shaped type of bf16."""
    return isinstance(element_type_of(t), builtin.BFloat16Type)


def dtype_name(t: Attribute) -> str:
    """Return the element format name ("f32", "bf16", "i8", ...) of scalar or shaped type `t`."""
    return element_format(element_type_of(t)).name

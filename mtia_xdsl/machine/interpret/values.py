"""Runtime values of the machine model: the conventions, and conversion of results to values (`as_value`).

Conventions shared by every interpreter of the project (tt reference semantics, mtia machine model):

- A tensor value is a numpy array, a scalar value a numpy scalar (`np.int32(3)`, `np.float32(1.0)`,
  `np.bool_(True)`). Integers use signed storage of their width; unsigned ops (`arith.divui`, ...)
  reinterpret the bits, as MLIR does.
- bf16 has no numpy dtype: bf16 values are float32 arrays holding bf16-representable values. Every op
  producing bf16 rounds with `to_bf16_f32` (round to nearest even); memory holds the 16 raw bits.
  fp8 (E5M2, E4M3FN and their FNUZ variants) works the same way with `utils/fp8.py`'s exact conversions.
- A pointer is a byte address, exactly the `data_ptr()` Triton passes: a Python/numpy int64 scalar, or
  an int64 array for a tensor of pointers. `tt.addptr` adds offset * element size.
- `GlobalMemory` is a working copy of the storages behind the kernel's torch tensor arguments (a storage
  is copied on its first write; until then reads see the caller's bytes, which nothing changes during a
  run); `commit()` writes the written ones back, so a failed run leaves the caller's tensors untouched.
  An undo log (`begin_undo`/`undo`) lets the machine's runner roll back the writes of a batch of programs.
- Batched values (see the machine's runner): any value may carry leading batch dimensions in front of
  the shape its IR type gives, one entry per Triton program of a batch (`(B, 4, 8)` for a
  `tensor<4x8xf32>`, `(B,)` for an `i32`). Op implementations take logical ranks from IR types, never
  from `ndim`; see `logical_rank`, `batch_shape` and `broadcast_batch`.

The pieces live in `formats.py` (element formats, bf16/fp8), `global_memory.py` (GlobalMemory) and
`batching.py` (batch dimensions, Divergence); this module converts results to runtime values (`as_value`)
and re-exports the pieces' public names, so `values` stays the one import for the conventions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import builtin
from xdsl.ir import Attribute

from mtia_xdsl.machine.interpret.batching import (
    Divergence,
    batch_scalar,
    batch_shape,
    broadcast_batch,
    logical_rank,
    uniform,
)
from mtia_xdsl.machine.interpret.formats import (
    FP8_BY_NAME,
    ElementFormat,
    bf16_bits_to_f32,
    dtype_name,
    element_format,
    element_type_of,
    f32_to_bf16_bits,
    is_bf16,
    numpy_dtype,
    to_bf16_f32,
)
from mtia_xdsl.machine.interpret.global_memory import GlobalMemory
from mtia_xdsl.semantics.casts import f32_to_f16
from mtia_xdsl.utils.locations import location_str

__all__ = [
    "FP8_BY_NAME",
    "Divergence",
    "ElementFormat",
    "GlobalMemory",
    "as_value",
    "batch_scalar",
    "batch_shape",
    "bf16_bits_to_f32",
    "broadcast_batch",
    "dtype_name",
    "element_format",
    "element_type_of",
    "f32_to_bf16_bits",
    "is_bf16",
    "is_shaped",
    "location_str",
    "logical_rank",
    "numpy_dtype",
    "to_bf16_f32",
    "uniform",
]


# ----------------------------------------------------------------------------------------------------
# results of elementwise ops
# ----------------------------------------------------------------------------------------------------


def is_shaped(t: Attribute) -> bool:
    """Return whether values of type `t` are arrays (tensor or vector) rather than scalars."""
    return isinstance(t, builtin.TensorType | builtin.VectorType)


def as_value(x: Any, t: Attribute) -> Any:
    """Convert a numpy result to the runtime value of type `t`.

    Casts to the dtype of `t` (integers wrap around), rounds bf16 to nearest even, and returns a numpy
    scalar for a scalar type or an array of the tensor's shape (broadcasting a scalar) otherwise.
    Leading batch dimensions (dims beyond the type's rank) are kept. An array for a scalar type stays an
    array: a batch of lanes, as when a reduction's combine region runs on whole slices. A value that must be
    broadcast to the tensor's shape (a splat, `tt.broadcast`) is a read-only broadcast view, not a copy:
    runtime values are never written in place, and the ops reading it broadcast as numpy does.
    """
    info = _VALUE_TYPES.get(id(t))
    if info is None or info[0] is not t:
        info = _value_type(t)
    _, compute, rounding, shape = info
    arr = x if type(x) is np.ndarray else np.asarray(x)
    if arr.dtype != compute:
        with np.errstate(all="ignore"):
            arr = f32_to_f16(arr) if compute == _F16 and arr.dtype == _F32 else arr.astype(compute)
    if rounding is not None:  # bf16 or fp8 held in float32: round to the format (nearest even)
        arr = rounding(arr)
    if shape is not None:
        rank = len(shape)
        if arr.ndim >= rank and arr.shape[arr.ndim - rank :] == shape:
            return arr
        full = arr.shape[: max(arr.ndim - rank, 0)] + shape
        return np.broadcast_to(arr, full)
    return arr[()] if arr.ndim == 0 else arr


_F16, _F32 = np.dtype(np.float16), np.dtype(np.float32)
_Rounding = Callable[[np.ndarray], np.ndarray] | None
_VALUE_TYPES: dict[int, tuple[Attribute, np.dtype[Any], _Rounding, tuple[int, ...] | None]] = {}
"""`as_value`'s view of the types it has seen, by identity: (type, compute dtype, rounding to the format
for bf16/fp8 or None, shape or None for a scalar). Bounded (cleared when full); an entry holds its type,
so its id is not reused."""


def _value_type(t: Attribute) -> tuple[Attribute, np.dtype[Any], _Rounding, tuple[int, ...] | None]:
    fmt = element_format(element_type_of(t))
    shape = tuple(t.get_shape()) if isinstance(t, builtin.TensorType | builtin.VectorType) else None
    if len(_VALUE_TYPES) > 4096:
        _VALUE_TYPES.clear()
    rounding: _Rounding = None
    if fmt.name == "bf16":
        rounding = to_bf16_f32
    elif fmt.name in FP8_BY_NAME:
        rounding = lambda a: fmt.from_storage(fmt.to_storage(a))  # noqa: E731
    info = _VALUE_TYPES[id(t)] = (t, fmt.compute, rounding, shape)
    return info

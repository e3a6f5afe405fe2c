"""Masked lanes of engine commands: effective shapes (`valid` operands), lanes no engine wrote, and
per-program counts of a batch (an int shared by every program, or an int64 array (B,)).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.interpreter import PythonValues
from xdsl.ir import Attribute

from mtia_xdsl.machine.interpret.batching import batch_scalar, fill_outside_box
from mtia_xdsl.machine.interpret.formats import element_format, element_type_of
from mtia_xdsl.machine.interpret.values import as_value


def uninitialized(t: Attribute) -> Any:
    """What an LS element no engine wrote reads as: NaN for floats, 0 for integers."""
    return np.nan if element_format(element_type_of(t)).compute.kind == "f" else 0


def valid_lanes(valid: PythonValues, shape: list[int]) -> Any:
    """The lanes inside an effective shape (`valid` operands, one per dimension of `shape`), as a boolean
    array broadcasting against a (batched) tile; extents are clamped to the tile."""
    inside: Any = True
    for d, (v, size) in enumerate(zip(valid, shape, strict=True)):
        axis = np.arange(size).reshape((size,) + (1,) * (len(shape) - d - 1))
        inside = inside & (axis < batch_scalar(np.asarray(v, dtype=np.int64), len(shape)))
    return inside


def valid_count(valid: PythonValues, shape: list[int]) -> Any:
    """Elements inside an effective shape: an int (also when every program of the batch has the same), or one
    per program of the batch (int64 array (B,))."""
    count: Any = 1
    for v, size in zip(valid, shape, strict=True):
        count = count * np.clip(np.asarray(v, dtype=np.int64), 0, size)
    if np.ndim(count) == 0:
        return int(count)
    first = count.reshape(-1)[0]
    return int(first) if (count == first).all() else count


def per_program(count: Any, b: int) -> int:
    """Entry `b` of a per-program quantity that is an int (the same for all) or an array (B,)."""
    return int(count) if np.ndim(count) == 0 else int(count[b])


def keep_valid(tile: Any, valid: PythonValues, t: Attribute, outside: Any) -> Any:
    """`tile` with the lanes outside the effective shape `valid` replaced by `outside` (left unwritten)."""
    shape = list(t.get_shape()) if isinstance(t, TensorType) else []
    if all(np.min(v) >= size for v, size in zip(valid, shape, strict=True)):  # every lane of every program
        return as_value(tile, t)
    arr = np.asarray(tile)
    rank = len(shape)
    same_box = all(np.ndim(v) == 0 for v in valid) and np.ndim(outside) == 0
    if same_box and arr.ndim >= rank and list(arr.shape[arr.ndim - rank :]) == shape:
        out = np.array(arr)  # the same box for every program: fill the slabs past it in a copy
        if fill_outside_box(out, [int(v) for v in valid], outside):
            return as_value(out, t)
    return as_value(np.where(valid_lanes(valid, shape), tile, outside), t)

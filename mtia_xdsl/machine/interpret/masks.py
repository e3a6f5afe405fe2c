"""Masked lanes of engine commands: effective shapes (`valid` operands), lanes no engine wrote, and
per-program counts of a batch (an int shared by every program, or an int64 array (B,)).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.interpreter import PythonValues
from xdsl.ir import Attribute

from mtia_xdsl.machine.interpret.batching import batch_scalar
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
    """Elements inside an effective shape: an int, or one per program of the batch (int64 array (B,))."""
    count: Any = 1
    for v, size in zip(valid, shape, strict=True):
        count = count * np.clip(np.asarray(v, dtype=np.int64), 0, size)
    return int(count) if np.ndim(count) == 0 else count


def per_program(count: Any, b: int) -> int:
    """Entry `b` of a per-program quantity that is an int (the same for all) or an array (B,)."""
    return int(count) if np.ndim(count) == 0 else int(count[b])


def keep_valid(tile: Any, valid: PythonValues, t: Attribute, outside: Any) -> Any:
    """`tile` with the lanes outside the effective shape `valid` replaced by `outside` (left unwritten)."""
    shape = list(t.get_shape()) if isinstance(t, TensorType) else []
    return as_value(np.where(valid_lanes(valid, shape), tile, outside), t)


REDUCE_IDENTITY: dict[str, Callable[[np.dtype], Any]] = {
    "addf": lambda dt: 0.0,
    "addi": lambda dt: 0,
    "maxnumf": lambda dt: -np.inf,
    "maximumf": lambda dt: -np.inf,
    "minnumf": lambda dt: np.inf,
    "minimumf": lambda dt: np.inf,
    "maxsi": lambda dt: np.iinfo(dt).min,
    "minsi": lambda dt: np.iinfo(dt).max,
    "maxui": lambda dt: 0,
    "minui": lambda dt: -1 if np.iinfo(dt).min < 0 else np.iinfo(dt).max,
}
"""What a lane outside a reduction's effective shape counts as: the combiner's identity (+0.0 for addf,
the value a zero-filled masked load holds)."""


_REDUCE_UFUNC: dict[str, np.ufunc] = {
    "addf": np.add,
    "addi": np.add,
    "maxnumf": np.fmax,
    "minnumf": np.fmin,
    "maximumf": np.maximum,
    "minimumf": np.minimum,
    "maxsi": np.maximum,
    "minsi": np.minimum,
}
"""Reduction kind -> the numpy ufunc combining two values (maxui/minui compare the bits unsigned)."""


def reduce_by_kind(x: np.ndarray, axis: int, kind: str) -> Any:
    """Reduce `x` along `axis` with the combiner `kind` (an mtia REDUCE_KINDS name), in x's dtype.

    Used by the RE's in-PE reduction (mtia.re_reduce) and its cross-PE one (mtia.re_allreduce).
    """
    fn = _REDUCE_UFUNC.get(kind)
    if fn is None:
        xu = x.astype(np.dtype(f"u{x.dtype.itemsize}"))
        return (np.max if kind == "maxui" else np.min)(xu, axis=axis).astype(x.dtype)
    return fn.reduce(x, axis=axis, dtype=x.dtype)

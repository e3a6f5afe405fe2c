"""Atomic read-modify-write kinds (tt.atomic_rmw / mtia.atomic_rmw `atomic_rmw_op`, Triton's RMWOp code).

`rmw_update(code)` returns (old, val) -> new on numpy arrays of the memory's compute dtype; `cas_update`
the compare-and-swap. The machine applies them lane by lane in memory (`interpret/tt.atomic_update`); both
emitters write the float max/min rule from `FLOAT_RMW_MAX_MIN`. umax/umin compare the bit patterns as
unsigned integers, of floats too (the order of a float's bits, not of its value).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mtia_xdsl.semantics.scalar import MAX_MIN, MaxMin

Update = Callable[[np.ndarray, np.ndarray], np.ndarray]

RMW_KINDS: dict[int, str] = {1: "and", 2: "or", 3: "xor", 4: "add", 5: "fadd", 6: "max", 7: "min", 8: "umax",
                             9: "umin", 10: "xchg"}  # fmt: skip
"""RMWOp code -> Triton's name of the kind."""


FLOAT_RMW_MAX_MIN: dict[str, MaxMin] = {"max": MAX_MIN["arith.maximumf"], "min": MAX_MIN["arith.minimumf"]}
"""The rule of a float atomic_rmw max/min (kinds 6, 7): arith.maximumf/minimumf, so a NaN operand gives NaN
and -0.0 < +0.0. Only imported TTIR carries these: Triton's tl.atomic_max/min on floats emit integer max/umin
on the bits instead (an IEEE total order, -0.0 < +0.0 and NaN above inf)."""


def _minmax(is_max: bool) -> Update:
    rule = FLOAT_RMW_MAX_MIN["max" if is_max else "min"]

    def run(old: np.ndarray, val: np.ndarray) -> np.ndarray:
        if np.issubdtype(old.dtype, np.floating):
            return rule(old, val)
        return (np.maximum if is_max else np.minimum)(old, val)

    return run


def _unsigned_minmax(is_max: bool) -> Update:
    def run(old: np.ndarray, val: np.ndarray) -> np.ndarray:
        bits = old.dtype.itemsize * 8
        to_u = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]
        u = (np.maximum if is_max else np.minimum)(old.view(to_u), val.astype(old.dtype).view(to_u))
        return u.view(old.dtype)

    return run


_RMW_UPDATES: dict[int, Update] = {
    1: np.bitwise_and,
    2: np.bitwise_or,
    3: np.bitwise_xor,
    4: np.add,
    5: np.add,
    6: _minmax(True),
    7: _minmax(False),
    8: _unsigned_minmax(True),
    9: _unsigned_minmax(False),
    10: lambda old, val: val,
}


def rmw_update(code: int) -> Update | None:
    """The update (old, val) -> new of RMWOp `code`, or None if the kind is not supported."""
    return _RMW_UPDATES.get(code)


def cas_update(old: np.ndarray, cmp: Any, val: Any) -> np.ndarray:
    """Compare-and-swap: `val` where `old == cmp`, else `old` (in `old`'s dtype)."""
    return np.where(old == cmp, val, old).astype(old.dtype)

"""Reductions: the combiner and identity of each reduction kind, and a reduction along an axis.

Kinds are the `mtia.re_reduce` kinds (`addf`, `maxnumf`, ...), each the `arith` op of the same name as a
combiner (`scalar.FLOAT_BINARY`/`INT_BINARY`/`UINT_BINARY`). A tt.reduce whose combine region is one such
op (`combiner_of`) reduces as that kind. The identity is what a lane outside a reduction's effective
shape counts as (+0.0 for addf: the value a zero-filled masked load holds).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mtia_xdsl.semantics.scalar import FLOAT_BINARY, INT_BINARY, unsigned

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
"""Reduction kind -> its identity for element dtype `dt` (a lane that does not change the result)."""

_UFUNC: dict[str, np.ufunc] = {
    "addf": np.add,
    "addi": np.add,
    "maxnumf": np.fmax,
    "minnumf": np.fmin,
    "maximumf": np.maximum,
    "minimumf": np.minimum,
    "maxsi": np.maximum,
    "minsi": np.minimum,
}
"""numpy's reduction of a kind (up to the sign of a zero result of the float max/min kinds)."""

COMBINERS: dict[str, Callable[[Any, Any], Any]] = {
    "arith.addf": FLOAT_BINARY["arith.addf"],
    "arith.mulf": FLOAT_BINARY["arith.mulf"],
    "arith.maxnumf": FLOAT_BINARY["arith.maxnumf"],
    "arith.minnumf": FLOAT_BINARY["arith.minnumf"],
    "arith.maximumf": FLOAT_BINARY["arith.maximumf"],
    "arith.minimumf": FLOAT_BINARY["arith.minimumf"],
    **{name: INT_BINARY[name] for name in ("arith.addi", "arith.muli", "arith.maxsi", "arith.minsi")},
    **{name: INT_BINARY[name] for name in ("arith.andi", "arith.ori", "arith.xori")},
}
"""One-op combine regions (`(a, b) -> a op b`) a reduction or scan may apply as a numpy function (values
of the element's compute dtype; integer results wrap to the element width by the caller)."""


PAIRWISE_BLOCK = 128
"""A float sum along a tile's last axis adds in numpy's pairwise order (the model sums with numpy's
add.reduce): runs of at most this many lanes are summed by `PAIRWISE_ACCUMULATORS` interleaved
accumulators, longer runs split in two halves (the first a multiple of `PAIRWISE_ACCUMULATORS`) summed
recursively. Source: numpy's pairwise_sum (PW_BLOCKSIZE), numpy/_core/src/umath/loops_utils.h.src."""

PAIRWISE_ACCUMULATORS = 8
"""Interleaved accumulators of one pairwise block (lane j adds into accumulator j mod 8; runs under 8 lanes
add sequentially); combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the leftover lanes."""


def pairwise_sum(x: np.ndarray) -> Any:
    """Sum the 1-d array `x` in numpy's pairwise order (`PAIRWISE_BLOCK`), in x's dtype.

    The reference of the order both emitters write (tests check it is numpy's add.reduce, bit for bit)."""
    n, k = len(x), PAIRWISE_ACCUMULATORS
    if n < k:
        res = x.dtype.type(0)
        for v in x:
            res = x.dtype.type(res + v)
        return res
    if n <= PAIRWISE_BLOCK:
        r = list(x[:k])
        for i in range(k, n - n % k, k):
            r = [x.dtype.type(r[j] + x[i + j]) for j in range(k)]
        while len(r) > 1:
            r = [x.dtype.type(r[2 * j] + r[2 * j + 1]) for j in range(len(r) // 2)]
        res = r[0]
        for i in range(n - n % k, n):
            res = x.dtype.type(res + x[i])
        return res
    half = n // 2
    half -= half % k
    return x.dtype.type(pairwise_sum(x[:half]) + pairwise_sum(x[half:]))


def combiner_of(op_name: str) -> Callable[[Any, Any], Any] | None:
    """The numpy combiner of a one-op combine region made of `op_name`, else None."""
    return COMBINERS.get(op_name)


def reduce(kind: str, x: np.ndarray, axis: int) -> np.ndarray:
    """Reduce `x` along `axis` with the combiner of `kind`, in `x`'s dtype.

    The float max/min kinds order -0.0 < +0.0 (as their `arith` ops do): a zero result is +0.0 for a max
    (-0.0 for a min) iff some lane holds that zero. Raises: KeyError for an unknown kind.
    """
    if kind in ("maxui", "minui"):
        w = x.dtype.itemsize * 8
        xu = unsigned(x, w)
        r = (np.max if kind == "maxui" else np.min)(xu, axis=axis)
        return np.asarray(r).astype(x.dtype)
    r = _UFUNC[kind].reduce(x, axis=axis, dtype=x.dtype)
    if kind in ("maxnumf", "minnumf", "maximumf", "minimumf"):
        is_max = kind.startswith("max")
        zero = np.asarray(r) == 0
        if np.any(zero):
            wanted = (x == 0) & (np.signbit(x) != is_max)  # +0 lanes for a max, -0 lanes for a min
            signed_zero = np.where(wanted.any(axis=axis), 0.0, -0.0) * (1 if is_max else -1)
            r = np.where(zero, np.asarray(signed_zero, x.dtype), r)
    return np.asarray(r, dtype=x.dtype)

"""Batched values: one pass of the interpreter runs a batch of Triton programs at once.

Any value may carry leading batch dimensions in front of the shape its IR type gives, one entry per
program of the batch (`(B, 4, 8)` for a `tensor<4x8xf32>`, `(B,)` for an `i32`). Op implementations take
logical ranks from IR types, never from `ndim`. Control flow must agree across a batch (`uniform`), else
`Divergence` makes the runner split it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import builtin
from xdsl.ir import Attribute

from mtia_xdsl.utils.locations import location_str


def logical_rank(t: Attribute) -> int:
    """Return the rank of values of IR type `t` (0 for scalars), without batch dimensions."""
    if isinstance(t, builtin.TensorType | builtin.VectorType):
        return len(t.get_shape())
    return 0


def batch_shape(x: Any, rank: int) -> tuple[int, ...]:
    """Return the leading batch dimensions of runtime value `x` whose logical rank is `rank`."""
    shape = np.shape(x)
    return tuple(shape[: len(shape) - rank]) if len(shape) > rank else ()


def broadcast_batch(values: Sequence[Any], ranks: Sequence[int]) -> list[np.ndarray]:
    """Broadcast the batch dimensions of `values` (logical ranks `ranks`) to one common batch shape.

    Shapes: each result has the common batch shape in front of its own logical shape.
    """
    arrays = [np.asarray(v) for v in values]
    batches = [batch_shape(a, r) for a, r in zip(arrays, ranks, strict=True)]
    common = np.broadcast_shapes(*batches)
    out = []
    for a, b, r in zip(arrays, batches, ranks, strict=True):
        if b != common:
            a = np.broadcast_to(a.reshape((1,) * (len(common) - len(b)) + a.shape), common + a.shape[a.ndim - r :])
        out.append(a)
    return out


def batch_scalar(x: Any, rank: int) -> Any:
    """Reshape a (possibly batched) scalar `x` so it broadcasts against values of logical rank `rank`."""
    arr = np.asarray(x)
    return arr.reshape(arr.shape + (1,) * rank) if arr.ndim else x


class Divergence(Exception):
    """A control-flow value (loop bound, branch condition) differs between the programs of a batch.

    Raised by control-flow ops; the machine's runner catches it, rolls the batch back and reruns it
    split into groups of programs that agree on `values`.
    """

    def __init__(self, op: Any, values: np.ndarray) -> None:
        super().__init__(f"divergent control flow at {location_str(op.location)}")
        self.op = op
        self.values = values
        """One value per program of the batch (shape (B,))."""


def uniform(x: Any, op: Any) -> Any:
    """Return the one value a batch agrees on for a control-flow operand `x` of `op`.

    Raises: Divergence if the programs of the batch disagree.
    """
    if np.ndim(x) == 0:
        return x
    arr = np.asarray(x)
    first = arr.reshape(-1)[0]
    if (arr == first).all():
        return first
    raise Divergence(op, arr.reshape(arr.shape[0], -1)[:, 0] if arr.ndim > 1 else arr)


def fill_outside_box(x: np.ndarray, bounds: Sequence[int], fill: Any) -> bool:
    """Set, in place, the elements of `x` outside the box [0, bounds[d]) of its last len(bounds) dimensions
    (the same box for every batch entry) to the scalar `fill`, cast to x's dtype as `np.where` would: the
    same result as `np.where(inside, x, fill)` without a pass over every element (slabs past each bound).

    Returns False, changing nothing, when that is not exact: `fill` is not a scalar, or `np.where` would
    give another dtype (a float `fill` for an integer `x`).
    """
    if np.ndim(fill) != 0 or np.result_type(x, fill) != x.dtype:
        return False
    rank = len(bounds)
    for d, bound in enumerate(bounds):
        if bound < x.shape[x.ndim - rank + d]:
            x[(Ellipsis, *([slice(None)] * d), slice(max(bound, 0), None), *([slice(None)] * (rank - 1 - d)))] = fill
    return True

"""re_reduce: a reduction of a tile across PEs through the reduction engines' neighbour network.

`re_reduce(x, axis, op)` combines `x` elementwise over the participating programs and returns the result
to each of them. Participants: the programs running in the same round (the k-th program of each PE) on
the PEs of this program's PE row (axis=0) or PE column (axis=1) of the launch's PE grid (see get_pe_id).
They must all reach the call together, the same number of times (like a barrier): a participant that
never arrives (a PE without a program in that round, a branch or loop bound that differs between them)
is an error at the call's kernel line, not a hang.
"""

from __future__ import annotations

from typing import Any

from mtia_xdsl.language._extension import describe, extension, misuse, static_hint

_KINDS = {"sum": ("addf", "addi", "addi"), "max": ("maxnumf", "maxsi", "maxui"), "min": ("minnumf", "minsi", "minui")}
"""re_reduce op -> mtia.re_allreduce kind for (float, signed int, unsigned int) elements."""


@extension
def re_reduce(x: Any, axis: Any, op: Any = "sum", _semantic: Any = None) -> Any:
    """Return the elementwise `op` ("sum", "max" or "min") of `x` over the PEs of this PE's row (axis=0) or
    column (axis=1), as every participant sees it.

    Shapes: x `tensor<S x T>` or a scalar `T` -> the same type. max/min of floats ignore NaNs (as tl.max).
    Raises: KernelError at the kernel line for an axis other than 0 or 1, an unknown op, a non-tensor `x`
    or a pointer or boolean element type.
    """
    import triton.language as tl
    from triton.language.core import _unwrap_if_constexpr

    which, name = _unwrap_if_constexpr(axis), _unwrap_if_constexpr(op)
    if not isinstance(which, int) or isinstance(which, bool) or which not in (0, 1):
        raise misuse(
            f"re_reduce: axis must be 0 (the PEs of this PE's row) or 1 (its column), got {describe(which)}"
            f"{static_hint(which)}"
        )
    if not isinstance(name, str) or name not in _KINDS:
        raise misuse(
            f"re_reduce: op must be one of {', '.join(map(repr, _KINDS))}, got {describe(name)}{static_hint(name)}"
        )
    if not isinstance(x, tl.tensor):
        raise misuse(
            f"re_reduce: x must be a tile or a scalar value computed by the kernel, got {describe(x)}; for a "
            "constant, reduce a kernel value (e.g. tl.full([1], c, tl.float32))"
        )
    dtype = x.dtype
    if dtype.is_ptr() or dtype.is_int1() or not (dtype.is_floating() or dtype.is_int()):
        raise misuse(f"re_reduce: cannot reduce elements of type {dtype}; use a numeric type")
    floating, signed, unsigned = _KINDS[name]
    kind = floating if dtype.is_floating() else (signed if dtype.is_int_signed() else unsigned)
    return tl.tensor(_semantic.builder.create_mtia_re_allreduce(x.handle, int(which), kind), x.type)

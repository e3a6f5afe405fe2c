"""get_pe_id / get_num_pes: the PE a program runs on, within the launch's PE sub-grid (S10).

The launch's PEs form a rectangle of `tile_height` rows of `tile_width` PEs (the whole 8 x 8 chip unless
the launch option `pe_subgrid=(base_pe, tile_width, tile_height)` says otherwise). PEs are numbered
row-major inside it; the program-id -> PE mapping (`pe_mapping`) decides which program runs where.
"""

from __future__ import annotations

from typing import Any

from mtia_xdsl.language._extension import describe, extension, misuse, static_hint


def _axis(axis: Any, what: str) -> int | None:
    from triton.language.core import _unwrap_if_constexpr

    value = _unwrap_if_constexpr(axis)
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value in (0, 1)):
        return value
    raise misuse(
        f"{what}: axis must be 0 (x, the PE column), 1 (y, the PE row) or None (the row-major PE number), got "
        f"{describe(value)}{static_hint(value)}"
    )


def _scalar(handle: Any) -> Any:
    import triton.language as tl

    return tl.tensor(handle, tl.int32)


@extension
def get_pe_id(axis: Any = None, _semantic: Any = None) -> Any:
    """Return the PE running this program, within the launch's PE grid, as an int32 scalar.

    axis=0: its column x (0 <= x < get_num_pes(0)); axis=1: its row y; None: the row-major number
    y * get_num_pes(0) + x. The PE is the one the program-id -> PE mapping places the program on, the
    same the machine model times it on.
    Raises: KernelError at the kernel line for another axis.
    """
    which = _axis(axis, "get_pe_id")
    builder = _semantic.builder
    if which is not None:
        return _scalar(builder.create_pe_id(which))
    x, y, w = (_scalar(h) for h in (builder.create_pe_id(0), builder.create_pe_id(1), builder.create_num_pes(0)))
    return _semantic.add(_semantic.mul(y, w, False), x, False)


@extension
def get_num_pes(axis: Any = None, _semantic: Any = None) -> Any:
    """Return the shape of the launch's PE grid as an int32 scalar.

    axis=0: its width (PEs per row, the launch's tile width); axis=1: its height; None: the number of PEs.
    Raises: KernelError at the kernel line for another axis.
    """
    which = _axis(axis, "get_num_pes")
    builder = _semantic.builder
    if which is not None:
        return _scalar(builder.create_num_pes(which))
    return _semantic.mul(_scalar(builder.create_num_pes(0)), _scalar(builder.create_num_pes(1)), False)

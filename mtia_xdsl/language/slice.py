"""extract_slice: a block of a tile already in local storage (LS), without another DMA.

`extract_slice(x, offsets, sizes)` returns `x[o0:o0+s0, o1:o1+s1, ...]`. The sizes are compile-time
constants (powers of two, like every Triton block); each offset is a compile-time constant, checked
against the tile here, or an integer scalar, checked when the program runs. It lowers to
`mtia.extract_slice` inside an MLU command: a copy inside the PE's LS, timed at the MLU's rate.
"""

from __future__ import annotations

from typing import Any

from mtia_xdsl.language._extension import describe, extension, misuse, static_hint


def _ints(values: Any, what: str) -> list[Any]:
    from triton.language.core import _unwrap_if_constexpr

    values = _unwrap_if_constexpr(values)
    if not isinstance(values, list | tuple) and not hasattr(values, "__iter__"):
        raise misuse(f"extract_slice: {what} must be a list with one entry per dimension, got {describe(values)}")
    return [_unwrap_if_constexpr(v) for v in values]


def _static_sizes(x: Any, sizes: list[Any]) -> list[int]:
    shape = list(x.type.shape)
    if len(sizes) != len(shape):
        raise misuse(
            f"extract_slice: {len(sizes)} sizes for a tile of rank {len(shape)} ({shape}); give one per dimension"
        )
    for dim, (size, extent) in enumerate(zip(sizes, shape, strict=True)):
        if not isinstance(size, int) or isinstance(size, bool) or size < 1 or size & (size - 1):
            raise misuse(
                f"extract_slice: size {describe(size)} of dimension {dim} must be a constexpr power of two, as "
                f"Triton blocks are{static_hint(size)}"
            )
        if size > extent:
            raise misuse(f"extract_slice: size {size} of dimension {dim} exceeds the tile's extent {extent} ({shape})")
    return [int(s) for s in sizes]


def _offsets(x: Any, offsets: list[Any], sizes: list[int], semantic: Any) -> tuple[list[int], list[Any]]:
    """Split the offsets into static values (DYNAMIC_OFFSET where dynamic) and the dynamic handles."""
    import triton.language as tl

    from mtia_xdsl.dialects.mtia import DYNAMIC_OFFSET

    shape = list(x.type.shape)
    if len(offsets) != len(shape):
        raise misuse(
            f"extract_slice: {len(offsets)} offsets for a tile of rank {len(shape)} ({shape}); give one per dimension"
        )
    static: list[int] = []
    dynamic: list[Any] = []
    for dim, (off, size, extent) in enumerate(zip(offsets, sizes, shape, strict=True)):
        if isinstance(off, int) and not isinstance(off, bool):
            if not 0 <= off <= extent - size:
                raise misuse(
                    f"extract_slice: offset {off} + size {size} leaves dimension {dim} of the tile (extent {extent}); "
                    f"keep 0 <= offset <= {extent - size}"
                )
            static.append(off)
        elif isinstance(off, tl.tensor) and not off.type.is_block() and off.dtype.is_int():
            static.append(DYNAMIC_OFFSET)
            dynamic.append(off.handle)
        else:
            raise misuse(
                f"extract_slice: offset {describe(off)} of dimension {dim} must be an integer constant or an "
                "integer scalar"
            )
    return static, dynamic


@extension
def extract_slice(x: Any, offsets: Any, sizes: Any, strides: Any = None, _semantic: Any = None) -> Any:
    """Return the block of tile `x` at `offsets` of shape `sizes`, read from LS (no global memory access).

    Shapes: x `tensor<S0 x .. x Sn x T>` -> `tensor<sizes x T>`; offsets and sizes have one entry per
    dimension. `strides`, accepted for the spelling of other Triton dialects, must be all 1 if given.
    Raises: KernelError at the kernel line for a scalar `x`, a wrong number of entries, a size that is not
    a constexpr power of two or exceeds the tile, a constant offset that leaves the tile, or a stride != 1.
    """
    import triton.language as tl

    if not isinstance(x, tl.tensor) or not x.type.is_block():
        raise misuse(f"extract_slice: the source must be a tile (a block tensor), got {describe(x)}")
    from triton.language.core import _unwrap_if_constexpr

    if _unwrap_if_constexpr(strides) is not None:
        given = _ints(strides, "strides")
        if any(not isinstance(s, int) or s != 1 for s in given):
            raise misuse(
                f"extract_slice: only unit strides are supported, got [{', '.join(describe(s) for s in given)}]"
            )
    static_sizes = _static_sizes(x, _ints(sizes, "sizes"))
    static, dynamic = _offsets(x, _ints(offsets, "offsets"), static_sizes, _semantic)
    ret_ty = tl.block_type(x.dtype, static_sizes)
    handle = _semantic.builder.create_mtia_extract_slice(x.handle, static, dynamic, ret_ty.to_ir(_semantic.builder))
    return tl.tensor(handle, ret_ty)

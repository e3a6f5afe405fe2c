"""`aten.topk` of short rows as mtia_xdsl's own Triton kernel, with aten's CPU results tie for tie.

Inductor keeps `aten.topk` as a host call (an aten fallback; its sort-based lowering, behind
`config.triton.decompose_sort_ops`, orders ties by index, which aten's CPU kernel does not). `topk` is that op
for the rows `unsupported` accepts: one program per row runs the algorithm of aten's CPU kernel
(`topk_impl_loop` in ATen's native/cpu/SortingKernel.cpp) as the C++ standard library of torch's Linux builds
(libstdc++) carries it out: `std::nth_element` on (value, index) pairs (introselect: median-of-three pivot,
unguarded partition, insertion sort of the last three or fewer), then, for sorted=True, `std::sort` of the first
k - 1 (an insertion sort below 17 elements). Ties and NaNs (above every number for largest, below for smallest)
come out where aten puts them, since the same comparisons and swaps are made. It is registered as the custom op
`mtia_xdsl::topk` (`torch.library.triton_op`), so Inductor's output code calls it and the kernel runs on MTIA
through mtia_xdsl's driver like every generated kernel.

The row lives in registers: each element's rank (how many elements of the row it beats, which orders the
elements as aten's comparator does) times BLOCK_N plus its index, one lane each; reading or writing a position
is a masked reduction or select over the lanes.

This module imports torch and triton when loaded: import it only once Inductor has loaded (see
`mtia_xdsl.runtime.inductor.HOOK_AFTER`).
"""

# Triton has no type stubs and a @triton.jit kernel's parameters are untyped by Triton's convention:
# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false, reportUnknownVariableType=false
# pyright: reportUnknownArgumentType=false, reportUnknownParameterType=false, reportMissingParameterType=false
# pyright: reportUntypedFunctionDecorator=false
# tl.sum is typed as returning a tensor or a tuple (of several reduced operands), so shifting its result is not:
# pyright: reportOperatorIssue=false

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

MAX_N = 9
"""Longest row taken. aten's introselect falls back to a heap select once 2 floor(log2 n) partitions have not
brought the range down to three elements; each partition shrinks it by at least one (the median-of-three
pivot leaves an element on either side), so rows of at most 9 never get there and the kernel needs no heap
select. Longer rows stay aten's host call."""
DTYPES = {torch.float32: tl.int32, torch.float16: tl.int16, torch.bfloat16: tl.int16}
"""Element types taken, with the integer type of their bits (values are picked and stored as their bits, exactly)."""
_BIT_DTYPES = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16}
"""The torch dtype of DTYPES' integer types (the values' output is written through a view of that dtype)."""


def unsupported(x: torch.Tensor, k: int, dim: int, sorted: bool) -> str | None:
    """Why `topk` cannot compute `aten.topk(x, k, dim, largest, sorted)`, or None if it can: the one rule for
    which topk calls run on MTIA. Taken: x of a dtype in DTYPES, dim its last, a row of 1 to MAX_N elements,
    1 <= k <= the row. The reason names the first condition that fails (the coverage table of
    benchmarks/inductor.py prints it)."""
    if x.dtype not in DTYPES:
        return f"dtype {x.dtype} (f32, f16 or bf16)"
    if x.dim() == 0 or dim not in (-1, x.dim() - 1):
        return f"dim={dim} of a {x.dim()}-D tensor (the last dimension only)"
    n = x.shape[-1]
    if not 1 <= n <= MAX_N or not 1 <= k <= n:
        return f"k={k} of rows of {n} (rows of 1 to {MAX_N}, 1 <= k <= the row)"
    return None


@triton.jit
def _get(q, lanes, pos):
    """q[pos] (a scalar) of the register row q."""
    return tl.sum(tl.where(lanes == pos, q, 0), 0)


@triton.jit
def _put(q, lanes, pos, value):
    """q with q[pos] = value."""
    return tl.where(lanes == pos, value, q)


@triton.jit
def _insertion_sort(q, lanes, first, last, SHIFT: tl.constexpr):
    """libstdc++'s `__insertion_sort` of q[first:last] by rank, largest first (stable: an element moves before
    those it beats only)."""
    for i in range(first + 1, last):
        v = _get(q, lanes, i)
        j = i
        prev = _get(q, lanes, j - 1)
        while (j > first) & ((v >> SHIFT) > (prev >> SHIFT)):
            q = _put(q, lanes, j, prev)
            j -= 1
            prev = _get(q, lanes, j - 1)
        q = _put(q, lanes, j, v)
    return q


@triton.jit
def _median_to_first(q, lanes, first, last, SHIFT: tl.constexpr):
    """libstdc++'s `__move_median_to_first(first, first + 1, mid, last - 1)`: q with the median (by rank) of those
    three swapped into `first`, and that median."""
    a = first + 1
    b = first + (last - first) // 2
    c = last - 1
    va, vb, vc = _get(q, lanes, a), _get(q, lanes, b), _get(q, lanes, c)
    ab = (va >> SHIFT) > (vb >> SHIFT)
    bc = (vb >> SHIFT) > (vc >> SHIFT)
    ac = (va >> SHIFT) > (vc >> SHIFT)
    pos = tl.where(ab, tl.where(bc, b, tl.where(ac, c, a)), tl.where(ac, a, tl.where(bc, c, b)))
    pivot = tl.where(ab, tl.where(bc, vb, tl.where(ac, vc, va)), tl.where(ac, va, tl.where(bc, vc, vb)))
    q = _put(q, lanes, pos, _get(q, lanes, first))
    return _put(q, lanes, first, pivot), pivot


@triton.jit
def _partition(q, lanes, first, last, SHIFT: tl.constexpr):
    """libstdc++'s `__unguarded_partition(first + 1, last, pivot at first)`: q partitioned, and the cut."""
    _q, pivot = _median_to_first(q, lanes, first, last, SHIFT)
    q = _q
    kp = pivot >> SHIFT
    lo = first + 1
    hi = last
    going = True
    while going:
        v_lo = _get(q, lanes, lo)
        while (v_lo >> SHIFT) > kp:
            lo += 1
            v_lo = _get(q, lanes, lo)
        hi -= 1
        v_hi = _get(q, lanes, hi)
        while kp > (v_hi >> SHIFT):
            hi -= 1
            v_hi = _get(q, lanes, hi)
        going = lo < hi
        if going:
            q = _put(_put(q, lanes, lo, v_hi), lanes, hi, v_lo)
            lo += 1
    return q, lo


@triton.jit
def _ranks(x, lanes, n, LARGEST: tl.constexpr):
    """Per lane, how many of the row's n elements it beats under aten's comparator: greater (smaller unless
    LARGEST), NaN above every number (below, unless LARGEST), NaNs tied."""
    a = x[:, None]
    b = x[None, :]
    a_nan = a != a
    b_nan = b != b
    if LARGEST:
        beats = (a_nan & (b == b)) | (a > b)
    else:
        beats = ((a == a) & b_nan) | (a < b)
    return tl.sum((beats & (lanes[None, :] < n)).to(tl.int32), 1)


@triton.jit
def _topk_kernel(
    x_ptr, values_ptr, indices_ptr, stride_row, n, k, BLOCK_N: tl.constexpr, SHIFT: tl.constexpr,
    BITS: tl.constexpr, BF16_NAN: tl.constexpr, LARGEST: tl.constexpr, SORTED: tl.constexpr,
):  # fmt: skip
    """Row `program_id(0)` of x ([rows, n] at stride_row, unit stride along the row): its k top elements as aten's
    CPU kernel orders them, the bits of their values to values_ptr (BITS, the values' integer view) and their
    indices (i64) to indices_ptr ([rows, k], contiguous).
    Lanes hold rank << SHIFT | index (BLOCK_N == 1 << SHIFT >= n)."""
    row = tl.program_id(0)
    lanes = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride_row + lanes, mask=lanes < n, other=0.0)
    q = (_ranks(x, lanes, n, LARGEST) << SHIFT) | lanes
    first = 0
    last = n
    while last - first > 3:
        _q, cut = _partition(q, lanes, first, last, SHIFT)
        q = _q
        below = cut <= k - 1
        first = tl.where(below, cut, first)
        last = tl.where(below, last, cut)
    q = _insertion_sort(q, lanes, first, last, SHIFT)
    if SORTED:
        q = _insertion_sort(q, lanes, 0, k - 1, SHIFT)
    picked = q & (BLOCK_N - 1)
    bits = x.to(BITS, bitcast=True).to(tl.int32)
    if BF16_NAN:  # aten's values go through f32 and back: a bf16 NaN comes out as 0x7FC0 (c10's conversion)
        bits = tl.where(x != x, 0x7FC0, bits)
    value_bits = tl.sum(tl.where(picked[:, None] == lanes[None, :], bits[None, :], 0), 1)
    out = lanes < k
    tl.store(values_ptr + row * k + lanes, value_bits.to(BITS), mask=out)
    tl.store(indices_ptr + row * k + lanes, picked.to(tl.int64), mask=out)


@triton_op("mtia_xdsl::topk", mutates_args=())
def topk(x: torch.Tensor, k: int, largest: bool, sorted: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """`aten.topk(x, k, -1, largest, sorted)`: (values [..., k] of x's dtype, indices [..., k] i64), contiguous,
    values and indices equal to aten's CPU kernel's, bit for bit, ties and NaNs included (see the module
    docstring; aten's values of a bf16 row pass through f32, which turns every NaN into 0x7FC0, as here).

    Shapes: x [..., n] (rows whose last dimension is not at unit stride are copied). Requires:
    `unsupported(x, k, -1, sorted)` is None (not checked here)."""
    n = x.shape[-1]
    rows = x.reshape(-1, n) if x.stride(-1) == 1 else x.contiguous().reshape(-1, n)
    values = x.new_empty((*x.shape[:-1], k))
    indices = x.new_empty((*x.shape[:-1], k), dtype=torch.int64)
    block_n = max(triton.next_power_of_2(n), 2)
    if rows.shape[0] > 0:
        wrap_triton(_topk_kernel)[(rows.shape[0],)](
            rows, values.view(_BIT_DTYPES[x.dtype]), indices, rows.stride(0), n, k, block_n,
            block_n.bit_length() - 1, DTYPES[x.dtype], x.dtype == torch.bfloat16, largest, sorted,
        )  # fmt: skip
    return values, indices

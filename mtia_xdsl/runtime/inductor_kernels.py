"""mtia_xdsl's own Triton kernels for ops Inductor has no Triton lowering of (used by mtia_xdsl/runtime/inductor.py).

`embedding_bag_sum` is `aten._embedding_bag` for sum and mean bags by offsets: each program gathers the rows of
one bag (an indexed DMA, `mtia.dma_gather_rows`, MTIA's indexed mode for embedding rows, S1) and sums them on
the SE, and writes the op's other outputs (offset2bag, bag sizes) as aten's CPU kernel gives them. It is
registered as the custom op `mtia_xdsl::embedding_bag` (`torch.library.triton_op`), so Inductor's output code
calls it and the kernel runs on MTIA through mtia_xdsl's driver like every generated kernel.
`embedding_bag_cat` (`mtia_xdsl::embedding_bag_cat`) does the bags of several tables in one launch and
writes them straight into their concatenation (what `inductor_bag_groups.group_embedding_bags` turns
concatenated or independent bags into).

This module imports torch and triton when loaded: import it only once Inductor has loaded (see
`mtia_xdsl.runtime.inductor.HOOK_AFTER`).
"""

# Triton has no type stubs and a @triton.jit kernel's parameters are untyped by Triton's convention:
# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false, reportUnknownVariableType=false
# pyright: reportUnknownArgumentType=false, reportUnknownParameterType=false, reportMissingParameterType=false
# pyright: reportUntypedFunctionDecorator=false

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

BLOCK_ROWS = 16
"""Rows of a bag gathered per indexed DMA (a loop step): dlrm's and jagged_sum's bags (3 and up to 9 ids)
take one step, two_tower's (8) one."""
MAX_BLOCK_D = 256
"""Columns per program at most: wider tables take more programs along the columns (grid axis 1)."""
MAX_BLOCK_BAGS = 1024
"""Bag sizes written per block by program 0 at most (more bags take more blocks, unrolled)."""
MAX_ALL_IDS = 256
"""Ids of a bag op (per table) that every program loads whole at most (`all_ids_block`): a bag's ids then
come in one DMA issued before its offsets are read, both DRAM latencies overlapping, instead of after them
(at most 2 KiB of i64 ids per program; more ids are loaded a step at a time once the offsets are in)."""


def all_ids_block(n_indices: int) -> int:
    """The ALL_IDS of the bag kernels for a table of `n_indices` ids: the next power of two (at least 1) when
    n_indices <= MAX_ALL_IDS, else 0 (each step loads its own ids)."""
    return triton.next_power_of_2(max(n_indices, 1)) if n_indices <= MAX_ALL_IDS else 0


def writes_offset2bag(mode: int, dtype: torch.dtype, per_sample_weights: torch.Tensor | None) -> bool:
    """Whether aten's CPU `_embedding_bag` writes offset2bag (one bag index per id) rather than leaving it empty.

    Its fast path, a plain or scaled (per-sample weights at unit stride) sum of f32/f16 rows, leaves it empty;
    a mean, other dtypes and strided per-sample weights write it. Source: torch's `meta_embedding_bag`
    (torch/_meta_registrations.py), which mirrors the CPU kernel's choice.
    """
    fast_sum = dtype in (torch.float32, torch.float16) and (
        per_sample_weights is None or per_sample_weights.stride(0) == 1
    )
    return mode == 1 or not fast_sum


def check_bag_inputs(num_weights: int, indices: torch.Tensor, offsets: torch.Tensor) -> None:
    """Raise the RuntimeError eager `aten._embedding_bag` raises for ids and offsets it refuses, before a kernel of
    this module reads them: the one check of ids and offsets for its bag kernels, whose gathers are not masked by
    the table's rows (such an id was an out-of-bounds access at a line of this module, and offsets eager refuses
    a result). It runs on the host, outside the launch's simulated time; on fake tensors (tracing) it does nothing.

    Shapes: indices [N], offsets [bags] or [bags + 1], ids of a table of `num_weights` rows.
    Raises: RuntimeError in aten's order (torch's aten/src/ATen/native/EmbeddingBag.cpp) and, but for decreasing
    offsets, in its words: offsets[0] not 0 ('offsets[0] has to be 0, ...'), offsets[-1] past N ('offsets[-1] can
    not be greater than input's length ...'), decreasing offsets (aten on CPU: 'Expected i < index_size', or
    for f64 tables a result), an id outside [0, num_weights) ('Index 1 of input takes value 10 which is not in the
    valid range [0, 10)')."""
    from torch._subclasses.fake_tensor import is_fake

    if is_fake(indices) or is_fake(offsets):
        return
    if offsets.numel() > 0:
        first, last, n = int(offsets[0]), int(offsets[-1]), indices.shape[0]
        if first != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
                f"However, got {first}"
            )
        if last > n:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of {last}")
        drops = (offsets[1:] < offsets[:-1]).nonzero()
        if drops.numel() > 0:
            k = int(drops[0, 0]) + 1
            raise RuntimeError(
                f"offsets have to be non-decreasing (each bag starts where the previous one ends or later): "
                f"offsets[{k}] = {int(offsets[k])} is less than offsets[{k - 1}] = {int(offsets[k - 1])}"
            )
    outside = ((indices < 0) | (indices >= num_weights)).nonzero()
    if outside.numel() > 0:
        i = int(outside[0, 0])
        raise RuntimeError(
            f"Index {i} of input takes value {int(indices[i])} which is not in the valid range [0, {num_weights})"
        )


@triton.jit
def _write_bag_sizes(
    offsets_ptr, bag_size_ptr, max_indices_ptr, n_indices, n_offsets, n_bags, BLOCK_BAGS: tl.constexpr,
    BAG_BLOCKS: tl.constexpr, MEAN: tl.constexpr, INCLUDE_LAST: tl.constexpr,
):  # fmt: skip
    """bag_size[bag] = max_indices[bag] = the size of every bag < n_bags <= BAG_BLOCKS * BLOCK_BAGS (mean), 0
    (sum: aten's CPU sum mode leaves them 0, its backward does not read them), in blocks of BLOCK_BAGS."""
    for k in tl.static_range(BAG_BLOCKS):  # pyright: ignore[reportGeneralTypeIssues]  (Triton-only iterable)
        bag = k * BLOCK_BAGS + tl.arange(0, BLOCK_BAGS)
        is_bag = bag < n_bags
        if MEAN:
            lo = tl.load(offsets_ptr + bag, mask=is_bag, other=0)
            if INCLUDE_LAST:
                hi = tl.load(offsets_ptr + 1 + bag, mask=is_bag, other=0)
            else:
                has_next = bag + 1 < n_offsets
                hi = tl.where(has_next, tl.load(offsets_ptr + 1 + bag, mask=has_next, other=0), n_indices)
            sizes = hi - lo
        else:
            sizes = tl.zeros([BLOCK_BAGS], dtype=tl.int64)
        tl.store(bag_size_ptr + bag, sizes, mask=is_bag)
        tl.store(max_indices_ptr + bag, sizes, mask=is_bag)


@triton.jit
def _sum_bag(
    weight_ptr, indices_ptr, offsets_ptr, psw_ptr, out_ptr, offset2bag_ptr, b, cols, n_indices, n_offsets,
    write_offset2bag, D: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_ROWS: tl.constexpr, MEAN: tl.constexpr,
    HAS_PSW: tl.constexpr, INCLUDE_LAST: tl.constexpr, WRITE_OFFSET2BAG: tl.constexpr, ALL_IDS: tl.constexpr,
):  # fmt: skip
    """Bag b: out_ptr[cols] = sum (mean) of weight[indices[i], cols] over offsets[b] <= i < end (offsets[b + 1], or
    n_indices for the last bag when not INCLUDE_LAST), rows scaled by psw[i] when HAS_PSW; an empty bag is 0.
    offset2bag[i] = b for the bag's ids when WRITE_OFFSET2BAG and `write_offset2bag` (one program of the bag's).

    With ALL_IDS > 0 (a power of two >= n_indices, `all_ids_block`), every id is loaded in one DMA issued
    before the offsets are read, so the two loads overlap instead of the ids waiting for the bag's start, and
    each step's ids are picked from that tile in LS (`tl.gather`); with 0, each step loads its ids.

    Shapes: cols tensor<BLOCK_D x i32> (columns >= D are masked off); the rows are gathered BLOCK_ROWS at a time.
    """
    col_ok = cols < D
    if ALL_IDS > 0:
        every = tl.arange(0, ALL_IDS)
        all_ids = tl.load(indices_ptr + every, mask=every < n_indices, other=0)
    start = tl.load(offsets_ptr + b)
    if INCLUDE_LAST:
        end = tl.load(offsets_ptr + b + 1)
    else:
        end = tl.load(offsets_ptr + b + 1, mask=b + 1 < n_offsets, other=n_indices)
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for i0 in range(start, end, BLOCK_ROWS):
        r = i0 + tl.arange(0, BLOCK_ROWS)
        in_bag = r < end
        if ALL_IDS > 0:
            ids = tl.gather(all_ids, tl.where(in_bag, r, 0).to(tl.int32), 0)  # pyright: ignore[reportPossiblyUnboundVariable]  (ALL_IDS is constexpr)
        else:
            ids = tl.load(indices_ptr + r, mask=in_bag, other=0)
        rows = tl.load(weight_ptr + ids[:, None] * D + cols[None, :], mask=in_bag[:, None] & col_ok[None, :], other=0.0)
        if HAS_PSW:
            rows = rows * tl.load(psw_ptr + r, mask=in_bag, other=0.0)[:, None]
        acc += tl.sum(rows.to(tl.float32), 0)
        if WRITE_OFFSET2BAG:
            if write_offset2bag:
                tl.store(offset2bag_ptr + r, tl.zeros([BLOCK_ROWS], dtype=tl.int64) + b, mask=in_bag)
    if MEAN:
        acc = acc / tl.maximum(end - start, 1).to(tl.float32)
    tl.store(out_ptr + cols, acc.to(out_ptr.dtype.element_ty), mask=col_ok)


@triton.jit
def _embedding_bag_kernel(
    weight_ptr, indices_ptr, offsets_ptr, psw_ptr, out_ptr, offset2bag_ptr, bag_size_ptr, max_indices_ptr,
    n_indices, n_offsets, n_bags, D: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_ROWS: tl.constexpr,
    BLOCK_BAGS: tl.constexpr, BAG_BLOCKS: tl.constexpr, MEAN: tl.constexpr, HAS_PSW: tl.constexpr,
    INCLUDE_LAST: tl.constexpr, WRITE_OFFSET2BAG: tl.constexpr, ALL_IDS: tl.constexpr,
):  # fmt: skip
    """Bag `program_id(0)`, columns `program_id(1) * BLOCK_D ...` (`_sum_bag`) into out[b, cols]; offset2bag by
    the programs of the first columns. Program (0, 0) also writes the bag sizes of all n_bags bags
    (`_write_bag_sizes`, off the other programs' path)."""
    b = tl.program_id(0)
    if b == 0:
        if tl.program_id(1) == 0:
            _write_bag_sizes(
                offsets_ptr, bag_size_ptr, max_indices_ptr, n_indices, n_offsets, n_bags, BLOCK_BAGS, BAG_BLOCKS,
                MEAN, INCLUDE_LAST,
            )  # fmt: skip
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    _sum_bag(
        weight_ptr, indices_ptr, offsets_ptr, psw_ptr, out_ptr + b * D, offset2bag_ptr, b, cols, n_indices, n_offsets,
        tl.program_id(1) == 0, D, BLOCK_D, BLOCK_ROWS, MEAN, HAS_PSW, INCLUDE_LAST, WRITE_OFFSET2BAG, ALL_IDS,
    )  # fmt: skip


@triton_op("mtia_xdsl::embedding_bag", mutates_args=())
def embedding_bag_sum(
    weight: torch.Tensor,
    indices: torch.Tensor,
    offsets: torch.Tensor,
    mode: int,
    per_sample_weights: torch.Tensor | None,
    include_last_offset: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """`aten._embedding_bag(weight, indices, offsets, mode=mode, ...)` for mode 0 (sum) or 1 (mean), no
    padding index: (output [bags, D], offset2bag, bag_size [bags], max_indices [bags]) with the shapes and
    values of aten's CPU kernel (offset2bag is [0] for a sum of f32/f16 rows, as aten's fast path leaves it;
    bag_size and max_indices are the bag sizes for mean, 0 for sum).
    weight [rows, D] contiguous, indices and offsets 1-D (any stride, as per_sample_weights).

    Raises: RuntimeError for ids or offsets eager refuses (`check_bag_inputs`), before the launch."""
    check_bag_inputs(weight.shape[0], indices, offsets)
    n, d = indices.shape[0], weight.shape[1]
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    write_offset2bag = writes_offset2bag(mode, weight.dtype, per_sample_weights)
    out = weight.new_empty(bags, d)
    offset2bag = offsets.new_empty(n if write_offset2bag else 0)
    bag_size = offsets.new_empty(bags)
    max_indices = offsets.new_empty(bags)
    block_d = min(triton.next_power_of_2(d), MAX_BLOCK_D)
    block_bags = min(triton.next_power_of_2(bags), MAX_BLOCK_BAGS)
    # the kernel reads ids, offsets and weights at unit stride (aten's offset2bag rule above reads psw's own stride)
    indices, offsets = indices.contiguous(), offsets.contiguous()
    psw = per_sample_weights.contiguous() if per_sample_weights is not None else weight
    if bags > 0:
        wrap_triton(_embedding_bag_kernel)[(bags, triton.cdiv(d, block_d))](
            weight, indices, offsets, psw, out, offset2bag, bag_size, max_indices, n, offsets.shape[0], bags,
            d, block_d, BLOCK_ROWS, block_bags, triton.cdiv(bags, block_bags), mode == 1,
            per_sample_weights is not None, include_last_offset, write_offset2bag, all_ids_block(n),
        )  # fmt: skip
    return out, offset2bag, bag_size, max_indices


@triton.jit
def _embedding_bag_cat_kernel(
    weights, indices, offsets, psws, out_ptr, offset2bags, bag_sizes, max_indices, n_indices, n_offsets, n_bags,
    stride_bag, stride_table, T: tl.constexpr, D: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_ROWS: tl.constexpr,
    BLOCK_BAGS: tl.constexpr, BAG_BLOCKS: tl.constexpr, MEAN: tl.constexpr, HAS_PSW: tl.constexpr,
    INCLUDE_LAST: tl.constexpr, WRITE_OFFSET2BAG: tl.constexpr, ALL_IDS: tl.constexpr,
):  # fmt: skip
    """Bag `program_id(0)` of table `program_id(1)` (< T), all D columns (`_sum_bag`), stored at
    out_ptr + b * stride_bag + t * stride_table + cols, with offset2bags[t]; program (0, t) writes the table's
    bag sizes (`_write_bag_sizes`). weights, indices, offsets, psws, offset2bags, bag_sizes, max_indices and
    n_indices are tuples of T (one per table)."""
    b = tl.program_id(0)
    t = tl.program_id(1)
    cols = tl.arange(0, BLOCK_D)
    for k in tl.static_range(T):  # pyright: ignore[reportGeneralTypeIssues]  (Triton-only iterable)
        if t == k:
            if b == 0:
                _write_bag_sizes(
                    offsets[k], bag_sizes[k], max_indices[k], n_indices[k], n_offsets, n_bags, BLOCK_BAGS, BAG_BLOCKS,
                    MEAN, INCLUDE_LAST,
                )  # fmt: skip
            _sum_bag(
                weights[k], indices[k], offsets[k], psws[k], out_ptr + b * stride_bag + k * stride_table,
                offset2bags[k], b, cols, n_indices[k], n_offsets, True, D, BLOCK_D, BLOCK_ROWS, MEAN, HAS_PSW,
                INCLUDE_LAST, WRITE_OFFSET2BAG, ALL_IDS,
            )  # fmt: skip


@triton_op("mtia_xdsl::embedding_bag_cat", mutates_args=())
def embedding_bag_cat(
    weights: list[torch.Tensor],
    indices: list[torch.Tensor],
    offsets: list[torch.Tensor],
    mode: int,
    per_sample_weights: list[torch.Tensor],
    include_last_offset: bool,
    dim: int,
) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor], list[torch.Tensor]]:
    """`torch.cat([aten._embedding_bag(weights[t], indices[t], offsets[t], mode=mode, ...)[0] for t], dim)`
    for T tables of one dtype and width D, mode 0 (sum) or 1 (mean), no padding index, bags by offsets of
    one length: [bags, T * D] for dim 1, [T * bags, D] for dim 0, and the per-table offset2bag, bag sizes and
    max_indices of `embedding_bag_sum` (a backward reads them). One launch, one program per (bag, table),
    each writing its bag straight into the concatenated result (no per-table output and copy).
    weights [rows_t, D] contiguous; indices, offsets and per_sample_weights 1-D (any stride);
    per_sample_weights is empty (no scaling) or one per table.

    Raises: ValueError for tables of different widths or dtypes, offsets of different lengths, a D wider
    than MAX_BLOCK_D, dim not 0 or 1, per_sample_weights neither empty nor one per table, or tables of
    which aten writes offset2bag for some only (per-sample weights of different strides); RuntimeError for ids
    or offsets eager refuses (`check_bag_inputs`, table by table), before the launch."""
    n_tables = len(weights)
    if not (n_tables == len(indices) == len(offsets)) or n_tables == 0:
        raise ValueError("embedding_bag_cat: weights, indices and offsets need one entry per table (at least one)")
    d, dtype, n_offsets = weights[0].shape[1], weights[0].dtype, offsets[0].shape[0]
    if any(w.shape[1] != d or w.dtype != dtype for w in weights) or any(o.shape[0] != n_offsets for o in offsets):
        raise ValueError("embedding_bag_cat: tables need one width and dtype, and offsets one length")
    if d > MAX_BLOCK_D or dim not in (0, 1):
        raise ValueError(f"embedding_bag_cat: D={d} > MAX_BLOCK_D={MAX_BLOCK_D} or dim={dim} not 0 or 1")
    if len(per_sample_weights) not in (0, n_tables):
        raise ValueError("embedding_bag_cat: per_sample_weights needs no entry or one per table")
    write = {writes_offset2bag(mode, dtype, p) for p in per_sample_weights or [None]}
    if len(write) != 1:
        raise ValueError("embedding_bag_cat: per_sample_weights need one stride (1 or not) across tables")
    write_offset2bag = write.pop()
    for w, i, o in zip(weights, indices, offsets, strict=True):
        check_bag_inputs(w.shape[0], i, o)
    bags = n_offsets - (1 if include_last_offset else 0)
    out = weights[0].new_empty((bags, n_tables * d) if dim == 1 else (n_tables * bags, d))
    offset2bags = [o.new_empty(i.shape[0] if write_offset2bag else 0) for o, i in zip(offsets, indices, strict=True)]
    bag_sizes = [o.new_empty(bags) for o in offsets]
    max_indices = [o.new_empty(bags) for o in offsets]
    stride_bag, stride_table = (n_tables * d, d) if dim == 1 else (d, bags * d)
    block_bags = min(triton.next_power_of_2(bags), MAX_BLOCK_BAGS)
    ws = tuple(w.contiguous() for w in weights)
    ids = tuple(i.contiguous() for i in indices)
    offs = tuple(o.contiguous() for o in offsets)
    psws = tuple(p.contiguous() for p in per_sample_weights) if per_sample_weights else ws
    if bags > 0:
        wrap_triton(_embedding_bag_cat_kernel)[(bags, n_tables)](
            ws, ids, offs, psws, out, tuple(offset2bags), tuple(bag_sizes), tuple(max_indices),
            tuple(i.shape[0] for i in ids), n_offsets, bags, stride_bag, stride_table, n_tables, d,
            triton.next_power_of_2(d), BLOCK_ROWS, block_bags, triton.cdiv(bags, block_bags), mode == 1,
            len(per_sample_weights) > 0, include_last_offset, write_offset2bag,
            all_ids_block(max(i.shape[0] for i in ids)),
        )  # fmt: skip
    return out, offset2bags, bag_sizes, max_indices


BACKWARD_BLOCK_ROWS = (16, 64)
"""Rows of the weight gradient per program of `embedding_bag_backward` (a [rows, D] tile), least and most: the
least power of two in that range that gives every program a PE of its own (`backward_block_rows`). Every
program computes its ids' gradient rows again, so fewer rows per program only pay while PEs are idle (the
rows' one-hot compare, the longest step, shrinks with them)."""
BACKWARD_MAX_BLOCK = 64
"""Ids and bags per step of `embedding_bag_backward`'s loops (the K of its two `tl.dot`s) at most: their count
rounded up to a power of two, at least 16 (the `tl.dot` operand minimum)."""
BACKWARD_MAX_WORK = 1 << 24
"""Most (weight rows) x (ids) x (bags) `embedding_bag_backward` takes: its one-hot products cost that many
multiply-adds over D columns (the dense form has no atomics and no sort, but grows with all three); larger bags
stay aten's host call (`backward_unsupported`)."""
BACKWARD_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
"""Gradient dtypes `embedding_bag_backward` takes (it accumulates in f32)."""


def backward_unsupported(
    grad: torch.Tensor, indices: torch.Tensor, offsets: torch.Tensor, num_weights: int, scale_grad_by_freq: bool,
    mode: int, sparse: bool,
) -> str | None:  # fmt: skip
    """Why `embedding_bag_backward` cannot compute `aten._embedding_bag_backward(grad, indices, offsets, ...,
    num_weights, scale_grad_by_freq, mode, sparse, ...)`, or None if it can: the one rule for which embedding-bag
    backwards run on MTIA. Taken: a dense gradient of sum or mean bags (mode 0 or 1), no scaling by frequency,
    grad [bags, D] of a dtype in BACKWARD_DTYPES with D <= MAX_BLOCK_D, indices and offsets 1-D, and at most
    BACKWARD_MAX_WORK rows x ids x bags. The reason names the first condition that fails (the coverage table of
    benchmarks/inductor.py prints it)."""
    if sparse or scale_grad_by_freq or mode not in (0, 1):
        return f"sparse={sparse}, scale_grad_by_freq={scale_grad_by_freq}, mode={mode} (dense sum or mean only)"
    if grad.dim() != 2 or indices.dim() != 1 or offsets.dim() != 1:
        return f"grad of {grad.dim()}, indices of {indices.dim()}, offsets of {offsets.dim()} dimensions (2, 1, 1)"
    if grad.dtype not in BACKWARD_DTYPES or grad.shape[1] > MAX_BLOCK_D:
        return f"grad {grad.dtype} [.., {grad.shape[1]}] (f32, f16 or bf16, at most {MAX_BLOCK_D} columns)"
    work = num_weights * indices.shape[0] * grad.shape[0]
    if work > BACKWARD_MAX_WORK:
        return f"{num_weights} rows x {indices.shape[0]} ids x {grad.shape[0]} bags > {BACKWARD_MAX_WORK}"
    return None


@triton.jit
def _id_gradients(
    grad_ptr, bag_size_ptr, offsets_ptr, i, n_indices, n_offsets, n_bags, stride_gb, stride_gd, cols,
    D: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_B: tl.constexpr, MEAN: tl.constexpr,
):  # fmt: skip
    """The gradient row each id of `i` receives, grad[bag of i] (/ bag_size of that bag for MEAN), as
    `P @ grad`: P[i, b] = 1 when offsets[b] <= i < the bag's end (offsets[b + 1], or n_indices for a last bag
    with no entry after it), bags BLOCK_B at a time (a bag past n_bags starts at n_indices: no ids).
    Shapes: i tensor<BLOCK_N x i32>, cols tensor<BLOCK_D x i32> -> tensor<BLOCK_N x BLOCK_D x f32>."""
    g_ids = tl.zeros([BLOCK_N, cols.shape[0]], dtype=tl.float32)
    for b0 in range(0, n_bags, BLOCK_B):
        bags = b0 + tl.arange(0, BLOCK_B)
        is_bag = bags < n_bags
        start = tl.where(is_bag, tl.load(offsets_ptr + bags, mask=is_bag, other=0).to(tl.int32), n_indices)
        has_next = bags + 1 < n_offsets
        end = tl.where(has_next, tl.load(offsets_ptr + 1 + bags, mask=has_next, other=0).to(tl.int32), n_indices)
        rows = tl.load(grad_ptr + bags[:, None] * stride_gb + cols[None, :] * stride_gd,
                       mask=is_bag[:, None] & (cols[None, :] < D), other=0.0).to(tl.float32)  # fmt: skip
        if MEAN:
            size = tl.load(bag_size_ptr + bags, mask=is_bag, other=1)
            rows = rows / tl.maximum(size, 1).to(tl.float32)[:, None]
        member = (start[None, :] <= i[:, None]) & (i[:, None] < end[None, :])
        g_ids = tl.dot(member.to(tl.float32), rows, g_ids, input_precision="ieee")
    return g_ids


@triton.jit
def _embedding_bag_backward_kernel(
    grad_ptr, indices_ptr, offsets_ptr, bag_size_ptr, psw_ptr, out_ptr, n_indices, n_offsets, n_bags, num_weights,
    stride_gb, stride_gd, padding_idx, D: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_R: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_B: tl.constexpr, MEAN: tl.constexpr, HAS_PSW: tl.constexpr,
):  # fmt: skip
    """out[r, :D] = sum over ids i with indices[i] == r (and != padding_idx) of psw[i] * grad[bag of i]
    (/ its bag size for MEAN), for the rows r of block `program_id(0)`: `onehot(rows, indices) @ g_ids`, ids
    BLOCK_N at a time, every row of the block written once (0 for rows no id names). Ids and offsets are
    compared as i32 (the caller checks they fit)."""
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_D)
    acc = tl.zeros([BLOCK_R, BLOCK_D], dtype=tl.float32)
    for i0 in range(0, n_indices, BLOCK_N):
        i = i0 + tl.arange(0, BLOCK_N)
        is_id = i < n_indices
        ids = tl.load(indices_ptr + i, mask=is_id, other=-1).to(tl.int32)
        ids = tl.where(ids == padding_idx, -1, ids)
        g_ids = _id_gradients(
            grad_ptr, bag_size_ptr, offsets_ptr, i, n_indices, n_offsets, n_bags, stride_gb, stride_gd, cols, D,
            BLOCK_N, BLOCK_B, MEAN,
        )  # fmt: skip
        if HAS_PSW:
            g_ids = g_ids * tl.load(psw_ptr + i, mask=is_id, other=0.0).to(tl.float32)[:, None]
        hits = (rows[:, None] == ids[None, :]).to(tl.float32)
        acc = tl.dot(hits, g_ids, acc, input_precision="ieee")
    keep = (rows[:, None] < num_weights) & (cols[None, :] < D)
    tl.store(out_ptr + rows[:, None] * D + cols[None, :], acc.to(out_ptr.dtype.element_ty), mask=keep)


def backward_block_rows(num_weights: int) -> int:
    """Rows per program of `embedding_bag_backward` for a table of `num_weights` rows: the least power of two in
    BACKWARD_BLOCK_ROWS whose programs fit on the PEs of the driver's chip (`MachineConfig.n_pes`), else the most."""
    from mtia_xdsl.runtime.triton_backend.driver import target_machine_config

    least, most = BACKWARD_BLOCK_ROWS
    rows = least
    while rows < most and triton.cdiv(num_weights, rows) > target_machine_config().n_pes:
        rows *= 2
    return rows


def _backward_block(count: int) -> int:
    """Ids or bags per loop step of `embedding_bag_backward`: `count`'s next power of two, within
    [16, BACKWARD_MAX_BLOCK]."""
    return min(max(triton.next_power_of_2(count), 16), BACKWARD_MAX_BLOCK)


@triton_op("mtia_xdsl::embedding_bag_backward", mutates_args=())
def embedding_bag_backward(
    grad: torch.Tensor,
    indices: torch.Tensor,
    offsets: torch.Tensor,
    bag_size: torch.Tensor,
    num_weights: int,
    mode: int,
    per_sample_weights: torch.Tensor | None,
    padding_idx: int,
) -> torch.Tensor:
    """`aten._embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size, max_indices, num_weights,
    False, mode, False, per_sample_weights, padding_idx)` for mode 0 (sum) or 1 (mean): the dense gradient of
    the weight table, [num_weights, D] of grad's dtype, row r the sum over the ids naming r (padding_idx's
    excepted) of their bag's gradient row (scaled by the id's per-sample weight; divided by bag_size for mean).
    Duplicate ids accumulate, as one-hot matrix products on the DPE (no atomics): each program writes a block of
    `backward_block_rows(num_weights)` rows, zeros included. Sums are in f32 in another order than aten's
    (equal within f32 rounding, not bit for bit).

    Shapes: grad [bags, D] (any strides), indices [N], offsets [bags] or [bags + 1] (include_last_offset),
    bag_size [bags] (read for mean), per_sample_weights [N] or None. Requires: `backward_unsupported(...)` is None
    (not checked here)."""
    n, (bags, d) = indices.shape[0], grad.shape
    out = grad.new_empty(num_weights, d)
    psw = per_sample_weights.contiguous() if per_sample_weights is not None else grad
    if num_weights > 0:
        block_rows = backward_block_rows(num_weights)
        wrap_triton(_embedding_bag_backward_kernel)[(triton.cdiv(num_weights, block_rows),)](
            grad, indices.contiguous(), offsets.contiguous(), bag_size.contiguous(), psw, out, n, offsets.shape[0],
            bags, num_weights, grad.stride(0), grad.stride(1), padding_idx, d, max(triton.next_power_of_2(d), 16),
            block_rows, _backward_block(n), _backward_block(bags), mode == 1, per_sample_weights is not None,
        )  # fmt: skip
    return out

"""Embedding bags and the MLP they feed in one launch: the post-grad pass `fuse_bag_mlps` and its kernel.

A two-tower model pools each tower's ids (`nn.EmbeddingBag` of a 2-D input: bags of L ids each, offsets
`arange(0, N, L)`) and runs the pooled rows through a small MLP per tower. After
`inductor_bag_groups.group_embedding_bags` and `inductor_linear_groups.group_linears` that is one
`embedding_bag_cat` launch, then one `linear_group` launch per layer: each launch pays its own DRAM round
trips (a load of its input about 300 cycles, a store about 140, MachineConfig.dram_latency_cycles and
dma_issue_cycles; docs/machine.md) for a few thousand multiply-adds.

`fuse_bag_mlps` (run by Inductor's post-grad custom pass after `group_linears`) turns an `embedding_bag_cat`
of fixed-step bags along dim 0 whose per-table rows feed a `linear_group` (and that group's outputs the next
`linear_group`, and so on) into the custom op `mtia_xdsl::embedding_bag_mlp` (`embedding_bag_mlp`): one
program per (block of bags, table) gathers its bags' rows (one indexed DMA), sums them with a one-hot
product on the DPE, and runs them through every layer, the weights loaded while the ids and rows are on
their way; two layers run as `_split_pair` (the first in two column halves, so that the SE's relu of one
half overlaps the DPE's product of the other); one more program per table writes the bag sizes and the
offsets. The op still writes the bags' output, their sizes and every layer's output, for the readers the
grouped ops had (a training step saves them for backward).

What stays unfused, and why: layers without a bias (`nn.Linear(..., bias=False)` is `aten.mm`, which
`group_linears` does not group: `linear_group` takes a bias per layer, so no `linear_group` follows the bags);
an activation other than relu between two layers ends the chain there (the op, as `linear_group`, folds
only relu), while one after the last layer is a reader of the op's output (Inductor puts it in the launch of
the pointwise work that follows); tables, layers or bags whose program does not fit a PE's LS
(`ls_bytes_needed`). Imports torch and triton when loaded: import it only once Inductor has loaded.
"""

# Triton has no type stubs and a @triton.jit kernel's parameters are untyped by Triton's convention:
# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false, reportUnknownVariableType=false
# pyright: reportUnknownArgumentType=false, reportUnknownParameterType=false, reportMissingParameterType=false
# pyright: reportUntypedFunctionDecorator=false
# A kernel's tiles are bound under `if` on constexprs (SPLIT, LAYERS), which Triton resolves when it compiles:
# pyright: reportPossiblyUnboundVariable=false

from __future__ import annotations

import operator
from typing import Any

import torch
import triton
import triton.language as tl
from torch._inductor.pattern_matcher import stable_topological_sort
from torch.library import triton_op, wrap_triton

from mtia_xdsl.runtime import inductor_kernels, inductor_linear_groups
from mtia_xdsl.runtime.inductor_bag_groups import ancestors

MIN_DOT = 16
"""Rows, columns and depth of a `tl.dot` operand at least: a block of fewer bags pads its product to 16 rows."""
MAX_WIDTH = 256
"""Table width D and layer widths N at most (one block of columns each); what fits LS besides: `ls_bytes_needed`."""
MAX_IDS_PER_PROGRAM = 64
"""Ids a program gathers at most (its bags' rows, one indexed DMA): see `bags_per_program`."""
MAX_LAYERS = 3
"""Layers of the MLP `embedding_bag_mlp` runs per table at most."""
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
"""Dtypes `embedding_bag_mlp` takes (it accumulates in f32, "ieee" precision for f32 as the GEMM templates)."""


def _pow2(n: int, least: int = MIN_DOT) -> int:
    """`n`'s next power of two, at least `least`."""
    return max(triton.next_power_of_2(max(n, 1)), least)


@triton.jit
def _load_weight(w_ptr, sw_k, sw_n, K: tl.constexpr, N: tl.constexpr, BK: tl.constexpr, BN: tl.constexpr):
    """A layer's weight [K, N] (strides sw_k, sw_n) as a [BN, BK] tile (its transpose: `nn.Linear`'s weight as
    it lies in memory), zero-padded."""
    rk = tl.arange(0, BK)
    rn = tl.arange(0, BN)
    if K == BK and N == BN:
        return tl.load(w_ptr + rn[:, None] * sw_n + rk[None, :] * sw_k)
    else:
        return tl.load(w_ptr + rn[:, None] * sw_n + rk[None, :] * sw_k, mask=(rn < N)[:, None] & (rk < K)[None, :],
                       other=0.0)  # fmt: skip


@triton.jit
def _bias(b_ptr, N: tl.constexpr, BN: tl.constexpr, BLOCK_M: tl.constexpr):
    """A layer's bias [N] broadcast to [BLOCK_M, BN] in f32 (the accumulator of its product), zero-padded."""
    rn = tl.arange(0, BN)
    return (
        tl.zeros([BLOCK_M, BN], dtype=tl.float32) + tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    )


@triton.jit
def _layer(h, w, b, h_ptr, rows, row_ok, N: tl.constexpr, RELU: tl.constexpr, IEEE: tl.constexpr):
    """(relu of) h @ w.T + b in f32 (b: the [BLOCK_M, BN] accumulator of `_bias`), stored at
    h_ptr + rows * N (rows where row_ok, columns < N); returned."""
    h = _dot(h.to(w.dtype), w, b, IEEE)
    if RELU:
        h = tl.maximum(h, 0.0)
    _store_tile(h, h_ptr, rows, row_ok, 0, N)
    return h


@triton.jit
def _column_halves(t):
    """[R, C] -> its columns [:C // 2] and [C // 2:] (on the MLU)."""
    return tl.split(tl.permute(tl.reshape(t, [t.shape[0], 2, t.shape[1] // 2]), (0, 2, 1)))


@triton.jit
def _store_tile(h, h_ptr, rows, row_ok, col0, N: tl.constexpr):
    """h [BLOCK_M, C] into h_ptr + rows * N + col0 + c (rows where row_ok, columns < N)."""
    rn = col0 + tl.arange(0, h.shape[1])
    tl.store(
        h_ptr + rows[:, None] * N + rn[None, :], h.to(h_ptr.dtype.element_ty), mask=row_ok[:, None] & (rn < N)[None, :]
    )


@triton.jit
def _dot(x, w, acc, IEEE: tl.constexpr):
    """acc + x @ w.T (w: a natural [N, K] weight tile)."""
    return _dotk(x, tl.trans(w), acc, IEEE)


@triton.jit
def _split_pair(
    h, w0a, w0b, b0a, b0b, w1a, w1b, b1, hs0, hs1, rows, row_ok, N0: tl.constexpr, N1: tl.constexpr,
    RELU0: tl.constexpr, RELU1: tl.constexpr, IEEE: tl.constexpr,
):  # fmt: skip
    """Layers 0 and 1 with layer 0 in two column halves (w0a, w0b [K, N0 / 2]; b0a, b0b their accumulators)
    and layer 1 in the matching two K halves (w1a, w1b [N0 / 2, N1]): the SE's relu of one half runs while the
    DPE computes the other, and layer 1's first product follows layer 0's second with no idle DPE between."""
    x = h.to(w0a.dtype)
    ha = _dotk(x, w0a, b0a, IEEE)
    hb = _dotk(x, w0b, b0b, IEEE)
    if RELU0:
        ha = tl.maximum(ha, 0.0)
    _store_tile(ha, hs0, rows, row_ok, 0, N0)
    h2 = _dotk(ha.to(w1a.dtype), w1a, b1, IEEE)
    if RELU0:
        hb = tl.maximum(hb, 0.0)
    _store_tile(hb, hs0, rows, row_ok, w0a.shape[1], N0)
    h2 = _dotk(hb.to(w1b.dtype), w1b, h2, IEEE)
    if RELU1:
        h2 = tl.maximum(h2, 0.0)
    _store_tile(h2, hs1, rows, row_ok, 0, N1)
    return h2


@triton.jit
def _dotk(x, w, acc, IEEE: tl.constexpr):
    """acc + x @ w (w: [K, N])."""
    if IEEE:
        return tl.dot(x, w, acc, input_precision="ieee")
    else:
        return tl.dot(x, w, acc)


@triton.jit
def _load_weights(
    ws, k, blk, sw_k, sw_n, LAYERS: tl.constexpr, KS: tl.constexpr, NS: tl.constexpr, BKS: tl.constexpr,
    BNS: tl.constexpr,
):  # fmt: skip
    """The weights of table k's layers (`_load_weight`; a layer past LAYERS repeats layer 0's, unused). Odd
    blocks load layer 1 before layer 0, so that the first read of each, from DRAM, is by a program of its own
    (the first program to read a weight gets it from DRAM, the later ones from the LLC; a PE's DMA read port
    moves one transfer after another)."""
    if LAYERS > 1:
        if blk % 2 == 1:
            w1 = _load_weight(ws[k * LAYERS + 1], sw_k[1], sw_n[1], KS[1], NS[1], BKS[1], BNS[1])
            w0 = _load_weight(ws[k * LAYERS], sw_k[0], sw_n[0], KS[0], NS[0], BKS[0], BNS[0])
        else:
            w0 = _load_weight(ws[k * LAYERS], sw_k[0], sw_n[0], KS[0], NS[0], BKS[0], BNS[0])
            w1 = _load_weight(ws[k * LAYERS + 1], sw_k[1], sw_n[1], KS[1], NS[1], BKS[1], BNS[1])
    else:
        w0 = _load_weight(ws[k * LAYERS], sw_k[0], sw_n[0], KS[0], NS[0], BKS[0], BNS[0])
        w1 = w0
    if LAYERS > 2:
        w2 = _load_weight(ws[k * LAYERS + 2], sw_k[2], sw_n[2], KS[2], NS[2], BKS[2], BNS[2])
    else:
        w2 = w0
    return w0, w1, w2


@triton.jit
def _biases(bs, k, LAYERS: tl.constexpr, NS: tl.constexpr, BNS: tl.constexpr, BLOCK_M: tl.constexpr):
    """The accumulators of table k's layers (`_bias`; a layer past LAYERS repeats layer 0's, unused)."""
    b0 = _bias(bs[k * LAYERS], NS[0], BNS[0], BLOCK_M)
    b1 = b0
    b2 = b0
    if LAYERS > 1:
        b1 = _bias(bs[k * LAYERS + 1], NS[1], BNS[1], BLOCK_M)
    if LAYERS > 2:
        b2 = _bias(bs[k * LAYERS + 2], NS[2], BNS[2], BLOCK_M)
    return b0, b1, b2


@triton.jit
def _pick(j, L: tl.constexpr, BLOCK_M: tl.constexpr, MEAN: tl.constexpr, dtype: tl.constexpr):
    """[BLOCK_M, BLOCK_IDS] one-hot of each id j's bag (j // L), times 1 / L for a MEAN over a power of two L
    (exact: the same rounding as the sum divided by L)."""
    m = tl.arange(0, BLOCK_M)
    pick = ((j[None, :] // L) == m[:, None]).to(dtype)
    if MEAN and (L & (L - 1)) == 0:
        pick = pick * (1.0 / L)
    return pick


@triton.jit
def _bag_rows(pick, rows, L: tl.constexpr, MEAN: tl.constexpr, IEEE: tl.constexpr):
    """The bags' sums (means) [BLOCK_M, BLOCK_D] in f32: pick @ rows (then / L for a MEAN that `_pick` left)."""
    if IEEE:
        h = tl.dot(pick, rows, input_precision="ieee")
    else:
        h = tl.dot(pick, rows)
    if MEAN and (L & (L - 1)) != 0:
        h = h / L
    return h


@triton.jit
def _write_sizes(size_ptr, offsets_ptr, k, n_bags, L: tl.constexpr, MEAN: tl.constexpr, BLOCK_OFFSETS: tl.constexpr):
    """The sizes of table k's n_bags bags (L for MEAN, else 0) into size_ptr; for table 0 also the offsets
    arange(0, n_bags * L, L) (BLOCK_OFFSETS >= n_bags); both of the pointers' dtype (the ids', int64 or int32)."""
    o = tl.arange(0, BLOCK_OFFSETS)
    tl.store(size_ptr + o, tl.zeros([BLOCK_OFFSETS], dtype=size_ptr.dtype.element_ty) + (L if MEAN else 0),
             mask=o < n_bags)  # fmt: skip
    if k == 0:
        tl.store(offsets_ptr + o, (o.to(tl.int64) * L).to(offsets_ptr.dtype.element_ty), mask=o < n_bags)


@triton.jit
def _store_bags(h, out_ptr, k, first, rows_left, n_bags, D: tl.constexpr, BLOCK_D: tl.constexpr):
    """Bags first ... first + rows_left of table k into out [G * n_bags, D]. Returns (rows of out, their mask)
    [BLOCK_M]: the layers' rows too."""
    m = tl.arange(0, h.shape[0])
    cols = tl.arange(0, BLOCK_D)
    row_ok = m < rows_left
    out_rows = k * n_bags + first + m
    tl.store(out_ptr + out_rows[:, None] * D + cols[None, :], h.to(out_ptr.dtype.element_ty),
             mask=row_ok[:, None] & (cols < D)[None, :])  # fmt: skip
    return out_rows, row_ok


@triton.jit
def _bag_mlp_tile(
    weight_ptr, ids_ptr, out_ptr, size_ptr, offsets_ptr, ws, bs, hs, blk, n_bags, k, sw_k, sw_n,
    L: tl.constexpr, D: tl.constexpr, BLOCK_D: tl.constexpr, BAGS: tl.constexpr, BLOCK_M: tl.constexpr,
    BLOCK_IDS: tl.constexpr, MEAN: tl.constexpr, LAYERS: tl.constexpr, KS: tl.constexpr, NS: tl.constexpr,
    BKS: tl.constexpr, BNS: tl.constexpr, RELUS: tl.constexpr, IEEE: tl.constexpr, BLOCK_OFFSETS: tl.constexpr,
    SPLIT: tl.constexpr,
):  # fmt: skip
    """Bags blk * BAGS ... (< n_bags) of table k: the rows of ids [bag * L, bag * L + L) summed (MEAN: / L) into
    out [G * n_bags, D] at row k * n_bags + bag and their sizes (L for MEAN, else 0) into size_ptr [n_bags],
    then layer l < LAYERS (<= 3): h_l = (relu of) h_(l-1) @ ws[k * LAYERS + l] + bs[k * LAYERS + l] into
    hs[l] [G, n_bags, NS[l]]; block 0 of table 0 also writes the offsets arange(0, n_bags * L, L) (the ids'
    dtype, BLOCK_OFFSETS >= n_bags). In program order: the ids, the weights (their DRAM latency and transfer under
    the ids' and the rows'), the rows (one indexed DMA), the biases (behind the rows: they are needed last)."""
    first = blk * BAGS
    rows_left = tl.minimum(n_bags - first, BAGS)
    j = tl.arange(0, BLOCK_IDS)
    in_block = j < rows_left * L
    ids = tl.load(ids_ptr + first * L + j[:, None], mask=in_block[:, None], other=0)
    if SPLIT:
        H: tl.constexpr = BNS[0] // 2
        w0a = tl.trans(_load_weight(ws[k * LAYERS], sw_k[0], sw_n[0], KS[0], H, BKS[0], H))
        w0b = tl.trans(_load_weight(ws[k * LAYERS] + H * sw_n[0], sw_k[0], sw_n[0], KS[0], NS[0] - H, BKS[0], H))
        b0a = _bias(bs[k * LAYERS], H, H, BLOCK_M)
    else:
        w0, w1, w2 = _load_weights(ws, k, blk, sw_k, sw_n, LAYERS, KS, NS, BKS, BNS)
    cols = tl.arange(0, BLOCK_D)
    if D == BLOCK_D:
        rows = tl.load(weight_ptr + ids * D + cols[None, :], mask=in_block[:, None], other=0.0)
    else:
        rows = tl.load(weight_ptr + ids * D + cols[None, :], mask=in_block[:, None] & (cols < D)[None, :],
                       other=0.0)  # fmt: skip
    pick = _pick(j, L, BLOCK_M, MEAN, rows.dtype)
    if SPLIT:
        b0b = _bias(bs[k * LAYERS] + H, NS[0] - H, H, BLOCK_M)
        b1 = _bias(bs[k * LAYERS + 1], NS[1], BNS[1], BLOCK_M)
        w1a = tl.trans(_load_weight(ws[k * LAYERS + 1], sw_k[1], sw_n[1], H, NS[1], H, BNS[1]))
        w1b = tl.trans(_load_weight(ws[k * LAYERS + 1] + H * sw_k[1], sw_k[1], sw_n[1], H, NS[1], H, BNS[1]))
    else:
        b0, b1, b2 = _biases(bs, k, LAYERS, NS, BNS, BLOCK_M)
    h = _bag_rows(pick, rows, L, MEAN, IEEE)
    out_rows, row_ok = _store_bags(h, out_ptr, k, first, rows_left, n_bags, D, BLOCK_D)
    if SPLIT:
        h = _split_pair(
            h, w0a, w0b, b0a, b0b, w1a, w1b, b1, hs[0], hs[1], out_rows, row_ok, NS[0], NS[1], RELUS[0], RELUS[1], IEEE
        )
    else:
        h = _layer(h, w0, b0, hs[0], out_rows, row_ok, NS[0], RELUS[0], IEEE)
        if LAYERS > 1:
            h = _layer(h, w1, b1, hs[1], out_rows, row_ok, NS[1], RELUS[1], IEEE)
        if LAYERS > 2:
            h = _layer(h, w2, b2, hs[2], out_rows, row_ok, NS[2], RELUS[2], IEEE)


@triton.jit
def _embedding_bag_mlp_kernel(
    weights, indices, out_ptr, sizes, offsets_ptr, ws, bs, hs, n_bags, sw_k, sw_n, G: tl.constexpr, L: tl.constexpr,
    D: tl.constexpr, BLOCK_D: tl.constexpr, BAGS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_IDS: tl.constexpr,
    MEAN: tl.constexpr, LAYERS: tl.constexpr, KS: tl.constexpr, NS: tl.constexpr, BKS: tl.constexpr, BNS: tl.constexpr,
    RELUS: tl.constexpr, IEEE: tl.constexpr, BLOCK_OFFSETS: tl.constexpr, SPLIT: tl.constexpr,
):  # fmt: skip
    """Block `program_id(0)` of bags of table `program_id(1)` (< G): `_bag_mlp_tile`; the last block (one past
    the bags') writes the table's bag sizes (and the offsets) instead (`_write_sizes`): stores that wait for no
    data, off the DMA issue slots of the programs that gather. weights, indices and sizes are tuples of G; ws
    and bs of G * LAYERS (table-major); hs of LAYERS."""
    blk = tl.program_id(0)
    t = tl.program_id(1)
    for k in tl.static_range(G):  # pyright: ignore[reportGeneralTypeIssues]  (Triton-only iterable)
        if t == k:
            if blk == tl.num_programs(0) - 1:
                _write_sizes(sizes[k], offsets_ptr, k, n_bags, L, MEAN, BLOCK_OFFSETS)
            else:
                _bag_mlp_tile(
                    weights[k], indices[k], out_ptr, sizes[k], offsets_ptr, ws, bs, hs, blk, n_bags, k, sw_k, sw_n,
                    L, D, BLOCK_D, BAGS, BLOCK_M, BLOCK_IDS, MEAN, LAYERS, KS, NS, BKS, BNS, RELUS, IEEE,
                    BLOCK_OFFSETS, SPLIT,
                )  # fmt: skip


def splits(widths: list[int]) -> bool:
    """Whether `embedding_bag_mlp` runs its layers as `_split_pair`: two layers, the first of a power-of-two width
    of at least 2 * MIN_DOT (halves that are `tl.dot` operands)."""
    return len(widths) == 2 and widths[0] == _pow2(widths[0]) and widths[0] >= 2 * MIN_DOT


def bags_per_program(n_bags: int, step: int, tables: int) -> int:
    """Bags of one table per program of `embedding_bag_mlp`: 1, doubled while the programs (and the one per
    table that writes the sizes) outnumber the chip's PEs (`MachineConfig.n_pes`) and the ids stay within
    MAX_IDS_PER_PROGRAM. The rows' DRAM transfer is the chip's either way; fewer bags per program keep each
    program's gather, behind its weights on the PE's DMA read port, short (two_tower's towers, 16 bags of 8
    ids each, were fastest at 1 bag per program on the machine model, then 2, 4, 8)."""
    from mtia_xdsl.runtime.triton_backend.driver import target_machine_config

    pes = target_machine_config().n_pes
    bags = 1
    while (triton.cdiv(n_bags, bags) + 1) * tables > pes and 2 * bags * step <= MAX_IDS_PER_PROGRAM:
        bags *= 2
    return min(bags, max(n_bags, 1))


def gather_mlp_ls_bytes(e: int, block_m: int, block_ids: int, block_d: int, d: int, widths: list[int]) -> int:
    """Bytes of a PE's LS (its CBs, each at depth 1: what mtia-cb-sizing leaves them when LS is short) that the
    tiles shared by the programs of `embedding_bag_mlp` and `inductor_jagged_bags.jagged_bag_mlp` take at most:
    rows [block_ids, block_d] of e bytes an element gathered, summed into block_m bags by a one-hot product and
    run through layers of `widths` (K_0 = d). Each kernel's `ls_bytes_needed` adds its ids, offsets and sizes
    program.

    With BK_l, BN_l of K_l, N_l (powers of two, `_pow2`), in bytes:

        e * (sum_l BK_l * BN_l + max(max_l BK_l * BN_l, block_ids * block_d))
      + 4 * block_m * max(block_d, BN_l) * (LAYERS + 3) + (e + 1) * block_m * block_ids

    Every layer's weight tile (all loaded before the first product), and either a weight tile's transpose
    (the `tl.dot` operand) or the gathered rows (never alive together); f32 tiles of block_m rows: the bags'
    sums, each layer's accumulator, and the products in flight; the one-hot pick (its mask and values)."""
    weights = [_pow2(k) * _pow2(n) for k, n in zip([d, *widths[:-1]], widths, strict=True)]
    cols = max(block_d, *(_pow2(n) for n in widths))
    return (
        e * (sum(weights) + max(*weights, block_ids * block_d))
        + 4 * block_m * cols * (len(widths) + 3)
        + (e + 1) * block_m * block_ids
    )


def ls_bytes_needed(d: int, widths: list[int], dtype: torch.dtype, n_bags: int, step: int, tables: int) -> int:
    """Bytes of a PE's LS (its CBs, each at depth 1: what mtia-cb-sizing leaves them when LS is short) that one
    program of `embedding_bag_mlp` needs at most, for tables of width d and `dtype` (e bytes an element), bags
    of `step` ids, `n_bags` per table, and layers of `widths`; `layer_widths` holds it against
    `MachineConfig.ls_bytes` of the driver's chip (384 KB on MTIA-2i, S1/S6).

    With the kernel's blocks (BLOCK_M, BLOCK_IDS = `bags_per_program` bags and their ids; BLOCK_D of D, at
    least a `tl.dot` operand; BLOCK_OFFSETS of n_bags; each a power of two, `_pow2`), in bytes:

        gather_mlp_ls_bytes(e, BLOCK_M, BLOCK_IDS, BLOCK_D, d, widths) + 16 * BLOCK_IDS + 20 * BLOCK_OFFSETS

    The tiles of the gather and the layers (`gather_mlp_ls_bytes`), the ids (int64 and their int32 offsets),
    the sizes program's bag sizes and offsets (int64) and their int32 arange. An upper bound of the LS the CBs
    take as mtia-cb-allocate placed them (`metadata.shared`, the report's `ls_high_water_bytes`), 16 bags of 8
    ids per table, two tables (tests/runtime/test_inductor_bag_mlps.py): three f32 layers of 128 x 128 take
    303,232 bytes of the 313,152 bounded; a bf16 layer of 256 x 256 303,232 of 329,024; an f32 layer of
    256 x 256 573,568 (more than LS) of 591,680."""
    bags = bags_per_program(n_bags, step, tables)
    block_ids = _pow2(bags * step)
    return (
        gather_mlp_ls_bytes(dtype.itemsize, _pow2(bags), block_ids, _pow2(d), d, widths)
        + 16 * block_ids
        + 20 * _pow2(n_bags, 1)
    )


@triton_op("mtia_xdsl::embedding_bag_mlp", mutates_args=())
def embedding_bag_mlp(
    weights: list[torch.Tensor],
    indices: list[torch.Tensor],
    step: int,
    mode: int,
    ws: list[torch.Tensor],
    bs: list[torch.Tensor],
    relus: list[bool],
) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor], torch.Tensor]:
    """For G tables of one dtype and width D, bags of `step` ids each (`aten._embedding_bag(weights[t],
    indices[t], arange(0, N, step), mode=mode)`, sum (0) or mean (1)), then a chain of LAYERS linear layers
    per table (x @ ws[t * LAYERS + l] + bs[t * LAYERS + l], through relu when relus[l]):
    (bags [G * n_bags, D], bag sizes [n_bags] per table (step for mean, 0 for sum, as aten's CPU kernel),
    layer outputs [G, n_bags, N_l] per layer, the offsets arange(0, n_bags * step, step) [n_bags] of the ids'
    dtype (int64 or int32, as `nn.EmbeddingBag` makes them for a 2-D input): what a backward of the bags reads,
    written here so that it is not a launch of its own). One launch, one program per (block of
    `bags_per_program` bags, table). indices 1-D of n_bags * step ids each; weights [rows_t, D] contiguous;
    ws [K_l, N_l] (any strides, one per layer across tables), K_0 = D and K_l = N_(l-1); bs [N_l].

    Raises: ValueError for inconsistent tables or layers, more than 3 layers, widths past MAX_WIDTH or a program
    larger than a PE's LS (`ls_bytes_needed`); RuntimeError for ids eager refuses
    (`inductor_kernels.check_bag_inputs`)."""
    widths = layer_widths(weights, indices, step, mode, ws, bs, relus)
    g, layers, d = len(weights), len(relus), weights[0].shape[1]
    n_bags = indices[0].shape[0] // step
    for w, i in zip(weights, indices, strict=True):
        inductor_kernels.check_bag_inputs(w.shape[0], i, torch.arange(0, i.shape[0], step))
    out = weights[0].new_empty(g * n_bags, d)
    sizes = [i.new_empty(n_bags) for i in indices]
    hs = [weights[0].new_empty(g, n_bags, n) for n in widths]
    offsets = indices[0].new_empty(n_bags)
    bags = bags_per_program(n_bags, step, g)
    block_m = _pow2(bags)
    if n_bags > 0:
        wrap_triton(_embedding_bag_mlp_kernel)[(triton.cdiv(n_bags, bags) + 1, g)](
            tuple(w.contiguous() for w in weights), tuple(i.contiguous() for i in indices), out, tuple(sizes), offsets,
            tuple(ws), tuple(b.contiguous() for b in bs), tuple(hs), n_bags,
            tuple(ws[i].stride(0) for i in range(layers)), tuple(ws[i].stride(1) for i in range(layers)), g, step, d,
            _pow2(d), bags, block_m, _pow2(bags * step), mode == 1, layers,
            tuple([d, *widths[:-1]]), tuple(widths), tuple(_pow2(k) for k in [d, *widths[:-1]]),
            tuple(_pow2(n) for n in widths), tuple(relus), weights[0].dtype == torch.float32,
            _pow2(n_bags, 1), splits(widths),
        )  # fmt: skip
    return out, sizes, hs, offsets


def layer_widths(
    weights: list[torch.Tensor], indices: list[torch.Tensor], step: int, mode: int, ws: list[torch.Tensor],
    bs: list[torch.Tensor], relus: list[bool],
) -> list[int]:  # fmt: skip
    """The layers' widths N_l of `embedding_bag_mlp`'s arguments. Raises: ValueError naming what does not fit."""
    g, layers = len(weights), len(relus)
    if g == 0 or len(indices) != g or not 1 <= layers <= MAX_LAYERS or len(ws) != g * layers or len(bs) != g * layers:
        raise ValueError("embedding_bag_mlp: one table and ids per table, 1 to 3 layers, ws and bs per table and layer")
    d, dtype, n = weights[0].shape[1], weights[0].dtype, indices[0].shape[0]
    if mode not in (0, 1) or step < 1 or n % step or dtype not in DTYPES or d > MAX_WIDTH:
        raise ValueError(f"embedding_bag_mlp: mode {mode}, step {step} for {n} ids, {dtype} rows of width {d}")
    if any(w.shape[1] != d or w.dtype != dtype for w in weights) or any(i.shape != (n,) for i in indices):
        raise ValueError("embedding_bag_mlp: tables need one width and dtype, and ids one length")
    widths, k = [], d
    for i in range(layers):
        w0 = ws[i]
        same = all(
            ws[t * layers + i].shape == w0.shape and ws[t * layers + i].stride() == w0.stride()
            and bs[t * layers + i].shape == (w0.shape[1],) and ws[t * layers + i].dtype == bs[t * layers + i].dtype
            == dtype for t in range(g)
        )  # fmt: skip
        if not same or w0.shape[0] != k or w0.shape[1] > MAX_WIDTH:
            raise ValueError(f"embedding_bag_mlp: layer {i} needs w [{k}, N <= {MAX_WIDTH}] and b [N] per table")
        k = w0.shape[1]
        widths.append(k)
    _check_ls(d, widths, dtype, n // step, step, g)
    return widths


def _check_ls(d: int, widths: list[int], dtype: torch.dtype, n_bags: int, step: int, tables: int) -> None:
    """Raise ValueError if a program of `embedding_bag_mlp` needs more LS (`ls_bytes_needed`) than a PE of the
    driver's chip has (`MachineConfig.ls_bytes`)."""
    from mtia_xdsl.runtime.triton_backend.driver import target_machine_config

    need, ls = ls_bytes_needed(d, widths, dtype, n_bags, step, tables), target_machine_config().ls_bytes
    if need > ls:
        raise ValueError(
            f"embedding_bag_mlp: a program of D {d}, layers {widths} of {dtype}, {n_bags} bags of {step} ids needs "
            f"up to {need} bytes of LS but a PE has {ls} (MachineConfig.ls_bytes)"
        )


_BAG_CAT: Any = inductor_kernels.embedding_bag_cat._opoverload  # pyright: ignore[reportFunctionMemberAccess]
"""`mtia_xdsl::embedding_bag_cat`."""
_LINEAR_GROUP: Any = inductor_linear_groups.linear_group._opoverload  # pyright: ignore[reportFunctionMemberAccess]
"""`mtia_xdsl::linear_group`."""
_OP: Any = embedding_bag_mlp._opoverload  # pyright: ignore[reportFunctionMemberAccess]
"""`mtia_xdsl::embedding_bag_mlp` (the OpOverload `torch.library.triton_op` registered)."""


def _val(node: Any) -> Any:
    """A node's fake value (`meta["val"]`), or None."""
    return node.meta.get("val") if hasattr(node, "meta") else None


def _step(offsets: Any) -> int | None:
    """L if the node `offsets` is `prims.iota(n, start=0, step=L)` of int64 or int32 (fixed-step bags), else
    None."""
    if getattr(offsets, "target", None) is not torch.ops.prims.iota.default:
        return None
    kw = offsets.kwargs
    step = kw.get("step")
    if kw.get("start") != 0 or kw.get("dtype") not in (torch.int64, torch.int32):
        return None
    return step if isinstance(step, int) and step >= 1 else None


def _same_iotas(offsets: list[Any]) -> bool:
    """Whether the offsets nodes are all one `prims.iota` (one node, or, as an inference graph has them, one iota
    per table of one length and step)."""
    first = offsets[0]
    return all(
        o is first or (_step(o) == _step(first) and o.args == first.args and o.kwargs == first.kwargs) for o in offsets
    )


def _items(node: Any) -> dict[int, Any] | None:
    """{index: getitem node} of `node`'s users, or None if a user is not a getitem."""
    items: dict[int, Any] = {}
    for user in node.users:
        if user.target is not operator.getitem:
            return None
        items[user.args[1]] = user
    return items


def _table_views(out: Any, tables: int, bags: int) -> list[Any] | None:
    """The `aten.slice(out, 0, t * bags, (t + 1) * bags)` user of `out` for each table t, or None."""
    views: dict[int, Any] = {}
    for user in out.users:
        if user.target is not torch.ops.aten.slice.Tensor or tuple(user.args[1:]) not in [
            (0, t * bags, (t + 1) * bags) for t in range(tables)
        ]:
            return None
        views[user.args[2] // bags] = user
    return [views[t] for t in range(tables)] if len(views) == tables else None


def _next_layer(xs: list[Any]) -> Any:
    """The `linear_group` user of the nodes xs that takes exactly them, in order, as its inputs; or None."""
    for user in xs[0].users:
        if user.target is _LINEAR_GROUP and list(user.args[0]) == xs:
            return user
    return None


def _layer_views(group: Any, tables: int) -> list[Any] | None:
    """The `aten.select(group, 0, t)` user of a `linear_group` node for each table t, or None."""
    views: dict[int, Any] = {}
    for user in group.users:
        if user.target is not torch.ops.aten.select.int or user.args[1] != 0:
            return None
        views[user.args[2]] = user
    return [views[t] for t in range(tables)] if sorted(views) == list(range(tables)) else None


def _chain(cat: Any) -> tuple[int, list[Any], dict[int, Any]] | None:
    """(step, linear_group nodes of the chain, the cat's getitems) if `cat` (an `embedding_bag_cat` node) is one
    `fuse_bag_mlps` takes (see the module docstring), else None."""
    weights, indices, offsets, mode, psws, include_last, dim = cat.args
    step = _step(offsets[0])
    items = _items(cat)
    if step is None or not _same_iotas(offsets) or psws or include_last or dim != 0:
        return None
    if any(getattr(_val(i), "dtype", None) != offsets[0].kwargs["dtype"] for i in indices):
        return None  # the op writes the offsets in the ids' dtype
    if items is None or 0 not in items or any(items[i].users for i in (1, 3) if i in items):
        return None
    bags = _val(offsets[0]).shape[0]
    xs = _table_views(items[0], len(weights), bags)
    layers: list[Any] = []
    while xs is not None and len(layers) < MAX_LAYERS and (group := _next_layer(xs)) is not None:
        layers.append(group)
        xs = _layer_views(group, len(weights))
    if not layers:
        return None
    try:
        ws = [layer.args[1][t] for t in range(len(weights)) for layer in layers]
        bs = [layer.args[2][t] for t in range(len(weights)) for layer in layers]
        layer_widths(
            [_val(w) for w in weights], [_val(i) for i in indices], step, mode, [_val(w) for w in ws],
            [_val(b) for b in bs], [bool(layer.args[3]) for layer in layers],
        )  # fmt: skip
    except (ValueError, AttributeError, IndexError):
        return None
    if _reads_any([*ws, *bs], {cat, *layers}):
        return None
    return step, layers, items


def _reads_any(nodes: list[Any], chain: set[Any]) -> bool:
    """Whether a node of `nodes` (a layer's weight or bias) depends on a node of `chain` (the bags or a layer):
    the fused op, which reads it, would then depend on its own output."""
    return any(not chain.isdisjoint(ancestors(n)) for n in nodes if hasattr(n, "all_input_nodes"))


def fuse_bag_mlps(graph: Any) -> int:
    """Rewrite `graph` (Inductor's post-grad FX graph, after `group_linears`) in place: each `embedding_bag_cat`
    of fixed-step bags along dim 0 (offsets one `prims.iota(n, start=0, step=L)` of the ids' dtype, int64 or
    int32; no per-sample weights; its offset2bag and max_indices unread; its bags read only as the per-table
    slices) whose per-table rows feed a `linear_group`, and that group's per-table outputs the next (up to
    MAX_LAYERS; a layer read otherwise is the last), becomes one `mtia_xdsl::embedding_bag_mlp`, if its
    arguments fit (`layer_widths`: one dtype, widths, LS) and no layer's weight or bias depends on the bags or
    a layer: the bags' output, their sizes and each group's output are the op's, and every other reader of
    the offsets reads the op's offsets (the iota is then no launch of its own). The graph stays sorted and
    valid (`graph.lint()`). Returns the number of bag groups fused."""
    fused = 0
    for cat in [n for n in graph.nodes if n.target is _BAG_CAT]:
        chain = _chain(cat)
        if chain is not None:
            _fuse(graph, cat, *chain)
            fused += 1
    if fused:
        stable_topological_sort(graph)
        graph.lint()
    return fused


def _fuse(graph: Any, cat: Any, step: int, layers: list[Any], items: dict[int, Any]) -> None:
    """Replace `cat`, its getitems and the `linear_group` nodes `layers` by one `embedding_bag_mlp` node."""
    weights, indices, offsets, mode = cat.args[:4]
    tables = len(weights)
    ws = [layer.args[1][t] for t in range(tables) for layer in layers]
    bs = [layer.args[2][t] for t in range(tables) for layer in layers]
    with graph.inserting_before(layers[-1]):
        op = graph.call_function(_OP, (weights, indices, step, mode, ws, bs, [bool(x.args[3]) for x in layers]))
        outs = [graph.call_function(operator.getitem, (op, i)) for i in range(4)]
        per_layer = [graph.call_function(operator.getitem, (outs[2], i)) for i in range(len(layers))]
    outs[0].meta["val"] = _val(items[0])
    outs[1].meta["val"] = [_val(indices[t]).new_empty(_val(offsets[0]).shape) for t in range(tables)]
    outs[2].meta["val"] = [_val(layer) for layer in layers]
    outs[3].meta["val"] = _val(offsets[0])
    op.meta["val"] = tuple(o.meta["val"] for o in outs)
    for node, layer in zip(per_layer, layers, strict=True):
        node.meta["val"] = _val(layer)
        layer.replace_all_uses_with(node)
        graph.erase_node(layer)
    items[0].replace_all_uses_with(outs[0])
    if 2 in items:
        items[2].replace_all_uses_with(outs[1])
    for item in items.values():
        graph.erase_node(item)
    graph.erase_node(cat)
    for iota in dict.fromkeys(offsets):
        iota.replace_all_uses_with(outs[3])
        graph.erase_node(iota)

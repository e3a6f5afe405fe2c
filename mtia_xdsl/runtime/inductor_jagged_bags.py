"""A jagged embedding bag and the layers it feeds in one launch: the post-grad pass `fuse_jagged_bags` and its kernel.

A jagged feature (`nn.EmbeddingBag` of a 1-D input with offsets: bags of any length, empty ones too) pooled and
run through a linear layer and its activation (benchmarks/inductor.py's jagged_sum: 8 bags of 40 ids, a 16 x 16
layer and tanh) was two launches after our other passes: the bag kernel (`inductor_kernels.embedding_bag_sum`,
offsets, ids, rows, store) and Inductor's GEMM template with a bias-and-tanh epilogue (its input and weight
from DRAM, the product, the store). Each launch pays its own DRAM round trips (a load about 300 cycles, a
store about 140, MachineConfig.dram_latency_cycles and dma_issue_cycles; docs/machine.md).

`fuse_jagged_bags` (run by Inductor's post-grad custom pass after `inductor_bag_mlps.fuse_bag_mlps`) turns an
`mtia_xdsl::embedding_bag` (sum, or mean without include_last_offset; no per-sample weights; max bags and a
padding index never become one) whose output feeds `aten.addmm` (through `relu` or `tanh` when that is the
addmm's only reader), and that layer's output the next addmm, up to `inductor_bag_mlps.MAX_LAYERS` layers,
into the custom op `mtia_xdsl::jagged_bag_mlp` (`jagged_bag_mlp`). Its program for a block of bags loads every
id (the chain's first DMA) and the block's offsets, gathers the rows of every id (one indexed DMA), sums each
bag's with a one-hot product on the DPE (built from the offsets on the VEC while the rows are in flight), runs
the layers and stores one output: each output something reads (the last layer's; in a training step also the
bags and the layers' outputs saved for backward) is stored by programs of their own, since a PE's DMA starts
one command after another and a second store on the chain's PE waited for the first. The layers' weights and
biases load under the ids' latency (one layer: under the rows'). One more program writes the bag sizes,
max_indices and offset2bag, which a backward reads. A single bag of a 2-D input (offsets an iota: fixed-step
bags, which `fuse_bag_mlps` takes only grouped and feeding `linear_group`s) is the same op with a step instead
of offsets: the bags' bounds are computed, not loaded, and the op writes the offsets (the iota is no launch of
its own). A chain whose program does not fit a PE's LS (`ls_bytes_needed`) stays as it is. Imports torch and
triton when loaded: import it only once Inductor has loaded.
"""

# Triton has no type stubs and a @triton.jit kernel's parameters are untyped by Triton's convention:
# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false, reportUnknownVariableType=false
# pyright: reportUnknownArgumentType=false, reportUnknownParameterType=false, reportMissingParameterType=false
# pyright: reportUntypedFunctionDecorator=false
# A kernel's tiles are bound under `if` on constexprs (STAGE), which Triton resolves when it compiles:
# pyright: reportPossiblyUnboundVariable=false
# The kernel shares the fixed-step bag kernel's Triton helpers (inductor_bag_mlps: weights, biases, products,
# stores) and the bag sizes of inductor_kernels (`_write_bag_sizes`), private to their modules' kernels:
# pyright: reportPrivateUsage=false

from __future__ import annotations

import operator
from typing import Any

import torch
import triton
import triton.language as tl
from torch._inductor.pattern_matcher import stable_topological_sort
from torch.library import triton_op, wrap_triton
from triton.language.extra import libdevice

from mtia_xdsl.runtime import inductor_bag_mlps, inductor_kernels
from mtia_xdsl.runtime.inductor_bag_mlps import _biases, _dot, _load_weights, _pow2, _step, _store_tile

ACT_NONE, ACT_RELU, ACT_TANH = 0, 1, 2
"""A layer's activation in `jagged_bag_mlp`'s `acts`: none, `relu`, `tanh`."""
ACTS = {torch.ops.aten.relu.default: ACT_RELU, torch.ops.aten.tanh.default: ACT_TANH}
"""The pointwise ops `fuse_jagged_bags` folds into the layer they follow, and their `acts` code."""
MAX_IDS = 256
"""Ids `jagged_bag_mlp` takes at most: every program loads all of them in one DMA (as `inductor_kernels.MAX_ALL_IDS`)
and id positions and offsets are compared as int16; what fits LS besides (the rows of every id): `ls_bytes_needed`."""
MAX_BAGS_PER_PROGRAM = 16
"""Bags of one program at most (the rows of its one-hot product, a `tl.dot` operand of 16 rows at least)."""
MAX_OFFSETS = 1024
"""Offsets `jagged_bag_mlp` takes at most (the sizes program writes their bag sizes in one block)."""
OFFSET2BAG_STEP = 64
"""Offsets per step at most of the sizes program's offset2bag (a [step, pow2(ids)] compare)."""


@triton.jit
def _act(h, ACT: tl.constexpr):
    """h through the activation ACT (ACT_NONE, ACT_RELU, ACT_TANH)."""
    if ACT == 1:
        h = tl.maximum(h, 0.0)
    elif ACT == 2:
        h = libdevice.tanh(h)
    return h


@triton.jit
def _jagged_layer(h, w, b, h_ptr, rows, row_ok, N: tl.constexpr, ACT: tl.constexpr, IEEE: tl.constexpr,
                  STORE: tl.constexpr, BIAS_AFTER: tl.constexpr):  # fmt: skip
    """(ACT of) h @ w.T + b in f32, stored at h_ptr + rows * N when STORE; returned. b: the [BLOCK_M, BN]
    accumulator of the product (`_bias`), or with BIAS_AFTER the bias [BN] added to it after (the product then
    does not wait for a bias that comes last)."""
    if BIAS_AFTER:
        h = _dot(h.to(w.dtype), w, tl.zeros([h.shape[0], w.shape[0]], dtype=tl.float32), IEEE) + b[None, :]
    else:
        h = _dot(h.to(w.dtype), w, b, IEEE)
    h = _act(h, ACT)
    if STORE:
        _store_tile(h, h_ptr, rows, row_ok, 0, N)
    return h


@triton.jit
def _bag_bounds(offsets_ptr, first, rows_left, n_ids, n_offsets, BLOCK_M: tl.constexpr, STEP: tl.constexpr):
    """(starts, ends) [BLOCK_M] int16 of bags first + m: offsets[first + m] and the next offset (n_ids past the
    last offset, which ends the last bag without include_last_offset); both 0 (no ids) for m >= rows_left.
    One DMA of the block's offsets, both picked from it in LS (int16: the op takes at most MAX_IDS ids); with
    STEP > 0 (offsets arange(0, N, STEP)) no load: (first + m) * STEP and the next."""
    m = tl.arange(0, BLOCK_M)
    if STEP > 0:
        starts = (first + m) * STEP
        return starts.to(tl.int16), tl.where(m < rows_left, starts + STEP, 0).to(tl.int16)
    o = tl.arange(0, 2 * BLOCK_M)
    here = tl.minimum(rows_left + 1, n_offsets - first)
    offs = tl.where(o < here, tl.load(offsets_ptr + first + o, mask=o < here, other=0), n_ids).to(tl.int16)
    starts = tl.gather(offs, m, 0)
    ends = tl.where(m < rows_left, tl.gather(offs, m + 1, 0), 0)
    return starts, ends.to(tl.int16)


@triton.jit
def _gather_rows(weight_ptr, ids, ok, D: tl.constexpr, BLOCK_D: tl.constexpr):
    """The rows weight[ids[i], :D] [BLOCK_IDS, BLOCK_D] where ok[i] (else 0): one indexed DMA, masked by the ids'
    count alone (a box: no wait for the offsets)."""
    cols = tl.arange(0, BLOCK_D)
    if D == BLOCK_D:
        return tl.load(weight_ptr + ids[:, None] * D + cols[None, :], mask=ok[:, None], other=0.0)
    else:
        return tl.load(weight_ptr + ids[:, None] * D + cols[None, :], mask=ok[:, None] & (cols < D)[None, :],
                       other=0.0)  # fmt: skip


@triton.jit
def _jagged_tile(
    weight_ptr, ids_ptr, offsets_ptr, out_ptr, ws, bs, hs, blk, n_ids, n_offsets, n_bags, sw_k, sw_n,
    D: tl.constexpr, BLOCK_D: tl.constexpr, BAGS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_IDS: tl.constexpr,
    MEAN: tl.constexpr, STAGE: tl.constexpr, KS: tl.constexpr, NS: tl.constexpr, BKS: tl.constexpr,
    BNS: tl.constexpr, ACTS: tl.constexpr, IEEE: tl.constexpr, STEP: tl.constexpr,
):  # fmt: skip
    """Output STAGE of bags blk * BAGS ... (< n_bags): stage 0 the rows of the ids of each bag (offsets[b] <= j
    < the next offset, or n_ids) summed (MEAN: / the bag's size; an empty bag is 0) into out [n_bags, D],
    stage l + 1 layer l's h_l = (ACTS[l] of) h_(l-1) @ ws[l] + bs[l] into hs[l] [n_bags, NS[l]]; only that
    stage's output is stored. In program order: every id (the chain's first DMA), the bags' bounds
    (`_bag_bounds`), the weights and biases of the layers before STAGE, the rows of every id (`_gather_rows`),
    of which the one-hot product (from the bounds, on the VEC while the rows are in flight) sums the block's.
    With one layer its weight and bias come after the rows and the one-hot instead (a PE's DMA, and its SE,
    start their commands in order: the rows then start as soon as the ids are in, the layer's operands, needed
    after the rows' sum, arrive under the rows' latency, and the bias's SE op queues behind the one-hot's, not
    before it; with more layers the later weights would arrive late)."""
    first = blk * BAGS
    rows_left = tl.minimum(n_bags - first, BAGS)
    j = tl.arange(0, BLOCK_IDS)
    ids = tl.load(ids_ptr + j, mask=j < n_ids, other=0)
    starts, ends = _bag_bounds(offsets_ptr, first, rows_left, n_ids, n_offsets, BLOCK_M, STEP)
    if STAGE > 1:
        w0, w1, w2 = _load_weights(ws, 0, blk, sw_k, sw_n, STAGE, KS, NS, BKS, BNS)
        b0, b1, b2 = _biases(bs, 0, STAGE, NS, BNS, BLOCK_M)
    rows = _gather_rows(weight_ptr, ids, j < n_ids, D, BLOCK_D)
    j16 = j.to(tl.int16)
    pick = ((starts[:, None] <= j16[None, :]) & (j16[None, :] < ends[:, None])).to(rows.dtype)
    if STAGE == 1:
        w0, w1, w2 = _load_weights(ws, 0, blk, sw_k, sw_n, STAGE, KS, NS, BKS, BNS)
        rn = tl.arange(0, BNS[0])
        b0 = tl.load(bs[0] + rn, mask=rn < NS[0], other=0.0).to(tl.float32)
    if IEEE:
        h = tl.dot(pick, rows, input_precision="ieee")
    else:
        h = tl.dot(pick, rows)
    if MEAN:
        h = h / tl.maximum(ends - starts, 1).to(tl.float32)[:, None]
    m = tl.arange(0, BLOCK_M)
    out_rows = first + m
    row_ok = m < rows_left
    if STAGE == 0:
        _store_tile(h, out_ptr, out_rows, row_ok, 0, D)
    else:
        h = _jagged_layer(h, w0, b0, hs[0], out_rows, row_ok, NS[0], ACTS[0], IEEE, STAGE == 1, STAGE == 1)
        if STAGE > 1:
            h = _jagged_layer(h, w1, b1, hs[1], out_rows, row_ok, NS[1], ACTS[1], IEEE, STAGE == 2, STAGE == 1)
        if STAGE > 2:
            h = _jagged_layer(h, w2, b2, hs[2], out_rows, row_ok, NS[2], ACTS[2], IEEE, STAGE == 3, STAGE == 1)


@triton.jit
def _write_offset2bag(offsets_ptr, offset2bag_ptr, n_ids, n_bags, BLOCK_IDS: tl.constexpr, BLOCK_B: tl.constexpr):
    """offset2bag[j] = (offsets[b] <= j summed over b < n_bags) - 1 for j < n_ids, aten's `make_offset2bag`
    (an id of an empty bag's position goes to the last bag starting at or before it), BLOCK_B offsets a step."""
    j = tl.arange(0, BLOCK_IDS)
    count = tl.zeros([BLOCK_IDS], dtype=tl.int32)
    for b0 in range(0, n_bags, BLOCK_B):
        b = b0 + tl.arange(0, BLOCK_B)
        starts = tl.where(b < n_bags, tl.load(offsets_ptr + b, mask=b < n_bags, other=0), n_ids)
        count += tl.sum((starts[:, None] <= j[None, :]).to(tl.int32), 0)
    tl.store(offset2bag_ptr + j, (count - 1).to(offset2bag_ptr.dtype.element_ty), mask=j < n_ids)


@triton.jit
def _write_steps(
    bag_size_ptr, max_indices_ptr, offsets_out_ptr, offset2bag_ptr, n_ids, n_bags, STEP: tl.constexpr,
    MEAN: tl.constexpr, WRITE_OFFSET2BAG: tl.constexpr, BLOCK_BAGS: tl.constexpr, BLOCK_IDS: tl.constexpr,
):  # fmt: skip
    """For bags of STEP ids each: their sizes and max_indices (STEP for MEAN, else 0), the offsets
    arange(0, n_bags * STEP, STEP) into offsets_out and (WRITE_OFFSET2BAG) offset2bag[j] = j // STEP."""
    b = tl.arange(0, BLOCK_BAGS)
    sizes = tl.zeros([BLOCK_BAGS], dtype=tl.int64) + (STEP if MEAN else 0)
    tl.store(bag_size_ptr + b, sizes, mask=b < n_bags)
    tl.store(max_indices_ptr + b, sizes, mask=b < n_bags)
    tl.store(offsets_out_ptr + b, b.to(tl.int64) * STEP, mask=b < n_bags)
    if WRITE_OFFSET2BAG:
        j = tl.arange(0, BLOCK_IDS)
        tl.store(offset2bag_ptr + j, (j // STEP).to(tl.int64), mask=j < n_ids)


@triton.jit
def _write_sizes(
    offsets_ptr, offsets_out_ptr, offset2bag_ptr, bag_size_ptr, max_indices_ptr, n_ids, n_offsets, n_bags,
    MEAN: tl.constexpr, INCLUDE_LAST: tl.constexpr, WRITE_OFFSET2BAG: tl.constexpr, BLOCK_BAGS: tl.constexpr,
    BAG_BLOCKS: tl.constexpr, BLOCK_OB: tl.constexpr, BLOCK_IDS: tl.constexpr, STEP: tl.constexpr,
):  # fmt: skip
    """The bag sizes and max_indices, offset2bag (when WRITE_OFFSET2BAG) and, for STEP > 0, the offsets
    (`_write_steps`); else from the offsets (`inductor_kernels._write_bag_sizes`, `_write_offset2bag`)."""
    if STEP > 0:
        _write_steps(
            bag_size_ptr, max_indices_ptr, offsets_out_ptr, offset2bag_ptr, n_ids, n_bags, STEP, MEAN,
            WRITE_OFFSET2BAG, BLOCK_BAGS, BLOCK_IDS,
        )  # fmt: skip
    else:
        inductor_kernels._write_bag_sizes(
            offsets_ptr, bag_size_ptr, max_indices_ptr, n_ids, n_offsets, n_bags, BLOCK_BAGS, BAG_BLOCKS, MEAN,
            INCLUDE_LAST,
        )  # fmt: skip
        if WRITE_OFFSET2BAG:
            _write_offset2bag(offsets_ptr, offset2bag_ptr, n_ids, n_bags, BLOCK_IDS, BLOCK_OB)


@triton.jit
def _jagged_bag_mlp_kernel(
    weight_ptr, ids_ptr, offsets_ptr, out_ptr, offset2bag_ptr, bag_size_ptr, max_indices_ptr, offsets_out_ptr, ws,
    bs, hs, n_ids,
    n_offsets, n_bags, sw_k, sw_n, D: tl.constexpr, BLOCK_D: tl.constexpr, BAGS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_IDS: tl.constexpr, MEAN: tl.constexpr, INCLUDE_LAST: tl.constexpr,
    WRITE_OFFSET2BAG: tl.constexpr, BLOCK_BAGS: tl.constexpr, BAG_BLOCKS: tl.constexpr, BLOCK_OB: tl.constexpr,
    BLOCKS: tl.constexpr, N_STAGES: tl.constexpr, STAGES: tl.constexpr, KS: tl.constexpr, NS: tl.constexpr,
    BKS: tl.constexpr, BNS: tl.constexpr, ACTS: tl.constexpr, IEEE: tl.constexpr, STEP: tl.constexpr,
):  # fmt: skip
    """Program s * BLOCKS + blk stores output STAGES[s] of block blk of bags (`_jagged_tile`): each stored output
    is the last store of a program of its own (a PE's DMA starts one command after another, so a second store
    on one PE waited for the first's issue); the last program writes the bag sizes, max_indices, offset2bag
    and the offsets of fixed-step bags (`_write_sizes`), stores off the path of the programs that gather. ws and
    bs are tuples of the layers', hs too."""
    pid = tl.program_id(0)
    if pid == tl.num_programs(0) - 1:
        _write_sizes(
            offsets_ptr, offsets_out_ptr, offset2bag_ptr, bag_size_ptr, max_indices_ptr, n_ids, n_offsets, n_bags,
            MEAN, INCLUDE_LAST, WRITE_OFFSET2BAG, BLOCK_BAGS, BAG_BLOCKS, BLOCK_OB, BLOCK_IDS, STEP,
        )  # fmt: skip
    else:
        for s in tl.static_range(N_STAGES):  # pyright: ignore[reportGeneralTypeIssues]  (Triton-only iterable)
            if pid // BLOCKS == s:
                _jagged_tile(
                    weight_ptr, ids_ptr, offsets_ptr, out_ptr, ws, bs, hs, pid % BLOCKS, n_ids, n_offsets, n_bags,
                    sw_k, sw_n, D, BLOCK_D, BAGS, BLOCK_M, BLOCK_IDS, MEAN, STAGES[s], KS, NS, BKS, BNS, ACTS, IEEE,
                    STEP,
                )  # fmt: skip


def bags_per_program(n_bags: int) -> int:
    """Bags per program of `jagged_bag_mlp`: all of them up to MAX_BAGS_PER_PROGRAM (every program loads all the
    ids and the weights, so more programs only add DMA traffic while the chain, ids -> rows -> layers -> store,
    stays as long), else MAX_BAGS_PER_PROGRAM."""
    return max(1, min(n_bags, MAX_BAGS_PER_PROGRAM))


def ls_bytes_needed(n_ids: int, n_bags: int, d: int, widths: list[int], dtype: torch.dtype) -> int:
    """Bytes of a PE's LS (its CBs, each at depth 1: what mtia-cb-sizing leaves them when LS is short) that one
    program of `jagged_bag_mlp` needs at most, for n_ids ids in n_bags bags of a table of width d and `dtype`
    (e bytes an element) and layers of `widths`; `check_jagged` holds it against `MachineConfig.ls_bytes` of
    the driver's chip (384 KB on MTIA-2i, S1/S6).

    With the kernel's blocks (BLOCK_M of `bags_per_program`, BLOCK_IDS of n_ids, BLOCK_D of d, BLOCK_BAGS of
    n_bags, powers of two, `_pow2`; OB = min(BLOCK_BAGS, OFFSET2BAG_STEP)), in bytes the larger of

        gather_mlp_ls_bytes(e, BLOCK_M, BLOCK_IDS, BLOCK_D, d, widths) + 16 * BLOCK_IDS + 64 * BLOCK_M
        32 * BLOCK_BAGS + 5 * OB * BLOCK_IDS + 16 * (BLOCK_IDS + OB)

    A program of bags (that of the last layer, which holds every layer's weight, the most): the tiles of the
    gather and the layers (`inductor_bag_mlps.gather_mlp_ls_bytes`), the ids (int64, their int32 and int16
    positions, their mask), the block's offsets (int64, their positions, int16 copies, the bags' bounds). The
    sizes program: the bag sizes (offsets, their next, sizes: int64; positions, masks), then offset2bag's
    [OB, BLOCK_IDS] compare (its mask and int32 count) and its [BLOCK_IDS] count, positions and int64 result.
    The programs are branches of one `if` on the program id, whose CBs are never alive together
    (`transforms/analysis/cb_liveness.py`), so they share LS. An upper bound of the LS the CBs take as
    mtia-cb-allocate placed them (`metadata.shared`, the report's `ls_high_water_bytes`; tests/runtime/
    test_inductor_jagged_bags.py): 40 ids in 8 bags and a bf16 layer of 256 x 256 take 288,000
    bytes of the 332,800 bounded; three f32 layers of 128 x 128 303,360 of 318,464; 256 ids in 64 bags
    (offset2bag's compare) 87,040 of 89,088; a sum of 256 ids of width 256 in 16 bags 328,896 of 369,664; an f32
    layer of 256 x 256 558,144 (more than LS) of 596,992."""
    block_m, block_ids, block_bags = _pow2(bags_per_program(n_bags)), _pow2(n_ids), _pow2(n_bags, 1)
    gather = inductor_bag_mlps.gather_mlp_ls_bytes(dtype.itemsize, block_m, block_ids, _pow2(d), d, widths)
    ob = min(block_bags, OFFSET2BAG_STEP)
    return max(gather + 16 * block_ids + 64 * block_m, 32 * block_bags + 5 * ob * block_ids + 16 * (block_ids + ob))


@triton_op("mtia_xdsl::jagged_bag_mlp", mutates_args=())
def jagged_bag_mlp(
    weight: torch.Tensor,
    indices: torch.Tensor,
    offsets: torch.Tensor | None,
    mode: int,
    include_last_offset: bool,
    ws: list[torch.Tensor],
    bs: list[torch.Tensor],
    acts: list[int],
    written: list[bool],
    step: int = 0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, list[torch.Tensor], torch.Tensor]:
    """`aten._embedding_bag(weight, indices, offsets, mode=mode, include_last_offset=...)` (sum (0) or mean (1), no
    per-sample weights, no padding index), then LAYERS (1 to `inductor_bag_mlps.MAX_LAYERS`) linear layers
    h_l = act_l(h_(l-1) @ ws[l] + bs[l]), act_l by acts[l] (ACT_NONE, ACT_RELU, ACT_TANH): (bags [n_bags, D],
    offset2bag, bag_size [n_bags], max_indices [n_bags] as `inductor_kernels.embedding_bag_sum` gives them,
    layer outputs [n_bags, N_l] per layer, the offsets [n_bags] of fixed-step bags). With offsets None and
    step > 0, bags of `step` ids each (offsets arange(0, N, step); the op writes them as its last output, empty
    otherwise: what a backward reads, so that they are no launch of their own). written [LAYERS + 1] says which
    of the bags (0) and the layers' outputs (l + 1) are computed: one left out is returned unwritten
    (`fuse_jagged_bags` leaves out what nothing reads). One launch: per written output a program per block of
    `bags_per_program` bags, and one that writes the sizes, offset2bag (and the offsets). weight [rows, D];
    indices [N] and offsets [n_offsets] 1-D of one integer dtype; ws [K_l, N_l] (any strides), K_0 = D and
    K_l = N_(l-1); bs [N_l]; all of one float dtype in
    `inductor_bag_mlps.DTYPES`.

    Raises: ValueError naming what does not fit (`check_jagged`); RuntimeError for ids or offsets eager refuses
    (`inductor_kernels.check_bag_inputs`), before the launch."""
    widths = check_jagged(weight, indices, offsets, mode, include_last_offset, ws, bs, acts, step)
    if len(written) != len(acts) + 1:
        raise ValueError(f"jagged_bag_mlp: written needs {len(acts) + 1} entries (the bags, each layer)")
    n, d = indices.shape[0], weight.shape[1]
    n_offsets = n // step if offsets is None else offsets.shape[0]
    offsets_out = indices.new_empty(n_offsets if offsets is None else 0)
    offsets = offsets_out if offsets is None else offsets.contiguous()  # read only when step is 0
    inductor_kernels.check_bag_inputs(weight.shape[0], indices, offsets if step == 0 else offsets[:0])
    n_bags = n_offsets - (1 if include_last_offset else 0)
    write_offset2bag = inductor_kernels.writes_offset2bag(mode, weight.dtype, None)
    out = weight.new_empty(n_bags, d)
    offset2bag = offsets.new_empty(n if write_offset2bag else 0)
    bag_size = offsets.new_empty(n_bags)
    max_indices = offsets.new_empty(n_bags)
    hs = [weight.new_empty(n_bags, w) for w in widths]
    bags = bags_per_program(n_bags)
    blocks = triton.cdiv(n_bags, bags)
    stages = tuple(s for s, w in enumerate(written) if w)
    block_bags = _pow2(n_bags, 1)
    if n_bags > 0:
        wrap_triton(_jagged_bag_mlp_kernel)[(len(stages) * blocks + 1,)](
            weight.contiguous(), indices.contiguous(), offsets, out, offset2bag, bag_size, max_indices, offsets_out,
            tuple(ws), tuple(b.contiguous() for b in bs), tuple(hs), n, n_offsets, n_bags,
            tuple(w.stride(0) for w in ws), tuple(w.stride(1) for w in ws), d, _pow2(d), bags, _pow2(bags),
            _pow2(n), mode == 1, include_last_offset, write_offset2bag, block_bags, 1,
            min(block_bags, OFFSET2BAG_STEP), blocks, len(stages), stages, tuple([d, *widths[:-1]]), tuple(widths),
            tuple(_pow2(k) for k in [d, *widths[:-1]]), tuple(_pow2(w) for w in widths), tuple(acts),
            weight.dtype == torch.float32, step,
        )  # fmt: skip
    return out, offset2bag, bag_size, max_indices, hs, offsets_out


def _n_offsets(indices: torch.Tensor, offsets: torch.Tensor | None, include_last_offset: bool, step: int) -> int:
    """The offsets' count of `jagged_bag_mlp`'s arguments: offsets' length, or N / step for fixed-step bags (offsets
    None, step > 0, no include_last_offset). Raises: ValueError if neither fits."""
    if offsets is not None and step == 0 and offsets.dim() == 1:
        return offsets.shape[0]
    n = indices.shape[0]
    if offsets is not None or step < 1 or n % step or include_last_offset:
        raise ValueError(f"jagged_bag_mlp: 1-D offsets, or none and a step dividing the {n} ids, got step {step}")
    return n // step


def check_jagged(
    weight: torch.Tensor, indices: torch.Tensor, offsets: torch.Tensor | None, mode: int, include_last_offset: bool,
    ws: list[torch.Tensor], bs: list[torch.Tensor], acts: list[int], step: int = 0,
) -> list[int]:  # fmt: skip
    """The layers' widths N_l of `jagged_bag_mlp`'s arguments (shapes and dtypes in its docstring; real or fake
    tensors). Raises: ValueError naming what does not fit: offsets neither 1-D nor None with a step
    (`_n_offsets`), mode not 0 or 1, more than MAX_IDS ids or MAX_OFFSETS offsets, a D past
    `inductor_bag_mlps.MAX_WIDTH`, a layer whose weight is not [K, N <= MAX_WIDTH] or whose bias is not [N], a
    program larger than a PE's LS (`ls_bytes_needed`)."""
    layers, dtype = len(acts), weight.dtype
    if not 1 <= layers <= inductor_bag_mlps.MAX_LAYERS or len(ws) != layers or len(bs) != layers:
        raise ValueError(f"jagged_bag_mlp: 1 to {inductor_bag_mlps.MAX_LAYERS} layers, a weight and a bias each")
    if mode not in (0, 1) or any(a not in (ACT_NONE, ACT_RELU, ACT_TANH) for a in acts):
        raise ValueError(f"jagged_bag_mlp: mode {mode} (0 sum or 1 mean), activations {acts} (0, 1 or 2)")
    if weight.dim() != 2 or indices.dim() != 1 or dtype not in inductor_bag_mlps.DTYPES:
        raise ValueError("jagged_bag_mlp: weight [rows, D] of f32, f16 or bf16 and indices [N]")
    n, d, n_offsets = indices.shape[0], weight.shape[1], _n_offsets(indices, offsets, include_last_offset, step)
    if n > MAX_IDS or n_offsets > MAX_OFFSETS or d > inductor_bag_mlps.MAX_WIDTH:
        raise ValueError(
            f"jagged_bag_mlp: {n} ids (<= {MAX_IDS}), {n_offsets} offsets (<= {MAX_OFFSETS}), width {d} "
            f"(<= {inductor_bag_mlps.MAX_WIDTH})"
        )
    if include_last_offset and (n_offsets == 0 or mode == 1):
        # aten's CPU mean divides the last bag by N - its start even where the last offset ends it before N
        raise ValueError("jagged_bag_mlp: include_last_offset needs a sum (mode 0) and at least one offset")
    widths, k = [], d
    for i, (w, b) in enumerate(zip(ws, bs, strict=True)):
        fits = w.dim() == 2 and w.shape[0] == k and w.shape[1] <= inductor_bag_mlps.MAX_WIDTH
        fits = fits and b.shape == (w.shape[1],)
        if not fits or w.dtype != dtype or b.dtype != dtype:
            raise ValueError(
                f"jagged_bag_mlp: layer {i} needs w [{k}, N <= {inductor_bag_mlps.MAX_WIDTH}] and b [N] of {dtype}"
            )
        k = w.shape[1]
        widths.append(k)
    _check_ls(n, n_offsets - (1 if include_last_offset else 0), d, widths, dtype)
    return widths


def _check_ls(n_ids: int, n_bags: int, d: int, widths: list[int], dtype: torch.dtype) -> None:
    """Raise ValueError if a program of `jagged_bag_mlp` needs more LS (`ls_bytes_needed`) than a PE of the
    driver's chip has (`MachineConfig.ls_bytes`)."""
    from mtia_xdsl.runtime.triton_backend.driver import target_machine_config

    need, ls = ls_bytes_needed(n_ids, n_bags, d, widths, dtype), target_machine_config().ls_bytes
    if need > ls:
        raise ValueError(
            f"jagged_bag_mlp: a program of {n_ids} ids in {n_bags} bags of D {d}, layers {widths} of {dtype} needs "
            f"up to {need} bytes of LS but a PE has {ls} (MachineConfig.ls_bytes)"
        )


_BAG: Any = inductor_kernels.embedding_bag_sum._opoverload  # pyright: ignore[reportFunctionMemberAccess]
"""`mtia_xdsl::embedding_bag`."""
_OP: Any = jagged_bag_mlp._opoverload  # pyright: ignore[reportFunctionMemberAccess]
"""`mtia_xdsl::jagged_bag_mlp` (the OpOverload `torch.library.triton_op` registered)."""


def _val(node: Any) -> Any:
    """A node's fake value (`meta["val"]`), or None."""
    return node.meta.get("val") if hasattr(node, "meta") else None


def _static(val: Any) -> bool:
    """Whether `val` is a tensor of static shape (no symbolic sizes)."""
    return isinstance(val, torch.Tensor) and not any(isinstance(s, torch.SymInt) for s in val.shape)


def _reads(node: Any, target: Any) -> bool:
    """Whether FX node `node` is `target` or depends on it (through its inputs, theirs, and so on)."""
    seen: set[Any] = set()
    stack = [node]
    while stack:
        x = stack.pop()
        if x is target:
            return True
        if x not in seen:
            seen.add(x)
            stack.extend(getattr(x, "all_input_nodes", ()))
    return False


def _next_layer(x: Any, bag: Any) -> tuple[Any, Any, int] | None:
    """(addmm node, the node of the layer's output, its `acts` code) of the first `aten.addmm(b, x, w)` reading
    node x as its input (no beta or alpha; b and w not computed from the node `bag`, which the op replaces),
    with its activation (`ACTS`) folded when that is the addmm's only reader; or None."""
    for user in x.users:
        if user.target is torch.ops.aten.addmm.default and not user.kwargs and len(user.args) == 3:
            if user.args[1] is x and not _reads(user.args[0], bag) and not _reads(user.args[2], bag):
                readers = list(user.users)
                if len(readers) == 1 and readers[0].target in ACTS and readers[0].args == (user,):
                    return user, readers[0], ACTS[readers[0].target]
                return user, user, ACT_NONE
    return None


def _items(node: Any) -> dict[int, Any] | None:
    """{index: getitem node} of `node`'s users, or None if a user is not a getitem."""
    items: dict[int, Any] = {}
    for user in node.users:
        if user.target is not operator.getitem:
            return None
        items[user.args[1]] = user
    return items


def _fixed_step(offsets: Any, ids: torch.Tensor, include_last: bool) -> int:
    """L if the node `offsets` is `prims.iota(N / L, start=0, step=L)` of the ids' dtype (`inductor_bag_mlps._step`:
    `nn.EmbeddingBag` of a 2-D input) and there is no include_last_offset, else 0."""
    step, offs = _step(offsets), _val(offsets)
    if step is None or include_last or offs.dtype != ids.dtype or offs.shape[0] * step != ids.shape[0]:
        return 0
    return step


def jagged_chain(bag: Any) -> tuple[dict[int, Any], list[tuple[Any, Any, int]], int] | None:
    """(the bag's getitems, its layers as `_next_layer` gives them, the bags' fixed step or 0: `_fixed_step`) if the
    `mtia_xdsl::embedding_bag` node `bag` is one `fuse_jagged_bags` takes (see the module docstring;
    `check_jagged` on the nodes' fake tensors), else None."""
    weight, indices, offsets, mode, psw, include_last = bag.args
    items = _items(bag)
    if psw is not None or items is None or 0 not in items:
        return None
    layers: list[tuple[Any, Any, int]] = []
    x = items[0]
    while len(layers) < inductor_bag_mlps.MAX_LAYERS and (layer := _next_layer(x, bag)) is not None:
        layers.append(layer)
        x = layer[1]
    if not layers:
        return None
    w, ids, offs = _val(weight), _val(indices), _val(offsets)
    ws, bs = [_val(a.args[2]) for a, _, _ in layers], [_val(a.args[0]) for a, _, _ in layers]
    if not all(_static(v) for v in (w, ids, offs, *ws, *bs)):
        return None
    step = _fixed_step(offsets, ids, include_last)
    try:
        check_jagged(w, ids, None if step else offs, mode, include_last, ws, bs, [act for _, _, act in layers], step)
    except ValueError:
        return None
    return items, layers, step


def fuse_jagged_bags(graph: Any) -> int:
    """Rewrite `graph` (Inductor's post-grad FX graph, after `inductor_bag_mlps.fuse_bag_mlps`) in place: each
    `mtia_xdsl::embedding_bag` that `jagged_chain` takes, with the addmm (and activation) nodes of its layers,
    becomes one `mtia_xdsl::jagged_bag_mlp`; every reader of the bag's outputs and of each layer's output
    reads the op's. The graph stays sorted and valid (`graph.lint()`). Returns the number of bags fused."""
    fused = 0
    for bag in [n for n in graph.nodes if n.target is _BAG]:
        chain = jagged_chain(bag)
        if chain is not None:
            _fuse(graph, bag, *chain)
            fused += 1
    if fused:
        stable_topological_sort(graph)
        graph.lint()
    return fused


def _fuse(graph: Any, bag: Any, items: dict[int, Any], layers: list[tuple[Any, Any, int]], step: int) -> None:
    """Replace `bag`, its getitems and the nodes of `layers` by one `jagged_bag_mlp` node and its getitems; the op
    writes the bags and the layers' outputs that have readers left (`written`). With a fixed `step`, every other
    reader of the offsets (the iota) reads the op's offsets, and the iota is erased."""
    weight, indices, offsets, mode, _, include_last = bag.args
    ws = [addmm.args[2] for addmm, _, _ in layers]
    bs = [addmm.args[0] for addmm, _, _ in layers]
    acts = [act for _, _, act in layers]
    args = (weight, indices, None if step else offsets, mode, include_last, ws, bs, acts)
    with graph.inserting_before(layers[-1][1]):
        op = graph.call_function(_OP, (*args, [], step))
        outs = [graph.call_function(operator.getitem, (op, i)) for i in range(6)]
        per_layer = [graph.call_function(operator.getitem, (outs[4], i)) for i in range(len(layers))]
    for i in range(4):
        outs[i].meta["val"] = _val(bag)[i]
    outs[4].meta["val"] = [_val(out) for _, out, _ in layers]
    outs[5].meta["val"] = _val(offsets) if step else _val(indices).new_empty(0)
    op.meta["val"] = tuple(o.meta["val"] for o in outs)
    for node, (addmm, out, _) in zip(per_layer, layers, strict=True):
        node.meta["val"] = _val(out)
        out.replace_all_uses_with(node)
        graph.erase_node(out)
        if addmm is not out:
            graph.erase_node(addmm)
    for i, item in items.items():
        item.replace_all_uses_with(outs[i])
        graph.erase_node(item)
    op.args = (*args, [bool(outs[0].users), *(bool(node.users) for node in per_layer)], step)
    graph.erase_node(bag)
    if step:
        offsets.replace_all_uses_with(outs[5])
        graph.erase_node(offsets)
    for out in outs[:4] + outs[5:]:
        if not out.users:
            graph.erase_node(out)

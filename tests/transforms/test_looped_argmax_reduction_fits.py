"""A looped reduction as Inductor writes it (torch.compile(dynamic=True) of `(x * y).sum(-1) + x.max(-1).values`
with a gelu(x) store beside it) must fit a PE's 14 CB IDs (found by the breaker).

Every config Inductor tried was refused as CbIdsOutOfResources (15 CBs alive at once, at the max-with-index
combine), so the model failed with NoTritonConfigsError; the fitting report ended with "sub-tiling: not
applicable (no program-id block of rows (pid * BLOCK + tl.arange))" for `xoffset + tl.arange(0, XBLOCK)[:, None]`
(XBLOCK=2, below sub-tiling's 16 rows anyway).

The 15 were alive at once (CB IDs are coloured optimally, so no sharing of IDs was missed): the combine's
five i1 tiles (the SE's compares feed one fused vector-core command), the loop-carried accumulators, the
loaded tiles and masks used later in the iteration, and `tl.arange(0, R0_BLOCK)`, made once before the loop
and held through it. A range is a fill like a constant tile, so the fitting driver's rematerialization now
makes it again in each iteration, right before its reader: 14 CBs.
"""

# ruff: noqa: F841, RUF059 (the kernel is Inductor's output code as it writes it, unused names included)

import torch
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers
from torch._inductor.runtime.triton_helpers import libdevice

import mtia_xdsl


# Inductor's output code for the function above (torch 2.13.0, dynamic=True), unchanged but for its name.
# fmt: off
@triton.jit
def _inductor_kernel(in_out_ptr0, in_ptr0, in_ptr1, out_ptr1, ks0, xnumel, r0_numel, XBLOCK : tl.constexpr,
                     R0_BLOCK : tl.constexpr):
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = xindex
    _tmp2 = tl.full([XBLOCK, R0_BLOCK], float("-inf"), tl.float32)
    _tmp2_index = tl.full([XBLOCK, R0_BLOCK], 2147483647, tl.int32)
    _tmp6 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_1 + ks0*x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp3 = tl.load(in_ptr1 + (r0_1 + ks0*x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        _tmp2_next, _tmp2_index_next = triton_helpers.maximum_with_index(
            _tmp2, _tmp2_index, tmp1, rindex
        )
        _tmp2 = tl.where(r0_mask & xmask, _tmp2_next, _tmp2)
        _tmp2_index = tl.where(r0_mask & xmask, _tmp2_index_next, _tmp2_index)
        tmp4 = tmp0 * tmp3
        tmp5 = tl.broadcast_to(tmp4, [XBLOCK, R0_BLOCK])
        tmp7 = _tmp6 + tmp5
        _tmp6 = tl.where(r0_mask & xmask, tmp7, _tmp6)
        tmp8 = tl.full([1, 1], 0.5, tl.float32)
        tmp9 = tmp0 * tmp8
        tmp10 = tl.full([1, 1], 0.7071067811865476, tl.float32)
        tmp11 = tmp0 * tmp10
        tmp12 = libdevice.erf(tmp11)
        tmp13 = tl.full([1, 1], 1.0, tl.float32)
        tmp14 = tmp12 + tmp13
        tmp15 = tmp9 * tmp14
        tl.store(out_ptr1 + (r0_1 + ks0*x0), tmp15, r0_mask & xmask)
    tmp2_val, tmp2_idx = triton_helpers.max_with_index(_tmp2, _tmp2_index, 1)
    tmp2 = tmp2_val[:, None]
    tmp6 = tl.sum(_tmp6, 1)[:, None]
    tmp16 = tmp6 + tmp2
    tl.store(in_out_ptr0 + (x0), tmp16, xmask)
# fmt: on


def test_a_looped_sum_and_argmax_reduction_fits_and_runs() -> None:
    n, k = 17, 24
    x, y = torch.randn(n, k), torch.randn(n, k)
    out, gelu = torch.zeros(n), torch.zeros(n, k)
    _inductor_kernel[(triton.cdiv(n, 2),)](out, x, y, gelu, k, n, k, XBLOCK=2, R0_BLOCK=32, num_stages=1)
    torch.testing.assert_close(out, (x * y).sum(-1) + x.max(-1).values)
    torch.testing.assert_close(gelu, torch.nn.functional.gelu(x))
    fit = mtia_xdsl.last_report().fit
    assert fit[0] == "as written: 15 CBs are alive at once, the CP has 14 CB IDs"
    assert fit[-1].startswith("applied rematerializing constant tiles")

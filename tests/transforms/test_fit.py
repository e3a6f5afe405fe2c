"""Making a kernel's CBs fit (mtia_xdsl.fit, mtia-sub-tile): what is applied, bit-exactness, refusals."""

import math

import pytest
import torch
import triton
import triton.language as tl
from triton.runtime.errors import OutOfResources

import mtia_xdsl
from examples import attention, flash_attention

_G = torch.Generator().manual_seed(0)


def _attention(q, k, v, **options):
    """Run examples/attention.py's kernel (BLOCK_M = BLOCK_N = 64, causal) with compile `options`."""
    kernel = mtia_xdsl.compile(attention.attn_fwd, options=options)
    z, h, n, d = q.shape
    o = torch.empty_like(q)
    strides = (*q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *o.stride()[:3])
    kernel[(math.ceil(n / 64), z * h)](q, k, v, o, 1 / math.sqrt(d), *strides, h, n,
                                       HEAD_DIM=d, BLOCK_M=64, BLOCK_N=64, CAUSAL=True)  # fmt: skip
    return o, kernel.last_report


def test_sub_tiles_are_bit_exact_with_the_unsplit_kernel():
    """Rows are independent: split 2 or 4 ways (unrolled, or a loop when LS is too small for the unsplit
    kernel and the unrolled one) the output bits are those of the unsplit kernel."""
    q, k, v = (torch.randn(1, 2, 130, 64, generator=_G).half() for _ in range(3))
    whole, report = _attention(q, k, v, sub_block=0)
    assert report.fit == []
    unrolled, _ = _attention(q, k, v, sub_block=32)
    assert torch.equal(unrolled, whole)
    # 120,000 B of LS: the 141,632 B as written (1 slot each) and the unrolled split do not fit, a 2-sub-tile loop does
    looped, report = _attention(q, k, v, machine_overrides={"ls_bytes": 120_000})
    assert torch.equal(looped, whole)
    assert report.fit[0].startswith("as written: the CBs need")
    assert report.fit[-1].startswith("applied sub-tiling: a loop over 2 sub-tiles of 32 rows")
    assert "made to fit" in report.format()


@triton.jit
def _column_sums(x_ptr, out_ptr, BLOCK_M: tl.constexpr, N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    x = tl.load(x_ptr + rows[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(out_ptr + tl.program_id(0) * N + tl.arange(0, N), tl.sum(x * x, axis=0))


def test_a_reduction_across_the_rows_is_refused_with_what_was_tried():
    """Summing over the program's rows forbids sub-tiling them: nothing helps, OutOfResources says why."""
    x, out = torch.rand(64, 256), torch.empty(256)
    with pytest.raises(OutOfResources) as info:
        _column_sums[(1,)](x, out, BLOCK_M=64, N=256, machine_overrides={"ls_bytes": 100_000})
    text = str(info.value)
    assert "test_fit.py" in text and "a PE has 100000" in text
    assert "tried, in order:" in text
    assert "fewer pipeline slots: num_stages=3 -> 1 (one slot per streamed CB): still does not fit" in text
    assert "sub-tiling: not applicable" in text and "a tt.reduce runs along it" in text
    assert "to make it fit: lower BLOCK_*" in text


def test_a_forced_sub_block_is_not_retried():
    """sub_block=N is the user's choice: when it does not fit the error is the plain one, no fitting."""
    x, out = torch.rand(64, 256), torch.empty(256)
    with pytest.raises(OutOfResources) as info:
        _column_sums[(1,)](x, out, BLOCK_M=64, N=256, sub_block=16, machine_overrides={"ls_bytes": 100_000})
    assert "tried, in order" not in str(info.value)


@pytest.mark.parametrize("sub_block", [3, -16, True])
def test_sub_block_option_is_checked(sub_block):
    with pytest.raises(ValueError, match="sub_block must be None"):
        mtia_xdsl.compile(attention.attn_fwd, options={"sub_block": sub_block})


@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_in_tutorial_blocks_is_correct(head_dim, causal):
    """Tutorial 06's BLOCK_M=128, BLOCK_N=64 at fp16; two query blocks, the second ragged."""
    q, k, v = (torch.empty(1, 1, 160, head_dim).normal_(0.0, 0.5, generator=_G).half() for _ in range(3))
    out = flash_attention.attention(q, k, v, causal)
    torch.testing.assert_close(out, flash_attention.reference(q, k, v, causal), atol=1e-2, rtol=0)
    report = mtia_xdsl.last_report()
    assert sum(c.bytes for c in report.cbs) <= 384 * 1024

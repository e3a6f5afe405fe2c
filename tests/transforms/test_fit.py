"""Making a kernel's CBs fit (mtia_xdsl.fit, mtia-sub-tile): what is applied, bit-exactness, refusals."""

import math

import pytest
import torch
import triton
import triton.language as tl
from triton.runtime.errors import OutOfResources

import mtia_xdsl
from examples import attention, flash_attention
from mtia_xdsl.fit import fit_lines
from mtia_xdsl.machine.report import cb_report, cb_summary
from tests.transforms.cb_fit_kernels import layer_norm_8_chunks, sort_rows

_G = torch.Generator().manual_seed(0)
_ATTENTION_SIGNATURE = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32"} | {
    name: "i32"
    for name in (
        *("stride_qz", "stride_qh", "stride_qm", "stride_kz", "stride_kh", "stride_kn", "stride_vz"),
        *("stride_vh", "stride_vn", "stride_oz", "stride_oh", "stride_om", "H", "N_CTX"),
    )
}
_ATTENTION_BLOCKS = {"HEAD_DIM": 64, "BLOCK_M": 64, "BLOCK_N": 64, "CAUSAL": 1}


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
    """Rows are independent: split in two, unrolled or in a loop, the output bits are the unsplit kernel's."""
    q, k, v = (torch.randn(1, 2, 130, 64, generator=_G).half() for _ in range(3))
    whole, report = _attention(q, k, v, sub_block=0)
    assert report.fit == []
    # unrolled, each sub-tile carries its own acc, m_i, l_i: 20 CBs alive at once, so 32 CB IDs for this run
    unrolled, report = _attention(q, k, v, sub_block=32, machine_overrides={"cb_ids": 32})
    assert report.fit[0].startswith("applied sub_block=32 (compile option): 2 x 32 of the 64 rows at ")
    assert torch.equal(unrolled, whole)
    # with the chip's 14 CB IDs the unrolled split is refused and the same sub-tiles run in a loop
    looped, report = _attention(q, k, v, sub_block=32)
    assert torch.equal(looped, whole)
    assert report.fit[0] == "sub_block=32 (compile option), unrolled: 20 CBs are alive at once, the CP has 14 CB IDs"
    assert report.fit[-1].startswith("applied the same sub-tiles in a loop")
    assert "made to fit" in report.format()


def _fit_lines(**overrides):
    kernel = mtia_xdsl.compile(attention.attn_fwd, signature=_ATTENTION_SIGNATURE, constexprs=_ATTENTION_BLOCKS,
                               options={"machine_overrides": overrides})  # fmt: skip
    return fit_lines(kernel.fixed.program), kernel.asm["mtia"]


def test_the_largest_sub_tiles_that_fit_are_applied_and_reported():
    """50,000 B of LS: attention's CBs need 78,848 B placed, with one slot per streamed CB too, 66,560 B with
    its zero tiles and ranges filled at each reader; 2 unrolled sub-tiles of 32 rows need 60,480 B; a loop over the 2 sub-tiles fits, and is what the compiler applies."""
    lines, program = _fit_lines(ls_bytes=50_000)
    assert lines == [
        "as written: the CBs need 78,848 B of LS, a PE has 50,000",
        "fewer pipeline slots: num_stages=3 -> 1 (one slot per streamed CB): still does not fit "
        "(the CBs need 78,848 B of LS, a PE has 50,000)",
        "fusing chains of commands: already on (vector_codegen=True)",
        "rematerializing constant tiles: filled right before each reader, not held for the whole kernel "
        "(mtia-rematerialize-constants): still does not fit (the CBs need 66,560 B of LS, a PE has 50,000)",
        "sub-tiling: 2 sub-tiles of 32 rows, unrolled, shared operands loaded once (mtia-sub-tile{sub-block=32}): "
        "still does not fit (the CBs need 60,480 B of LS, a PE has 50,000)",
        "applied sub-tiling: a loop over 2 sub-tiles of 32 rows, CB IDs as un-split "
        "(mtia-sub-tile{sub-block=32 form=loop})",
    ]
    assert 'mtia.sub_tiles = "2 x 32 of the 64 rows at' in program and ', loop"' in program


def test_rematerialized_constant_tiles_come_before_sub_tiling_and_are_bit_exact():
    """76,000 B of LS: attention's CBs need 78,848 B as written; with its zero tiles (its dot's accumulator,
    the loop's initial values) filled right before each reader they fit, so that is applied, without
    splitting the rows; the output bits are those of the kernel as written."""
    lines, program = _fit_lines(ls_bytes=76_000)
    assert lines[-1] == (
        "applied rematerializing constant tiles: filled right before each reader, not held for the whole kernel "
        "(mtia-rematerialize-constants)"
    )
    assert "mtia.sub_tiles" not in program
    q, k, v = (torch.randn(1, 1, 64, 64, generator=_G).half() for _ in range(3))
    whole, _ = _attention(q, k, v)
    remat, report = _attention(q, k, v, machine_overrides={"ls_bytes": 76_000})
    assert report.fit[-1].startswith("applied rematerializing constant tiles")
    assert torch.equal(remat, whole)


def test_unrolled_sub_tiles_come_first_when_their_cb_ids_fit():
    """With 32 CB IDs and 65,000 B, the unrolled split (K and V loaded once for both sub-tiles) fits."""
    lines, program = _fit_lines(ls_bytes=65_000, cb_ids=32)
    assert lines[-1].startswith("applied sub-tiling: 2 sub-tiles of 32 rows, unrolled")
    assert ', unrolled"' in program


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
    """Tutorial 06's BLOCK_M=128, BLOCK_N=64 at fp16; two query blocks, the second ragged; within 14 CB IDs."""
    q, k, v = (torch.empty(1, 1, 160, head_dim).normal_(0.0, 0.5, generator=_G).half() for _ in range(3))
    out = flash_attention.attention(q, k, v, causal)
    torch.testing.assert_close(out, flash_attention.reference(q, k, v, causal), atol=1e-2, rtol=0)
    summary = cb_summary(mtia_xdsl.last_report().cbs)
    assert summary.ids_in_use <= 14 and summary.ls_high_water_bytes <= 384 * 1024


def test_two_pass_layer_norm_over_8_chunks_fits_14_cb_ids():
    """The Helion kernel Triton-MTIA refused ("Ran out of CB IDs"): 46 CBs, at most 10 alive at once."""
    m, n = 6, 4096
    x = torch.randn(m, n, generator=_G)
    w, b, y = torch.rand(n, generator=_G), torch.randn(n, generator=_G), torch.empty(m, n)
    layer_norm_8_chunks[(triton.cdiv(m, 4),)](x, w, b, y, m, 1e-5, N=n, BLOCK_M=4, CHUNK=n // 8)
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5), atol=1e-4, rtol=1e-4)
    summary = cb_summary(mtia_xdsl.last_report().cbs)
    assert summary.count == 46 and summary.ids_in_use <= 14


def test_sort_of_512_fits_14_cb_ids():
    """tl.sort's bitonic network: 469 CBs, few alive at once; two rows sorted on the machine model."""
    x, y = torch.randn(2, 512, generator=_G), torch.empty(2, 512)
    sort_rows[(2,)](x, y, N=512)
    assert torch.equal(y, torch.sort(x, dim=1).values)
    summary = cb_summary(mtia_xdsl.last_report().cbs)
    assert summary.count > 400 and summary.ids_in_use <= 14 and summary.ls_high_water_bytes <= 384 * 1024


@pytest.mark.parametrize("example", ["vector_add", "softmax", "layer_norm", "matmul", "attention", "flash_attention"])
def test_every_example_fits_14_cb_ids(example):
    """Each example as its `# mtia-opt:` lines specialise it (flash attention: HEAD_DIM 128, causal)."""
    from pathlib import Path

    from mtia_xdsl.frontend.pyfile import module_from_python_file
    from mtia_xdsl.pipeline import lower

    path = Path(__file__).resolve().parents[2] / "examples" / f"{example}.py"
    summary = cb_summary(cb_report(lower(module_from_python_file(str(path)))))
    assert summary.ids_in_use <= 14 and summary.ls_high_water_bytes <= 384 * 1024

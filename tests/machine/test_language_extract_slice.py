"""extract_slice: the sliding-window example is right on the machine and the tt reference, and moves fewer
bytes than loading each slice; dynamic offsets are checked when the program runs."""

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl
import mtia_xdsl.language as mtl
from examples.sliding_window import fir, fir_reference, fir_slices
from mtia_xdsl.frontend.build import build_tt_module
from mtia_xdsl.frontend.errors import KernelError
from mtia_xdsl.machine.reference import run_tt


def line_of(fn, text: str) -> int:
    """Line number of the first source line of kernel `fn` (jit or plain) containing `text`."""
    import inspect

    lines, start = inspect.getsourcelines(getattr(fn, "fn", fn))
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_sliding_window_matches_torch_and_moves_each_window_once():
    g = torch.Generator().manual_seed(7)
    x, w = torch.randn(5_000, generator=g), torch.randn(5, generator=g)
    expected = fir_reference(x, w)
    torch.testing.assert_close(fir(x, w, slices=True, BLOCK=256), expected, rtol=1e-5, atol=1e-5)
    sliced = mtia_xdsl.last_report()
    torch.testing.assert_close(fir(x, w, slices=False, BLOCK=256), expected, rtol=1e-5, atol=1e-5)
    loaded = mtia_xdsl.last_report()
    programs = -(-x.numel() // 256)
    # one window of 2 * BLOCK inputs per program, against one block per tap (lanes past the end unread)
    assert sliced.dma_sram_bytes <= programs * 2 * 256 * 4
    assert loaded.dma_sram_bytes > 4 * sliced.dma_sram_bytes / 2
    assert sliced.engine_busy_used["mlu"] > 0 and loaded.engine_busy_used["mlu"] == 0


def test_tt_reference_agrees():
    x, w = torch.randn(700), torch.randn(3)
    out = torch.zeros(700)
    sig = {"x_ptr": "*fp32", "w_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    run_tt(build_tt_module(fir_slices, sig, {"BLOCK": 128, "TAPS": 3}), (6, 1, 1), [x, w, out, 700])
    torch.testing.assert_close(out, fir_reference(x, w), rtol=1e-5, atol=1e-5)


@triton.jit
def _dynamic_rows(x_ptr, out_ptr, k):
    tile = tl.load(x_ptr + tl.arange(0, 16)[:, None] * 8 + tl.arange(0, 8)[None, :])
    part = mtl.extract_slice(tile, [k + tl.program_id(0), 4], [4, 4])
    tl.store(out_ptr + tl.program_id(0) * 16 + tl.arange(0, 4)[:, None] * 4 + tl.arange(0, 4)[None, :], part)


def test_dynamic_offsets_per_program():
    x = torch.arange(128, dtype=torch.float32)
    out = torch.zeros(3 * 16)
    _dynamic_rows[(3,)](x, out, 5)
    grid = x.view(16, 8)
    expected = torch.stack([grid[5 + p : 9 + p, 4:8] for p in range(3)]).reshape(-1)
    assert torch.equal(out, expected)


def test_dynamic_offset_out_of_the_tile_is_located():
    out = torch.zeros(3 * 16)
    with pytest.raises(
        Exception,
        match=rf"test_language_extract_slice.py:{line_of(_dynamic_rows, 'extract_slice')}"
        r":12: error: extract_slice: offset 13 "
        r"\+ size 4 leaves dimension 0 of the tile \(extent 16\).*program id \(2, 0, 0\)",
    ):
        _dynamic_rows[(3,)](torch.zeros(128), out, 11)
    assert out.eq(0).all()


def _slice_of(x_ptr, out_ptr):
    tile = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(out_ptr + tl.arange(0, 8), mtl.extract_slice(tile, OFFSETS, SIZES, STRIDES))  # noqa: F821


@pytest.mark.parametrize(
    ("offsets", "sizes", "strides", "message"),
    [
        ([9], [8], None, r"offset 9 \+ size 8 leaves dimension 0 of the tile \(extent 16\); keep 0 <= offset <= 8"),
        ([0], [6], None, "size 6 of dimension 0 must be a constexpr power of two"),
        ([0], [32], None, r"size 32 of dimension 0 exceeds the tile's extent 16"),
        ([0, 0], [8], None, r"2 offsets for a tile of rank 1 \(\[16\]\); give one per dimension"),
        ([0], [8, 1], None, r"2 sizes for a tile of rank 1"),
        ([0], [8], [2], r"only unit strides are supported, got \[2\]"),
        ([0.5], [8], None, "offset 0.5 of dimension 0 must be an integer constant or an integer scalar"),
    ],
)
def test_static_misuse_is_refused_at_the_kernel_line(offsets, sizes, strides, message):
    _slice_of.__globals__.update(
        OFFSETS=tl.constexpr(offsets), SIZES=tl.constexpr(sizes), STRIDES=tl.constexpr(strides)
    )
    with pytest.raises(
        KernelError,
        match=rf"test_language_extract_slice.py:{line_of(_slice_of, 'extract_slice')}"
        r":\d+: error: extract_slice: " + message,
    ):
        build_tt_module(triton.jit(_slice_of), {"x_ptr": "*fp32", "out_ptr": "*fp32"})


def test_scalar_source_is_refused():
    def scalar_source(x_ptr):
        tl.store(x_ptr, mtl.extract_slice(tl.load(x_ptr), [0], [1]))

    with pytest.raises(KernelError, match=r"extract_slice: the source must be a tile"):
        build_tt_module(triton.jit(scalar_source), {"x_ptr": "*fp32"})

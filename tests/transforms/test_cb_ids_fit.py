"""Kernels short of CB IDs (not of LS bytes): the fitting driver keeps fused chains apart, and the refusal's
advice is about the number of tensors alive at once, not their size (mtia_xdsl/fit.py,
mtia_cb_allocate.py `check_fits`)."""

import pytest
import torch
import triton
import triton.language as tl
from triton.runtime.errors import OutOfResources

import mtia_xdsl


@triton.jit
def stencil3x3(x_ptr, w_ptr, out_ptr, H: tl.constexpr, W: tl.constexpr, BLOCK: tl.constexpr):
    """A 3x3 stencil over a flat index, taps masked at the image's edges. With W = 10 a block of 64 starts
    inside rows, the taps are scalar-core gathers, and fusing `acc += tap * w` over the 9 taps into one SE
    command holds every gathered tap at once: 17 CBs alive, the CP has 14 CB IDs."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    valid = offs < H * W
    h = offs // W
    w = offs % W
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.static_range(3):
        for j in tl.static_range(3):
            hh = h + i - 1
            ww = w + j - 1
            m = valid & (hh >= 0) & (hh < H) & (ww >= 0) & (ww < W)
            acc += tl.load(x_ptr + hh * W + ww, mask=m, other=0.0) * tl.load(w_ptr + i * 3 + j)
    tl.store(out_ptr + offs, acc, mask=valid)


def _inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, tuple[int]]:
    return torch.randn(10, 10), torch.randn(3, 3), torch.empty(10, 10), (triton.cdiv(100, 64),)


def test_stencil_short_of_cb_ids_fits_with_its_chain_unfused():
    x, w, out, grid = _inputs()
    kernel = mtia_xdsl.compile(stencil3x3, constexprs={"H": 10, "W": 10, "BLOCK": 64})
    run = kernel[grid](x, w, out)
    expected = torch.nn.functional.conv2d(x[None, None], w[None, None], padding=1)[0, 0]
    torch.testing.assert_close(out, expected)
    lines = run.report.fit
    assert lines[0].startswith("as written: 17 CBs are alive at once, the CP has 14 CB IDs")
    assert lines[-1].startswith("applied keeping fused chains apart: vector_codegen=False")


def test_cb_id_refusal_advises_fewer_tensors_not_smaller_blocks():
    x, w, out, grid = _inputs()
    kernel = mtia_xdsl.compile(stencil3x3, constexprs={"H": 10, "W": 10, "BLOCK": 64}, options={"make_fit": False})
    with pytest.raises(OutOfResources) as info:
        kernel[grid](x, w, out)
    text = str(info.value)
    assert "17 circular buffers are alive at once" in text
    assert "BLOCK_*" not in text  # the number of CBs does not depend on the block sizes
    assert "vector_codegen=False" in text and "fewer tensors alive at once" in text

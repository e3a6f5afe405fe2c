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


@triton.jit
def sixteen_rows_alive(x_ptr, out_ptr, N: tl.constexpr):
    """16 loaded tiles all read by the last statement: 16 tensors alive at once whether chains are fused or not."""
    o = tl.arange(0, N)
    a = tl.load(x_ptr + o)
    b = tl.load(x_ptr + N + o)
    c = tl.load(x_ptr + 2 * N + o)
    d = tl.load(x_ptr + 3 * N + o)
    e = tl.load(x_ptr + 4 * N + o)
    f = tl.load(x_ptr + 5 * N + o)
    g = tl.load(x_ptr + 6 * N + o)
    h = tl.load(x_ptr + 7 * N + o)
    i = tl.load(x_ptr + 8 * N + o)
    j = tl.load(x_ptr + 9 * N + o)
    k = tl.load(x_ptr + 10 * N + o)
    m = tl.load(x_ptr + 11 * N + o)
    p = tl.load(x_ptr + 12 * N + o)
    q = tl.load(x_ptr + 13 * N + o)
    r = tl.load(x_ptr + 14 * N + o)
    s = tl.load(x_ptr + 15 * N + o)
    t = (a * b + c * d) * (e * f + g * h) + (i * j + k * m) * (p * q + r * s)
    tl.store(out_ptr + o, t + a * s - b * r + c * q - d * p)


def test_cb_id_refusal_does_not_advise_what_the_fitting_driver_tried():
    """When the driver already tried vector_codegen=False and it did not fit, the refusal lists it as tried and
    does not also advise it (it did, in the as-written error's text)."""
    kernel = mtia_xdsl.compile(sixteen_rows_alive, constexprs={"N": 16})
    with pytest.raises(OutOfResources) as info:
        kernel[(1,)](torch.randn(256), torch.empty(16))
    text = str(info.value)
    assert "keeping fused chains apart: vector_codegen=False" in text and "still does not fit" in text
    assert "keeps the chain's commands apart" not in text

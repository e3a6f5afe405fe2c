"""The example kernels, launched as on a GPU (`kernel[grid](...)`), on the machine model vs torch.

Sizes are the realistic, ragged ones of the first issue; tolerances are per dtype: fp32 kernels within a
few fp32 ulps of torch, the fp16 matmul within half an fp16 ulp of its exact fp32 result.
"""

import pytest
import torch

import mtia_xdsl
from examples import layer_norm, matmul, softmax, vector_add


def _report_sane() -> None:
    report = mtia_xdsl.last_report()
    assert report is not None
    assert report.total_cycles > 0
    assert 0.0 < report.achieved_fraction <= 1.0


def test_vector_add_ragged() -> None:
    g = torch.Generator().manual_seed(1)
    x, y = torch.rand(98_177, generator=g), torch.rand(98_177, generator=g)
    assert torch.equal(vector_add.add(x, y), x + y)
    _report_sane()


def test_softmax_1823x781() -> None:
    x = torch.randn(1823, 781, generator=torch.Generator().manual_seed(2))
    y = softmax.softmax(x)
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-6, atol=1e-7)
    _report_sane()


@pytest.mark.parametrize(("m", "n", "k"), [(333, 517, 271), (512, 512, 512)])
def test_matmul_fp16(m: int, n: int, k: int) -> None:
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(m, k, generator=g).half(), torch.randn(k, n, generator=g).half()
    c = matmul.matmul(a, b)
    exact = a.double() @ b.double()
    # one rounding of the fp32 accumulator to fp16: half an ulp of each element, plus fp32 slack
    ulp = torch.finfo(torch.float16).eps * exact.abs().clamp_min(2.0**-14)
    assert ((c.double() - exact).abs() <= 0.5 * ulp + 1e-3).all()
    _report_sane()


def test_matmul_transposed_view() -> None:
    """A non-contiguous (transposed) B goes through the same DMA path with its strides."""
    g = torch.Generator().manual_seed(4)
    a = torch.randn(70, 40, generator=g).half()
    bt = torch.randn(50, 40, generator=g).half()
    c = matmul.matmul(a, bt.t(), BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=16)
    torch.testing.assert_close(c.float(), a.float() @ bt.t().float(), rtol=1e-3, atol=1e-2)


def test_layer_norm_1151x4096() -> None:
    g = torch.Generator().manual_seed(5)
    x = torch.randn(1151, 4096, generator=g)
    w, b = torch.rand(4096, generator=g), torch.randn(4096, generator=g)
    y, mean, rstd = layer_norm.layer_norm(x, w, b, 1e-5)
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, (4096,), w, b, 1e-5), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(mean, x.mean(dim=1), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(rstd, 1 / torch.sqrt(x.var(dim=1, unbiased=False) + 1e-5), rtol=1e-5, atol=1e-5)
    _report_sane()


def test_layer_norm_fp16_ragged_columns() -> None:
    """N not a multiple of BLOCK_SIZE: the last block of each row is masked (effective shape)."""
    g = torch.Generator().manual_seed(6)
    x = torch.randn(37, 1500, generator=g).half()
    w, b = torch.rand(1500, generator=g).half(), torch.randn(1500, generator=g).half()
    y, _, _ = layer_norm.layer_norm(x, w, b, 1e-5, BLOCK_SIZE=512)
    ref = torch.nn.functional.layer_norm(x.float(), (1500,), w.float(), b.float(), 1e-5)
    torch.testing.assert_close(y.float(), ref, rtol=2e-3, atol=2e-3)

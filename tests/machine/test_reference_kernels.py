"""Tutorial kernels (examples/) built by the frontend and run by the tt reference semantics vs torch.

Sizes are ragged (not multiples of the block sizes) so masks, `other` values and partial tiles matter.
"""

import importlib
from typing import Any

import pytest
import torch

from mtia_xdsl.machine.reference import run_tt


def build(fn: Any, signature: dict[str, str], constexprs: dict[str, Any]) -> Any:
    """Build the tt module of a kernel (skip the test until the frontend lands)."""
    try:
        frontend = importlib.import_module("mtia_xdsl.frontend")
        build_tt_module = frontend.build_tt_module
    except (ImportError, AttributeError):
        pytest.skip("mtia_xdsl.frontend.build_tt_module has not landed yet")
    return build_tt_module(fn, signature, constexprs)


def cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def test_vector_add_ragged():
    from examples.vector_add import add_kernel

    n, block = 1000, 256
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(n, generator=gen), torch.randn(n, generator=gen)
    out = torch.full((n,), -1.0)
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"}
    module = build(add_kernel, sig, {"BLOCK_SIZE": block})
    run_tt(module, (cdiv(n, block), 1, 1), [x, y, out, n])
    assert torch.equal(out, x + y)


def test_fused_softmax_ragged_rows():
    from examples.softmax import softmax_kernel

    rows, cols, block = 37, 781, 1024
    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(1)) * 4
    y = torch.zeros_like(x)
    sig = {"output_ptr": "*fp32", "input_ptr": "*fp32", "input_row_stride": "i32",
           "output_row_stride": "i32", "n_cols": "i32"}  # fmt: skip
    module = build(softmax_kernel, sig, {"BLOCK_SIZE": block})
    run_tt(module, (rows, 1, 1), [y, x, x.stride(0), y.stride(0), cols])
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


def test_matmul_fp16_in_fp32_acc_with_k_loop_and_ragged_masks():
    from examples.matmul import matmul_kernel

    m, n, k = 67, 45, 99
    bm, bn, bk = 32, 32, 32
    gen = torch.Generator().manual_seed(2)
    a = torch.randn(m, k, generator=gen).half()
    b = torch.randn(k, n, generator=gen).half()
    c = torch.zeros(m, n, dtype=torch.float16)
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32",
           "stride_cm": "i32", "stride_cn": "i32"}  # fmt: skip
    consts = {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8}
    module = build(matmul_kernel, sig, consts)
    args = [a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1)]
    run_tt(module, (cdiv(m, bm) * cdiv(n, bn), 1, 1), args)
    expected = (a.double() @ b.double()).half()  # f32 accumulation of exact f16 products, then f16
    torch.testing.assert_close(c, expected, rtol=2e-3, atol=2e-3)


def test_layer_norm_forward_multi_block_rows():
    from examples.layer_norm import _layer_norm_fwd_fused

    rows, cols, block, eps = 13, 300, 128, 1e-5
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(rows, cols, generator=gen) * 3 + 1
    w, b = torch.randn(cols, generator=gen), torch.randn(cols, generator=gen)
    y = torch.zeros_like(x)
    mean, rstd = torch.zeros(rows), torch.zeros(rows)
    sig = {"X": "*fp32", "Y": "*fp32", "W": "*fp32", "B": "*fp32", "Mean": "*fp32", "Rstd": "*fp32",
           "stride": "i32", "N": "i32", "eps": "fp32"}  # fmt: skip
    module = build(_layer_norm_fwd_fused, sig, {"BLOCK_SIZE": block})
    run_tt(module, (rows, 1, 1), [x, y, w, b, mean, rstd, x.stride(0), cols, eps])
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, (cols,), w, b, eps), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(mean, x.mean(dim=1), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(rstd, 1 / torch.sqrt(x.var(dim=1, unbiased=False) + eps), rtol=1e-4, atol=1e-4)

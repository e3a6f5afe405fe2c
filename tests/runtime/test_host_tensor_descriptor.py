"""Host-side tensor descriptors (`triton.tools.tensor_descriptor.TensorDescriptor`) as kernel arguments.

Upstream passes a host descriptor as the descriptor plus its shape (i32) and strides (i64); the kernel
loads and stores through it as through one made by `tl.make_tensor_descriptor`. Results are compared with
torch and with Triton's interpreter (in process). The padding (`"zero"` or `"nan"`) is not part of
Triton's specialization key, so one compiled kernel serves both.
"""

from __future__ import annotations

import warnings

import pytest
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

M, N, LD = 37, 40, 48
"""Tensor sizes and the padded row stride (elements, 16-byte aligned as TensorDescriptor requires)."""


@triton.jit
def host_desc_shift(x_desc, y_desc, BM: tl.constexpr, BN: tl.constexpr):
    """y[i, j] = x[i - 1, j] + x.shape[0]; the padding where that is outside x (-1 where it is NaN)."""
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    t = x_desc.load([pm * BM - 1, pn * BN])
    y_desc.store([pm * BM, pn * BN], tl.where(t != t, -1.0, t + x_desc.shape[0]))


@triton.jit
def host_desc_in_tuple(out_ptr, payload, BM: tl.constexpr, BN: tl.constexpr):
    """out (BM x BN) = the tile at block (payload[2], 1) of payload[0] plus that of payload[1]."""
    a = payload[0].load([payload[2] * BM, BN])
    b = payload[1].load([payload[2] * BM, BN])
    idx = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(out_ptr + idx, a + b)


def _inputs() -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(M, LD, generator=torch.Generator().manual_seed(5))[:, :N]
    return x, torch.zeros(M, LD)[:, :N]


def _expected(x: torch.Tensor, padding: str) -> torch.Tensor:
    want = torch.full_like(x, -1.0 if padding == "nan" else 0.0 + M)
    want[1:] = x[:-1] + M
    return want


def _interpreted(kernel, grid, *args, **kw) -> None:
    from triton.runtime.interpreter import InterpretedFunction

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        InterpretedFunction(kernel.fn)[grid](*args, **kw)


@pytest.mark.parametrize("padding", ["zero", "nan"])
def test_host_descriptor_loads_and_stores_like_the_interpreter(padding: str) -> None:
    x, y = _inputs()
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    xd = TensorDescriptor(x, list(x.shape), list(x.stride()), [16, 16], padding=padding)
    host_desc_shift[grid](xd, TensorDescriptor(y, list(y.shape), list(y.stride()), [16, 16]), BM=16, BN=16)
    assert torch.equal(y, _expected(x, padding))
    ref = torch.zeros(M, LD)[:, :N]
    _interpreted(
        host_desc_shift, grid, xd, TensorDescriptor(ref, list(ref.shape), list(ref.stride()), [16, 16]), BM=16, BN=16
    )
    assert torch.equal(y, ref)


def test_host_descriptors_in_a_tuple() -> None:
    a = torch.randn(32, 64, generator=torch.Generator().manual_seed(6))
    b = torch.randn(64, 80, generator=torch.Generator().manual_seed(7))
    out = torch.empty(8, 16)
    payload = (TensorDescriptor.from_tensor(a, [8, 16]), TensorDescriptor.from_tensor(b, [8, 16]), 2)
    host_desc_in_tuple[(1,)](out, payload, 8, 16)
    assert torch.equal(out, a[16:24, 16:32] + b[16:24, 16:32])


def test_host_descriptor_that_is_not_one_is_refused_with_the_kernel_line() -> None:
    from mtia_xdsl.runtime.launch import KernelLaunchError, runtime_args

    sig = {"x_desc": "tensordesc<fp32[16, 16]>", "y_desc": "tensordesc<fp32[16, 16]>", "BM": "constexpr"}
    with pytest.raises(KernelLaunchError, match=r"test_host_tensor_descriptor.py:\d+:\d+: error: argument 'y_desc'"):
        runtime_args(
            host_desc_shift, sig, [TensorDescriptor.from_tensor(torch.zeros(16, 16), [16, 16]), torch.zeros(16, 16), 16]
        )

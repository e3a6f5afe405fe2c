"""Triton language features through the frontend and the tt reference semantics, against torch."""

import pytest
import torch
import triton
import triton.language as tl

from mtia_xdsl.machine.reference import run_tt

build_tt_module = pytest.importorskip("mtia_xdsl.frontend").build_tt_module


@triton.jit
def row_argmax_cumsum_kernel(x_ptr, amax_ptr, mx_ptr, cs_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    tl.store(amax_ptr + row, tl.argmax(x, axis=0))
    tl.store(mx_ptr + row, tl.max(x, axis=0))
    tl.store(cs_ptr + row * n_cols + cols, tl.cumsum(tl.where(mask, x, 0.0), axis=0), mask=mask)


def test_argmax_max_cumsum():
    rows, cols = 5, 23
    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(4))
    amax = torch.zeros(rows, dtype=torch.int32)
    mx, cs = torch.zeros(rows), torch.zeros(rows, cols)
    sig = {"x_ptr": "*fp32", "amax_ptr": "*i32", "mx_ptr": "*fp32", "cs_ptr": "*fp32", "n_cols": "i32"}
    module = build_tt_module(row_argmax_cumsum_kernel, sig, {"BLOCK": 32})
    run_tt(module, (rows, 1, 1), [x, amax, mx, cs, cols])
    assert torch.equal(amax, x.argmax(dim=1).to(torch.int32))
    assert torch.equal(mx, x.max(dim=1).values)
    torch.testing.assert_close(cs, torch.cumsum(x, dim=1), rtol=1e-5, atol=1e-5)


@triton.jit
def bf16_fma_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    z = tl.load(z_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * y + z, mask=mask)


def test_bf16_arithmetic_rounds_each_op_like_torch():
    n = 300
    gen = torch.Generator().manual_seed(5)
    x, y, z = (torch.randn(n, generator=gen).bfloat16() for _ in range(3))
    out = torch.zeros(n, dtype=torch.bfloat16)
    sig = {"x_ptr": "*bf16", "y_ptr": "*bf16", "z_ptr": "*bf16", "out_ptr": "*bf16", "n": "i32"}
    run_tt(build_tt_module(bf16_fma_kernel, sig, {"BLOCK": 128}), (3, 1, 1), [x, y, z, out, n])
    assert torch.equal(out, x * y + z)


@triton.jit
def int_div_mod_kernel(a_ptr, b_ptr, q_ptr, r_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=1)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    tl.store(q_ptr + offs, a // b, mask=mask)
    tl.store(r_ptr + offs, a % b, mask=mask)


def test_integer_division_truncates_like_c():
    a = torch.tensor([7, -7, 7, -7, 0, 2**31 - 1], dtype=torch.int32)
    b = torch.tensor([2, 2, -2, -2, 5, -1], dtype=torch.int32)
    q, r = torch.zeros(6, dtype=torch.int32), torch.zeros(6, dtype=torch.int32)
    sig = {"a_ptr": "*i32", "b_ptr": "*i32", "q_ptr": "*i32", "r_ptr": "*i32", "n": "i32"}
    run_tt(build_tt_module(int_div_mod_kernel, sig, {"BLOCK": 8}), (1, 1, 1), [a, b, q, r, 6])
    assert q.tolist() == [3, -3, -3, 3, 0, -(2**31 - 1)]  # Triton's // on ints is C division
    assert r.tolist() == [1, -1, 1, -1, 0, 0]


@triton.jit
def histogram_atomic_kernel(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + x, 1, mask=mask)


def test_atomic_add_histogram():
    n = 200
    x = torch.randint(0, 10, (n,), dtype=torch.int32, generator=torch.Generator().manual_seed(6))
    hist = torch.zeros(10, dtype=torch.int32)
    sig = {"x_ptr": "*i32", "hist_ptr": "*i32", "n": "i32"}
    run_tt(build_tt_module(histogram_atomic_kernel, sig, {"BLOCK": 64}), (4, 1, 1), [x, hist, n])
    assert torch.equal(hist, torch.bincount(x, minlength=10).to(torch.int32))


@triton.jit
def while_if_kernel(out_ptr, n):
    i = 0
    acc = 0
    while i < n:
        if i % 3 == 0:
            acc += i
        else:
            acc -= 1
        i += 1
    tl.store(out_ptr, acc)


def test_dynamic_while_and_if():
    out = torch.zeros(1, dtype=torch.int32)
    run_tt(build_tt_module(while_if_kernel, {"out_ptr": "*i32", "n": "i32"}, {}), (1, 1, 1), [out, 10])
    assert out.item() == (0 + 3 + 6 + 9) - 6

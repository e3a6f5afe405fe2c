"""Kernels whose engine-made values are unused, or used by the scalar core, run correctly on the machine.

Regression tests for bufferization: a value nobody reads (an unused load, a loop-carried value dead after
its loop, an atomic's ignored result) must still be waited for before it is released, and a scalar made
by an engine (a reduction) may feed control flow or an address.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def unused_load(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, offs.to(tl.float32))


@triton.jit
def dead_loop_carry(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    unused = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(n):
        x = tl.load(x_ptr + i * BLOCK + offs)
        acc += x
        unused = tl.maximum(unused, x)
    tl.store(out_ptr + offs, acc)


@triton.jit
def branch_on_reduction(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs)
    if tl.sum(v) > 0:
        tl.store(out_ptr + offs, v * 2)
    else:
        tl.store(out_ptr + offs, v * 3)


@triton.jit
def loop_bound_from_reduction(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    n = tl.sum(tl.load(x_ptr + offs))
    acc = 0.0
    for i in range(n):
        acc += 1.5
    tl.store(out_ptr, acc)


@triton.jit
def store_at_reduced_offset(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + tl.sum(tl.load(x_ptr + offs)), 1.0)


@triton.jit
def masked_scalar(x_ptr, out_ptr, n):
    pid = tl.program_id(0)
    v = tl.load(x_ptr + pid, mask=pid < n, other=-1.0)
    tl.store(out_ptr + pid, v * 2, mask=pid < n + 1)


@triton.jit
def atomic_ignored(counter_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(counter_ptr + offs % 4, 1)


def test_unused_load() -> None:
    out = torch.empty(16)
    unused_load[(1,)](torch.randn(16), out, BLOCK=16)
    assert torch.equal(out, torch.arange(16.0))


def test_loop_carried_value_unused_after_the_loop() -> None:
    x = torch.randn(5, 32)
    out = torch.empty(32)
    dead_loop_carry[(1,)](x, out, 5, BLOCK=32)
    torch.testing.assert_close(out, x.sum(0), rtol=1e-6, atol=1e-6)


def test_branch_on_engine_reduction() -> None:
    for sign, factor in ((1.0, 2.0), (-1.0, 3.0)):
        x = sign * torch.rand(16)
        out = torch.empty(16)
        branch_on_reduction[(1,)](x, out, BLOCK=16)
        assert torch.equal(out, x * factor)


def test_loop_bound_from_engine_reduction() -> None:
    out = torch.zeros(1)
    loop_bound_from_reduction[(1,)](torch.full((8,), 2, dtype=torch.int32), out, BLOCK=8)
    assert out.item() == 1.5 * 16


def test_store_at_offset_from_engine_reduction() -> None:
    out = torch.zeros(32)
    store_at_reduced_offset[(1,)](torch.arange(8, dtype=torch.int32) % 2, out, BLOCK=8)
    assert out.nonzero().flatten().tolist() == [4]


def test_masked_scalar_load_and_store() -> None:
    out = torch.zeros(6)
    masked_scalar[(6,)](torch.arange(4.0), out, 4)
    assert out.tolist() == [0.0, 2.0, 4.0, 6.0, -2.0, 0.0]


def test_atomic_add_with_ignored_result() -> None:
    counter = torch.zeros(4, dtype=torch.int32)
    atomic_ignored[(3,)](counter, BLOCK=16)
    assert counter.tolist() == [12, 12, 12, 12]

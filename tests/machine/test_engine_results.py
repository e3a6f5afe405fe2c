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


@triton.jit
def batched_dot(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    bi = tl.arange(0, B)[:, None, None]
    a = tl.load(a_ptr + bi * M * K + tl.arange(0, M)[None, :, None] * K + tl.arange(0, K)[None, None, :])
    b = tl.load(b_ptr + bi * K * N + tl.arange(0, K)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + bi * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :], c)


@triton.jit
def conditional_reads(x_ptr, y_ptr, out_ptr, flag, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if flag > 0:
        z = x * 2.0
    else:
        z = y * 3.0
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(n):  # may run zero times: x is then never read in the loop
        acc += x
    tl.store(out_ptr + offs, z + acc)


@triton.jit
def masked_by_loaded_bound(x_ptr, bound_ptr, out_ptr, BLOCK: tl.constexpr):
    start = tl.load(bound_ptr)
    r = tl.arange(0, BLOCK)
    tl.store(out_ptr + r, tl.load(x_ptr + start + r, mask=start + r < 50, other=0.0))


def test_batched_dot() -> None:
    g = torch.Generator().manual_seed(7)
    a, b = torch.randn(2, 16, 16, generator=g).half(), torch.randn(2, 16, 16, generator=g).half()
    c = torch.zeros(2, 16, 16)
    batched_dot[(1,)](a, b, c, B=2, M=16, N=16, K=16)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-5, atol=1e-5)


def test_tensors_read_on_some_paths_only() -> None:
    """Regression: the wait for a tile read only inside a branch or a loop body must cover every path."""
    x, y = torch.randn(32), torch.randn(32)
    for flag, n in ((2, 0), (0, 0), (2, 3), (-1, 1)):
        out = torch.zeros(32)
        conditional_reads[(1,)](x, y, out, flag, n, BLOCK=32)
        expected = (2 * x if flag > 0 else 3 * y) + n * x
        torch.testing.assert_close(out, expected, rtol=1e-6, atol=1e-6)


def test_mask_bound_loaded_from_memory() -> None:
    """Regression: a scalar loaded from memory may bound a block's mask (jagged rows)."""
    x, out = torch.randn(200), torch.zeros(64)
    masked_by_loaded_bound[(1,)](x, torch.tensor([7], dtype=torch.int32), out, BLOCK=64)
    expected = torch.zeros(64)
    expected[:43] = x[7:50]
    assert torch.equal(out, expected)


@triton.jit
def bound_from_int64_reduction(n_ptr, x_ptr, out_ptr, BLOCK: tl.constexpr):
    n = tl.sum(tl.load(n_ptr + tl.arange(0, 4)))
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=0.0))


@triton.jit
def swap_carried(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs)
    b = a + 1
    for _ in range(3):
        a, b = b, a
    tl.store(out_ptr + offs, a - b)


def test_dma_bound_is_an_engine_made_int64() -> None:
    """Regression: an i64 reduction used directly as a DMA bound must be read by the scalar core."""
    x, out = torch.arange(32.0), torch.full((32,), -1.0)
    bound_from_int64_reduction[(1,)](torch.tensor([1, 2, 3, 4]), x, out, BLOCK=32)
    assert torch.equal(out, torch.where(torch.arange(32) < 10, x, 0.0))


def test_swapping_loop_carried_tensors() -> None:
    """Regression: swapping two carried tiles needs a second slot in the CBs (it deadlocked)."""
    x, out = torch.randn(8), torch.zeros(8)
    swap_carried[(1,)](x, out, BLOCK=8)
    torch.testing.assert_close(out, torch.full((8,), 1.0))

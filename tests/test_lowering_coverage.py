"""Constructs the machine model must run (issue 3, item 2): each kernel through `kernel[grid](...)`
on CPU tensors (compiled with the default pipeline, run on the MTIA-2i model) against torch.

Regression tests for gaps found by probe kernels: tensors carried by `while` loops, helpers with an
early return, fp8 values (emulated on the vector core), atomics as scalar-core commands.
"""

import torch
import triton
import triton.language as tl

import mtia_xdsl

# ---------------------------------------------------------------------------------------------
# tensors carried by scf.while
# ---------------------------------------------------------------------------------------------


@triton.jit
def while_doubles(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    i = 0
    while i < n:
        x = x * 2
        i += 1
    tl.store(out_ptr + offs, x)


@triton.jit
def while_tensor_condition(x_ptr, out_ptr, limit, BLOCK: tl.constexpr):
    """The loop condition reads the carried tensor (a reduction in the before region)."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    steps = 0
    while tl.max(x, 0) < limit:
        x = x + 1.5
        steps += 1
    tl.store(out_ptr + offs, x + steps)


@triton.jit
def while_two_tensors_in_for(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Two carried tensors, one read after its next value is made, inside a for loop."""
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs)
    b = a * 0
    for _ in range(2):
        i = 0
        while i < n:
            b_next = b + a
            a = a * 0.5 + b
            b = b_next
            i += 1
    tl.store(out_ptr + offs, a + b)


def test_while_carries_a_tensor() -> None:
    x = torch.randn(16)
    out = torch.zeros(16)
    while_doubles[(1,)](x, out, 3, BLOCK=16)
    assert torch.equal(out, x * 8)
    while_doubles[(1,)](x, out, 0, BLOCK=16)
    assert torch.equal(out, x)


def test_while_condition_reads_the_carried_tensor() -> None:
    x = torch.arange(32, dtype=torch.float32) / 8
    out = torch.zeros(32)
    while_tensor_condition[(1,)](x, out, 10.0, BLOCK=32)
    ref, steps = x.clone(), 0
    while ref.max() < 10.0:
        ref, steps = ref + 1.5, steps + 1
    assert steps > 0
    assert torch.equal(out, ref + steps)


def test_while_two_tensors_nested_in_for() -> None:
    x = torch.randn(16)
    out = torch.zeros(16)
    while_two_tensors_in_for[(1,)](x, out, 3, BLOCK=16)
    a, b = x.clone(), x * 0
    for _ in range(2):
        for _ in range(3):
            a, b = a * 0.5 + b, b + a
    torch.testing.assert_close(out, a + b, rtol=0, atol=0)
    assert mtia_xdsl.last_report() is not None


# ---------------------------------------------------------------------------------------------
# helpers with early returns (multi-block tt.func, inlined once lifted to scf.if)
# ---------------------------------------------------------------------------------------------


@triton.jit
def _pick(x, flag):
    if flag > 0:
        return x + 1
    if flag < -5:
        return x - x
    return x * 2


@triton.jit
def _pair(x, flag):
    if flag == 0:
        return x, x + 1.0
    return x * 3, x


@triton.jit
def helper_early_returns(x_ptr, out_ptr, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    a, b = _pair(x, flag)
    tl.store(out_ptr + offs, _pick(x, flag) + a * b)


def test_helper_with_early_returns_runs() -> None:
    x = torch.randn(16)
    cases = [(1, x + 1, (x * 3, x)), (-9, x - x, (x * 3, x)), (0, x * 2, (x, x + 1)), (-2, x * 2, (x * 3, x))]
    for flag, pick, (a, b) in cases:
        out = torch.zeros(16)
        helper_early_returns[(1,)](x, out, flag, BLOCK=16)
        assert torch.equal(out, pick + a * b), flag

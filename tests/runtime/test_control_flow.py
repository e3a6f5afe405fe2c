"""Kernel control flow through a plain `kernel[grid](...)` launch on the machine model.

Regression tests: a data-dependent `while` (the kernel binary must keep scf.while parseable) and an
early `return` (cf branches lifted to scf.if before lowering).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def data_dependent_while(x_ptr, out_ptr):
    n = tl.load(x_ptr)
    i = 0
    s = 0.0
    while i < n:
        s += 1.5
        i += 1
    tl.store(out_ptr, s)


@triton.jit
def early_return(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


@triton.jit
def nested_early_returns(out_ptr, n):
    pid = tl.program_id(0)
    if pid >= n:
        return
    if pid % 2 == 1:
        return
    tl.store(out_ptr + pid, pid + 1.0)


def test_data_dependent_while() -> None:
    out = torch.zeros(1)
    data_dependent_while[(1,)](torch.tensor([5], dtype=torch.int32), out)
    assert out.item() == 7.5


def test_early_return_skips_programs_past_the_end() -> None:
    x = torch.randn(100)
    out = torch.full((160,), -7.0)
    early_return[(5,)](x, out, 100, BLOCK=32)
    assert torch.equal(out[:100], x + 1)
    assert torch.equal(out[100:], torch.full((60,), -7.0))


def test_nested_early_returns() -> None:
    out = torch.zeros(8)
    nested_early_returns[(8,)](out, 5)
    assert out.tolist() == [1.0, 0.0, 3.0, 0.0, 5.0, 0.0, 0.0, 0.0]


@triton.jit
def spin_wait(flag_ptr, out_ptr):
    if tl.program_id(0) == 0:
        while tl.atomic_add(flag_ptr, 0) == 0:  # waits for program 1, which the model runs later
            pass
        tl.store(out_ptr, 42)
    else:
        tl.atomic_xchg(flag_ptr, 1)


def test_a_wait_on_a_later_program_is_an_error_not_a_hang() -> None:
    import re

    import pytest

    flag, out = torch.zeros(1, dtype=torch.int32), torch.zeros(1, dtype=torch.int32)
    with pytest.raises(Exception, match="this while loop never ends") as info:
        spin_wait[(2,)](flag, out)
    assert re.search(r"test_control_flow.py:\d+:\d+: error", str(info.value))
    assert "no tensor was written" in str(info.value)
    assert flag.item() == 0 and out.item() == 0


@triton.jit
def count_up_in_memory(counter_ptr, LIMIT: tl.constexpr):
    while tl.atomic_add(counter_ptr, 1) < LIMIT:  # no carried values change, memory does
        pass


def test_a_while_loop_that_only_changes_memory_still_runs() -> None:
    counter = torch.zeros(1, dtype=torch.int32)
    count_up_in_memory[(1,)](counter, LIMIT=20)
    assert counter.item() == 21

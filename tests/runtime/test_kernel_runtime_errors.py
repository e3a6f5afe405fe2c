"""Errors found while a kernel runs on the model through the Python API: located, with what to do."""

import inspect

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl  # noqa: F401  # registers the backend


def _line_of(fn, needle: str) -> int:
    src, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, text in enumerate(src) if needle in text)


@triton.jit
def reverse_sum_kernel(x_ptr, y_ptr, n, step):
    acc = 0.0
    for i in range(n - 1, -1, step):
        acc += tl.load(x_ptr + i)
    tl.store(y_ptr, acc)


def test_a_run_time_negative_range_step_names_the_line_and_the_fix():
    x, y = torch.ones(8), torch.zeros(1)
    with pytest.raises(Exception, match="step is -1") as info:
        reverse_sum_kernel[(1,)](x, y, 8, -1)
    message = str(info.value)
    line = _line_of(reverse_sum_kernel, "for i in range")
    assert f"test_kernel_runtime_errors.py:{line}:" in message
    assert "step is -1" in message and "tl.constexpr" in message
    assert torch.equal(y, torch.zeros(1))

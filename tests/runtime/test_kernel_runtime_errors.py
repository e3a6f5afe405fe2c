"""Errors found while a kernel runs on the model through the Python API: located, with what to do."""

import inspect

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl
import mtia_xdsl.language as mtl


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


@triton.jit
def unmasked_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.device_assert(n > 0, "n must be positive")
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


def test_an_out_of_bounds_access_is_a_kernel_runtime_error_that_upstream_handlers_catch():
    from triton.runtime.errors import InterpreterError
    from xdsl.utils.exceptions import InterpretationError

    x, y = torch.ones(8), torch.zeros(8)
    with pytest.raises(mtia_xdsl.KernelRuntimeError, match="out-of-bounds f32 access") as info:
        unmasked_copy_kernel[(1,)](x, y, 8, BLOCK=16)
    # what a GPU launch (RuntimeError), Triton's interpreter (InterpreterError) and older code catch
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, InterpreterError)
    assert isinstance(info.value, InterpretationError)
    assert "test_kernel_runtime_errors.py:" in str(info.value)
    assert torch.equal(y, torch.zeros(8))


def test_a_failed_device_assert_is_a_kernel_runtime_error_from_mtia_xdsl_compile_too():
    kernel = mtia_xdsl.compile(
        unmasked_copy_kernel,
        signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        constexprs={"BLOCK": 8},
        options={"debug": True},
    )
    x, y = torch.ones(8), torch.zeros(8)
    with pytest.raises(mtia_xdsl.KernelRuntimeError, match="n must be positive") as info:
        kernel[(1,)](x, y, 0)
    assert f"test_kernel_runtime_errors.py:{_line_of(unmasked_copy_kernel, 'device_assert')}:" in str(info.value)


@triton.jit
def partial_row_reduce_kernel(out_ptr):
    tl.store(out_ptr + tl.program_id(0), mtl.re_reduce(tl.program_id(0), 0, "sum"))


def test_re_reduce_without_a_whole_pe_row_is_a_kernel_runtime_error():
    out = torch.zeros(12, dtype=torch.int32)
    with pytest.raises(mtia_xdsl.KernelRuntimeError, match="waits for the other PEs of its PE row") as info:
        partial_row_reduce_kernel[(12,)](out)
    assert f"test_kernel_runtime_errors.py:{_line_of(partial_row_reduce_kernel, 're_reduce')}:" in str(info.value)

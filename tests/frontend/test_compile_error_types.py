"""Compile errors are Triton's own exception types (what `pytest.raises(triton.TritonError)` catches in
upstream's tests) and keep mtia_xdsl's message naming the kernel's file and line."""

import pickle

import pytest
import torch
import triton
import triton.language as tl
from triton.compiler.errors import CompileTimeAssertionFailure

from mtia_xdsl.frontend import KernelError


@triton.jit
def _static_assert_kernel(x, N: tl.constexpr):
    tl.static_assert(N > 4, "N must exceed 4")


@triton.jit
def _bad_axis_kernel(x):
    tl.store(x + tl.arange(0, 4), tl.sum(tl.arange(0, 4), axis=2))


def test_failed_static_assert_is_upstreams_type_with_our_location():
    with pytest.raises(CompileTimeAssertionFailure) as info:
        _static_assert_kernel[(1,)](torch.zeros(4), 2)
    assert isinstance(info.value, KernelError)
    line = next(i for i, text in enumerate(open(__file__), 1) if "tl.static_assert(N > 4" in text)
    assert str(info.value).startswith(f"{__file__}:{line}:")
    assert "N must exceed 4" in info.value.error_message


def test_a_codegen_error_is_a_compilation_error_whose_cause_is_upstreams():
    with pytest.raises(triton.CompilationError) as info:
        _bad_axis_kernel[(1,)](torch.zeros(4))
    assert isinstance(info.value, triton.TritonError) and isinstance(info.value, KernelError)
    assert "invalid axis 2" in str(info.value)
    assert "invalid axis 2" in str(info.value.__cause__)  # what upstream's tests read


def test_located_errors_survive_pickling():
    with pytest.raises(CompileTimeAssertionFailure) as info:
        _static_assert_kernel[(1,)](torch.zeros(4), 3)
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is type(info.value)
    assert str(again) == str(info.value)

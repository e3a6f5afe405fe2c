"""Misuse of the MTIA language extensions is an error at the kernel line that says what to do."""

import pytest
import torch
import triton
import triton.language as tl
from triton.runtime.interpreter import InterpretedFunction

import mtia_xdsl.language as mtl
from mtia_xdsl.frontend.build import build_tt_module
from mtia_xdsl.frontend.errors import KernelError


def line_of(fn, text: str) -> int:
    """Line number of the first source line of kernel `fn` (jit or plain) containing `text`."""
    import inspect

    lines, start = inspect.getsourcelines(getattr(fn, "fn", fn))
    return start + next(i for i, line in enumerate(lines) if text in line)


def _bad_axis(out_ptr):
    tl.store(out_ptr, mtl.get_pe_id(2))


def _pe_row(out_ptr):
    tl.store(out_ptr, tl.mtia.get_pe_id(1))


def test_get_pe_id_axis_out_of_range_is_located():
    with pytest.raises(
        KernelError,
        match=rf"test_language_refusals.py:{line_of(_bad_axis, 'get_pe_id')}"
        r":\d+: error: get_pe_id: axis must be 0",
    ):
        build_tt_module(triton.jit(_bad_axis), {"out_ptr": "*i32"})


def test_triton_interpreter_refuses_at_the_kernel_line():
    out = torch.zeros(1, dtype=torch.int32)
    with pytest.raises(
        Exception,
        match=rf"test_language_refusals.py:{line_of(_pe_row, 'get_pe_id')}"
        r": error: mtl.get_pe_id is an MTIA language "
        r"extension and cannot run under Triton's interpreter \(TRITON_INTERPRET=1\)",
    ):
        InterpretedFunction(_pe_row)[(1,)](out)


def test_another_backend_refuses_at_the_kernel_line():
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, CompilationError

    with pytest.raises(CompilationError, match=r"(?s)at 2:22:.*cannot run under another Triton backend"):
        triton.compile(ASTSource(triton.jit(_pe_row), {"out_ptr": "*i32"}, {}), target=GPUTarget("cuda", 80, 32))


def _slice_and_reduce(out_ptr):
    x = tl.load(out_ptr + tl.arange(0, 4))
    tl.store(out_ptr + tl.arange(0, 2), tl.extract_slice(x, [1], [2]))
    tl.store(out_ptr + tl.arange(0, 4), tl.mtia.re_reduce(x, 0, "sum"))


def test_every_extension_refuses_under_the_interpreter_at_its_line():
    with pytest.raises(
        Exception,
        match=rf"test_language_refusals.py:{line_of(_slice_and_reduce, 'extract_slice')}"
        r": error: mtl.extract_slice is an MTIA language",
    ):
        InterpretedFunction(_slice_and_reduce)[(1,)](torch.zeros(4))

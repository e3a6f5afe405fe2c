"""GPU-only constructs are refused by the frontend with the kernel line, the construct and what to do instead."""

from __future__ import annotations

from typing import Any

import pytest
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait

from mtia_xdsl.frontend import KernelError, build_tt_module


@triton.jit
def inline_asm_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y)


@triton.jit
def gdc_wait_kernel(x_ptr):
    gdc_wait()
    tl.store(x_ptr, 1)


@triton.jit
def gdc_launch_kernel(x_ptr):
    tl.store(x_ptr, 1)
    gdc_launch_dependents()


CASES: dict[str, tuple[Any, dict[str, str], dict[str, object], str, str]] = {
    "inline_asm": (
        inline_asm_kernel, {"x_ptr": "*i32", "y_ptr": "*i32"}, {"BLOCK": 32},
        "tl.inline_asm_elementwise is GPU-only", "tl.map_elementwise",
    ),
    "gdc_wait": (
        gdc_wait_kernel, {"x_ptr": "*i32"}, {},
        "tl.extra.cuda.gdc_wait is GPU-only", "remove the call",
    ),
    "gdc_launch_dependents": (
        gdc_launch_kernel, {"x_ptr": "*i32"}, {},
        "tl.extra.cuda.gdc_launch_dependents is GPU-only", "remove the call",
    ),
}  # fmt: skip


def _line_of(fn: Any, needle: str) -> int:
    """Return the file line of the first line of `fn`'s source containing `needle`."""
    import inspect

    src, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, text in enumerate(src) if needle in text)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gpu_only_construct_is_refused_at_its_line(name: str) -> None:
    fn, signature, constexprs, what, instead = CASES[name]
    with pytest.raises(KernelError) as info:
        build_tt_module(fn, signature, constexprs)
    err = info.value
    needle = {"inline_asm": "tl.inline_asm", "gdc_wait": "gdc_wait()"}.get(name, "gdc_launch_dependents()")
    assert err.file is not None and err.file.endswith("test_frontend_refusals.py")
    assert err.line == _line_of(fn, needle)
    assert what in err.message and instead in err.message
    assert f"test_frontend_refusals.py:{err.line}:" in str(err)


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_a_none_pointer_argument_says_what_to_do() -> None:
    import torch

    y = torch.zeros(16)
    with pytest.raises(Exception, match="argument 'x_ptr' is None, which Triton specializes as a constexpr") as info:
        copy_kernel[(1,)](None, y, 16, BLOCK=16)
    assert "test_frontend_refusals.py:" in str(info.value)
    assert torch.equal(y, torch.zeros(16))


@triton.jit
def offset_copy_kernel(x_ptr, y_ptr, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, 16)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


def test_a_tensor_passed_as_a_constexpr_says_to_pass_a_python_value() -> None:
    import torch
    from triton.compiler.errors import CompilationError

    x, y = torch.ones(16), torch.zeros(16)
    with pytest.raises(CompilationError) as info:
        offset_copy_kernel[(1,)](x, y, B=torch.tensor(0))
    message = str(info.value)
    assert "'B' is a tl.constexpr" in message and "torch.Tensor" in message and ".item()" in message
    assert "is_ptr" not in message
    assert f"test_frontend_refusals.py:{_line_of(offset_copy_kernel, 'def offset_copy_kernel')}:" in message
    assert torch.equal(y, torch.zeros(16))

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


def _runtime_args(x_ptr, n, WHICH: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    if WHICH == 0:
        x = mtl.re_reduce(x, n, "sum")
    elif WHICH == 1:
        x = x + mtl.get_pe_id(n)
    elif WHICH == 2:
        x = x + mtl.get_num_pes(n)
    else:
        x = mtl.extract_slice(x, [0], [n])
    tl.store(x_ptr + tl.arange(0, x.shape[0]), x)


@pytest.mark.parametrize(
    ("which", "text", "message"),
    [
        (0, "re_reduce", r"re_reduce: axis must be 0 \(the PEs of this PE's row\) or 1 \(its column\), got a value"),
        (1, "get_pe_id", r"get_pe_id: axis must be 0 .* got a value computed at run time \(int32\)"),
        (2, "get_num_pes", r"get_num_pes: axis must be 0 .* got a value computed at run time \(int32\)"),
        (3, "extract_slice", r"extract_slice: size a value computed at run time \(int32\) of dimension 0 must"),
    ],
)
def test_a_runtime_value_where_a_constexpr_is_needed_is_named(which, text, message):
    with pytest.raises(
        KernelError,
        match=rf"test_language_refusals.py:{line_of(_runtime_args, text)}:\d+: error: {message}.*tl.constexpr",
    ):
        build_tt_module(triton.jit(_runtime_args), {"x_ptr": "*fp32", "n": "i32"}, {"WHICH": which})


def _each_extension(x_ptr, WHICH: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    if WHICH == 0:
        x = x + mtl.get_pe_id()
    elif WHICH == 1:
        x = x + tl.mtia.get_num_pes(0)
    elif WHICH == 2:
        x = mtl.re_reduce(x, 0, "sum")
    else:
        x = mtl.extract_slice(x, [0], [4])
    tl.store(x_ptr + tl.arange(0, 4), x)


@pytest.mark.parametrize(("which", "name"), [(0, "get_pe_id"), (1, "get_num_pes"), (2, "re_reduce"),
                                             (3, "extract_slice")])  # fmt: skip
def test_each_spelling_names_the_interpreter_alone(which, name):
    with pytest.raises(Exception, match=rf"test_language_refusals.py:{line_of(_each_extension, name)}: error: "
                       rf"mtl.{name} is an MTIA language extension and cannot run under Triton's interpreter "
                       r"\(TRITON_INTERPRET=1\); unset TRITON_INTERPRET") as info:  # fmt: skip
        InterpretedFunction(_each_extension)[(1,)](torch.zeros(4), WHICH=which)
    assert "outside" not in str(info.value)


def test_a_call_outside_a_kernel_says_where_it_belongs():
    with pytest.raises(mtl.ExtensionError, match=r"test_language_refusals.py:\d+: error: mtl.get_pe_id is an MTIA "
                       r"language extension: call it inside a @triton.jit kernel"):  # fmt: skip
        mtl.get_pe_id()


def test_triton_interpret_1_in_the_environment_is_a_clear_error(tmp_path):
    import os
    import subprocess
    import sys

    script = tmp_path / "user_kernel.py"
    script.write_text(
        "import torch, triton, triton.language as tl\n"
        "import mtia_xdsl.language as mtl\n"
        "@triton.jit\n"
        "def k(x_ptr):\n"
        "    tl.store(x_ptr + tl.arange(0, 8), mtl.re_reduce(tl.load(x_ptr + tl.arange(0, 8)), 0, 'sum'))\n"
        "k[(1,)](torch.zeros(8))\n"
    )
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": os.getcwd()}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert (
        f"{script}:5: error: mtl.re_reduce is an MTIA language extension and cannot run under Triton's " in done.stderr
    )


def _bad_operands(x_ptr, WHICH: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    if WHICH == 0:
        x = mtl.re_reduce(x_ptr + tl.arange(0, 8), 0, "sum").to(tl.int64).to(tl.float32)
    elif WHICH == 1:
        x = mtl.re_reduce(x > 0, 0, "max").to(tl.float32)
    elif WHICH == 2:
        x = x + mtl.re_reduce(3.0, 0, "sum")
    else:
        x = mtl.extract_slice(x, 0, [8])
    tl.store(x_ptr + tl.arange(0, 8), x)


@pytest.mark.parametrize(
    ("which", "text", "message"),
    [
        (0, "re_reduce(x_ptr", r"re_reduce: cannot reduce elements of type pointer<fp32>; use a numeric type"),
        (1, "re_reduce(x > 0", r"re_reduce: cannot reduce elements of type int1; use a numeric type"),
        (2, "re_reduce(3.0", r"re_reduce: x must be a tile or a scalar value computed by the kernel, got 3.0; for a"),
        (3, "extract_slice", r"extract_slice: offsets must be a list with one entry per dimension, got 0"),
    ],
)
def test_bad_operands_are_refused_at_the_kernel_line(which, text, message):
    line = line_of(_bad_operands, text)
    with pytest.raises(KernelError, match=rf"test_language_refusals.py:{line}:\d+: error: {message}"):
        build_tt_module(triton.jit(_bad_operands), {"x_ptr": "*fp32"}, {"WHICH": which})

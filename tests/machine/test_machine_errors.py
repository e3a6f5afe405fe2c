"""User-facing errors of the machine model and the lowering, through a plain `kernel[grid](...)` launch."""

import re
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

from examples import vector_add

THIS_FILE = Path(__file__).name


@triton.jit
def unmasked_copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x)


def _line_of(text: str) -> int:
    return next(i for i, line in enumerate(Path(__file__).read_text().splitlines(), 1) if text in line)


def test_out_of_bounds_load_names_the_line_and_writes_nothing() -> None:
    x = torch.randn(100)
    out = torch.full((128,), 7.0)
    with pytest.raises(Exception, match=r"out-of-bounds") as info:
        unmasked_copy[(1,)](x, out, BLOCK=128)
    message = str(info.value)
    line = _line_of("x = tl.load(x_ptr + offs)")
    assert re.search(rf"{THIS_FILE}:{line}:\d+: error: out-of-bounds f32 access", message), message
    assert "past the end of 'x_ptr'" in message
    assert "no tensor was written" in message
    assert torch.equal(out, torch.full((128,), 7.0))


def test_local_storage_overflow_is_a_compile_error_naming_the_sizes() -> None:
    x = torch.randn(1 << 17)
    out = torch.empty_like(x)
    # make_fit=False: refuse the kernel as written (the driver would otherwise sub-tile it to fit)
    with pytest.raises(Exception, match=r"local storage but a PE has 393216; lower the block sizes") as info:
        vector_add.add_kernel[(1,)](x, x, out, x.numel(), BLOCK_SIZE=1 << 17, make_fit=False)
    assert "tensor<131072xf32>" in str(info.value)


@pytest.mark.parametrize("grid", [(-1,), (2.5,)])
def test_bad_grid_is_refused_with_the_kernel_location(grid: tuple[float, ...]) -> None:
    x = torch.randn(128)
    out = torch.zeros(128)
    with pytest.raises(Exception, match=r"must be non-negative integers") as info:
        unmasked_copy[grid](x, out, BLOCK=128)
    assert re.search(rf"{THIS_FILE}:\d+:\d+: error: the grid", str(info.value)), str(info.value)
    assert torch.equal(out, torch.zeros(128))


def test_empty_grid_runs_nothing_and_leaves_no_report() -> None:
    import mtia_xdsl

    out = torch.zeros(128)
    vector_add.add_kernel[(1,)](torch.ones(128), torch.ones(128), out, 128, BLOCK_SIZE=128)
    assert mtia_xdsl.last_report() is not None
    vector_add.add_kernel[(0,)](torch.ones(128), torch.ones(128), out, 128, BLOCK_SIZE=128)
    assert mtia_xdsl.last_report() is None


def test_compile_refuses_unknown_type_strings_naming_the_kernel() -> None:
    import mtia_xdsl
    from mtia_xdsl.frontend import KernelError

    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "int32"}
    with pytest.raises(KernelError, match=r"vector_add\.py:\d+:\d+: error: unknown type 'int32' for argument"):
        mtia_xdsl.compile(vector_add.add_kernel, signature, {"BLOCK_SIZE": 64})


def test_compile_refuses_unknown_options() -> None:
    import mtia_xdsl

    with pytest.raises(TypeError, match=r"unknown option\(s\) \['nonsense'\]"):
        mtia_xdsl.compile(vector_add.add_kernel, options={"nonsense": 1})


@triton.jit
def index_near_int32_max(x_ptr, out_ptr, start, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    idx = start + offs  # wraps around for start near 2**31 - 1
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=idx < n, other=-1.0))


def test_int32_index_overflow_is_reported_in_debug_mode() -> None:
    """As in upstream Triton, i32 index arithmetic is assumed not to wrap (DMA blocks are computed in
    i64); debug mode with sanitize_overflow reports a wrap at the kernel line instead."""
    import mtia_xdsl

    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "start": "i32", "n": "i32"}
    kernel = mtia_xdsl.compile(
        index_near_int32_max, signature, {"BLOCK": 8}, options={"debug": True, "sanitize_overflow": True}
    )
    out = torch.zeros(8)
    line = _line_of("idx = start + offs")
    with pytest.raises(Exception, match=rf"{THIS_FILE}:{line}:\d+: error: .*int32 overflow detected"):
        kernel[(1,)](torch.arange(8.0), out, 2**31 - 4, 2**31 - 2)
    assert torch.equal(out, torch.zeros(8))

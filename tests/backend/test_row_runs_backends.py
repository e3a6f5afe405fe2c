"""An indexed DMA of rows whose starts are read from an offset tile (memory_access.py `_row_runs_access`,
convert_tt_to_mtia.py `_box_index`: the tile reshaped to the rows and sliced to its first column) in the C++ and
LLVM IR emitters: the same values, commands and cycles as the machine model."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl
from mtia_xdsl.backend import host
from mtia_xdsl.machine.run import run_kernel
from tests.backend.llvm_differential import differential

pytestmark = pytest.mark.skipif(not host.compiler_available(), reason=host.INSTALL_HINT)


@triton.jit
def rows_of_runtime_length(x_ptr, out_ptr, ks, stride, xs, XBLOCK: tl.constexpr):
    """Rows of `16 * ks` elements at a run-time `stride`, read flat below `16 * xs` (the multiples of 16 a
    kernel argument's `tt.divisibility` gives under Inductor, here in the kernel's arithmetic)."""
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    n = 16 * ks
    xmask = xindex < 16 * xs
    v = tl.load(x_ptr + (xindex % n + stride * (xindex // n)), xmask)
    tl.store(out_ptr + xindex, v + 1.0, xmask)


def _kernel():
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "ks": "i32", "stride": "i32", "xs": "i32"}
    return mtia_xdsl.compile(rows_of_runtime_length, signature, {"XBLOCK": 64})


def _args() -> list:
    x = torch.randn(5, 56, generator=torch.Generator().manual_seed(0))
    return [x, torch.zeros(5 * 48), 3, 56, 5 * 3]  # rows of 48 of a [5, 56] tensor: 4 blocks, rows cross inside


def _expected(args: list) -> torch.Tensor:
    return args[0][:, :48].reshape(-1) + 1.0


def test_cpp_reads_the_rows_like_the_model() -> None:
    k = _kernel()
    assert k.fixed is not None and "mtia.dma_gather_rows" in k.asm["mtia"] and "mtia.gather" not in k.asm["mtia"]
    args = _args()
    model = run_kernel(k.fixed.program, (4,), args)
    model_out = args[1].clone()
    args[1].zero_()
    cpp = host.run_cpp(k.asm["cpp"], (4,), args)
    assert torch.equal(args[1], model_out) and torch.equal(model_out, _expected(args))
    for tm, tc in zip(model.traces, cpp.traces, strict=True):
        assert tm.commands == tc.commands
    assert cpp.report.total_cycles == model.report.total_cycles


def test_llvm_reads_the_rows_like_the_model() -> None:
    pytest.importorskip("llvmlite")
    k, args = _kernel(), _args()
    with differential() as record:
        k[(4,)](*args)
    (launch,) = record.launches
    assert launch.llvm_cycles == launch.model_cycles
    assert torch.equal(launch.llvm[1], launch.model[1]) and torch.equal(launch.model[1], _expected(args))

"""An LS gather whose box reaches past its tensor (convert_tt_to_mtia.py `_ls_gather`, `mtia.storage_extent`) in
the C++ and LLVM IR emitters: the box DMA clipped at the tensor's end as in the model (same commands, cycles and
values), and a lane truly past the tensor stops the program at the kernel line as the model does."""

from __future__ import annotations

import os

import pytest
import torch

import mtia_xdsl
from mtia_xdsl.backend import host
from mtia_xdsl.machine.run import run_kernel
from tests.backend.llvm_differential import differential
from tests.transforms.test_ls_gather import gather_rows_of_8, wide_columns_mod_n

pytestmark = pytest.mark.skipif(not host.compiler_available(), reason=host.INSTALL_HINT)


def _kernel():
    return mtia_xdsl.compile(gather_rows_of_8, {"x_ptr": "*fp32", "t_ptr": "*i64", "out_ptr": "*fp32"}, {"BLOCK": 32})


def _args(past: bool) -> list:
    x, t = torch.randn(8 * 32 - 4, generator=torch.Generator().manual_seed(0)), torch.arange(32) % 4
    if past:
        t[31] = 4  # x[252]: one element past x
    return [x, t, torch.zeros(32)]


def test_cpp_clips_the_box_like_the_model() -> None:
    k = _kernel()
    assert k.fixed is not None and "mtia.storage_extent" in k.asm["mtia"]
    args = _args(past=False)
    model = run_kernel(k.fixed.program, (1,), args)
    model_out = args[2].clone()
    args[2].zero_()
    cpp = host.run_cpp(k.asm["cpp"], (1,), args)
    assert torch.equal(args[2], model_out) and torch.equal(model_out, args[0][args[1] + 8 * torch.arange(32)])
    for tm, tc in zip(model.traces, cpp.traces, strict=True):
        assert tm.commands == tc.commands  # the clipped box DMA: 252 f32, as the model moves
    assert cpp.report.total_cycles == model.report.total_cycles


def test_llvm_clips_the_box_like_the_model() -> None:
    pytest.importorskip("llvmlite")
    k, args = _kernel(), _args(past=False)
    with differential() as record:
        k[(1,)](*args)
    (launch,) = record.launches
    assert launch.llvm_cycles == launch.model_cycles
    assert torch.equal(launch.llvm[2], launch.model[2])
    assert torch.equal(launch.model[2], args[0][args[1] + 8 * torch.arange(32)])


@pytest.mark.parametrize("executor", ["cpp", "llvm"])
def test_lane_past_the_tensor_stops_the_program(executor: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if executor == "llvm":
        pytest.importorskip("llvmlite")
    monkeypatch.setitem(os.environ, "MTIA_EXECUTOR", executor)
    args = _args(past=True)
    with pytest.raises(Exception, match=r"test_ls_gather\.py:\d+:\d+: error: .*outside every tensor"):
        _kernel()[(1,)](*args)
    assert args[2].eq(0).all()


@pytest.mark.parametrize("clipped", [True, False])  # b ends inside the box's last row / with it
def test_exact_box_in_both_emitters_like_the_model(clipped: bool) -> None:
    """The exact form (`rn % N`): its box DMA clipped at b's end and the `scf.if` of the scalar core's gather
    of lanes past the clip, taken (b of 20 * 16 - 4) or not (20 * 16): C++ commands and cycles, LLVM IR cycles
    and values equal the model's."""
    pytest.importorskip("llvmlite")
    types = {"b_ptr": "*fp32", "out_ptr": "*fp32", "K": "i32"}
    k = mtia_xdsl.compile(wide_columns_mod_n, types, {"N": 20, "BLOCK_K": 16, "BLOCK_N": 16})
    b = torch.randn(20 * 16 - (4 if clipped else 0), generator=torch.Generator().manual_seed(0))
    args = [b, torch.zeros(16, 16), 16]
    assert k.fixed is not None and "scf.if" in k.asm["mtia"]
    model = run_kernel(k.fixed.program, (1,), args)
    expected = b[torch.arange(16)[:, None] * 20 + torch.arange(16)]
    assert torch.equal(args[1], expected)
    args[1].zero_()
    cpp = host.run_cpp(k.asm["cpp"], (1,), args)
    assert torch.equal(args[1], expected)
    for tm, tc in zip(model.traces, cpp.traces, strict=True):
        assert tm.commands == tc.commands
    assert cpp.report.total_cycles == model.report.total_cycles
    with differential() as record:
        k[(1,)](b, torch.zeros(16, 16), 16)
    (launch,) = record.launches
    assert launch.llvm_cycles == launch.model_cycles and torch.equal(launch.llvm[1], launch.model[1])

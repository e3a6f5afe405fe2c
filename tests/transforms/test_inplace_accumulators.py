"""Loop-carried accumulators updated in place: one CB slot, exact results, CP dependencies, misuse caught.

mtia-cb-bufferize marks the DPE or SE/VEC command making a carried value `inplace` when the old value has
no other reader; the machine model overwrites the tile it read and orders the update after the slot's
earlier writer and readers. Expected results are computed the way the engines round (fp32 after each
command), so every comparison is bit-exact.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from xdsl.context import Context
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

import mtia_xdsl
from examples import matmul
from mtia_xdsl.dialects import get_all_dialects
from mtia_xdsl.machine.commands import Command, Engine, ProgramTrace, SlotRef
from mtia_xdsl.machine.program_shape import TimingError, build_dependencies
from mtia_xdsl.tools import mtia_run


@triton.jit
def se_accumulate(x_ptr, out_ptr, n, K, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for k in range(K):
        acc = acc + tl.load(x_ptr + k * n + offs, mask=offs < n, other=0.0) * 0.5
    tl.store(out_ptr + offs, acc, mask=offs < n)


@triton.jit
def scaled_dot_accumulate(a_ptr, b_ptr, out_ptr, K, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        a = tl.load(a_ptr + rows[:, None] * K + k + rows[None, :])
        b = tl.load(b_ptr + (k + rows[:, None]) * BLOCK + rows[None, :])
        acc = tl.dot(a, b, acc * 0.5)
    tl.store(out_ptr + rows[:, None] * BLOCK + rows[None, :], acc)


def _cb_depths(mtia_text: str, tile: str) -> list[int]:
    return [int(d) for d in re.findall(rf"mtia\.cb_alloc .*: !mtia\.cb<(\d+), {re.escape(tile)}>", mtia_text)]


def _matmul_reference(a: torch.Tensor, b: torch.Tensor, block_k: int) -> np.ndarray:
    """fp16 result of the K loop as the DPE computes it: exact block products, fp32 after each command."""
    a64, b64 = a.double().numpy(), b.double().numpy()
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k0 in range(0, a.shape[1], block_k):
        acc = (a64[:, k0 : k0 + block_k] @ b64[k0 : k0 + block_k] + acc).astype(np.float32)
    return acc.astype(np.float16)


@pytest.mark.parametrize(("m", "n", "k"), [(333, 517, 271), (160, 96, 512)])
def test_matmul_accumulator_is_updated_in_place_bit_exact(m: int, n: int, k: int) -> None:
    g = torch.Generator().manual_seed(11)
    a, b = torch.randn(m, k, generator=g).half(), torch.randn(k, n, generator=g).half()
    c = torch.empty(m, n, dtype=torch.float16)
    blocks = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}
    kernel = mtia_xdsl.compile(matmul.matmul_kernel, constexprs=blocks)
    kernel[(triton.cdiv(m, 64) * triton.cdiv(n, 64),)](a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride())
    assert np.array_equal(c.numpy().view(np.int16), _matmul_reference(a, b, 32).view(np.int16))
    text = kernel.asm["mtia"]
    assert _cb_depths(text, "tensor<64x64xf32>")[0] == 1
    assert re.search(r"mtia\.dpe_matmul %[\w.]+, %[\w.]+, (%[\w.]+) .*inplace .* into \1 :", text)


def test_se_accumulator_is_updated_in_place_bit_exact() -> None:
    n, k_iters, block = 1000, 7, 128
    x = torch.randn(k_iters * n, generator=torch.Generator().manual_seed(12))
    out = torch.zeros(n)
    kernel = mtia_xdsl.compile(se_accumulate, constexprs={"BLOCK": block})
    kernel[(triton.cdiv(n, block),)](x, out, n, k_iters)
    acc = np.zeros(n, np.float32)
    for k in range(k_iters):
        acc = acc + x[k * n : (k + 1) * n].numpy() * np.float32(0.5)
    assert np.array_equal(out.numpy().view(np.int32), acc.view(np.int32))
    text = kernel.asm["mtia"]
    assert re.search(r"outs\((%[\w.]+) : !mtia\.cb<1, tensor<128xf32>>\)( valid\[.*\])? inplace", text)
    assert _cb_depths(text, "tensor<128xf32>").count(2) == 0


def test_scaled_dot_chain_is_updated_in_place_bit_exact() -> None:
    """`acc = tl.dot(a, b, acc * 0.5)`: the SE scaling and the DPE both update the accumulator's one slot."""
    block, k_total = 32, 96
    g = torch.Generator().manual_seed(13)
    a, b = torch.randn(block, k_total, generator=g).half(), torch.randn(k_total, block, generator=g).half()
    out = torch.empty(block, block)
    kernel = mtia_xdsl.compile(scaled_dot_accumulate, constexprs={"BLOCK": block})
    kernel[(1,)](a, b, out, k_total)
    acc = np.zeros((block, block), np.float32)
    a64, b64 = a.double().numpy(), b.double().numpy()
    for k in range(0, k_total, block):
        acc = (a64[:, k : k + block] @ b64[k : k + block] + (acc * np.float32(0.5)).astype(np.float64)).astype(
            np.float32
        )
    assert np.array_equal(out.numpy().view(np.int32), acc.view(np.int32))
    text = kernel.asm["mtia"]
    assert _cb_depths(text, "tensor<32x32xf32>") == [1]
    assert len(re.findall(r"\binplace\b", text)) == 2


# ----------------------------------------------------------------------------------------------
# Timing dependencies of an in-place update
# ----------------------------------------------------------------------------------------------


def _cmd(engine: Engine, waits: tuple[SlotRef, ...] = (), fills: tuple[SlotRef, ...] = ()) -> Command:
    return Command(engine, engine.value, "k.py:1:1", waits, fills, elems=64)


def _deps(cmds: list[Command], depth: int = 1) -> list[set[int]]:
    prog = ProgramTrace((0, 0, 0), cmds, {0: depth, 1: 1}, {0: 256, 1: 256})
    dependents, _ = build_dependencies(prog, None)
    deps: list[set[int]] = [set() for _ in cmds]
    for j, ds in enumerate(dependents):
        for i in ds:
            deps[i].add(j)
    return deps


def test_in_place_update_follows_the_slot_writer_and_readers() -> None:
    acc, x = SlotRef(0, 0), SlotRef(1, 0)
    cmds = [
        _cmd(Engine.SE, fills=(acc,)),  # 0: init
        _cmd(Engine.DMA, fills=(x,)),  # 1: x
        _cmd(Engine.SE, waits=(acc, x), fills=(acc,)),  # 2: acc += x, in place
        _cmd(Engine.DMA, waits=(acc,)),  # 3: store acc
        _cmd(Engine.SE, waits=(acc,), fills=(acc,)),  # 4: acc *= 2, in place
        _cmd(Engine.DMA, waits=(acc,)),  # 5: store acc
        _cmd(Engine.SE, fills=(SlotRef(0, 1),)),  # 6: the next tile of the 1-slot CB
    ]
    deps = _deps(cmds)
    assert deps[2] == {0, 1}
    assert deps[3] == {2}  # reads the updated tile, not the init
    assert deps[4] == {2, 3}  # after the previous update and its reader
    assert deps[5] == {4}
    assert deps[6] == {0, 2, 3, 4, 5}  # the slot's every writer and reader


def test_in_place_update_of_an_unfilled_slot_is_a_timing_error() -> None:
    acc = SlotRef(0, 0)
    with pytest.raises(TimingError, match="updates slot 0 of cb 0, which nothing filled"):
        _deps([_cmd(Engine.SE, waits=(acc,), fills=(acc,))])


def test_second_plain_fill_is_still_refused() -> None:
    acc = SlotRef(0, 0)
    with pytest.raises(TimingError, match="fills slot 0 of cb 0 a second time"):
        _deps([_cmd(Engine.SE, fills=(acc,)), _cmd(Engine.SE, fills=(acc,))])


# ----------------------------------------------------------------------------------------------
# The buffer-level form: verifier and CB protocol checks
# ----------------------------------------------------------------------------------------------

_HEADER = 'builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {\n'
_ACC_LOOP = """
tt.func public @k(%x: !tt.ptr<f32>) {
  %acc = mtia.cb_alloc : !mtia.cb<1, tensor<64xf32>> loc("k.py":1:1)
  %s = arith.constant 1 : i64
  %n = arith.constant 64 : i64
  mtia.cb_reserve %acc, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":2:4)
  mtia.dma_load %x[%s] bounds[%n] : !tt.ptr<f32> into %acc : !mtia.cb<1, tensor<64xf32>> loc("k.py":2:4)
  mtia.cb_push %acc, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":2:4)
  WAIT
  mtia.se_compute ins(%acc : !mtia.cb<1, tensor<64xf32>>) outs(%acc : !mtia.cb<1, tensor<64xf32>>) inplace {
  ^bb0(%t: tensor<64xf32>):
    %d = arith.addf %t, %t : tensor<64xf32>
    mtia.yield %d : tensor<64xf32>
  } loc("k.py":3:4)
  mtia.cb_wait %acc, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":4:4)
  mtia.dma_store %acc, %x[%s] bounds[%n] : !mtia.cb<1, tensor<64xf32>>, !tt.ptr<f32> loc("k.py":4:4)
  mtia.cb_pop %acc, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":4:4)
  tt.return
}
"""
_WAIT = 'mtia.cb_wait %acc, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":3:4)'


def _run(tmp_path: Path, body: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    path = tmp_path / "k.mlir"
    path.write_text(_HEADER + body + "}\n")
    status = mtia_run.main([str(path), "--arg", "ones:f32:64"])
    out = capsys.readouterr()
    return status, out.out + out.err


def test_in_place_program_runs_and_doubles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _run(tmp_path, _ACC_LOOP.replace("WAIT", _WAIT), capsys)
    assert status == 0, out
    assert "arg 0: sum = 128" in out


def test_in_place_update_without_wait_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _run(tmp_path, _ACC_LOOP.replace("WAIT", ""), capsys)
    assert status == 1
    assert "k.py:3:4: error: a command reads a CB without a cb_wait for its tile" in out


def test_in_place_update_after_the_tile_was_popped_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    popped = _WAIT + '\n  mtia.cb_pop %acc, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":3:2)'
    status, out = _run(tmp_path, _ACC_LOOP.replace("WAIT", popped), capsys)
    assert status == 1
    assert "k.py:3:4: error:" in out


def _parse(text: str) -> None:
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    Parser(ctx, text).parse_module().verify()


_CBS = """
%a = "test.op"() : () -> !mtia.cb<1, tensor<4x4xf16>>
%c = "test.op"() : () -> !mtia.cb<1, tensor<4x4xf32>>
%d = "test.op"() : () -> !mtia.cb<1, tensor<4x4xf32>>
"""


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (
            "mtia.dpe_matmul %a, %a, %c inplace {input_precision = 0 : i32} : !mtia.cb<1, tensor<4x4xf16>>, "
            "!mtia.cb<1, tensor<4x4xf16>>, !mtia.cb<1, tensor<4x4xf32>> into %d : !mtia.cb<1, tensor<4x4xf32>>",
            "its `into` CB must be `c`",
        ),
        (
            "mtia.se_compute ins(%c : !mtia.cb<1, tensor<4x4xf32>>) outs(%d : !mtia.cb<1, tensor<4x4xf32>>) inplace {\n"
            "^bb0(%t: tensor<4x4xf32>):\n  mtia.yield %t : tensor<4x4xf32>\n}",
            "every out must be an input",
        ),
    ],
)
def test_inplace_verifier(op: str, message: str) -> None:
    with pytest.raises(VerifyException, match=message):
        _parse(_CBS + op)

"""mtia-effective-shape: the example kernels give bit-identical results with effective shapes off and on,
the lowered program carries the extents, and the engines do less work on masked tails."""

import subprocess
from collections.abc import Callable
from typing import Any

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl
from examples.layer_norm import _layer_norm_fwd_fused
from examples.matmul import matmul_kernel
from examples.softmax import softmax_kernel
from examples.vector_add import add_kernel


def _softmax(es: bool) -> tuple[torch.Tensor, ...]:
    x = torch.randn(23, 781, generator=torch.Generator().manual_seed(2))
    y = torch.empty_like(x)
    softmax_kernel[(23,)](y, x, x.stride(0), y.stride(0), 781, BLOCK_SIZE=1024, effective_shapes=es)
    return (y,)


def _matmul(es: bool) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(3)
    m, n, k = 333, 517, 271
    a, b = torch.randn(m, k, generator=g).half(), torch.randn(k, n, generator=g).half()
    c = torch.empty((m, n), dtype=torch.float16)
    grid = (triton_cdiv(m, 64) * triton_cdiv(n, 64),)
    matmul_kernel[grid](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, GROUP_SIZE_M=8, effective_shapes=es,
    )  # fmt: skip
    return (c,)


def _layer_norm(es: bool) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(5)
    rows, cols = 5, 1500
    x = torch.randn(rows, cols, generator=g)
    w, b = torch.rand(cols, generator=g), torch.randn(cols, generator=g)
    y, mean, rstd = torch.empty_like(x), torch.empty(rows), torch.empty(rows)
    args = (x, y, w, b, mean, rstd, x.stride(0), cols, 1e-5)
    _layer_norm_fwd_fused[(rows,)](*args, BLOCK_SIZE=1024, effective_shapes=es)
    return y, mean, rstd


def _vector_add(es: bool) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(1)
    n = 10_007
    x, y = torch.rand(n, generator=g), torch.rand(n, generator=g)
    out = torch.empty_like(x)
    add_kernel[(triton_cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024, effective_shapes=es)
    return (out,)


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


@pytest.mark.parametrize("run", [_softmax, _matmul, _layer_norm, _vector_add], ids=lambda f: f.__name__[1:])
def test_bit_exact_off_on(run: Callable[[bool], tuple[torch.Tensor, ...]]) -> None:
    off = run(False)
    on = run(True)
    for a, b in zip(off, on, strict=True):
        assert not torch.isnan(b.float()).any()
        assert torch.equal(a, b)


def _report(run: Callable[[bool], Any], es: bool) -> Any:
    run(es)
    report = mtia_xdsl.last_report()
    assert report is not None
    return report


def test_softmax_se_re_work_shrinks_to_the_row() -> None:
    """The division (stored with bounds) runs on the 781 valid lanes of each 1024-lane row and the max on
    the RE skips the -inf tail; exp(x - max) keeps the whole row, since max may be inf or NaN."""
    off, on = _report(_softmax, False), _report(_softmax, True)
    assert off.se_elems - on.se_elems == 23 * (1024 - 781)
    assert on.engine_busy_used["re"] < off.engine_busy_used["re"]


def test_matmul_dpe_does_only_the_useful_macs() -> None:
    """333 x 517 x 271 in 64 x 64 x 32 tiles: the tails of M, N (the accumulator the K loop carries is
    stored with the same bounds) and K are skipped, so the DPE does exactly M*N*K MACs."""
    off, on = _report(_matmul, False), _report(_matmul, True)
    assert off.dpe_flops == 2 * 384 * 576 * 288
    assert on.dpe_flops == 2 * 333 * 517 * 271


def test_softmax_program_carries_extents() -> None:
    sig = {"output_ptr": "*fp32", "input_ptr": "*fp32", "input_row_stride": "i32", "output_row_stride": "i32"}
    sig["n_cols"] = "i32"
    on = mtia_xdsl.compile(softmax_kernel, sig, {"BLOCK_SIZE": 1024}).asm["mtia"]
    off = mtia_xdsl.compile(softmax_kernel, sig, {"BLOCK_SIZE": 1024}, {"effective_shapes": False}).asm["mtia"]
    assert "valid[" in on and "valid[" not in off
    assert "other(" in on  # exp(x - max) is summed over the whole row: its -inf fill is observed


_HALF_COMPUTED = """
tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
  %a = mtia.cb_alloc : !mtia.cb<1, tensor<64xf32>> loc("k.py":1:1)
  %b = mtia.cb_alloc : !mtia.cb<1, tensor<64xf32>> loc("k.py":1:1)
  %s = arith.constant 1 : i64
  %n = arith.constant 64 : i64
  %v = arith.constant 32 : i64
  mtia.cb_reserve %a, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":2:4)
  mtia.dma_load %x[%s] bounds[%n] : !tt.ptr<f32> into %a : !mtia.cb<1, tensor<64xf32>> loc("k.py":2:4)
  mtia.cb_push %a, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":2:4)
  mtia.cb_wait %a, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":3:4)
  mtia.cb_reserve %b, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":3:4)
  mtia.se_compute ins(%a : !mtia.cb<1, tensor<64xf32>>) outs(%b : !mtia.cb<1, tensor<64xf32>>) valid[%v] {
  ^bb0(%t: tensor<64xf32>):
    %r = arith.addf %t, %t : tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } loc("k.py":3:4)
  mtia.cb_push %b, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":3:4)
  mtia.cb_pop %a, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":3:4)
  mtia.cb_wait %b, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":4:4)
  mtia.dma_store %b, %out[%s] bounds[{store}] : !mtia.cb<1, tensor<64xf32>>, !tt.ptr<f32> loc("k.py":4:4)
  mtia.cb_pop %b, 1 : !mtia.cb<1, tensor<64xf32>> loc("k.py":4:4)
  tt.return
}
"""


@pytest.mark.parametrize(("store", "expected"), [("%v", "arg 1: sum = 64"), ("%n", "arg 1: sum = nan")])
def test_lanes_outside_valid_are_unwritten(store: str, expected: str) -> None:
    """An SE command with valid[32] computes 32 of 64 lanes; storing the other 32 reads unwritten LS (NaN)."""
    program = _HALF_COMPUTED.replace("{store}", store)
    run = subprocess.run(
        ["mtia-run", "-", "--arg", "ones:f32:64", "--arg", "zeros:f32:64"],
        input=program,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert expected in run.stdout


@triton.jit
def _scaled_square_sum(x_ptr, out_ptr, n, s, B: tl.constexpr):
    o = tl.arange(0, B)
    x = tl.load(x_ptr + o, mask=o < n, other=0.0)
    y = (x * s) * (x * s)
    tl.store(out_ptr, tl.sum(y, 0))


@pytest.mark.parametrize("s", [2.0, float("inf"), float("nan")])
def test_masked_sum_times_a_scalar_keeps_the_tail_when_the_scalar_is_not_finite(s: float) -> None:
    """The tail lanes hold (0 * s)^2: 0 for finite s, NaN for s = inf or NaN, as on a GPU."""
    x = torch.randn(50, generator=torch.Generator().manual_seed(5))
    padded = torch.cat([x, torch.zeros(14)])
    expected = ((padded * s) * (padded * s)).sum()
    for es in (False, True):
        out = torch.zeros(1)
        _scaled_square_sum[(1,)](x, out, 50, s, B=64, effective_shapes=es)
        torch.testing.assert_close(out[0], expected, equal_nan=True)

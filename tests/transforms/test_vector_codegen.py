"""mtia-vector-codegen keeps every example bit-exact and removes broadcast commands, CBs and LS round trips.

Each example kernel runs through `kernel[grid]` with `vector_codegen=False` and `True` at small, ragged
sizes; the outputs must be identical bit for bit. The machine model charges nothing for a splat or
broadcast of a body argument (an operand form), so the fused commands do the same arithmetic as the
separate ones did, minus the broadcast commands.
"""

import math
import re

import pytest
import torch
import triton

import mtia_xdsl
from examples import attention, layer_norm, matmul, softmax, vector_add
from mtia_xdsl.machine.run import run_kernel

_SOFTMAX_SIGNATURE = {
    "output_ptr": "*fp32",
    "input_ptr": "*fp32",
    "input_row_stride": "i32",
    "output_row_stride": "i32",
    "n_cols": "i32",
}


def _both(launch) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Outputs of `launch(vector_codegen)` with the pass off and on."""
    return launch(False), launch(True)


def _assert_bit_exact(off: list[torch.Tensor], on: list[torch.Tensor]) -> None:
    for a, b in zip(off, on, strict=True):
        assert a.dtype == b.dtype and torch.equal(a.view(torch.uint8), b.view(torch.uint8))


def test_softmax_and_vector_add_bit_exact() -> None:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(7, 300, generator=g)

    def soft(vc: bool) -> list[torch.Tensor]:
        y = torch.empty_like(x)
        softmax.softmax_kernel[(7,)](y, x, x.stride(0), y.stride(0), 300, BLOCK_SIZE=512, vector_codegen=vc)
        return [y]

    a, b = torch.rand(3000, generator=g), torch.rand(3000, generator=g)

    def add(vc: bool) -> list[torch.Tensor]:
        out = torch.empty_like(a)
        vector_add.add_kernel[(3,)](a, b, out, 3000, BLOCK_SIZE=1024, vector_codegen=vc)
        return [out]

    off, on = _both(soft)
    _assert_bit_exact(off, on)
    torch.testing.assert_close(on[0], torch.softmax(x, dim=1))
    _assert_bit_exact(*_both(add))


def test_layer_norm_bit_exact() -> None:
    g = torch.Generator().manual_seed(2)
    x, w, bias = torch.randn(5, 700, generator=g), torch.rand(700, generator=g), torch.randn(700, generator=g)

    def norm(vc: bool) -> list[torch.Tensor]:
        y, mean, rstd = torch.empty_like(x), torch.empty(5), torch.empty(5)
        layer_norm._layer_norm_fwd_fused[(5,)](
            x, y, w, bias, mean, rstd, x.stride(0), 700, 1e-5, BLOCK_SIZE=256, vector_codegen=vc
        )
        return [y, mean, rstd]

    off, on = _both(norm)
    _assert_bit_exact(off, on)
    torch.testing.assert_close(on[0], torch.nn.functional.layer_norm(x, (700,), w, bias, 1e-5), rtol=1e-4, atol=1e-4)


def test_matmul_and_attention_bit_exact() -> None:
    g = torch.Generator().manual_seed(3)
    m, n, k = 70, 45, 40
    a, b = torch.randn(m, k, generator=g).half(), torch.randn(k, n, generator=g).half()

    def mat(vc: bool) -> list[torch.Tensor]:
        c = torch.empty((m, n), dtype=torch.float16)
        grid = (triton.cdiv(m, 32) * triton.cdiv(n, 32),)
        strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
        matmul.matmul_kernel[grid](
            a, b, c, m, n, k, *strides, BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=16, GROUP_SIZE_M=2,
            vector_codegen=vc,
        )  # fmt: skip
        return [c]

    shape = (1, 2, 40, 16)
    q, kk, v = (torch.randn(*shape, generator=g).half() for _ in range(3))

    cbs: dict[bool, int] = {}

    def attn(vc: bool) -> list[torch.Tensor]:
        o = torch.empty_like(q)
        strides = (*q.stride()[:3], *kk.stride()[:3], *v.stride()[:3], *o.stride()[:3])
        attention.attn_fwd[(triton.cdiv(40, 16), 2)](
            q, kk, v, o, 1.0 / math.sqrt(16), *strides, 2, 40, HEAD_DIM=16, BLOCK_M=16, BLOCK_N=16, CAUSAL=True,
            vector_codegen=vc,
        )  # fmt: skip
        report = mtia_xdsl.last_report()
        assert report is not None
        cbs[vc] = len(report.cbs)
        return [o]

    _assert_bit_exact(*_both(mat))
    off, on = _both(attn)
    _assert_bit_exact(off, on)
    torch.testing.assert_close(on[0].float(), attention.reference(q, kk, v).float(), rtol=2e-3, atol=2e-3)
    # the README's "attention's 44 CBs become 23": folding broadcasts and fusing commands halves the CBs,
    # bringing attention under the 32 a PE's CP tracks
    assert cbs[False] == 44 and cbs[True] == 23, cbs


def _softmax_run(vector_codegen: bool) -> tuple[str, list]:
    kernel = mtia_xdsl.compile(
        softmax.softmax_kernel, _SOFTMAX_SIGNATURE, {"BLOCK_SIZE": 256}, {"vector_codegen": vector_codegen}
    )
    x = torch.randn(1, 256)  # no masked tail: the work charged does not depend on effective shapes
    y = torch.empty_like(x)
    (trace,) = run_kernel(kernel.fixed.program, (1,), [y, x, 256, 256, 256]).traces
    torch.testing.assert_close(y, torch.softmax(x, dim=1))
    return kernel.asm["mtia"], [c for c in trace.commands if c.kind.endswith("_compute")]


@pytest.mark.parametrize("vector_codegen", [False, True])
def test_softmax_commands_cbs_and_work(vector_codegen: bool) -> None:
    """Off: splat, sub, exp, splat, div (5 SE commands, 6 tile CBs). On: sub+exp fused with the max as a
    scalar operand, div with the sum as one (2 SE commands, 3 tile CBs); the arithmetic charged is the
    same minus the two splat commands."""
    mtia_ir, commands = _softmax_run(vector_codegen)
    tiles = len(re.findall(r"mtia.cb_alloc .*!mtia.cb<\d+, tensor<256xf32>>", mtia_ir))
    if vector_codegen:
        assert [c.elems for c in commands] == [2 * 256, 256]
        assert tiles == 3
    else:
        assert [c.elems for c in commands] == [256] * 5
        assert tiles == 6

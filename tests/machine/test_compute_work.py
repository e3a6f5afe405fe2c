"""Engine compute commands charge the work their body does, at the rate of its widest element type.

A body op with a reduced dimension does more work than its output has elements: a `tl.reduce` with a
custom combine function costs input elements x combine ops, a `tl.dot` on the vector core (f64) M*N*K.
A body that narrows (f32 -> f16) runs at the f32 rate.
"""

import torch
import triton
import triton.language as tl

import mtia_xdsl
from mtia_xdsl.machine.run import run_kernel


@triton.jit
def _mul(a, b):
    return a * b


@triton.jit
def row_products(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.store(out_ptr + offs, tl.reduce(x, 1, _mul).to(tl.float16))


@triton.jit
def f64_dot(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    idx = offs[:, None] * BLOCK + offs[None, :]
    tl.store(out_ptr + idx, tl.dot(tl.load(a_ptr + idx), tl.load(b_ptr + idx)))


def _compute_commands(fn, signature, block, args):
    program = mtia_xdsl.compile(fn, signature, {"BLOCK": block}).fixed.program
    (trace,) = run_kernel(program, (1,), args).traces
    return [c for c in trace.commands if c.kind.endswith("_compute")]


def test_reduction_body_charges_its_input_and_narrowing_body_the_wide_type() -> None:
    x = torch.rand(16, 16) + 0.5
    out = torch.empty(16, dtype=torch.float16)
    reduce_cmd, cast_cmd = _compute_commands(row_products, {"x_ptr": "*fp32", "out_ptr": "*fp16"}, 16, [x, out])
    torch.testing.assert_close(out, x.prod(1).half(), rtol=1e-3, atol=0)
    assert reduce_cmd.elems == 16 * 16 * 1  # 256 inputs, one combine op (not 16 outputs)
    assert cast_cmd.dtype == "f32"  # truncf f32 -> f16: the f32 rate, not the f16 one
    assert cast_cmd.elems == 16


def test_dot_on_the_vector_core_charges_m_n_k() -> None:
    a, b = torch.rand(16, 16, dtype=torch.float64), torch.rand(16, 16, dtype=torch.float64)
    out = torch.empty(16, 16, dtype=torch.float64)
    signature = {"a_ptr": "*fp64", "b_ptr": "*fp64", "out_ptr": "*fp64"}
    commands = _compute_commands(f64_dot, signature, 16, [a, b, out])
    torch.testing.assert_close(out, a @ b)
    dots = [c for c in commands if c.elems >= 16 * 16 * 16]
    assert dots, [(c.kind, c.elems) for c in commands]
    assert all(c.dtype == "f64" for c in dots)

"""A complex tensor passed to a kernel is refused with a TypeError naming the kernel and the argument.

Triton has no complex dtypes: its launch binder's `canonicalize_dtype` raised `KeyError: 'complex64'` (upstream
on GPUs too); every launch path here now says what to pass instead (`torch.view_as_real`).
"""

import numpy as np
import pytest
import torch

import mtia_xdsl
from examples.vector_add import add_kernel
from mtia_xdsl.frontend import build_tt_module

SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32", "BLOCK_SIZE": "constexpr"}
REFUSED = (
    r"vector_add\.py:\d+:\d+: error: argument 'y_ptr': a torch\.complex64 tensor has no Triton type "
    r"\(Triton, and so MTIA, has no complex dtypes\); pass torch\.view_as_real\(x\)"
)


def _args() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.ones(8), torch.ones(8, dtype=torch.complex64), torch.zeros(8)


def test_a_triton_launch_refuses_a_complex_tensor() -> None:
    x, z, out = _args()
    with pytest.raises(TypeError, match=REFUSED):
        add_kernel[(1,)](x, z, out, 8, BLOCK_SIZE=8)
    assert (out == 0).all()


@pytest.mark.parametrize("signature", [None, SIG])
def test_a_compiled_kernel_refuses_a_complex_tensor(signature) -> None:
    """Specialized at launch (no signature), and compiled for `*fp32` (the signature check)."""
    x, z, out = _args()
    kernel = mtia_xdsl.compile(add_kernel, signature, {"BLOCK_SIZE": 8})
    with pytest.raises(TypeError, match=REFUSED):
        kernel[(1,)](x, z, out, 8)


def test_run_module_refuses_a_complex_array() -> None:
    x, out = np.ones(8, np.float32), np.zeros(8, np.float32)
    module = build_tt_module(add_kernel, SIG, {"BLOCK_SIZE": 8})
    with pytest.raises(TypeError, match=REFUSED):
        mtia_xdsl.run_module(module, 1, [x, np.ones(8, np.complex64), out, 8])


def test_its_real_view_runs() -> None:
    """The fix the message gives: the real view's floats, real and imaginary parts interleaved."""
    z = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64)
    flat = torch.view_as_real(z).reshape(-1)
    out = torch.zeros(4)
    add_kernel[(1,)](flat, flat, out, 4, BLOCK_SIZE=4)
    assert torch.equal(torch.view_as_complex(out.reshape(2, 2)), 2 * z)

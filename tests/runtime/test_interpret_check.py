"""interpret_check.interpreter_check: kernels launched through mtia_xdsl's driver, rerun under Triton's interpreter
(issue 18, item 2: the generated kernels are ordinary Triton, checked against eager and against the interpreter)."""

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from interpret_check import InterpreterCheckError, InterpreterMismatch, interpreter_check
from triton.language.extra import libdevice


@triton.jit
def _gelu(x):
    return 0.5 * x * (1.0 + libdevice.erf(x * 0.7071067811865476))


@triton.jit
def exp_gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, _gelu(tl.exp(x)), mask=mask)


def _launch(block: int) -> torch.Tensor:
    x = torch.linspace(-2.0, 2.0, 40)
    out = torch.full((40,), float("nan"))
    exp_gelu_kernel[(triton.cdiv(40, block),)](x, out, 40, BLOCK=block)
    return out


def test_a_kernel_agrees_with_the_interpreter():
    """A constexpr argument, a @triton.jit helper and a libdevice call: the interpreter reruns the launch on copies
    and agrees; only the output counts as written (both runs leave x as it was)."""
    with interpreter_check() as checked:
        out = _launch(16)
    x = torch.linspace(-2.0, 2.0, 40)
    torch.testing.assert_close(out, torch.nn.functional.gelu(x.exp()))
    assert [(c.kernel, c.grid, c.written) for c in checked] == [("exp_gelu_kernel", (3, 1, 1), ["out_ptr"])]


def test_a_seeded_difference_is_caught(monkeypatch):
    """The machine model's math.exp made 1% too large: the check fails naming the kernel and the buffer.

    BLOCK=8, a compile of its own: a launched kernel's interpreter keeps the implementations it resolved
    (mtia_xdsl.machine.run.reuse_interpreters)."""
    from xdsl.dialects import math
    from xdsl.interpreter import impl

    from mtia_xdsl.machine.interpret.math import MathFunctions, _unary

    impls = getattr(MathFunctions, "__impl_dict")  # xDSL's op -> implementation table (register_impls)
    monkeypatch.setitem(impls, math.ExpOp, impl(math.ExpOp)(_unary(lambda x: np.exp(x) * x.dtype.type(1.01))))
    message = r"test_interpret_check.py:\d+:1: kernel exp_gelu_kernel grid \(5, 1, 1\).* differ in 'out_ptr'"
    caught = []
    with pytest.raises(InterpreterMismatch, match=message) as at_exit:
        _launch_and_swallow(caught)
    assert caught == [at_exit.value]  # raised from the launch, and again when the context exits


def _launch_and_swallow(caught: list) -> None:
    """`_launch(8)` under the check, as a caller that drops a launch that fails (Inductor's autotuning, for most
    errors) would: the error goes to `caught`."""
    with interpreter_check():
        try:
            _launch(8)
        except InterpreterMismatch as e:
            caught.append(e)


@triton.jit
def descriptor_tuple_kernel(x_desc, pair, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    """out (BM x BN at block row program_id) = x's tile * pair[0] + pair[1]; pair[1] written back to pair[2]. The
    store's mask has a scalar condition, as Inductor's bmm template's (`_patch_comparisons`)."""
    pm = tl.program_id(0)
    t = x_desc.load([pm * BM, 0])
    rows = (pm * BM + tl.arange(0, BM))[:, None]
    tl.store(out_ptr + rows * BN + tl.arange(0, BN)[None, :], t * pair[0] + tl.load(pair[1]), (rows < 32) & (pm < 2))
    tl.store(pair[2] + tl.arange(0, 2), tl.load(pair[1] + tl.arange(0, 2)))


def test_descriptor_and_tuple_arguments():
    """A host tensor descriptor and a tuple of a scalar and two pointers: the interpreter gets copies of each (its
    writes do not reach the caller's tensors) and the outputs are named by their place in the argument."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    x = torch.randn(32, 16, generator=torch.Generator().manual_seed(1))
    bias, copy, out = torch.tensor([0.5, 2.0]), torch.zeros(2), torch.zeros(32, 16)
    with interpreter_check() as checked:
        descriptor_tuple_kernel[(2,)](TensorDescriptor.from_tensor(x, [16, 16]), (3.0, bias, copy), out, 16, 16)
    torch.testing.assert_close(out, x * 3.0 + 0.5)
    assert torch.equal(copy, bias)
    assert [c.written for c in checked] == [["pair[2]", "out_ptr"]]


def test_a_pointer_the_check_cannot_copy_is_refused():
    """A ctypes.Structure argument (examples/tensor_view.py): its pointer fields cannot be copied, so the launch is
    refused, naming the kernel and the argument's type."""
    from examples.tensor_view import scale

    with pytest.raises(InterpreterCheckError, match=r"tensor_view.py:\d+:1: kernel scale_view: .*TensorView"):
        with interpreter_check():
            scale(torch.ones(4, 4), 2.0, 1.0)


class _NormMlp(torch.nn.Module):
    """LayerNorm, GELU, then a Linear whose bias and ReLU Inductor fuses into its mm template as an epilogue."""

    def __init__(self):
        super().__init__()
        self.norm, self.fc = torch.nn.LayerNorm(48), torch.nn.Linear(48, 32)

    def forward(self, x):
        return torch.relu(self.fc(torch.nn.functional.gelu(self.norm(x))))


def _defined(codes: list[str]) -> set[str]:
    """The Triton kernels a compile's generated code defines (`run_and_get_code`'s strings)."""
    import re

    return set(re.findall(r"^def (triton_\w+)\(", "\n".join(codes), re.MULTILINE))


def test_a_compiled_inference_agrees_with_the_interpreter(mtia_inductor):
    """LayerNorm -> GELU -> Linear -> ReLU compiled without grad: mtia_xdsl's LayerNorm template with the GELU as
    its epilogue (mtia_xdsl/runtime/inductor_norms.py) and Inductor's mm template with bias and ReLU, each launch
    (autotuning's runs of every choice too) agreeing with the interpreter, the output with eager's."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    model, x = _NormMlp(), torch.randn(8, 48)
    with interpreter_check() as checked, torch.no_grad():
        out, codes = run_and_get_code(torch.compile(model), x)
    torch.testing.assert_close(out, model(x))
    defined, names = _defined(codes), {c.kernel for c in checked}
    assert defined and defined <= names, (defined, names)
    assert names == {c.kernel for c in checked if c.written}, checked  # a rerun of one output may change nothing
    templates = [n for n in defined if n.startswith("triton_tem_")]
    assert any("layer_norm" in n and "gelu" in n for n in templates), defined  # the norm template + GELU
    assert any("addmm" in n and "relu" in n for n in templates), defined  # mm + bias + ReLU


def test_a_compiled_training_step_agrees_with_the_interpreter(compile_and_train):
    """Every kernel of a training step of the same model (forward and backward, and every choice autotuning ran)
    agrees with the interpreter, as the step's output and gradients agree with eager's. The LayerNorm is whatever
    lowers it with grad enabled (Inductor's reduction kernel, the GELU fused in, at the time of writing): every
    kernel the forward's code defines was rerun. Autotuning launches a kernel repeatedly on the same buffers, so
    only some launches of each change its outputs."""
    torch.manual_seed(0)
    with interpreter_check() as checked:
        codes = compile_and_train(_NormMlp, torch.randn(8, 48))
    defined, names = _defined(codes), {c.kernel for c in checked}
    assert defined and defined <= names, (defined, names)
    assert names == {c.kernel for c in checked if c.written}, checked
    assert any("gelu" in n and "layer_norm" in n for n in defined), defined  # the normalization + GELU
    assert any(n.startswith("triton_tem_") and "relu" in n for n in defined), defined  # mm + bias + ReLU
    assert any("backward" in n for n in names), names

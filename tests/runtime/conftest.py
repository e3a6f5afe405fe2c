"""Fixtures shared by the runtime tests."""

import pytest
import torch
import torch._inductor.config as inductor_config

from mtia_xdsl.runtime import inductor


@pytest.fixture
def mtia_inductor():
    """Inductor's CPU path generates Triton (our backend), with no cache between compiles.

    Inductor's settings are changed with its own `config.patch`: pytest's monkeypatch (9.2) restores a
    module attribute through `__dict__`, which deletes the settings of torch's config module.
    """
    with inductor_config.patch(cpu_backend="triton", force_disable_caches=True):
        torch._dynamo.reset()
        from triton.runtime import driver

        _ = driver.active  # creates our driver, which installs the hooks
        inductor.install()
        yield
        torch._dynamo.reset()


def _compile_and_train(make_model, *inputs, rtol=None, atol=None):
    """Run `torch.compile` of one model from `make_model()` and an eager copy of it (its parameters loaded) on
    `inputs`; assert that the outputs and, after a backward of `out.pow(2).sum()` through each, every
    parameter's gradient match (`torch.testing.assert_close` with rtol and atol, its defaults when None).
    Returns the generated code of the compile (`run_and_get_code`'s list, one string per file)."""
    from torch._inductor.utils import run_and_get_code

    model, ref = make_model(), make_model()
    ref.load_state_dict(model.state_dict())
    out, codes = run_and_get_code(torch.compile(model), *inputs)
    expected = ref(*inputs)
    torch.testing.assert_close(out, expected, rtol=rtol, atol=atol)
    out.pow(2).sum().backward()
    expected.pow(2).sum().backward()
    for got, want in zip(model.parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(got.grad, want.grad, rtol=rtol, atol=atol)
    return codes


@pytest.fixture
def compile_and_train(mtia_inductor):
    """`_compile_and_train` (a compiled model's output and gradients against eager's) with our backend on."""
    return _compile_and_train

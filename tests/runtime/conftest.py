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

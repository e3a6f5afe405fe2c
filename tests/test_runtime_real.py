"""The runtime with the real frontend, pipeline and machine model (skipped until all three exist).

Checks results against torch on ragged sizes, through `mtia_xdsl.compile`, plain Triton launches and
`@triton.autotune`.
"""

from typing import Any

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl


def _missing() -> str | None:
    import importlib

    for module, name in (
        ("mtia_xdsl.frontend", "build_tt_module"),
        ("mtia_xdsl.pipeline", "lower"),
        ("mtia_xdsl.machine", "run_kernel"),
    ):
        try:
            if not hasattr(importlib.import_module(module), name):
                return f"{module}.{name}"
        except ImportError:
            return module
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=f"toolchain incomplete: {_missing()} missing")


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@pytest.fixture(autouse=True)
def private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))


def test_compile_api_runs_vector_add() -> None:
    n = 1000
    kernel = mtia_xdsl.compile(
        add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 256}
    )
    assert "tt.func" in kernel.asm["ttir"] and "mtia." in kernel.asm["mtia"]
    x, y, out = torch.randn(n), torch.randn(n), torch.zeros(n)
    kernel[(triton.cdiv(n, 256),)](x, y, out, n)
    torch.testing.assert_close(out, x + y)
    assert kernel.last_report.total_cycles > 0 and kernel.last_report.time_us > 0


def test_triton_launch_on_views_runs_on_machine() -> None:
    n = 300
    big_x, big_out = torch.randn(n + 7), torch.zeros(n + 20)
    x, y, out = big_x[7:], torch.randn(n), big_out[5 : 5 + n]
    add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128)
    torch.testing.assert_close(out, x + y)
    assert torch.count_nonzero(big_out[:5]) == 0 and torch.count_nonzero(big_out[5 + n :]) == 0
    assert triton.runtime.driver.active.last_result.report.total_cycles > 0


def test_autotune_runs_real_kernel() -> None:
    tuned = triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 256})], key=["n"])(
        add_kernel
    )
    n = 777
    x, y, out = torch.randn(n), torch.randn(n), torch.zeros(n)
    tuned[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n)
    assert tuned.best_config.kwargs["BLOCK"] in (64, 256)
    torch.testing.assert_close(out, x + y)

"""The Triton plugin: plain `kernel[grid](...)` and `@triton.autotune` on CPU tensors run through mtia_xdsl.

Uses the doubles of test_runtime_support for the frontend, pipeline and machine, and a private Triton
cache directory so no test reads or leaves a cached kernel.
"""

from typing import Any

import pytest
import torch
import triton
import triton.language as tl
from test_runtime_support import FakeToolchain, install

import mtia_xdsl
from mtia_xdsl.options import MtiaOptions
from mtia_xdsl.runtime.launch import KernelLaunchError
from mtia_xdsl.runtime.triton_backend.compiler import MtiaBackend
from mtia_xdsl.runtime.triton_backend.driver import TARGET, MtiaDriver


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> FakeToolchain:
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    add_kernel.device_caches.clear()  # drop kernels compiled in memory by earlier tests
    return install(monkeypatch)


def _runs(fake: FakeToolchain) -> list[Any]:
    return [details for stage, details in fake.calls if stage == "run"]


def test_our_driver_is_the_active_one() -> None:
    assert isinstance(triton.runtime.driver.active, MtiaDriver)
    assert triton.runtime.driver.active.get_current_target() == TARGET


def test_launch_runs_through_backend(fake: FakeToolchain) -> None:
    x, y, out = torch.arange(10.0), torch.full((10,), 2.0), torch.zeros(10)
    compiled = add_kernel[(1,)](x, y, out, 10, BLOCK=16, num_stages=3)
    assert torch.equal(out, x + 2)
    assert {"ttir", "mtia", "binary"} <= set(compiled.asm)
    assert compiled.metadata.name == "add_kernel"
    _name, signature, constexprs, options = fake.calls[0][1]
    assert signature == {
        "x_ptr": "*fp32",
        "y_ptr": "*fp32",
        "out_ptr": "*fp32",
        "n": "i32",
        "BLOCK": "constexpr",
    }
    assert constexprs == {(4,): 16}
    assert isinstance(options, MtiaOptions) and options.num_stages == 3
    grid, args, run_options = _runs(fake)[0]
    assert grid == (1, 1, 1)
    assert len(args) == 4 and args[3] == 10
    assert run_options.num_stages == 3


def test_views_with_storage_offset_reach_the_machine(fake: FakeToolchain) -> None:
    base = torch.zeros(30)
    x, y = torch.arange(30.0)[10:20], torch.ones(30)[5:15]
    out = base[12:22]
    add_kernel[(1,)](x, y, out, 10, BLOCK=16)
    args = _runs(fake)[0][1]
    assert args[0].data_ptr() == x.data_ptr() and args[2].data_ptr() == out.data_ptr()
    assert args[2].numel() == 30 - 12
    assert torch.equal(out, torch.arange(10.0, 20.0) + 1)
    assert torch.count_nonzero(base[:12]) == 0 and torch.count_nonzero(base[22:]) == 0


def test_autotune_picks_by_modelled_time(fake: FakeToolchain) -> None:
    tuned = triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 64})], key=["n"])(add_kernel)
    x, y, out = torch.arange(40.0), torch.ones(40), torch.zeros(40)
    tuned[lambda meta: (triton.cdiv(40, meta["BLOCK"]),)](x, y, out, 40)
    assert tuned.best_config.kwargs == {"BLOCK": 64}
    assert torch.equal(out, x + 1)
    blocks = sorted({c[1][2][(4,)] for c in fake.calls if c[0] == "build"})
    assert blocks == [16, 64]


def test_benchmarker_reports_modelled_ms(fake: FakeToolchain) -> None:
    driver = triton.runtime.driver.active
    x = torch.ones(8)
    times = driver.get_benchmarker()(lambda: add_kernel[(1,)](x, x, x, 8, BLOCK=8), quantiles=(0.5, 0.2))
    assert times == [1000.0 / 8 / 1000.0] * 2
    with pytest.raises(RuntimeError, match="launched no kernel"):
        driver.get_benchmarker()(lambda: None)


def test_backend_hash_changes_with_version(monkeypatch: pytest.MonkeyPatch) -> None:
    before = MtiaBackend(TARGET).hash()
    monkeypatch.setattr(mtia_xdsl, "__version__", "999.0")
    after = MtiaBackend(TARGET).hash()
    assert before != after and "999.0" in after


def test_cache_key_changes_with_version(monkeypatch: pytest.MonkeyPatch) -> None:
    from triton.compiler.compiler import ASTSource
    from triton.runtime.cache import get_cache_key

    src = ASTSource(
        add_kernel,
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        {"BLOCK": 16},
    )
    backend = MtiaBackend(TARGET)
    options = backend.parse_options({})
    before = get_cache_key(src, backend, options, {})
    monkeypatch.setattr(mtia_xdsl, "__version__", "999.0")
    assert get_cache_key(src, backend, options, {}) != before


def test_gpu_host_deactivates_our_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    assert MtiaDriver.is_active()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert not MtiaDriver.is_active()


def test_other_active_driver_deactivates_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    nvidia = triton.backends.backends["nvidia"].driver
    monkeypatch.setattr(nvidia, "is_active", staticmethod(lambda: True))
    assert not MtiaDriver.is_active()


def test_launcher_rejects_wrong_argument_count(fake: FakeToolchain) -> None:
    compiled = add_kernel[(1,)](torch.ones(4), torch.ones(4), torch.zeros(4), 4, BLOCK=4)
    launcher = compiled.run
    with pytest.raises(KernelLaunchError, match=r"test_triton_backend\.py:\d+:\d+: error: .*takes 5 arguments"):
        launcher(1, 1, 1, 0, compiled.function, None, None, None, None, torch.ones(4), 4)


def test_launcher_rejects_non_cpu_tensor(fake: FakeToolchain) -> None:
    compiled = add_kernel[(1,)](torch.ones(4), torch.ones(4), torch.zeros(4), 4, BLOCK=4)
    meta = torch.empty(4, device="meta")
    with pytest.raises(KernelLaunchError, match="'out_ptr' is on device meta"):
        compiled.run(1, 1, 1, 0, compiled.function, None, None, None, None, torch.ones(4), torch.ones(4), meta, 4, 4)


def test_make_ir_hook_leaves_other_backends_alone() -> None:
    from triton._C.libtriton import ir
    from triton.backends.nvidia.compiler import CUDAOptions
    from triton.compiler.compiler import ASTSource

    MtiaBackend(TARGET)  # installs the hook
    assert getattr(ASTSource.make_ir, "__mtia_xdsl_hook__", False)
    src = ASTSource(
        add_kernel,
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        {"BLOCK": 16},
    )
    context = ir.context()
    ir.load_dialects(context)
    module = src.make_ir(TARGET, CUDAOptions(), {}, {}, context)
    assert "tt.func" in str(module) and "add_kernel" in str(module)


def test_backend_hash_changes_with_sources(tmp_path: Any) -> None:
    from mtia_xdsl.runtime.triton_backend.compiler import source_digest

    (tmp_path / "a.py").write_text("x = 1\n")
    before = source_digest(tmp_path)
    (tmp_path / "a.py").write_text("x = 2\n")
    assert source_digest(tmp_path) != before

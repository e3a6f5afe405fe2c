"""The runtime with the real frontend, pipeline and machine model (skipped until all three exist).

Checks results against torch on ragged sizes, through `mtia_xdsl.compile`, plain Triton launches and
`@triton.autotune`.
"""

import re
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
    assert "mtia." not in kernel.asm["ttir"]  # the tt module as built, before lowering (printed lazily)
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


def test_autotune_skips_a_config_that_overflows_local_storage() -> None:
    # As upstream skips configs that raise OutOfResources: 2^20 fp32 per block cannot fit 384 KiB of LS
    # (make_fit=False: not split into sub-tiles that would fit).
    configs = [triton.Config({"BLOCK": 1 << 20, "make_fit": False}), triton.Config({"BLOCK": 256, "make_fit": False})]
    tuned = triton.autotune(configs=configs, key=["n"])(add_kernel)
    n = 1000
    x, y, out = torch.randn(n), torch.randn(n), torch.zeros(n)
    tuned[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n)
    assert tuned.best_config.kwargs["BLOCK"] == 256
    torch.testing.assert_close(out, x + y)


def test_local_storage_overflow_is_triton_out_of_resources_with_the_kernel_line() -> None:
    from triton.runtime.errors import OutOfResources

    x = torch.randn(1 << 20)
    with pytest.raises(OutOfResources) as info:
        add_kernel[(1,)](x, x, torch.zeros_like(x), x.numel(), BLOCK=1 << 20, make_fit=False)
    assert info.value.required > info.value.limit == 384 * 1024
    assert "test_runtime_real.py" in str(info.value) and "lower the block sizes" in str(info.value)


@triton.jit
def long_chain(x_ptr, out_ptr, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    for _ in tl.static_range(STEPS):
        x = tl.exp(x) * 0.5
    tl.store(out_ptr + offs, x)


@triton.jit
def many_alive(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    a = tl.exp(x)
    b = tl.exp(a)
    c = tl.exp(b)
    d = tl.exp(c)
    e = tl.exp(d)
    f = tl.exp(e)
    g = tl.exp(f)
    h = tl.exp(g)
    i = tl.exp(h)
    tl.store(out_ptr + offs, x + a + b + c + d + e + f + g + h + i)


def test_local_storage_overflow_lists_only_the_largest_cbs() -> None:
    """Ten 64 KiB values alive at once (all read by the final sum) do not fit LS even with CBs sharing bytes;
    the message lists the eight largest CBs alive at the peak. (`long_chain` used to overflow too, but its
    values are alive one after another, so mtia-cb-allocate lets them share LS and it runs.)"""
    from triton.runtime.errors import OutOfResources

    x = torch.randn(16384)
    with pytest.raises(OutOfResources) as info:
        # vector_codegen would fuse the chain into one command: keep one CB per step to overflow LS
        many_alive[(1,)](x, torch.zeros_like(x), BLOCK=16384, vector_codegen=False, make_fit=False)
    message = str(info.value)
    assert message.count("bytes, for the value made at") == 8, message
    assert re.search(r"\.\.\. and \d+ more CBs with \d+ bytes", message), message


def test_a_chain_of_values_alive_one_after_another_shares_local_storage() -> None:
    x = torch.randn(16384)
    out = torch.zeros_like(x)
    long_chain[(1,)](x, out, BLOCK=16384, STEPS=12, vector_codegen=False)
    want = x
    for _ in range(12):
        want = torch.exp(want) * 0.5
    torch.testing.assert_close(out, want)


SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}


def _dram_term(report: Any) -> float:
    return report.roofline_terms_cycles["dram"]


def test_machine_overrides_reach_the_machine_model() -> None:
    n = 2000
    x, y = torch.randn(n), torch.randn(n)
    base = mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 256})
    slow = mtia_xdsl.compile(
        add_kernel,
        SIG,
        {"BLOCK": 256},
        options={"machine": "mtia2i", "machine_overrides": {"dram_ecc_efficiency": 0.45}},
    )
    for kernel in (base, slow):
        out = torch.zeros(n)
        kernel[(triton.cdiv(n, 256),)](x, y, out, n)
        torch.testing.assert_close(out, x + y)
    assert base.last_report.config_overrides == {}
    assert slow.last_report.config_overrides == {"dram_ecc_efficiency": 0.45}
    assert "dram_ecc_efficiency=0.45" in slow.last_report.format()
    assert _dram_term(slow.last_report) == pytest.approx(2 * _dram_term(base.last_report))
    assert slow.last_report.total_cycles > base.last_report.total_cycles


def test_machine_overrides_through_a_triton_launch() -> None:
    n = 700
    x, y, out = torch.randn(n), torch.randn(n), torch.zeros(n)
    add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128, machine_overrides={"dram_ecc_efficiency": 0.5})
    torch.testing.assert_close(out, x + y)
    assert mtia_xdsl.last_report().config_overrides == {"dram_ecc_efficiency": 0.5}


def test_unknown_machine_override_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match=r"machine_overrides: .*dram_ecc_eficiency"):
        mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 256}, options={"machine_overrides": {"dram_ecc_eficiency": 0.8}})
    with pytest.raises(ValueError, match=r"machine_overrides: .*dram_ecc_efficiency"):
        mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 256}, options={"machine_overrides": {"dram_ecc_efficiency": 2.0}})
    x = torch.randn(64)
    with pytest.raises(ValueError, match=r"machine_overrides: .*no_such_field"):
        add_kernel[(1,)](x, x, torch.zeros(64), 64, BLOCK=64, machine_overrides={"no_such_field": 1})


def test_num_warps_must_be_a_power_of_two_as_upstream() -> None:
    x = torch.randn(64)
    out = torch.zeros(64)
    with pytest.raises(ValueError, match="num_warps must be a power of two, got 3"):
        add_kernel[(1,)](x, x, out, 64, BLOCK=64, num_warps=3)
    assert torch.equal(out, torch.zeros(64))


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("num_stages", 0, "num_stages must be an integer >= 1"),
        ("num_stages", "3", "num_stages must be an integer >= 1"),
        ("cb_sizing", "foo", "cb_sizing must be one of 'greedy', 'uniform', got 'foo'"),
        ("pe_mapping", "spiral", "pe_mapping must be one of 'linear', 'round_robin', 'zigzag', got 'spiral'"),
        ("effective_shapes", "yes", "effective_shapes must be True or False"),
        ("vector_codegen", 1, "vector_codegen must be True or False"),
    ],
)
def test_optimization_options_are_checked_before_compiling(option: str, value: Any, message: str) -> None:
    x = torch.randn(64)
    out = torch.zeros(64)
    with pytest.raises(ValueError, match=re.escape(message)):
        add_kernel[(1,)](x, x, out, 64, BLOCK=64, **{option: value})
    with pytest.raises(ValueError, match=re.escape(message)):
        mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 64}, options={option: value})
    assert torch.equal(out, torch.zeros(64))


SAME_SOURCE = """
import triton, triton.language as tl

@triton.jit
def same_source_kernel(x, y, B: tl.constexpr):
    o = tl.arange(0, B)
    tl.store(y + o, tl.load(x + o) + 1)
"""


def test_errors_name_the_kernels_own_file_when_another_file_has_the_same_source(tmp_path: Any) -> None:
    import importlib.util

    def load(name: str) -> Any:
        path = tmp_path / f"{name}.py"
        path.write_text(SAME_SOURCE)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.same_source_kernel

    first, second = load("first_copy"), load("second_copy")
    y = torch.zeros(16)
    first[(1,)](torch.randn(16), y, B=16)  # compiled and cached from first_copy.py
    with pytest.raises(Exception, match="out-of-bounds") as info:
        second[(1,)](torch.randn(8), y, B=16)
    assert "second_copy.py:" in str(info.value) and "first_copy.py" not in str(info.value)


def test_compile_api_raises_the_same_out_of_resources_as_a_launch() -> None:
    from triton.runtime.errors import OutOfResources

    with pytest.raises(OutOfResources, match="a PE has 393216"):
        mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 1 << 20}, options={"make_fit": False})


def test_last_report_is_cleared_by_a_failed_launch() -> None:
    x = torch.randn(64)
    add_kernel[(1,)](x, x, torch.zeros(64), 64, BLOCK=64)
    assert mtia_xdsl.last_report() is not None
    big = torch.randn(1 << 20)
    with pytest.raises(Exception, match="local storage"):
        add_kernel[(1,)](big, big, torch.zeros_like(big), big.numel(), BLOCK=1 << 20, make_fit=False)
    assert mtia_xdsl.last_report() is None

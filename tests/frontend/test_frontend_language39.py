"""Triton 3.9 language additions: tl.map_elementwise, approximate division, atomic load/store/poll.

Each kernel is checked op for op against libtriton's TTIR (as tests/frontend/test_frontend_conformance.py), run
through the tt reference semantics and compared with torch and Triton's interpreter; kernels the machine
model lowers also run through `kernel[grid]`. Top-level kernels so the corpus can reuse them.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch
import triton
import triton.language as tl

from mtia_xdsl.frontend import build_tt_module, inline_and_clean

N = 100
BLOCK = 64


@triton.jit
def _leaky_or_cap(x, y):
    if x > y:
        return y
    return x * 0.5


@triton.jit
def map_elementwise_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = y where x > y, else x / 2 (a scalar function with a branch, mapped over the lanes)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.map_elementwise(_leaky_or_cap, x, y), mask=mask)


@triton.jit
def _cubic(x, y):
    return x * x * y + 1.0


@triton.jit
def map_elementwise_cubic_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = x * x * y + 1 through tl.map_elementwise of a straight-line scalar function."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.map_elementwise(_cubic, x, y), mask=mask)


@triton.jit
def fdiv_variants_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out[0:n] = approx x / y, out[n:2n] = div_rn(x, y), out[2n:3n] = fdiv(x, y)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, tl.fdiv(x, y, approx=True), mask=mask)
    tl.store(out_ptr + n + offs, tl.div_rn(x, y), mask=mask)
    tl.store(out_ptr + 2 * n + offs, tl.fdiv(x, y), mask=mask)


@triton.jit
def atomic_load_store_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    """dst = 3 * src + 1 through tl.atomic_load (acquire) and tl.atomic_store (release), masked."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.atomic_load(src_ptr + offs, mask=mask)
    tl.atomic_store(dst_ptr + offs, v * 3 + 1, mask=mask)


@triton.jit
def atomic_poll_kernel(flag_ptr, out_ptr, BLOCK: tl.constexpr):
    """out = (flag == 1) for each lane, polling with a timeout."""
    offs = tl.arange(0, BLOCK)
    ok = tl.atomic_poll(flag_ptr + offs, 1, timeout_ns=1000)
    tl.store(out_ptr + offs, ok.to(tl.int32))


@triton.jit
def atomic_poll_forever_kernel(flag_ptr, out_ptr, BLOCK: tl.constexpr):
    """Poll without a timeout: waits until every flag is 1."""
    offs = tl.arange(0, BLOCK)
    ok = tl.atomic_poll(flag_ptr + offs, 1)
    tl.store(out_ptr + offs, ok.to(tl.int32))


F32_3 = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
CONFORMANCE: dict[str, tuple[Any, dict[str, str], dict[str, object]]] = {
    "map_elementwise": (map_elementwise_kernel, F32_3, {"BLOCK": BLOCK}),
    "map_elementwise_cubic": (map_elementwise_cubic_kernel, F32_3, {"BLOCK": BLOCK}),
    "fdiv_variants": (fdiv_variants_kernel, F32_3, {"BLOCK": BLOCK}),
    "atomic_load_store": (atomic_load_store_kernel, {"src_ptr": "*i32", "dst_ptr": "*i32", "n": "i32"},
                          {"BLOCK": BLOCK}),
    "atomic_poll": (atomic_poll_kernel, {"flag_ptr": "*i32", "out_ptr": "*i32"}, {"BLOCK": 16}),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CONFORMANCE))
def test_matches_upstream_ttir(name: str) -> None:
    from test_frontend_conformance import our_ttir, upstream_ttir

    fn, signature, constexprs = CONFORMANCE[name]
    assert our_ttir(fn, signature, constexprs) == upstream_ttir(fn, signature, constexprs)


def _run_reference(fn: Any, signature: dict[str, str], constexprs: dict[str, object], grid: Any, args: list) -> None:
    from xdsl.context import Context

    from mtia_xdsl.machine.reference import run_tt
    from mtia_xdsl.transforms.tt_lift_early_returns import TtLiftEarlyReturnsPass

    module = inline_and_clean(build_tt_module(fn, signature, constexprs))
    TtLiftEarlyReturnsPass().apply(Context(), module)  # the helper's early return, as the pipeline does
    run_tt(module, grid, args)


def _triton_interpret(fn: Any, grid: Any, *args: Any, **kwargs: Any) -> None:
    from triton.runtime.interpreter import InterpretedFunction

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        InterpretedFunction(fn.fn)[grid](*args, **kwargs)


def _xy(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(N, generator=g), torch.randn(N, generator=g)


MAP_CASES = {
    "branchy": (map_elementwise_kernel, lambda x, y: torch.where(x > y, y, x * 0.5)),
    "cubic": (map_elementwise_cubic_kernel, lambda x, y: x * x * y + 1.0),
}


@pytest.mark.parametrize("name", sorted(MAP_CASES))
def test_map_elementwise_reference(name: str) -> None:
    kernel, expected = MAP_CASES[name]
    x, y = _xy(1)
    out = torch.zeros(N)
    _run_reference(kernel, F32_3, {"BLOCK": BLOCK}, (triton.cdiv(N, BLOCK),), [x, y, out, N])
    torch.testing.assert_close(out, expected(x, y), rtol=0, atol=0)
    # Triton 3.9's interpreter lacks map_elementwise (its builder has no new_block): torch is the oracle


@pytest.mark.parametrize("name", sorted(MAP_CASES))
def test_map_elementwise_machine(name: str) -> None:
    kernel, expected = MAP_CASES[name]
    x, y = _xy(1)
    out = torch.zeros(N)
    kernel[(triton.cdiv(N, BLOCK),)](x, y, out, N, BLOCK=BLOCK)
    torch.testing.assert_close(out, expected(x, y), rtol=0, atol=0)


def test_atomic_load_store_and_poll_machine() -> None:
    src = torch.arange(N, dtype=torch.int32) - 7
    out = torch.zeros(N, dtype=torch.int32)
    atomic_load_store_kernel[(triton.cdiv(N, BLOCK),)](src, out, N, BLOCK=BLOCK)
    assert torch.equal(out, src * 3 + 1)
    flags = torch.tensor([1, 0] * 8, dtype=torch.int32)
    ok = torch.full((16,), 7, dtype=torch.int32)
    atomic_poll_kernel[(1,)](flags, ok, BLOCK=16)
    assert torch.equal(ok, flags)


def test_fdiv_variants_reference_and_machine() -> None:
    x, y = _xy(2)
    want = torch.cat([x / y] * 3)
    out = torch.zeros(3 * N)
    grid = (triton.cdiv(N, BLOCK),)
    _run_reference(fdiv_variants_kernel, F32_3, {"BLOCK": BLOCK}, grid, [x, y, out, N])
    assert torch.equal(out, want)  # the reference divides exactly; approx allows 2 ULP on NVIDIA
    machine = torch.zeros(3 * N)
    fdiv_variants_kernel[grid](x, y, machine, N, BLOCK=BLOCK)
    assert torch.equal(machine, want)


def test_atomic_load_store_reference_and_interpreter() -> None:
    src = torch.arange(N, dtype=torch.int32) - 7
    want = torch.zeros(N + 8, dtype=torch.int32)
    want[:N] = src * 3 + 1
    grid = (triton.cdiv(N, BLOCK),)
    out = torch.zeros(N + 8, dtype=torch.int32)
    sig = {"src_ptr": "*i32", "dst_ptr": "*i32", "n": "i32"}
    _run_reference(atomic_load_store_kernel, sig, {"BLOCK": BLOCK}, grid, [src, out, N])
    assert torch.equal(out, want)
    ref = torch.zeros(N + 8, dtype=torch.int32)
    _triton_interpret(atomic_load_store_kernel, grid, src, ref, N, BLOCK=BLOCK)
    assert torch.equal(ref, want)


def test_atomic_poll_with_timeout_reports_which_lanes_matched() -> None:
    flags = torch.tensor([1, 0] * 8, dtype=torch.int32)
    out = torch.full((16,), 7, dtype=torch.int32)
    _run_reference(atomic_poll_kernel, {"flag_ptr": "*i32", "out_ptr": "*i32"}, {"BLOCK": 16}, (1,), [flags, out])
    assert torch.equal(out, flags)


def test_atomic_poll_without_timeout_that_would_spin_is_an_error() -> None:
    from xdsl.utils.exceptions import InterpretationError

    flags = torch.tensor([1, 0] * 8, dtype=torch.int32)
    out = torch.zeros(16, dtype=torch.int32)
    sig = {"flag_ptr": "*i32", "out_ptr": "*i32"}
    with pytest.raises(InterpretationError, match=r"test_frontend_language39.py:\d+:\d+: error: tt.atomic_poll would"):
        _run_reference(atomic_poll_forever_kernel, sig, {"BLOCK": 16}, (1,), [flags, out])


def test_unsigned_types_are_signless_in_the_ir() -> None:
    from xdsl.dialects.builtin import IntegerType

    from mtia_xdsl.frontend.builder import XdslBuilder

    b = XdslBuilder(None)
    for width in (8, 16, 32, 64):
        assert getattr(b, f"get_uint{width}_ty")().attr == IntegerType(width)

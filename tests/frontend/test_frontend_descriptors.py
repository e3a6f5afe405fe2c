"""Tensor descriptors (`tl.make_tensor_descriptor`): frontend, tt reference semantics, the rewrite pass, the machine.

Each kernel runs (1) through the tt reference semantics with `DescriptorFunctions`, (2) after
`tt-rewrite-tensor-descriptor-to-pointer` through the plain tt semantics, (3) through `kernel[grid]` on the
machine model; all are compared with torch and with Triton's interpreter (in process). Row strides are
padded to a multiple of 16 bytes because Triton's interpreter (like TMA) requires aligned strides; tile
edges stay ragged (M, N not multiples of the block). The kernels are top-level so other tests can reuse them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import torch
import triton
import triton.language as tl
from xdsl.context import Context

from mtia_xdsl.frontend import build_tt_module, inline_and_clean
from mtia_xdsl.machine.reference import run_tt
from mtia_xdsl.transforms.tt_rewrite_tensor_descriptor import TtRewriteTensorDescriptorPass

M, N, LD = 37, 45, 48
"""Tensor sizes and the padded row stride (elements) of every 2-d test tensor."""


@triton.jit
def desc_tile_affine(x_ptr, y_ptr, M, N, stride_x, stride_y, BM: tl.constexpr, BN: tl.constexpr):
    """y = 2 x + 1, tile by tile, through two descriptors (ragged edges: zero padding, skipped stores)."""
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[stride_x, 1], block_shape=[BM, BN])
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[stride_y, 1], block_shape=[BM, BN])
    t = xd.load([pm * BM, pn * BN])
    yd.store([pm * BM, pn * BN], t * 2.0 + 1.0)


@triton.jit
def desc_shift_nan(x_ptr, y_ptr, M, N, stride_x, stride_y, BM: tl.constexpr, BN: tl.constexpr):
    """y[i, j] = x[i - 1, j], -1 where that is outside x (negative tile starts, NaN padding).

    Only rows shift: Triton's interpreter (like TMA) needs 16-byte aligned starts in the last dimension.
    """
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    xd = tl.make_tensor_descriptor(
        x_ptr, shape=[M, N], strides=[stride_x, 1], block_shape=[BM, BN], padding_option="nan"
    )
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[stride_y, 1], block_shape=[BM, BN])
    t = xd.load([pm * BM - 1, pn * BN])
    yd.store([pm * BM, pn * BN], tl.where(t != t, -1.0, t))


@triton.jit
def desc_atomic_add_rows(x_ptr, y_ptr, M, N, stride_x, stride_y, BM: tl.constexpr, BN: tl.constexpr):
    """y[0:BM, :] += every BM-row tile of x (descriptor atomic_add; ragged tiles add their zero padding)."""
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[stride_x, 1], block_shape=[BM, BN])
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[stride_y, 1], block_shape=[BM, BN])
    yd.atomic_add([0, pn * BN], xd.load([pm * BM, pn * BN]))


@triton.jit
def desc_gather_scatter_rows(x_ptr, y_ptr, M, N, stride_x, stride_y, BN: tl.constexpr):
    """y[r, c] = x[r, c] for rows r = 2k + pid (k < 8) and columns of tile pn (descriptor gather/scatter)."""
    pid = tl.program_id(0)
    pn = tl.program_id(1)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[stride_x, 1], block_shape=[1, BN])
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[stride_y, 1], block_shape=[1, BN])
    rows = tl.arange(0, 8) * 2 + pid
    yd.scatter(xd.gather(rows, pn * BN), rows, pn * BN)


@dataclass(frozen=True)
class Case:
    """A descriptor kernel, its constexprs and grid, and the torch result for input x."""

    kernel: Any
    constexprs: dict[str, int]
    grid: tuple[int, int]
    expected: Callable[[torch.Tensor], torch.Tensor]
    exact: bool = True
    triton_interprets: bool = True
    """False where Triton 3.9's interpreter lacks the construct (descriptor reductions): torch only."""


def _shift(x: torch.Tensor) -> torch.Tensor:
    y = torch.full_like(x, -1.0)
    y[1:] = x[:-1]
    return y


def _atomic_rows(x: torch.Tensor) -> torch.Tensor:
    y = torch.zeros_like(x)
    for start in range(0, M, 16):
        tile = x[start : start + 16]
        y[: tile.shape[0]] += tile
    return y


def _gather_rows(x: torch.Tensor) -> torch.Tensor:
    y = torch.zeros_like(x)
    rows = sorted({2 * k + p for k in range(8) for p in range(2)})
    y[rows] = x[rows]
    return y


CASES = {
    "tile_affine": Case(desc_tile_affine, {"BM": 16, "BN": 16}, (3, 3), lambda x: x * 2 + 1),
    "shift_nan": Case(desc_shift_nan, {"BM": 16, "BN": 16}, (3, 3), _shift),
    "atomic_add_rows": Case(
        desc_atomic_add_rows, {"BM": 16, "BN": 16}, (3, 3), _atomic_rows, exact=False, triton_interprets=False
    ),
    "gather_scatter_rows": Case(desc_gather_scatter_rows, {"BN": 16}, (2, 3), _gather_rows),
}

SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "N": "i32", "stride_x": "i32", "stride_y": "i32"}


def _tensors(seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return x (M x N view of a padded buffer), the zeroed output buffer and its M x N view."""
    xb = torch.randn(M, LD, generator=torch.Generator().manual_seed(seed))
    yb = torch.zeros(M, LD)
    return xb[:, :N], yb, yb[:, :N]


def _check(case: Case, y: torch.Tensor, x: torch.Tensor) -> None:
    want = case.expected(x)
    if case.exact:
        assert torch.equal(y, want)
    else:
        torch.testing.assert_close(y, want, rtol=1e-6, atol=1e-6)


def _module(case: Case) -> Any:
    return inline_and_clean(build_tt_module(case.kernel, SIGNATURE, case.constexprs))


@pytest.mark.parametrize("name", sorted(CASES))
def test_tt_reference_semantics_match_torch(name: str) -> None:
    case = CASES[name]
    x, _, y = _tensors(1)
    run_tt(_module(case), case.grid, [x, y, M, N, LD, LD])
    _check(case, y, x)


@pytest.mark.parametrize("name", sorted(CASES))
def test_rewrite_to_pointers_preserves_semantics(name: str) -> None:
    case = CASES[name]
    module = _module(case)
    TtRewriteTensorDescriptorPass().apply(Context(), module)
    assert not any(op.name.startswith(("tt.descriptor_", "tt.make_tensor_descriptor")) for op in module.walk())
    x, _, y = _tensors(2)
    run_tt(module, case.grid, [x, y, M, N, LD, LD])
    _check(case, y, x)


@pytest.mark.parametrize("name", sorted(CASES))
def test_machine_model_matches_torch_and_triton_interpreter(name: str) -> None:
    from triton.runtime.interpreter import InterpretedFunction

    case = CASES[name]
    x, yb, y = _tensors(3)
    case.kernel[case.grid](x, y, M, N, LD, LD, **case.constexprs)
    _check(case, y, x)
    if not case.triton_interprets:
        return
    _, ref_b, ref = _tensors(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        InterpretedFunction(case.kernel.fn)[case.grid](x, ref, M, N, LD, LD, **case.constexprs)
    if case.exact:
        assert torch.equal(yb, ref_b)
    else:
        torch.testing.assert_close(yb, ref_b, rtol=1e-6, atol=1e-6)


def test_descriptor_from_a_loop_is_refused_with_the_kernel_line() -> None:
    from xdsl.utils.exceptions import PassFailedException

    @triton.jit
    def carried(x_ptr, M, N, BN: tl.constexpr):
        d = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[1, BN])
        for i in range(3):
            d.store([i, 0], d.load([i, 0]) + 1.0)
            d = tl.make_tensor_descriptor(x_ptr + 1, shape=[M, N], strides=[N, 1], block_shape=[1, BN])

    module = inline_and_clean(build_tt_module(carried, {"x_ptr": "*fp32", "M": "i32", "N": "i32"}, {"BN": 16}))
    with pytest.raises(
        PassFailedException, match=r"test_frontend_descriptors.py:\d+:\d+: error: .*tl.make_tensor_descriptor"
    ):
        TtRewriteTensorDescriptorPass().apply(Context(), module)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_upstream_ttir(name: str) -> None:
    from test_frontend_conformance import our_ttir, upstream_ttir

    case = CASES[name]
    assert our_ttir(case.kernel, SIGNATURE, case.constexprs) == upstream_ttir(case.kernel, SIGNATURE, case.constexprs)


def test_unsigned_descriptor_records_ui_blocks_as_upstream() -> None:
    from test_frontend_conformance import our_ttir, upstream_ttir

    sig = {"x_ptr": "*u32", "y_ptr": "*u32", "M": "i32", "N": "i32", "stride_x": "i32", "stride_y": "i32"}
    ours = our_ttir(desc_atomic_max_u32, sig, {"BM": 8, "BN": 16})
    assert "!tt.tensordesc<8x16xui32>" in ours
    assert ours == upstream_ttir(desc_atomic_max_u32, sig, {"BM": 8, "BN": 16})


@triton.jit
def desc_atomic_max_u32(x_ptr, y_ptr, M, N, stride_x, stride_y, BM: tl.constexpr, BN: tl.constexpr):
    """y tile = max(y tile, x tile) as unsigned 32-bit integers (descriptor atomic_max)."""
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[stride_x, 1], block_shape=[BM, BN])
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[stride_y, 1], block_shape=[BM, BN])
    yd.atomic_max([0, 0], xd.load([0, 0]))


def test_unsigned_descriptor_max_compares_unsigned() -> None:
    sig = {"x_ptr": "*u32", "y_ptr": "*u32", "M": "i32", "N": "i32", "stride_x": "i32", "stride_y": "i32"}
    module = inline_and_clean(build_tt_module(desc_atomic_max_u32, sig, {"BM": 8, "BN": 16}))
    x = torch.tensor([[-1, 5] * 8] * 8, dtype=torch.int32)  # -1 is 0xffffffff: the unsigned maximum
    y = torch.tensor([[3, 7] * 8] * 8, dtype=torch.int32)
    want = torch.tensor([[-1, 7] * 8] * 8, dtype=torch.int32)
    ref = y.clone()
    run_tt(module, (1,), [x, ref, 8, 16, 16, 16])
    assert torch.equal(ref, want)
    TtRewriteTensorDescriptorPass().apply(Context(), module)
    rewritten = y.clone()
    run_tt(module, (1,), [x, rewritten, 8, 16, 16, 16])
    assert torch.equal(rewritten, want)

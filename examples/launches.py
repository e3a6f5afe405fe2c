"""Every example kernel launched once at a small, ragged size, for runs that compare executors.

Each `ExampleLaunch` makes its inputs from a fixed seed, launches through the example's own wrapper (a plain
`kernel[grid](...)`, so `MTIA_EXECUTOR` picks the executor) and returns its output tensors. The executor
harness (tests/conformance/test_executors.py) runs each through every executor and compares with the model;
`benchmarks/codegen.py` times them.

`examples/sweep_matmul.py` has no launch of its own here: it is a sweep spec over `matmul_kernel`, which
"matmul" launches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from examples import (
    attention,
    column_sums,
    flash_attention,
    layer_norm,
    matmul,
    row_sums,
    sliding_window,
    softmax,
    tensor_view,
    vector_add,
)


@dataclass(frozen=True)
class ExampleLaunch:
    """One example launch: its name and a function that runs it on fresh seeded inputs."""

    name: str
    run: Callable[[], list[torch.Tensor]]
    """Launches the example (one or more kernels) and returns its output tensors."""


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _vector_add() -> list[torch.Tensor]:
    g = _gen(1)
    return [vector_add.add(torch.rand(5000, generator=g), torch.rand(5000, generator=g), BLOCK_SIZE=1024)]


def _softmax() -> list[torch.Tensor]:
    return [softmax.softmax(torch.randn(37, 300, generator=_gen(2)))]


def _matmul() -> list[torch.Tensor]:
    g = _gen(3)
    a, b = torch.randn(70, 40, generator=g).half(), torch.randn(40, 90, generator=g).half()
    return [matmul.matmul(a, b, BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=16)]


def _layer_norm() -> list[torch.Tensor]:
    g = _gen(4)
    x = torch.randn(19, 700, generator=g)
    w, b = torch.rand(700, generator=g), torch.randn(700, generator=g)
    return list(layer_norm.layer_norm(x, w, b, 1e-5, BLOCK_SIZE=256))


def _qkv(seed: int, shape: tuple[int, int, int, int]) -> list[torch.Tensor]:
    g = _gen(seed)
    return [torch.randn(*shape, generator=g).half() for _ in range(3)]


def _attention() -> list[torch.Tensor]:
    q, k, v = _qkv(5, (1, 2, 100, 64))
    return [attention.attention(q, k, v, causal=True)]


def _flash_attention() -> list[torch.Tensor]:
    q, k, v = _qkv(6, (1, 2, 150, 64))
    return [flash_attention.attention(q, k, v, causal=True, BLOCK_M=64, BLOCK_N=32)]


def _column_sums(variant: str) -> Callable[[], list[torch.Tensor]]:
    def run() -> list[torch.Tensor]:
        x = torch.randn(300, 100, generator=_gen(7))
        return [column_sums.col_sums(x, variant, BLOCK_M=32)]

    return run


def _row_sums(reduce: str) -> Callable[[], list[torch.Tensor]]:
    def run() -> list[torch.Tensor]:
        x = torch.randn(200, 300, generator=_gen(8))
        return [row_sums.row_sums(x, reduce, BLOCK_M=16, BLOCK_N=128)]

    return run


def _fir(slices: bool) -> Callable[[], list[torch.Tensor]]:
    def run() -> list[torch.Tensor]:
        g = _gen(9)
        x, w = torch.randn(3000, generator=g), torch.randn(5, generator=g)
        return [sliding_window.fir(x, w, slices=slices, BLOCK=256)]

    return run


def _tensor_view(by_struct: bool) -> Callable[[], list[torch.Tensor]]:
    def run() -> list[torch.Tensor]:
        x = torch.randn(50, 90, generator=_gen(10))[:, 3:70]  # a strided view
        return [tensor_view.scale(x, 1.5, -0.25, by_struct=by_struct)]

    return run


LAUNCHES: tuple[ExampleLaunch, ...] = (
    ExampleLaunch("vector_add", _vector_add),
    ExampleLaunch("softmax", _softmax),
    ExampleLaunch("matmul", _matmul),
    ExampleLaunch("layer_norm", _layer_norm),
    ExampleLaunch("attention", _attention),
    ExampleLaunch("flash_attention", _flash_attention),
    ExampleLaunch("column_sums_per_pe", _column_sums("per_pe")),
    ExampleLaunch("column_sums_atomic", _column_sums("atomic")),
    ExampleLaunch("column_sums_persistent", _column_sums("persistent")),
    ExampleLaunch("row_sums_re", _row_sums("re")),
    ExampleLaunch("row_sums_atomic", _row_sums("atomic")),
    ExampleLaunch("sliding_window_slices", _fir(True)),
    ExampleLaunch("sliding_window_loads", _fir(False)),
    ExampleLaunch("tensor_view_struct", _tensor_view(True)),
    ExampleLaunch("tensor_view_args", _tensor_view(False)),
)
"""Every example launch, by name (unique)."""

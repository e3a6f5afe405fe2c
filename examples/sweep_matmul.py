"""A sweep spec for `mtia-sweep`: the example GEMM's block sizes on machines with a narrower or wider
per-PE DMA read port.

Example: mtia-sweep examples/sweep_matmul.py -o sweep.csv --plot sweep.png
"""

from __future__ import annotations

from typing import Any

import torch
import triton

from examples.matmul import matmul_kernel
from mtia_xdsl.sweep import Sweep

SIZE = 512


def gemm(machine_overrides: dict[str, Any], BLOCK_SIZE_M: int, BLOCK_SIZE_N: int, BLOCK_SIZE_K: int) -> None:
    """Launch the example GEMM (SIZE^3 fp16) once with these blocks on the overridden machine."""
    g = torch.Generator().manual_seed(0)
    a = torch.randn(SIZE, SIZE, generator=g).half()
    b = torch.randn(SIZE, SIZE, generator=g).half()
    c = torch.empty(SIZE, SIZE, dtype=torch.float16)
    grid = (triton.cdiv(SIZE, BLOCK_SIZE_M) * triton.cdiv(SIZE, BLOCK_SIZE_N),)
    matmul_kernel[grid](
        a, b, c, SIZE, SIZE, SIZE, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_SIZE_M=BLOCK_SIZE_M, BLOCK_SIZE_N=BLOCK_SIZE_N, BLOCK_SIZE_K=BLOCK_SIZE_K, GROUP_SIZE_M=8,
        machine_overrides=machine_overrides,
    )  # fmt: skip


SWEEP = Sweep(
    kernels={"gemm": gemm},
    configs={
        "gemm": [
            {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32},
            {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64},
            {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64},
        ]
    },
    machines=[{"dma_read_bytes_per_cycle": 32}, {"dma_read_bytes_per_cycle": 64}, {"dma_read_bytes_per_cycle": 128}],
)

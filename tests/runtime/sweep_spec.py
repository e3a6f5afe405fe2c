"""A tiny sweep spec for tests/runtime/test_sweep.py: vector add, two block sizes, two DRAM efficiencies."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from mtia_xdsl.sweep import Sweep

N = 4096


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(machine_overrides: dict[str, Any], BLOCK: int) -> None:
    """Launch `add_kernel` once on N fp32 elements."""
    x, y = torch.ones(N), torch.ones(N)
    out = torch.empty(N)
    add_kernel[(triton.cdiv(N, BLOCK),)](x, y, out, N, BLOCK=BLOCK, machine_overrides=machine_overrides)
    assert bool((out == 2).all())


def broken(machine_overrides: dict[str, Any]) -> None:
    """A case that fails: its row records the error."""
    raise ValueError("this point fails on purpose")


SWEEP = Sweep(
    kernels={"add": add, "broken": broken},
    configs={"add": [{"BLOCK": 256}, {"BLOCK": 1024}]},
    machines=[{"dram_ecc_efficiency": 0.5}, {"dram_ecc_efficiency": 1.0}],
)

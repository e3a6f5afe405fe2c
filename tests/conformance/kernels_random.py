"""Random-number corpus kernels: tl.rand/randn/randint/randint4x (Philox), bit-exact with Triton's."""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from spec import Case, Draw, Launch, Tol, full_grid, rand


@triton.jit
def rnd_rand(out_ptr, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.rand(seed, offs), mask=offs < n)


@triton.jit
def rnd_randn(out_ptr, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.randn(seed, offs), mask=offs < n)


@triton.jit
def rnd_randint(out_ptr, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.randint(seed, offs), mask=offs < n)


@triton.jit
def rnd_randint4x_rounds(a_ptr, b_ptr, c_ptr, d_ptr, u_ptr, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    r0, r1, r2, r3 = tl.randint4x(seed, offs + 7)
    tl.store(a_ptr + offs, r0, mask=mask)
    tl.store(b_ptr + offs, r1, mask=mask)
    tl.store(c_ptr + offs, r2, mask=mask)
    tl.store(d_ptr + offs, r3, mask=mask)
    tl.store(u_ptr + offs, tl.rand(seed, offs, n_rounds=7), mask=mask)


@triton.jit
def rnd_dropout(x_ptr, out_ptr, seed, p, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    keep = tl.rand(seed, offs) > p
    tl.store(out_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=mask)


def _seed(d: Draw) -> int:
    return d.choice([0, 1, 12345, 2**31 - 1, 2**40 + 17])


def _one(dtype: torch.dtype, outs: int = 1):
    def build(d: Draw) -> Launch:
        n = d.int(1, 100)
        return Launch([*(torch.zeros(n, dtype=dtype) for _ in range(outs)), _seed(d), n], full_grid(n, 32))

    return build


def _rounds(d: Draw) -> Launch:
    n = d.int(1, 100)
    ints = [torch.zeros(n, dtype=torch.int64) for _ in range(4)]
    return Launch([*ints, torch.zeros(n), _seed(d), n], full_grid(n, 32))


def _dropout(d: Draw) -> Launch:
    n = d.int(1, 100)
    x = rand(d, n)
    return Launch([x, torch.zeros(n), _seed(d), d.choice([0.25, 0.5]), n], full_grid(n, 32))


CASES = [
    Case(rnd_rand, _one(torch.float32), (0,), {"BLOCK": 32}),
    Case(
        rnd_randn,
        _one(torch.float32),
        (0,),
        {"BLOCK": 32},
        tol=Tol(ulp=4),
        why="Box-Muller through log, sqrt and cos: 4 ulp for libm differences",
    ),
    Case(rnd_randint, _one(torch.int64), (0,), {"BLOCK": 32}),
    Case(rnd_randint4x_rounds, _rounds, (0, 1, 2, 3, 4), {"BLOCK": 32}),
    Case(rnd_dropout, _dropout, (1,), {"BLOCK": 32}),
]

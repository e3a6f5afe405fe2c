"""Control-flow corpus kernels: for/while/if, early return, tl.range, tl.static_range, noinline helpers,
multi-dimensional grids, and the debug builtins (device_print, static_print, static_assert, device_assert)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from spec import Case, Draw, Launch, elementwise, full_grid, int_valued, rand

F32, I32 = torch.float32, torch.int32


@triton.jit
def cf_for_accumulate(x_ptr, out_ptr, n, k, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(k):
        acc = acc * 0.5 + x * i
    tl.store(out_ptr + offs, acc, mask=mask)


@triton.jit
def cf_while_data_dependent(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    steps = tl.load(x_ptr + pid)
    total = 0
    i = 0
    while i < steps:
        total += i * i
        i += 1
    tl.store(out_ptr + pid, total)


@triton.jit
def cf_if_else_scalar(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    if pid % 2 == 0:
        y = x + 1
    elif pid % 3 == 0:
        y = x * 2
    else:
        y = -x
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def cf_early_return(x_ptr, out_ptr, n, limit, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid >= limit:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3, mask=mask)


@triton.jit
def cf_tl_range(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.int32)
    for start in tl.range(0, n, BLOCK, num_stages=2):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0)
    for j in tl.range(3, loop_unroll_factor=2):
        acc += j
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)


@triton.jit
def cf_static_range(x_ptr, out_ptr, n, BLOCK: tl.constexpr, TAPS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for t in tl.static_range(TAPS):
        acc += tl.load(x_ptr + offs + t, mask=offs + t < n, other=0.0) * (t + 1)
    tl.store(out_ptr + offs, acc, mask=offs < n)


@triton.jit(noinline=True)
def _scaled_copy(x_ptr, out_ptr, start, n, a, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, _twice(x) * a + 1, mask=mask)


@triton.jit
def _twice(x):
    return x * 2


@triton.jit(noinline=True)
def _half(v):
    return v // 2


@triton.jit
def cf_noinline_helpers(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    _scaled_copy(x_ptr, out_ptr, pid * BLOCK, n, _half(6), BLOCK)


@triton.jit
def cf_nested_loops_if(x_ptr, out_ptr, M, N, BN: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BN)
    acc = tl.zeros([BN], dtype=tl.int32)
    for i in range(M):
        row = tl.load(x_ptr + i * N + cols, mask=cols < N, other=0)
        if i % 2 == pid % 2:
            for j in range(i):
                acc += row + j
        else:
            acc -= row
    tl.store(out_ptr + pid * BN + cols, acc)


@triton.jit
def cf_grid_2d(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask, other=0)
    tag = pm * tl.num_programs(1) + pn + tl.num_programs(0) * 100
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], x + tag, mask=mask)


@triton.jit
def cf_loop_carried_tensors(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x_ptr + offs, mask=mask, other=0)
    b = tl.zeros_like(a)
    i = 0
    while i < 4:
        a, b = b + 1, a * 2
        i += 1
    for _ in range(2):
        if tl.sum(a) > 0:
            a = a - 1
    tl.store(out_ptr + offs, a + b, mask=mask)


@triton.jit
def cf_debug_builtins(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK % 16 == 0, "BLOCK must be a multiple of 16")
    tl.static_print("cf_debug_builtins BLOCK =", BLOCK)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.device_assert(x < 1000, "x out of range")
    if tl.program_id(0) == 0:
        tl.device_print("first x", x)
    tl.store(out_ptr + offs, x + 1, mask=mask)


def _while(d: Draw) -> Launch:
    p = d.int(1, 6)
    return Launch([rand(d, p, I32, 0, 12), torch.zeros(p, dtype=I32), p], (p,))


def _tl_range(d: Draw) -> Launch:
    n = d.int(1, 100)
    return Launch([rand(d, n, I32), torch.zeros(2 * 16, dtype=I32), n], (2,))


def _nested(d: Draw) -> Launch:
    m, n = d.int(0, 5), d.int(1, 16)
    return Launch([rand(d, max(m, 1) * n, I32), torch.zeros(3 * 16, dtype=I32), m, n], (3,))


def _grid2d(d: Draw) -> Launch:
    m, n = d.int(1, 20), d.int(1, 20)
    x = rand(d, (m, n), d.choice([F32, I32]))
    return Launch([x, torch.zeros_like(x), m, n], (full_grid(m, 8)[0], full_grid(n, 8)[0]))


CASES = [
    elementwise(cf_for_accumulate, [F32], [F32], scalars=lambda d: [d.int(0, 5)], fill=int_valued),
    Case(cf_while_data_dependent, _while, (1,), {"BLOCK": 16}),
    elementwise(cf_if_else_scalar, [(F32, I32)], [F32], block=16),
    elementwise(cf_early_return, [F32], [F32], block=16, scalars=lambda d: [d.int(0, 8)]),
    Case(cf_tl_range, _tl_range, (1,), {"BLOCK": 16}),
    elementwise(cf_static_range, [F32], [F32], block=32, constexprs={"TAPS": 3}, fill=int_valued),
    elementwise(cf_noinline_helpers, [(F32, I32)], [F32], block=32),
    Case(cf_nested_loops_if, _nested, (1,), {"BN": 16}),
    Case(cf_grid_2d, _grid2d, (1,), {"BM": 8, "BN": 8}),
    elementwise(cf_loop_carried_tensors, [(F32, I32)], [F32], block=32),
    elementwise(cf_debug_builtins, [F32], [F32], block=32, debug=True),
]


@triton.jit
def cf_swizzle_cdiv_assume(out_ptr, M, N, GROUP: tl.constexpr):
    pid = tl.program_id(0)
    tl.assume(M > 0)
    tl.assume(N > 0)
    grid_m = tl.cdiv(M, 4)
    grid_n = tl.cdiv(N, 4)
    i, j = tl.swizzle2d(pid // grid_n, pid % grid_n, grid_m, grid_n, GROUP)
    tl.debug_barrier()
    vals = tl.full([2], 0, tl.int32) + tl.arange(0, 2)
    tl.store(out_ptr + pid * 2 + tl.arange(0, 2), vals * 1000 + i * grid_n + j)


def _swizzle(d: Draw) -> Launch:
    m, n = d.int(1, 20), d.int(1, 20)
    programs = ((m + 3) // 4) * ((n + 3) // 4)
    return Launch([torch.zeros(2 * programs, dtype=I32), m, n], (programs,))


CASES.append(Case(cf_swizzle_cdiv_assume, _swizzle, (0,), {"GROUP": 2}))


@triton.jit
def cf_reduce_in_loop(x_ptr, out_ptr, M, N, BN: tl.constexpr):
    cols = tl.arange(0, BN)
    best = -1
    total = 0.0
    row = 0
    while row < M:
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
        s = tl.sum(x, axis=0)
        if s > total:
            best = row
        total = tl.maximum(total, s)
        row += 1
    tl.store(out_ptr, total)
    tl.store(out_ptr + 1, best.to(tl.float32))


def _reduce_in_loop(d: Draw) -> Launch:
    m, n = d.int(1, 6), d.int(1, 16)
    return Launch([int_valued(d, (m, n), F32), torch.zeros(2), m, n], (1,))


CASES.append(Case(cf_reduce_in_loop, _reduce_in_loop, (1,), {"BN": 16}))


@triton.jit
def _minmax(x, WIDE: tl.constexpr):
    if WIDE:
        return tl.max(x, axis=0).to(tl.int64), tl.min(x, axis=0).to(tl.int64)
    else:
        return tl.max(x, axis=0), tl.min(x, axis=0)


@triton.jit
def cf_constexpr_branches(x_ptr, out_ptr, n, BLOCK: tl.constexpr, MODE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    if MODE == "sum":
        hi, lo = _minmax(x, True)
    else:
        hi, lo = _minmax(x, False)
    for k in tl.static_range(2):
        if k == 0:
            tl.store(out_ptr + k, hi)
        else:
            tl.store(out_ptr + k, lo)


def _constexpr_branches(d: Draw) -> Launch:
    n = d.int(1, 32)
    return Launch([rand(d, n, I32), torch.zeros(2, dtype=torch.int64), n], (1,))


CASES.append(Case(cf_constexpr_branches, _constexpr_branches, (1,), {"BLOCK": 32, "MODE": "sum"}))

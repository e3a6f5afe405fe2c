"""Memory corpus kernels: atomics with masks, masked loads with `other`, strided and transposed views,
gathers and scatters through computed indices, int64 offsets, scalar accesses, hints and cache modifiers.

Atomics from several programs hit the same addresses, so only order-independent results are compared:
final memory after commutative updates of integer-valued data, and returned old values only where every
lane owns its address.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from spec import Case, Draw, Launch, full_grid, int_valued, rand

F32, I32, I64 = torch.float32, torch.int32, torch.int64
BINS = 8


@triton.jit
def mem_atomic_add(idx_ptr, v_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    v = tl.load(v_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + idx, v, mask=mask & (v != 3))


@triton.jit
def mem_atomic_max_min(idx_ptr, v_ptr, mx_ptr, mn_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    v = tl.load(v_ptr + offs, mask=mask, other=0)
    tl.atomic_max(mx_ptr + idx, v, mask=mask)
    tl.atomic_min(mn_ptr + idx, v, mask=mask, sem="relaxed", scope="gpu")


@triton.jit
def mem_atomic_bitwise(idx_ptr, v_ptr, a_ptr, o_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    v = tl.load(v_ptr + offs, mask=mask, other=0)
    tl.atomic_and(a_ptr + idx, v | 0x10, mask=mask)
    tl.atomic_or(o_ptr + idx, v, mask=mask)
    tl.atomic_xor(x_ptr + idx, v, mask=mask)


@triton.jit
def mem_atomic_xchg_cas(p_ptr, q_ptr, v_ptr, old_x_ptr, old_c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(v_ptr + offs, mask=mask, other=0)
    old = tl.atomic_xchg(p_ptr + offs, v, mask=mask)
    tl.store(old_x_ptr + offs, old, mask=mask)
    safe = tl.where(mask, offs, 0)
    prev = tl.atomic_cas(q_ptr + safe, tl.where(mask, safe % 3, -1).to(v.dtype), tl.where(mask, v, -1))
    tl.store(old_c_ptr + offs, prev, mask=mask)


@triton.jit
def mem_atomic_scalar(count_ptr, max_ptr):
    pid = tl.program_id(0)
    tl.atomic_add(count_ptr, pid + 1)
    tl.atomic_max(max_ptr, pid, sem="acq_rel", scope="cta")


@triton.jit
def mem_masked_other_2d(x_ptr, out_ptr, M, N, sxm, sxn, som, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=mask, other=-7)
    inside = (rm[:, None] < M + 1) & (rn[None, :] < N + 1)
    tl.store(out_ptr + rm[:, None] * som + rn[None, :], x + 1, mask=inside)


@triton.jit
def mem_gather_scatter(x_ptr, idx_ptr, perm_ptr, g_ptr, s_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    perm = tl.load(perm_ptr + offs, mask=mask, other=0)
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(g_ptr + offs, tl.load(x_ptr + idx, mask=mask, other=0), mask=mask)
    tl.store(s_ptr + perm, x, mask=mask)


@triton.jit
def mem_int64_offsets(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = offs < n
    x = tl.load(x_ptr + offs * stride, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


@triton.jit
def mem_hints_cache(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offs = tl.max_contiguous(tl.multiple_of(offs, BLOCK), BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, cache_modifier=".cg", eviction_policy="evict_last")
    y = tl.load(x_ptr + offs, mask=mask, volatile=True)
    tl.store(out_ptr + offs, x + y, mask=mask, cache_modifier=".cs", eviction_policy="evict_first")


@triton.jit
def mem_scalar_access(x_ptr, out_ptr, n):
    pid = tl.program_id(0)
    a = tl.load(x_ptr + pid)
    b = tl.load(x_ptr + (pid + 1) % n)
    tl.store(out_ptr + pid, a * 2 + b)


@triton.jit
def mem_row_broadcast(x_ptr, b_ptr, out_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    b = tl.load(b_ptr + rn, mask=rn < N, other=0)
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=mask, other=0)
    tl.store(out_ptr + rm[:, None] * stride + rn[None, :], x * b[None, :] + b[None, :], mask=mask)


def _bins_launch(d: Draw, dtype: torch.dtype, outs: int, init: list[int], block: int = 32) -> Launch:
    n = d.int(1, 4 * block)
    idx = rand(d, n, I32, 0, BINS)
    v = int_valued(d, n, dtype, -20, 20) if dtype.is_floating_point else rand(d, n, dtype, -20, 20)
    hists = [torch.full((BINS,), init[i], dtype=dtype) for i in range(outs)]
    return Launch([idx, v, *hists, n], full_grid(n, block))


def _xchg_cas(d: Draw) -> Launch:
    n = d.int(1, 96)
    dtype = d.choice([I32, I64])
    p = rand(d, n, dtype, 0, 50)
    q = rand(d, n, dtype, 0, 3)
    v = rand(d, n, dtype, 100, 200)
    return Launch([p, q, v, torch.zeros(n, dtype=dtype), torch.zeros(n, dtype=dtype), n], full_grid(n, 32))


def _masked_2d(d: Draw) -> Launch:
    m, n = d.int(1, 20), d.int(1, 16)
    dtype = d.choice([F32, I32, torch.float16])
    x = rand(d, (m, n), dtype)
    if d.choice([False, True]):
        x = x.t().contiguous().t()  # column-major (transposed) view
    som = n + 2  # out has one spare row and column: the store mask reaches them
    out = torch.zeros(m + 1, som, dtype=dtype)
    return Launch([x, out, m, n, x.stride(0), x.stride(1), som], full_grid(m, 8))


def _gather_scatter(d: Draw) -> Launch:
    n = d.int(1, 96)
    x = rand(d, n, d.choice([F32, I32, torch.int8]))
    idx = rand(d, n, d.choice([I32, I64]), 0, n)
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(d.int(0, 1000))).to(d.choice([I32, I64]))
    return Launch([x, idx, perm, torch.zeros_like(x), torch.zeros_like(x), n], full_grid(n, 32))


def _int64(d: Draw) -> Launch:
    n, stride = d.int(1, 80), d.choice([1, 2, 3])
    x = rand(d, n * stride, F32)
    return Launch([x, torch.zeros(n), n, stride], full_grid(n, 32))


def _hints(d: Draw) -> Launch:
    n = d.int(1, 100)
    x = rand(d, n, d.choice([F32, I32]))
    return Launch([x, torch.zeros_like(x), n], full_grid(n, 32))


def _scalar(d: Draw) -> Launch:
    n = d.int(1, 9)
    x = rand(d, n, d.choice([F32, I64]))
    return Launch([x, torch.zeros_like(x), n], (n,))


def _row_broadcast(d: Draw) -> Launch:
    m, n = d.int(1, 20), d.int(1, 16)
    stride = n + d.choice([0, 4])
    x = torch.zeros(m, stride)
    x[:, :n] = rand(d, (m, n), F32)
    return Launch([x[:, :n], rand(d, n, F32), torch.zeros(m, stride)[:, :n], m, n, stride], full_grid(m, 8))


CASES = [
    Case(mem_atomic_add, lambda d: _bins_launch(d, d.choice([F32, I32, I64]), 1, [0]), (2,), {"BLOCK": 32}),
    Case(mem_atomic_max_min, lambda d: _bins_launch(d, d.choice([F32, I32]), 2, [-100, 100]), (2, 3), {"BLOCK": 32}),
    Case(mem_atomic_bitwise, lambda d: _bins_launch(d, d.choice([I32, I64]), 3, [-1, 0, 5]), (2, 3, 4), {"BLOCK": 32}),
    Case(mem_atomic_xchg_cas, _xchg_cas, (0, 1, 3, 4), {"BLOCK": 32}),
    Case(
        mem_atomic_scalar,
        lambda d: Launch([torch.zeros(1, dtype=I32), torch.full((1,), -1, dtype=I32)], (d.int(1, 6),)),
        (0, 1),
    ),
    Case(mem_masked_other_2d, _masked_2d, (1,), {"BM": 8, "BN": 16}),
    Case(mem_gather_scatter, _gather_scatter, (3, 4), {"BLOCK": 32}),
    Case(mem_int64_offsets, _int64, (1,), {"BLOCK": 32}),
    Case(mem_hints_cache, _hints, (1,), {"BLOCK": 32}),
    Case(mem_scalar_access, _scalar, (1,)),
    Case(mem_row_broadcast, _row_broadcast, (2,), {"BM": 8, "BN": 16}),
]


@triton.jit
def mem_atomic_2d_fp16(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask, other=0)
    tl.atomic_add(out_ptr + rn[None, :] + rm[:, None] * 0, x, mask=mask)


def _atomic_2d(d: Draw) -> Launch:
    m, n = d.int(1, 20), d.int(1, 16)
    dtype = d.choice([torch.float16, F32])
    return Launch([int_valued(d, (m, n), dtype), torch.zeros(n, dtype=dtype), m, n], full_grid(m, 4))


CASES.append(Case(mem_atomic_2d_fp16, _atomic_2d, (1,), {"BM": 4, "BN": 16}))


@triton.jit
def mem_scalar_masked(x_ptr, out_ptr, n):
    pid = tl.program_id(0)
    inside = pid < n
    v = tl.load(x_ptr + pid, mask=inside, other=-5)
    tl.store(out_ptr + pid, v * 2, mask=inside & (v != 0))
    tl.store(out_ptr + n + pid, tl.where(inside, 1, 2))


def _scalar_masked(d: Draw) -> Launch:
    n = d.int(1, 6)
    x = rand(d, n, d.choice([I32, F32]), -2, 3)
    return Launch([x, torch.full((n + n + 2,), 9, dtype=x.dtype), n], (n + 2,))


CASES.append(Case(mem_scalar_masked, _scalar_masked, (1,)))

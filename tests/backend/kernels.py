"""Kernels the backend tests of more than one emitter share."""

import triton
import triton.language as tl


@triton.jit
def embedding_rows(ids_ptr, table_ptr, out_ptr, n, R: tl.constexpr, XBLOCK: tl.constexpr):
    """An embedding lookup as Inductor writes it: the rows an index tile [XBLOCK, 1] picks (mtia.dma_gather_rows)."""
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < n
    r = tl.arange(0, R)[None, :]
    tmp0 = tl.load(ids_ptr + xindex, xmask)
    tmp0 = tl.where(tmp0 < 0, tmp0 + 100, tmp0)
    row = tl.load(table_ptr + (r + R * tmp0), xmask, other=0.0)
    tl.store(out_ptr + (r + R * xindex), row * 2.0, xmask)


@triton.jit(noinline=True)
def divmod_half(v, d):
    """A noinline helper returning three scalars (a std::tuple in C++, a literal struct in LLVM IR)."""
    return v // d, v % d, v.to(tl.float32) * 0.5


@triton.jit
def calls_tuple_helper(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """Calls `divmod_half` and uses all three results: y[i] = x[i] * (n / 2) for i < n // 3 + n % 3."""
    offs = tl.arange(0, BLOCK)
    q, r, h = divmod_half(n, 3)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * h, mask=offs < q + r)


@triton.jit
def permuted_prologue_5d(y_ptr, w_ptr, out_ptr, BLOCK_K: tl.constexpr):
    """Inductor's GEMM template with the copy of `y.permute(0, 2, 1, 4, 3).reshape(16, 64)` (y [2, 4, 8, 4, 4])
    fused into its A load, as `linear` of that tensor compiles (benchmarks/inductor.py): the flat index
    `xindex = k + 64 * (rm % 16)` split by `%` and `//` into y's five digits (memory_access.py
    `place_value_split`), a box of rank 5 [2, 8, BLOCK_K // 16, 4, 4] of strides [512, 16, 128, 1, 4] (rank 4
    when BLOCK_K = 16); `out = A @ w`."""
    pid = tl.program_id(0)
    tl.assume(pid >= 0)
    rm = pid * 16 + tl.arange(0, 16)
    offs_m = rm % 16
    offs_k = tl.arange(0, BLOCK_K)
    rn = tl.arange(0, 16)
    acc = tl.full((16, 16), 0.0, tl.float32)
    for k_idx in range(0, 64 // BLOCK_K):
        xindex = (offs_k[None, :] + k_idx * BLOCK_K) + 64 * offs_m[:, None]
        x10 = (xindex // 4) % 4
        x11 = (xindex // 16) % 4
        x12 = (xindex // 64) % 8
        x13 = xindex // 512
        x9 = xindex % 4
        a = tl.load(y_ptr + (x10 + 4 * x9 + 16 * x12 + 128 * x11 + 512 * x13))
        b = tl.load(w_ptr + (offs_k[:, None] + k_idx * BLOCK_K) * 16 + rn[None, :])
        acc += tl.dot(a, b, allow_tf32=False)
    tl.store(out_ptr + rm[:, None] * 16 + rn[None, :], acc)


@triton.jit
def permuted_store_5d(x_ptr, out_ptr):
    """The store of `x * 2` (x [16, 64]) into `out` [2, 4, 8, 4, 4] such that `out.permute(0, 2, 1, 4, 3)` is it
    viewed [16, 64]: the flat index split into five digits of out, a box of rank 5 (`permuted_prologue_5d`'s)."""
    rm = tl.arange(0, 16)[:, None]
    k = tl.arange(0, 64)[None, :]
    xindex = k + 64 * rm
    x9 = xindex % 4
    x10 = (xindex // 4) % 4
    x11 = (xindex // 16) % 4
    x12 = (xindex // 64) % 8
    x13 = xindex // 512
    v = tl.load(x_ptr + xindex)
    tl.store(out_ptr + (x10 + 4 * x9 + 16 * x12 + 128 * x11 + 512 * x13), v * 2.0)

# mtia-opt: kernel=attn_fwd constexprs=HEAD_DIM:128,BLOCK_M:128,BLOCK_N:64,STAGE:3
# mtia-opt: signature=Q:*fp16,K:*fp16,V:*fp16,Out:*fp16,sm_scale:fp32,Z:i32,H:i32,N_CTX:i32
"""FlashAttention forward in the structure of Triton's fused-attention tutorial (06), written for mtia_xdsl.

One program per (block of BLOCK_M = 128 query rows, batch x head) with BLOCK_N = 64 keys per step, as the
tutorial's tested configuration. An inner helper runs the online softmax in base 2 over a key range; a
causal kernel (STAGE = 3) calls it for the off-band blocks (STAGE 1: keys before the query block, no mask)
and then the on-band block (STAGE 2: the diagonal, masked), a non-causal one (STAGE = 1) once over all
keys. Plain pointer loads of contiguous [rows, HEAD_DIM] tiles (Q, K, V, Out of shape Z x H x N_CTX x
HEAD_DIM, contiguous); N_CTX need not be a multiple of the blocks (the tails are masked).

The rows of a query block are independent (the reductions run along the keys, the dots contract over
HEAD_DIM and the keys), so when its CBs do not fit a PE the compiler splits BLOCK_M into sub-tiles
(mtia-sub-tile) and the K and V tiles of a step are loaded once for all of them.
"""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _attn_fwd_inner(
    acc,
    l_i,
    m_i,
    q,
    k_base,
    v_base,
    start_m,
    qk_scale,
    N_CTX,
    offs_m,
    offs_n,
    offs_d,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    STAGE: tl.constexpr,
):
    if STAGE == 1:  # keys strictly before the query block: nothing masked but the sequence tail
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:  # the diagonal block
        lo, hi = start_m * BLOCK_M, tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
    else:  # not causal: every key
        lo, hi = 0, N_CTX
    for start_n in range(lo, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_base + cols[:, None] * q.shape[1] + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
        qk = tl.dot(q, tl.trans(k))
        keep = cols[None, :] < N_CTX
        if STAGE == 2:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(keep, qk * qk_scale, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_ij = tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_base + cols[:, None] * q.shape[1] + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)
        l_i = l_i * alpha + l_ij
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def attn_fwd(
    Q,
    K,
    V,
    Out,
    sm_scale,
    Z,
    H,
    N_CTX,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    STAGE: tl.constexpr,
):
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    head = off_hz.to(tl.int64) * N_CTX * HEAD_DIM  # Q, K, V, Out: Z x H x N_CTX x HEAD_DIM, contiguous
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1 / ln(2): exp(x) = exp2(x / ln 2)
    rows = offs_m[:, None] < N_CTX
    q = tl.load(Q + head + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=rows, other=0.0)
    if STAGE & 1:  # off-band (causal: STAGE 1 of the helper), or every key (not causal: its STAGE 3)
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K + head, V + head, start_m, qk_scale, N_CTX,
                                        offs_m, offs_n, offs_d, BLOCK_M, BLOCK_N, 4 - STAGE)  # fmt: skip
    if STAGE & 2:  # on-band: the diagonal block, masked
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K + head, V + head, start_m, qk_scale, N_CTX,
                                        offs_m, offs_n, offs_d, BLOCK_M, BLOCK_N, 2)  # fmt: skip
    acc = acc / l_i[:, None]
    tl.store(Out + head + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(Out.dtype.element_ty), mask=rows)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, BLOCK_M: int = 128,
              BLOCK_N: int = 64) -> torch.Tensor:  # fmt: skip
    """Return softmax(q k^T / sqrt(HEAD_DIM) [+ causal mask]) v.

    Shapes: q, k, v: tensor<Z x H x N_CTX x HEAD_DIM x f16>, HEAD_DIM in {16, 32, 64, 128}; the result likewise.
    """
    Z, H, N_CTX, HEAD_DIM = q.shape
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    grid = (triton.cdiv(N_CTX, BLOCK_M), Z * H)
    attn_fwd[grid](q, k, v, o, 1.0 / math.sqrt(HEAD_DIM), Z, H, N_CTX,
                   HEAD_DIM=HEAD_DIM, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, STAGE=3 if causal else 1)  # fmt: skip
    return o


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """Return attention computed by torch in float32 (the test oracle), cast to q's dtype."""
    n_ctx, head_dim = q.shape[-2], q.shape[-1]
    s = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(head_dim)
    if causal:
        s = s.masked_fill(torch.ones(n_ctx, n_ctx, dtype=torch.bool).triu(1), float("-inf"))
    return (torch.softmax(s, dim=-1) @ v.float()).to(q.dtype)

# mtia-opt: kernel=attn_fwd constexprs=HEAD_DIM:64,BLOCK_M:64,BLOCK_N:64,CAUSAL:1
# mtia-opt: signature=Q:*fp16,K:*fp16,V:*fp16,Out:*fp16,sm_scale:fp32,stride_qz:i32,stride_qh:i32,stride_qm:i32
# mtia-opt: signature=stride_kz:i32,stride_kh:i32,stride_kn:i32,stride_vz:i32,stride_vh:i32,stride_vn:i32
# mtia-opt: signature=stride_oz:i32,stride_oh:i32,stride_om:i32,H:i32,N_CTX:i32
"""Causal flash attention forward, in the style of Triton's fused-attention tutorial (06).

One program per (query block, batch x head): plain pointers, an online softmax in base 2, `tl.dot` for
Q K^T and P V, and the causal mask; the key loop stops at the query block's end when CAUSAL, so its bound
differs between query blocks. The head dimension is contiguous (stride 1) in Q, K, V and Out.
"""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def attn_fwd(
    Q,
    K,
    V,
    Out,
    sm_scale,
    stride_qz,
    stride_qh,
    stride_qm,
    stride_kz,
    stride_kh,
    stride_kn,
    stride_vz,
    stride_vh,
    stride_vn,
    stride_oz,
    stride_oh,
    stride_om,
    H,
    N_CTX,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = Q + off_z * stride_qz + off_h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :]
    k_base = K + off_z * stride_kz + off_h * stride_kh
    v_base = V + off_z * stride_vz + off_h * stride_vh
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1 / ln(2): exp(x) = exp2(x / ln 2)
    q = tl.load(q_ptrs, mask=offs_m[:, None] < N_CTX, other=0.0)
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
    else:
        hi = N_CTX
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_base + cols[:, None] * stride_kn + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        keep = cols[None, :] < N_CTX
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(keep, qk, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_ij
    acc = acc / l_i[:, None]
    o_ptrs = Out + off_z * stride_oz + off_h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :]
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < N_CTX)


def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = True, BLOCK_M: int = 64, BLOCK_N: int = 64
) -> torch.Tensor:
    """Return softmax(q k^T / sqrt(d) [+ causal mask]) v; q, k, v: tensor<Z x H x N_CTX x HEAD_DIM x f16|f32>."""
    Z, H, N_CTX, HEAD_DIM = q.shape
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    grid = (triton.cdiv(N_CTX, BLOCK_M), Z * H)
    attn_fwd[grid](
        q,
        k,
        v,
        o,
        1.0 / math.sqrt(HEAD_DIM),
        q.stride(0),
        q.stride(1),
        q.stride(2),
        k.stride(0),
        k.stride(1),
        k.stride(2),
        v.stride(0),
        v.stride(1),
        v.stride(2),
        o.stride(0),
        o.stride(1),
        o.stride(2),
        H,
        N_CTX,
        HEAD_DIM=HEAD_DIM,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        CAUSAL=causal,
    )
    return o


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = True) -> torch.Tensor:
    """Return attention computed by torch in float32 (the test oracle), cast to q's dtype."""
    n_ctx, head_dim = q.shape[-2], q.shape[-1]
    s = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(head_dim)
    if causal:
        s = s.masked_fill(torch.ones(n_ctx, n_ctx, dtype=torch.bool).triu(1), float("-inf"))
    return (torch.softmax(s, dim=-1) @ v.float()).to(q.dtype)

"""Scaled dot-product attention as mtia_xdsl's own flash-attention Triton kernel (used by runtime/inductor.py).

Inductor keeps `aten._scaled_dot_product_flash_attention_for_cpu` (what `F.scaled_dot_product_attention` becomes
for "cpu" tensors) as a host call. `flash_attention` is that op for the cases `unsupported` accepts: one program
per (query block, batch x head) streams the key and value blocks through an online softmax (in base 2), with
`tl.dot` on the DPE for Q K^T and P V, in the style of examples/attention.py (Triton's fused-attention tutorial,
06). It is registered as the custom op `mtia_xdsl::scaled_dot_product_attention` (`torch.library.triton_op`),
so Inductor's output code calls it and the kernel runs on MTIA through mtia_xdsl's driver like every generated
kernel. It returns the op's two outputs as aten's CPU kernel does (the attention and the log-sum-exp of each
query row's scaled scores), so autograd's formula for the aten op, `_scaled_dot_product_flash_attention_for_cpu
_backward`, which reads both, still gives the gradients (a host call).

This module imports torch and triton when loaded: import it only once Inductor has loaded (see
`mtia_xdsl.runtime.inductor.HOOK_AFTER`).
"""

# Triton has no type stubs and a @triton.jit kernel's parameters are untyped by Triton's convention:
# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false, reportUnknownVariableType=false
# pyright: reportUnknownArgumentType=false, reportUnknownParameterType=false, reportMissingParameterType=false
# pyright: reportUntypedFunctionDecorator=false

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

HEAD_DIMS = (16, 32, 64, 128)
"""Head dimensions the kernel takes (`tl.arange` needs a power of two; 16 is the smallest `tl.dot` operand width
Triton accepts, and 128 keeps a program's query, key, value and accumulator tiles of f32 at 128 KiB of LS)."""
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
"""Element types the kernel takes (the DPE's: f16 and bf16 at its 16-bit rate, f32 as three BF16 passes, the
`ieee` input precision, so the result matches eager's f32 attention)."""
MIN_BLOCK = 16
"""Query rows (BLOCK_M) and keys (BLOCK_N) per block at least: the sequence length rounded up to a power of
two, at least this (the `tl.dot` operand minimum)."""
MAX_BLOCK = 64
"""Query rows (BLOCK_M) and keys (BLOCK_N) per block at most: longer sequences take more query blocks
(programs) and key blocks (loop steps); examples/attention.py's block."""


def unsupported(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    dropout_p: float,
    attn_mask: torch.Tensor | None,
) -> str | None:
    """Why `flash_attention` cannot compute `aten._scaled_dot_product_flash_attention_for_cpu(query, key, value,
    dropout_p, ..., attn_mask=attn_mask)`, or None if it can: the one rule for which SDPA calls run on MTIA.

    Taken: query [B, H, L, E], key and value [B, H, S, E] of one dtype in DTYPES, E in HEAD_DIMS, no dropout and
    no attention mask (is_causal and scale any), every size a plain int (not a SymInt of dynamic shapes). The
    reason names the first condition that fails, for the coverage table of benchmarks/inductor.py.
    """
    if dropout_p != 0.0:
        return f"dropout_p={dropout_p} (no dropout in mtia_xdsl's attention kernel)"
    if attn_mask is not None:
        return "attn_mask given (mtia_xdsl's attention kernel takes is_causal only)"
    if not query.dim() == key.dim() == value.dim() == 4:
        return f"q, k, v of {query.dim()}, {key.dim()}, {value.dim()} dimensions (4 expected)"
    if any(isinstance(d, torch.SymInt) for t in (query, key, value) for d in t.shape):
        return "symbolic sizes (dynamic shapes: the kernel's block sizes and head dimension are compile-time)"
    if query.shape[1] != key.shape[1] or key.shape[1] != value.shape[1]:
        return f"{query.shape[1]} query heads, {key.shape[1]} key heads, {value.shape[1]} value heads (enable_gqa)"
    if query.dtype not in DTYPES or key.dtype != query.dtype or value.dtype != query.dtype:
        return f"dtypes {query.dtype}, {key.dtype}, {value.dtype} (one of f32, f16, bf16 expected)"
    head_dims = (query.shape[3], key.shape[3], value.shape[3])
    if len(set(head_dims)) != 1 or head_dims[0] not in HEAD_DIMS:
        return f"head dims {head_dims} (one of {', '.join(map(str, HEAD_DIMS))} expected)"
    return None


def block_size(length: int) -> int:
    """Rows or keys per block for a sequence of `length`: its next power of two, within [MIN_BLOCK, MAX_BLOCK]."""
    return min(max(triton.next_power_of_2(length), MIN_BLOCK), MAX_BLOCK)


@triton.jit
def _flash_attention_kernel(
    Q, K, V, Out, Lse, sm_scale, stride_qz, stride_qh, stride_qm, stride_kz, stride_kh, stride_kn, stride_vz,
    stride_vh, stride_vn, stride_oz, stride_oh, stride_om, stride_lz, stride_lh, stride_lm, H, N_Q, N_K,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
):  # fmt: skip
    """Out[z, h, m] = softmax(sm_scale * Q[z, h, m] K[z, h]^T [causal: keys n <= m only]) V[z, h] for the query
    block `program_id(0)` of (z, h) = divmod(`program_id(1)`, H); Lse[z, h, m] = the log (base e) of the softmax's
    denominator over the scaled scores, as aten's CPU flash attention writes it.

    Shapes: Q, Out [Z, H, N_Q, HEAD_DIM], K, V [Z, H, N_K, HEAD_DIM] (head dimension at stride 1), Lse [Z, H, N_Q]
    (f32); tiles tensor<BLOCK_M x HEAD_DIM>, tensor<BLOCK_N x HEAD_DIM>. Rows past N_Q and keys past N_K are masked.
    """
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < N_Q
    q = tl.load(Q + off_z * stride_qz + off_h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :],
                mask=row_ok[:, None], other=0.0)  # fmt: skip
    k_base = K + off_z * stride_kz + off_h * stride_kh
    v_base = V + off_z * stride_vz + off_h * stride_vh
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1 / ln(2): exp(x) = exp2(x / ln 2)
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_K)
    else:
        hi = N_K
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        key_ok = cols < N_K
        k = tl.load(k_base + cols[:, None] * stride_kn + offs_d[None, :], mask=key_ok[:, None], other=0.0)
        qk = tl.dot(q, tl.trans(k), input_precision="ieee") * qk_scale
        keep = key_ok[None, :]
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(keep, qk, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + cols[:, None] * stride_vn + offs_d[None, :], mask=key_ok[:, None], other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision="ieee")
        m_i = m_ij
    acc = acc / l_i[:, None]
    o_ptrs = Out + off_z * stride_oz + off_h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :]
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty), mask=row_ok[:, None])
    lse = (m_i + tl.math.log2(l_i)) * 0.69314718  # ln(2): back from base 2 to base e
    tl.store(Lse + off_z * stride_lz + off_h * stride_lh + offs_m * stride_lm, lse, mask=row_ok)


@triton_op("mtia_xdsl::scaled_dot_product_attention", mutates_args=())
def flash_attention(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, is_causal: bool, scale: float | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """`aten._scaled_dot_product_flash_attention_for_cpu(query, key, value, 0.0, is_causal, scale=scale)`:
    (output [B, H, L, E] of query's dtype and layout, logsumexp [B, H, L] f32, laid out [B, L, H] as aten's CPU
    kernel's); scale None is 1 / sqrt(E); is_causal masks key n > query row m (top-left aligned, as eager).

    Shapes: query [B, H, L, E], key and value [B, H, S, E] (any strides; those whose head dimension is not at
    stride 1 are copied). Requires: `unsupported(query, key, value, 0.0, None)` is None (not checked here).
    """
    query, key, value = (t if t.stride(3) == 1 else t.contiguous() for t in (query, key, value))
    batch, heads, n_q, head_dim = query.shape
    n_k = key.shape[2]
    out = torch.empty_like(query)
    lse = query.new_empty((batch, n_q, heads), dtype=torch.float32).transpose(1, 2)
    sm_scale = scale if scale is not None else 1.0 / math.sqrt(head_dim)
    block_m, block_n = block_size(n_q), block_size(n_k)
    if batch * heads * n_q > 0:
        wrap_triton(_flash_attention_kernel)[(triton.cdiv(n_q, block_m), batch * heads)](
            query, key, value, out, lse, sm_scale, *query.stride()[:3], *key.stride()[:3], *value.stride()[:3],
            *out.stride()[:3], *lse.stride(), heads, n_q, n_k, head_dim, block_m, block_n, is_causal,
        )  # fmt: skip
    return out, lse

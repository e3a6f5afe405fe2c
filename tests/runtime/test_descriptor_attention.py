"""FlashAttention forward through in-kernel tensor descriptors (`tl.make_tensor_descriptor`) on the model.

Our own kernel in the structure of upstream's tutorial 06 (one descriptor per tensor over all heads,
K/V loaded by descriptor inside the key loop, exp2 online softmax, BLOCK_M=128, BLOCK_N=64): every
descriptor block must become one DMA (no scalar gather), and the kernel must fit the CP's 14 CB IDs
and a PE's LS. Before descriptor blocks were single DMAs with start lanes, it was refused with 16 CBs
alive at once at the V load.
"""

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.report import cb_summary


@triton.jit
def _desc_attention(
    Q, K, V, Out, sm_scale, n_ctx, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    start_m = tl.program_id(0)
    head = tl.program_id(1)
    rows = tl.num_programs(1) * n_ctx
    qd = tl.make_tensor_descriptor(Q, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BLOCK_M, HEAD_DIM])
    kd = tl.make_tensor_descriptor(K, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BLOCK_N, HEAD_DIM])
    vd = tl.make_tensor_descriptor(V, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BLOCK_N, HEAD_DIM])
    od = tl.make_tensor_descriptor(Out, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BLOCK_M, HEAD_DIM])
    first = head * n_ctx
    q = qd.load([first + start_m * BLOCK_M, 0])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    scale = sm_scale * 1.44269504
    row = first
    for _ in range(0, n_ctx, BLOCK_N):
        s = tl.dot(q, kd.load([row, 0]).T)
        m_new = tl.maximum(m_i, tl.max(s, 1) * scale)
        p = tl.math.exp2(s * scale - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(tl.float16), vd.load([row, 0]), acc)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_new
        row += BLOCK_N
    od.store([first + start_m * BLOCK_M, 0], (acc / l_i[:, None]).to(tl.float16))


@pytest.mark.parametrize("head_dim", [64, 128])
def test_descriptor_attention_fits_and_matches_torch(head_dim: int) -> None:
    g = torch.Generator().manual_seed(0)
    heads, n_ctx = 2, 128
    q, k, v = (torch.randn(heads, n_ctx, head_dim, generator=g).half() for _ in range(3))
    out = torch.empty_like(q)
    kernel = _desc_attention[(n_ctx // 128, heads)](
        q, k, v, out, 0.5, n_ctx, HEAD_DIM=head_dim, BLOCK_M=128, BLOCK_N=64, num_stages=2
    )
    ref = torch.softmax(q.float() @ k.float().transpose(1, 2) * 0.5, dim=-1) @ v.float()
    torch.testing.assert_close(out.float(), ref, rtol=2e-3, atol=2e-3)
    report = mtia_xdsl.last_report()
    summary = cb_summary(report.cbs)
    config = MachineConfig()
    assert summary.ids_in_use <= config.cb_ids
    assert summary.ls_high_water_bytes <= config.ls_bytes
    # every descriptor block is one DMA: no scalar gathers or scatters
    program = str(kernel.asm["mtia"])
    assert program.count("mtia.dma_load") >= 3 and "mtia.gather" not in program and "mtia.scatter" not in program

"""Inductor's index forms run as DMA blocks and give eager's results (memory_access.py `_rem_div`)."""

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl


@triton.jit
def bias_rows(in_ptr, bias_ptr, scale_ptr, out_ptr, xnumel, XBLOCK: tl.constexpr):
    """Inductor's pointwise form: x0 = xindex % 64 (column), x1 = xindex // 64 (row)."""
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x0 = xindex % 64
    x1 = xindex // 64
    a = tl.load(in_ptr + (x0 + 64 * x1), xmask)
    b = tl.load(bias_ptr + x0, xmask)
    s = tl.load(scale_ptr + x1, xmask)
    tl.store(out_ptr + xindex, a * s + b, xmask)


def test_flat_index_decomposition_is_dma_and_matches_eager():
    x, bias, scale = torch.randn(6, 64), torch.randn(64), torch.randn(6)
    out = torch.empty_like(x)
    kernel = mtia_xdsl.compile(bias_rows, constexprs={"XBLOCK": 32})
    kernel[(x.numel() // 32,)](x, bias, scale, out, x.numel())
    torch.testing.assert_close(out, x * scale[:, None] + bias)
    mtia = kernel.asm["mtia"]
    assert mtia.count("mtia.dma_load") == 3 and "mtia.gather" not in mtia and "mtia.scatter" not in mtia


@triton.jit
def bias_rows_static(in_ptr, bias_ptr, scale_ptr, out_ptr, xnumel, XBLOCK: tl.constexpr):
    """Inductor's pointwise form with a static size (`xnumel = 768` in the body) and a row stride of 128:
    with XBLOCK a multiple of 64, the block covers whole rows (a multi-row box)."""
    xnumel = 768
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x0 = xindex % 64
    x1 = xindex // 64
    a = tl.load(in_ptr + (x0 + 128 * x1), xmask)
    b = tl.load(bias_ptr + x0, xmask)
    s = tl.load(scale_ptr + x1, xmask)
    tl.store(out_ptr + (x0 + 64 * x1), a * s + b, xmask)


@pytest.mark.parametrize("xblock", [128, 512])  # 768 = 6 x 128; the second block of 512 is half masked
def test_flat_index_across_rows_is_a_multi_row_box_and_matches_eager(xblock):
    x, bias, scale = torch.randn(12, 128), torch.randn(64), torch.randn(12)
    out = torch.full((12, 64), -1.0)
    kernel = mtia_xdsl.compile(bias_rows_static, constexprs={"XBLOCK": xblock})
    kernel[(triton.cdiv(768, xblock),)](x, bias, scale, out, 768)
    torch.testing.assert_close(out, x[:, :64] * scale[:, None] + bias)
    mtia = kernel.asm["mtia"]
    assert mtia.count("mtia.dma_load") == 3 and "mtia.gather" not in mtia and "mtia.scatter" not in mtia
    assert f"tensor<{xblock // 64}x64xf32>" in mtia  # the rows' box, reshaped to the flat block


@triton.jit
def permute_rows(in_ptr, out_ptr, XBLOCK: tl.constexpr):
    """Inductor's copy of a permuted view: out[x2, x1, x0] = in[x1, x2, x0] for a (4, 4, 8) input."""
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)
    x0 = xindex % 8
    x1 = (xindex // 8) % 4
    x2 = xindex // 32
    v = tl.load(in_ptr + (x0 + 32 * x1 + 8 * x2))
    tl.store(out_ptr + xindex, v)


def test_three_digit_permuted_copy_is_a_box_and_matches_eager():
    x = torch.randn(4, 4, 8)
    out = torch.empty(4, 4, 8)
    kernel = mtia_xdsl.compile(permute_rows, constexprs={"XBLOCK": 64})
    kernel[(2,)](x, out)
    torch.testing.assert_close(out, x.transpose(0, 1).contiguous())
    mtia = kernel.asm["mtia"]
    assert "mtia.dma_load" in mtia and "mtia.gather" not in mtia and "tensor<2x4x8xf32>" in mtia


@triton.jit
def rows_mod_m(a_ptr, out_ptr, M, K: tl.constexpr, BLOCK_M: tl.constexpr):
    """Inductor's GEMM template rows: `rm % M` under multiple_of / max_contiguous hints, store masked."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + ram[:, None] * K + rk[None, :])
    tl.store(out_ptr + rm[:, None] * K + rk[None, :], a * 2.0, mask=rm[:, None] < M)


def test_hinted_rows_mod_m_is_dma_and_matches_eager():
    a = torch.randn(40, 16)  # 40 rows: the second block of 32 would wrap past M
    out = torch.zeros_like(a)
    kernel = mtia_xdsl.compile(rows_mod_m, constexprs={"K": 16, "BLOCK_M": 32})
    kernel[(2,)](a, out, 40)
    torch.testing.assert_close(out, a * 2.0)
    mtia = kernel.asm["mtia"]
    assert "mtia.dma_load" in mtia and "mtia.gather" not in mtia


@triton.jit
def template_columns(b_ptr, out_ptr, K: tl.constexpr, BLOCK_N: tl.constexpr):
    """Inductor's GEMM template columns with static sizes: B is [N, K] read as [K, N] (`stride_bn = K`), the
    hinted or plain `rn % N` picked by a condition of the kernel's constants (kept as an scf.if)."""
    N = 40
    stride_bk = 1
    stride_bn = K
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    if (stride_bk == 1 and stride_bn == K) and (N >= BLOCK_N and K > 1):
        offs_b_n = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    else:
        offs_b_n = rn % N
    rk = tl.arange(0, K)
    b = tl.load(b_ptr + (rk[:, None] * stride_bk + offs_b_n[None, :] * stride_bn))
    tl.store(out_ptr + (rk[:, None] + K * rn[None, :]), b * 2.0, mask=rn[None, :] < N)


def test_template_columns_by_a_constant_condition_are_dma_and_match_eager():
    b = torch.randn(40, 16)  # N = 40 rows of K = 16: the second block of 32 columns wraps past N
    out = torch.zeros_like(b)
    kernel = mtia_xdsl.compile(template_columns, constexprs={"K": 16, "BLOCK_N": 32})
    kernel[(2,)](b, out)
    torch.testing.assert_close(out, b * 2.0)
    mtia = kernel.asm["mtia"]
    assert "mtia.dma_load" in mtia and "mtia.gather" not in mtia


@triton.jit
def embedding_rows(ids_ptr, table_ptr, out_ptr, xnumel, R: tl.constexpr, XBLOCK: tl.constexpr, WRAP: tl.constexpr):
    """Inductor's embedding lookup: ids as a [XBLOCK, 1] tile (negative ids wrapped), rows picked by them."""
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r = tl.arange(0, R)[None, :]
    tmp0 = tl.load(ids_ptr + xindex, xmask)
    if WRAP:
        tmp0 = tl.where(tmp0 < 0, tmp0 + 1000, tmp0)
    row = tl.load(table_ptr + (r + R * tmp0), xmask, other=0.0)
    tl.store(out_ptr + (r + R * xindex), row * 2.0, xmask)


@pytest.mark.parametrize("wrap", [True, False])
def test_embedding_rows_are_an_indexed_dma_and_match_eager(wrap):
    ids, table = torch.randint(-1000 if wrap else 0, 1000, (37,)), torch.randn(1000, 64)
    out = torch.empty(37, 64)
    kernel = mtia_xdsl.compile(embedding_rows, constexprs={"R": 64, "XBLOCK": 8, "WRAP": wrap})
    run = kernel[(5,)](ids, table, out, 37)  # the last block has 5 valid rows of 8
    torch.testing.assert_close(out, table[ids] * 2.0)
    mtia = kernel.asm["mtia"]
    assert "mtia.dma_gather_rows" in mtia and "mtia.gather" not in mtia
    engines = {c.engine.name for t in run.traces for c in t.commands if c.kind == "dma_gather_rows"}
    assert engines == {"DMA"}  # the DMA engine moves the rows, not the scalar core


@triton.jit
def embedding_flat(ids_ptr, table_ptr, out_ptr, XBLOCK: tl.constexpr):
    """Inductor's embedding lookup as a flat pointwise kernel (`aten.embedding` alone): x1 picks the id,
    x0 the column; a block of XBLOCK covers XBLOCK // 16 whole rows (16 = 20 * 16 / XBLOCK programs)."""
    xnumel = 320
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x0 = xindex % 16
    x1 = xindex // 16
    tmp0 = tl.load(ids_ptr + x1, xmask)
    tmp0 = tl.where(tmp0 < 0, tmp0 + 100, tmp0)
    row = tl.load(table_ptr + (x0 + 16 * tmp0), xmask)
    tl.store(out_ptr + xindex, row, xmask)


def test_flat_embedding_rows_are_an_indexed_dma_box_and_match_eager():
    ids, table = torch.randint(-100, 100, (20,)), torch.randn(100, 16)
    out = torch.empty(20, 16)
    kernel = mtia_xdsl.compile(embedding_flat, constexprs={"XBLOCK": 64})
    kernel[(5,)](ids, table, out)
    torch.testing.assert_close(out, table[ids])
    mtia = kernel.asm["mtia"]
    assert "mtia.dma_gather_rows" in mtia and "mtia.gather" not in mtia and "tensor<4x16xf32>" in mtia


@triton.jit
def relu_and_mask(in_ptr, out_ptr, mask_ptr, XBLOCK: tl.constexpr):
    """Inductor's forward of a ReLU kept for its backward: the bool `x <= 0` stored through `!tt.ptr<i1>`."""
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    x = tl.load(in_ptr + xindex)
    y = tl.maximum(x, 0.0)
    tl.store(out_ptr + xindex, y)
    tl.store(mask_ptr + xindex, y <= 0.0)


def test_bool_store_is_dma_and_matches_eager():
    x = torch.randn(128)
    out, mask = torch.empty(128), torch.zeros(128, dtype=torch.bool)
    kernel = mtia_xdsl.compile(relu_and_mask, constexprs={"XBLOCK": 64})
    kernel[(2,)](x, out, mask)
    torch.testing.assert_close(out, torch.relu(x))
    assert torch.equal(mask, torch.relu(x) <= 0)
    mtia = kernel.asm["mtia"]
    assert mtia.count("mtia.dma_store") == 2 and "mtia.scatter" not in mtia


@triton.jit
def batched_store(out_ptr, BATCH: tl.constexpr, M: tl.constexpr, N: tl.constexpr):
    """The bmm template's store: mask `(idx_m < M) & (idx_n < N) & (idx_q < BATCH)`, the last one uniform."""
    idx_q = tl.program_id(1)
    idx_m = (tl.program_id(0) * M + tl.arange(0, M))[:, None]
    idx_n = tl.arange(0, N)[None, :]
    mask = (idx_m < M) & (idx_n < N) & (idx_q < BATCH)
    acc = (idx_m * N + idx_n).to(tl.float32) + idx_q * 1000.0
    tl.store(out_ptr + tl.broadcast_to(idx_n + N * idx_m + M * N * idx_q, [M, N]), acc, mask)


def test_uniform_store_mask_is_dma_and_matches_eager():
    out = torch.full((4, 16, 16), -1.0)
    kernel = mtia_xdsl.compile(batched_store, constexprs={"BATCH": 3, "M": 16, "N": 16})
    kernel[(1, 4)](out)  # the program of batch 3 is past BATCH: it writes nothing
    expected = torch.arange(256.0).view(16, 16) + 1000.0 * torch.arange(4.0)[:, None, None]
    expected[3] = -1.0
    torch.testing.assert_close(out, expected)
    mtia = kernel.asm["mtia"]
    assert "mtia.dma_store" in mtia and "mtia.scatter" not in mtia


@triton.jit
def masked_bool_load(in_ptr, out_ptr, XBLOCK: tl.constexpr):
    """Inductor's masked-fill mask: a bool load with `other=0.0`, read as int1."""
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < 100
    keep = tl.load(in_ptr + xindex, xmask, other=0.0).to(tl.int1)
    tl.store(out_ptr + xindex, tl.where(keep, 1.0, 2.0), xmask)


def test_bool_load_with_float_other_is_dma_and_matches_eager():
    keep, out = torch.rand(100) > 0.5, torch.zeros(100)
    kernel = mtia_xdsl.compile(masked_bool_load, constexprs={"XBLOCK": 64})
    kernel[(2,)](keep, out)
    torch.testing.assert_close(out, torch.where(keep, 1.0, 2.0))
    mtia = kernel.asm["mtia"]
    assert mtia.count("mtia.dma_load") == 1 and "mtia.gather" not in mtia


@triton.jit
def bag_membership(lo_ptr, hi_ptr, in_ptr, out_ptr, copy_ptr, xnumel, XBLOCK: tl.constexpr):
    """dlrm's `_embedding_bag` membership kernel: rows of 48 that a power-of-two XBLOCK does not divide
    (a block starts inside a row); plus `x0 + 48 * x1`, the flat index itself, loaded and stored."""
    xnumel = 768
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x1 = xindex // 48
    x0 = xindex % 48
    lo = tl.load(lo_ptr + x1, xmask)
    hi = tl.load(hi_ptr + x1, xmask)
    tl.store(out_ptr + xindex, ((x0 >= lo) & (x0 < hi)).to(tl.float32), xmask)
    tl.store(copy_ptr + (x0 + 48 * x1), tl.load(in_ptr + (x0 + 48 * x1), xmask), xmask)


@pytest.mark.parametrize("xblock", [64, 1024])  # 64: blocks start inside rows; 1024: more than all 16 rows
def test_flat_index_not_whole_rows_is_a_wrapped_box_and_matches_eager(xblock):
    lo, hi = torch.randint(0, 48, (16,), dtype=torch.int32), torch.randint(0, 48, (16,), dtype=torch.int32)
    x = torch.randn(16, 48)
    out, copy = torch.full((768,), -1.0), torch.full((16, 48), -1.0)
    kernel = mtia_xdsl.compile(bag_membership, constexprs={"XBLOCK": xblock})
    kernel[(triton.cdiv(768, xblock),)](lo, hi, x, out, copy, 768)
    col = torch.arange(48)
    torch.testing.assert_close(out.view(16, 48), ((col >= lo[:, None]) & (col < hi[:, None])).float())
    torch.testing.assert_close(copy, x)
    mtia = kernel.asm["mtia"]
    assert mtia.count("mtia.dma_load") == 3 and mtia.count("mtia.dma_store") == 2
    assert "mtia.gather" not in mtia and "mtia.scatter" not in mtia
    assert mtia.count("mtia.extract_slice") == 2  # the two per-row loads: wrapped boxes sliced to the block


@triton.jit
def padded_rows(in_ptr, out_ptr, xnumel, XBLOCK: tl.constexpr):
    """dlrm's interaction kernel's form: rows of 10 read from a vector, stored into rows padded to 26."""
    xnumel = 160
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x0 = xindex % 10
    x1 = xindex // 10
    v = tl.load(in_ptr + (10 + x0), xmask)
    tl.store(out_ptr + (x0 + 26 * x1), v + x1.to(tl.float32), xmask)


@pytest.mark.parametrize(("xblock", "programs"), [(32, 5), (256, 2)])
def test_padded_rows_load_is_a_wrapped_box_and_store_stays_exact(xblock, programs):
    """XBLOCK = 32: blocks start inside rows, the store stays on the scalar core. XBLOCK = 256 >= 160: only
    the first block has valid elements, and they are whole rows from row 0: the store is a DMA of a
    [16, 10] box sliced from the block (a second program writes nothing)."""
    from triton.runtime.interpreter import InterpretedFunction

    vec, out, oracle = torch.randn(20), torch.full((16, 26), -1.0), torch.full((16, 26), -1.0)
    kernel = mtia_xdsl.compile(padded_rows, constexprs={"XBLOCK": xblock})
    kernel[(programs,)](vec, out, 160)
    InterpretedFunction(padded_rows.fn)[(programs,)](vec, oracle, 160, XBLOCK=xblock)
    expected = torch.full((16, 26), -1.0)
    expected[:, :10] = vec[10:] + torch.arange(16.0)[:, None]
    torch.testing.assert_close(out, expected)  # the padding is not written
    torch.testing.assert_close(oracle, expected)
    mtia = kernel.asm["mtia"]
    assert mtia.count("mtia.dma_load") == 1 and "mtia.gather" not in mtia
    assert ("mtia.scatter" in mtia) == (xblock == 32) and ("tensor<16x10xf32>" in mtia) == (xblock == 256)


@triton.jit
def transposed_rows(w_ptr, out_ptr, K: tl.constexpr, BLOCK_N: tl.constexpr):
    """A GEMM template's B = W^T of nn.Linear: a [K, BLOCK_N] tile with strides [1, K] (columns of memory)."""
    rk = tl.arange(0, K)
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    b = tl.load(w_ptr + (rk[:, None] + K * rn[None, :]), mask=rn[None, :] < 40, other=0.0)
    tl.store(out_ptr + (rk[:, None] * 40 + rn[None, :]), b * 2.0, mask=rn[None, :] < 40)


def test_transposed_tile_moves_in_memory_order_and_matches_eager():
    """The DMA moves the [BLOCK_N, K] rows of W (one descriptor per row, not per element) and the MLU
    transposes the tile; the store of the [K, BLOCK_N] result is contiguous along its last dimension."""
    w = torch.randn(40, 64)
    out = torch.zeros(64, 40)
    kernel = mtia_xdsl.compile(transposed_rows, constexprs={"K": 64, "BLOCK_N": 32})
    run = kernel[(2,)](w, out)
    torch.testing.assert_close(out, w.t() * 2.0)
    mtia = kernel.asm["mtia"]
    assert "tensor<32x64xf32>" in mtia and "tt.trans" in mtia and "mtia.gather" not in mtia
    loads = [c for t in run.traces for c in t.commands if c.kind == "dma_load"]
    assert len(loads) == 2 and all(c.descriptors <= 32 for c in loads)  # one run per row of W, not 2048


@triton.jit
def small_bmm(a_ptr, b_ptr, c_ptr, K: tl.constexpr, BLOCK: tl.constexpr, BLOCK_K: tl.constexpr):
    """Inductor's bmm template with M = N = 5 < BLOCK: rows and columns `rm % M`, `rn % N` without hints
    (the block wraps inside itself), A and B advanced through the K loop, the store masked to M x N.
    A is [BATCH, M, K]; B = A^T ([BATCH, K, N] with strides [M * K, 1, K], dlrm's z @ z^T). M and N are
    static sizes written into the body, as Inductor does: the choice between forms stays an scf.if."""
    M = 5
    N = 5
    q = tl.program_id(1)
    rm = tl.arange(0, BLOCK)
    rn = tl.arange(0, BLOCK)
    if M >= BLOCK:  # the template's choice between hinted and plain forms (an scf.if of constants)
        ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK), BLOCK)
    else:
        ram = rm % M
    if N >= BLOCK:
        rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK), BLOCK)
    else:
        rbn = rn % N
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (ram[:, None] * K + rk[None, :] + q * M * K)
    b_ptrs = b_ptr + (rk[:, None] + rbn[None, :] * K + q * N * K)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(K, 0, -BLOCK_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc += tl.dot(a, b, allow_tf32=False)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + (q * M * N + rm[:, None] * N + rn[None, :]), acc, mask=mask)


def test_wrapping_rows_mod_m_are_rows_gathered_by_the_index_and_match_eager():
    """`rm % 5` over a block of 16 rows: no box holds it, but every row of the tile is one row of memory
    picked by the computed index, so A and B (in memory order, transposed) are indexed DMAs; through the
    K loop the tiles advance by a scalar distance."""
    z = torch.randn(3, 5, 32)
    out = torch.zeros(3, 5, 5)
    kernel = mtia_xdsl.compile(small_bmm, constexprs={"K": 32, "BLOCK": 16, "BLOCK_K": 16})
    kernel[(1, 3)](z, z, out)
    torch.testing.assert_close(out, z @ z.transpose(1, 2))
    mtia = kernel.asm["mtia"]
    assert mtia.count("mtia.dma_gather_rows %") == 2 and "mtia.gather" not in mtia


@triton.jit
def runtime_rows_mod_m(a_ptr, out_ptr, M, K: tl.constexpr, STRIDE: tl.constexpr, BLOCK_M: tl.constexpr):
    """Inductor's GEMM template rows under `torch.compile(dynamic=True)`: M a run-time argument, so the
    choice between the hinted and the plain `rm % M` is an scf.if on a run-time condition. Every row of
    the block is stored (no mask): row r of `out` is twice the first K elements of row `r % M` of A (rows of
    STRIDE elements), wrapped rows included."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    if M >= BLOCK_M:
        ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    else:
        ram = rm % M
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + ram[:, None] * STRIDE + rk[None, :])
    tl.store(out_ptr + rm[:, None] * K + rk[None, :], a * 2.0)


@pytest.mark.parametrize("m", [5, 16, 48, 21, 40])  # < BLOCK_M; k * BLOCK_M; k * BLOCK_M + r
def test_runtime_rows_mod_m_are_rows_gathered_by_the_index_and_match_eager(m):
    """`rm % M` with M known only at run time: whichever branch the condition takes, the remainder is the
    index tile and every row of the tile is one row of memory picked by it (an indexed DMA), so the
    result is the wrapped rows for every M, the block wrapping inside itself (M < BLOCK_M) or not."""
    block_m, k, stride = 16, 16, 24
    programs = -(-m // block_m) + 1  # one block past the last: it wraps to rows 0, 1, ..
    a = torch.randn(m, stride)
    out = torch.zeros(programs * block_m, k)
    kernel = mtia_xdsl.compile(runtime_rows_mod_m, constexprs={"K": k, "STRIDE": stride, "BLOCK_M": block_m})
    kernel[(programs,)](a, out, m)
    torch.testing.assert_close(out, a[torch.arange(programs * block_m) % m, :k] * 2.0)
    mtia = kernel.asm["mtia"]
    assert "mtia.dma_gather_rows %" in mtia and "mtia.gather" not in mtia


@triton.jit
def swizzled_epilogue(in_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, BLOCK: tl.constexpr):
    """The epilogue of Inductor's GEMM template (mlp_mixer's token-mixing addmm): program ids re-ordered
    in groups of GROUP_M, `xindex = rn + N * rm` and a permuted [2, N, 16] input read through
    `(xindex // N) % 16` and `xindex // (16 * N)`. Those hold only where `rn < N`, which the mask says."""
    GROUP_M: tl.constexpr = 8
    pid = tl.program_id(0)
    grid_m = (M + BLOCK - 1) // BLOCK
    grid_n = (N + BLOCK - 1) // BLOCK
    width = GROUP_M * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (pid % group_size)
    pid_n = (pid % width) // group_size
    tl.assume(pid_m >= 0)
    tl.assume(pid_n >= 0)
    rm = pid_m * BLOCK + tl.arange(0, BLOCK)
    rn = pid_n * BLOCK + tl.arange(0, BLOCK)
    idx_m = rm[:, None]
    idx_n = rn[None, :]
    mask = (idx_m < M) & (idx_n < N)
    xindex = idx_n + N * idx_m
    x10 = xindex // (16 * N)
    x9 = (xindex // N) % 16
    v = tl.load(in_ptr + (x9 + 16 * idx_n + 16 * N * x10), mask)
    tl.store(out_ptr + tl.broadcast_to(xindex, [BLOCK, BLOCK]), v + 1.0, mask)


@pytest.mark.parametrize("programs", [4, 6])  # 6: programs 4 and 5 get pid_n = 2, every element masked
def test_split_index_of_a_swizzled_template_is_dma_and_matches_eager_and_interpreter(programs):
    """`(xindex // 32) % 16` over a 2-D tile whose column block base (16 * pid_n) is not a multiple of 32:
    exact only below `rn < 32`, which the mask implies, so the load is one strided DMA, not a gather."""
    from triton.runtime.interpreter import InterpretedFunction

    x = torch.randn(2, 32, 16)
    out, oracle = torch.zeros(32, 32), torch.zeros(32, 32)
    kernel = mtia_xdsl.compile(swizzled_epilogue, constexprs={"M": 32, "N": 32, "BLOCK": 16})
    kernel[(programs,)](x, out)
    InterpretedFunction(swizzled_epilogue.fn)[(programs,)](x, oracle, M=32, N=32, BLOCK=16)
    expected = x.permute(0, 2, 1).reshape(32, 32) + 1.0  # out[m, n] = x[m // 16, n, m % 16] + 1
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(oracle, expected)
    mtia = kernel.asm["mtia"]
    assert mtia.count("mtia.dma_load") == 1 and "mtia.gather" not in mtia and "mtia.scatter" not in mtia


@triton.jit
def conv3x3_nhwc(x_ptr, w_ptr, out_ptr, BATCH: tl.constexpr, H: tl.constexpr, W: tl.constexpr,
                 C: tl.constexpr, OC: tl.constexpr, BLOCK_M: tl.constexpr):  # fmt: skip
    """The shape of Inductor's conv template (3x3, padding 1, channels last): rows of the tile are output
    pixels `nhw` split into n, h, w by `%` and `//`, the input read at `h + i - 1`, `w + j - 1` under a mask
    that bounds those digits (the zero padding)."""
    nhw = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    w_out = nhw % W
    nh = nhw // W
    h_out = nh % H
    n = nh // H
    oc = tl.arange(0, OC)
    c = tl.arange(0, C)
    acc = tl.full((BLOCK_M, OC), 0.0, tl.float32)  # tl.zeros is a @jit helper the interpreter cannot call here
    for ij in range(9):
        i = ij // 3
        j = ij % 3
        h_in = h_out + i - 1
        w_in = w_out + j - 1
        mask = (n < BATCH)[:, None] & (h_in >= 0)[:, None] & (h_in < H)[:, None]
        mask = mask & (w_in >= 0)[:, None] & (w_in < W)[:, None] & (c < C)[None, :]
        ptrs = x_ptr + (n * (H * W * C) + h_in * (W * C) + w_in * C)[:, None] + c[None, :]
        xs = tl.load(ptrs, mask=mask, other=0.0)
        ws = tl.load(w_ptr + oc[None, :] * (9 * C) + ij * C + c[:, None])
        acc += tl.dot(xs, ws, allow_tf32=False)
    out_mask = (n < BATCH)[:, None] & (h_out < H)[:, None] & (w_out < W)[:, None] & (oc < OC)[None, :]
    tl.store(out_ptr + (n * (H * W * OC) + h_out * (W * OC) + w_out * OC)[:, None] + oc[None, :], acc, out_mask)


@pytest.mark.parametrize(("hw", "block_m"), [(8, 128), (16, 32)])  # two images per block; part of one image
def test_conv_template_input_is_a_digit_bounded_box_and_matches_eager_and_interpreter(hw, block_m):
    """The input tile is one 4-D DMA [n, h, w, c] with starts and bounds on h and w, not a scalar gather
    (which held 16 CBs, more than the CP's 14 IDs); the output a 3-D box."""
    from triton.runtime.interpreter import InterpretedFunction

    x = torch.randn(2, 8, hw, hw)
    wt = torch.randn(16, 8, 3, 3)
    x_nhwc, w_ohwi = x.permute(0, 2, 3, 1).contiguous(), wt.permute(0, 2, 3, 1).contiguous()
    out, oracle = torch.zeros(2, hw, hw, 16), torch.zeros(2, hw, hw, 16)
    sizes = {"BATCH": 2, "H": hw, "W": hw, "C": 8, "OC": 16, "BLOCK_M": block_m}
    kernel = mtia_xdsl.compile(conv3x3_nhwc, constexprs=sizes)
    grid = (2 * hw * hw // block_m,)
    kernel[grid](x_nhwc, w_ohwi, out)
    InterpretedFunction(conv3x3_nhwc.fn)[grid](x_nhwc, w_ohwi, oracle, **sizes)
    expected = torch.nn.functional.conv2d(x, wt, padding=1).permute(0, 2, 3, 1)
    torch.testing.assert_close(out, expected, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(oracle, expected, atol=1e-4, rtol=1e-4)
    mtia = kernel.asm["mtia"]
    assert "mtia.gather" not in mtia and "mtia.scatter" not in mtia and mtia.count("mtia.dma_store") == 1


@triton.jit
def channels_last_copy(in_ptr, out_ptr, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    """Inductor's copy of conv weights or input into channels last (cnn's `triton_poi_fused_1`): out[y1, x, y0]
    = in[3 * y1 + y0, x], `y0 = yindex % 3` and `y1 = yindex // 3` over a [YBLOCK, 1] tile."""
    ynumel = 6
    xnumel = 256
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    y0 = yindex % 3
    y1 = yindex // 3
    tmp0 = tl.load(in_ptr + (xindex + 256 * yindex), xmask & ymask)
    tl.store(out_ptr + (y0 + 3 * xindex + 768 * y1), tmp0, xmask & ymask)


@pytest.mark.parametrize(
    ("yblock", "xblock", "y_programs", "dma"),
    [(8, 256, 1, True), (8, 128, 1, True), (8, 128, 2, True), (4, 256, 2, False)],
)  # (8, 128, 2): the second row of programs is all masked; (4, 256): the valid rows span two blocks
def test_channels_last_copy_is_a_box_store_and_matches_eager_and_interpreter(yblock, xblock, y_programs, dma):
    """A block that holds every valid row of the split dimension (YBLOCK >= ynumel = 6, a multiple of 3,
    the block's start a multiple of YBLOCK) stores its first 6 rows as the box [2, 3, XBLOCK], moved in
    memory order (one DMA, not a scalar scatter); with YBLOCK = 4 the store stays on the scalar core."""
    from triton.runtime.interpreter import InterpretedFunction

    x = torch.randn(6, 256)
    out, oracle = torch.full((2, 256, 3), -1.0), torch.full((2, 256, 3), -1.0)
    kernel = mtia_xdsl.compile(channels_last_copy, constexprs={"YBLOCK": yblock, "XBLOCK": xblock})
    grid = (256 // xblock, y_programs)
    kernel[grid](x, out, 6, 256)
    InterpretedFunction(channels_last_copy.fn)[grid](x, oracle, 6, 256, YBLOCK=yblock, XBLOCK=xblock)
    expected = x.view(2, 3, 256).permute(0, 2, 1)
    torch.testing.assert_close(oracle, expected)
    torch.testing.assert_close(out, oracle)
    mtia = kernel.asm["mtia"]
    assert ("mtia.scatter" not in mtia and "mtia.dma_store" in mtia) == dma


@triton.jit
def channels_last_repeated(in_ptr, out_ptr, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    """`channels_last_copy` with only `y1 = yindex // 3` in the address: rows 3 * y1 + (0, 1, 2) write one
    address each."""
    yindex = tl.program_id(1) * YBLOCK + tl.arange(0, YBLOCK)[:, None]
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[None, :]
    mask = (yindex < 6) & (xindex < 256)
    tmp0 = tl.load(in_ptr + (xindex + 256 * yindex), mask)
    tl.store(out_ptr + (3 * xindex + 768 * (yindex // 3)), tmp0, mask)


def test_repeated_addresses_stay_scalar_and_the_last_row_wins_as_in_the_interpreter():
    """A box with a stride of 0 is refused: the scalar scatter writes the rows in order, so row 3 * y1 + 2
    lands last, as in Triton's interpreter."""
    from triton.runtime.interpreter import InterpretedFunction

    x = torch.randn(6, 256)
    out, oracle = torch.full((2, 256, 3), -1.0), torch.full((2, 256, 3), -1.0)
    kernel = mtia_xdsl.compile(channels_last_repeated, constexprs={"YBLOCK": 8, "XBLOCK": 256})
    kernel[(1, 1)](x, out)
    InterpretedFunction(channels_last_repeated.fn)[(1, 1)](x, oracle, YBLOCK=8, XBLOCK=256)
    torch.testing.assert_close(oracle[:, :, 0], x.view(2, 3, 256)[:, 2])
    torch.testing.assert_close(out, oracle)
    assert "mtia.scatter" in kernel.asm["mtia"]


@triton.jit
def channels_last_copy_t(in_ptr, out_ptr, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    """`channels_last_copy` with the split dimension last: an [XBLOCK, YBLOCK] tile, `yindex` along dimension 1."""
    yindex = tl.program_id(1) * YBLOCK + tl.arange(0, YBLOCK)[None, :]
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    mask = (yindex < 6) & (xindex < 256)
    tmp0 = tl.load(in_ptr + (xindex + 256 * yindex), mask)
    tl.store(out_ptr + (yindex % 3 + 3 * xindex + 768 * (yindex // 3)), tmp0, mask)


def test_split_of_the_last_dimension_is_a_box_store_and_matches_the_interpreter():
    """The wrapped dimension may be any of the tile's (here 1): the box is [XBLOCK, 2, 3], one DMA."""
    from triton.runtime.interpreter import InterpretedFunction

    x = torch.randn(6, 256)
    out, oracle = torch.full((2, 256, 3), -1.0), torch.full((2, 256, 3), -1.0)
    kernel = mtia_xdsl.compile(channels_last_copy_t, constexprs={"YBLOCK": 8, "XBLOCK": 64})
    kernel[(4, 2)](x, out)
    InterpretedFunction(channels_last_copy_t.fn)[(4, 2)](x, oracle, YBLOCK=8, XBLOCK=64)
    torch.testing.assert_close(oracle, x.view(2, 3, 256).permute(0, 2, 1))
    torch.testing.assert_close(out, oracle)
    mtia = kernel.asm["mtia"]
    assert "mtia.scatter" not in mtia and "tensor<64x2x3xf32>" in mtia


@triton.jit
def transposing_prologue(y_ptr, w_ptr, out_ptr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    """Inductor's GEMM template with the copy of `y.transpose(1, 2).reshape(64, 64)` (y [2, 4, 32, 16])
    fused into its A load (a prologue): the tile's flat index `xindex = k + 64 * (rm % 64)` split by `%`
    and `//` into y's digits, straddling both dimensions; `out = A @ w`."""
    pid = tl.program_id(0)
    tl.assume(pid >= 0)
    rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_m = rm % 64
    offs_k = tl.arange(0, BLOCK_K)
    rn = tl.arange(0, 16)
    acc = tl.full((BLOCK_M, 16), 0.0, tl.float32)
    for k_idx in range(0, 64 // BLOCK_K):  # tl.cdiv is a @jit helper the interpreter cannot call here
        xindex = (offs_k[None, :] + k_idx * BLOCK_K) + 64 * offs_m[:, None]
        x9 = xindex % 16
        x10 = (xindex // 16) % 4
        x11 = (xindex // 64) % 32
        x12 = xindex // 2048
        a = tl.load(y_ptr + (x9 + 16 * x11 + 512 * x10 + 2048 * x12))
        b = tl.load(w_ptr + (offs_k[:, None] + k_idx * BLOCK_K) * 16 + rn[None, :])
        acc += tl.dot(a, b, allow_tf32=False)
    tl.store(out_ptr + rm[:, None] * 16 + rn[None, :], acc)


@pytest.mark.parametrize("block_k", [64, 32])  # one K step; two (`k_idx` a bounded term of the base)
def test_transposing_prologue_is_a_permuted_box_and_matches_eager_and_interpreter(block_k):
    """The A load is one 3-D DMA box [16, 4 or 2, 16] of strides [16, 512, 1] viewed as the tile
    (memory_access.py `place_value_split`), not an element gather on the scalar core."""
    from triton.runtime.interpreter import InterpretedFunction

    y, w = torch.randn(2, 4, 32, 16), torch.randn(64, 16)
    out, oracle = torch.zeros(64, 16), torch.zeros(64, 16)
    kernel = mtia_xdsl.compile(transposing_prologue, constexprs={"BLOCK_M": 16, "BLOCK_K": block_k})
    kernel[(4,)](y, w, out)
    InterpretedFunction(transposing_prologue.fn)[(4,)](y, w, oracle, BLOCK_M=16, BLOCK_K=block_k)
    expected = y.transpose(1, 2).reshape(64, 64) @ w
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(oracle, expected)
    mtia = kernel.asm["mtia"]
    assert mtia.count("mtia.dma_load") == 2 and "mtia.gather" not in mtia and "mtia.scatter" not in mtia
    assert f"tensor<16x{block_k // 16}x16xf32>" in mtia


@triton.jit
def masked_k_prologue(y_ptr, w_ptr, out_ptr):
    """The same with K = 40 < BLOCK_K = 64 (y [2, 16, 40] transposed to [16, 2, 40], a batch-first attention's
    output): `x10 = xindex // 80`, `x9 = (xindex // 40) % 2` over `xindex = k + 40 * (rm % 32)`, exact only
    where the template's `a_mask` (`k < 40`) holds."""
    pid = tl.program_id(0)
    rm = pid * 16 + tl.arange(0, 16)
    offs_m = rm % 32
    offs_k = tl.arange(0, 64)
    rn = tl.arange(0, 16)
    acc = tl.full((16, 16), 0.0, tl.float32)
    for k_idx in range(0, 1):
        a_mask = offs_k[None, :] < (40 - k_idx * 64)
        idx_n = offs_k[None, :] + k_idx * 64
        xindex = idx_n + 40 * offs_m[:, None]
        x10 = xindex // 80
        x9 = (xindex // 40) % 2
        a = tl.where(a_mask, tl.load(y_ptr + (idx_n + 40 * x10 + 640 * x9), a_mask), 0.0)
        b = tl.load(w_ptr + offs_k[:, None] * 16 + rn[None, :], offs_k[:, None] < 40, other=0.0)
        acc += tl.dot(a, b, allow_tf32=False)
    tl.store(out_ptr + rm[:, None] * 16 + rn[None, :], acc)


def test_masked_k_prologue_is_a_box_below_the_mask_and_matches_eager_and_interpreter():
    """The A load is one 3-D DMA box [8, 2, 64] of strides [40, 640, 1] bounded by the mask's 40 columns."""
    from triton.runtime.interpreter import InterpretedFunction

    y, w = torch.randn(2, 16, 40), torch.randn(40, 16)
    out, oracle = torch.zeros(32, 16), torch.zeros(32, 16)
    kernel = mtia_xdsl.compile(masked_k_prologue)
    kernel[(2,)](y, w, out)
    InterpretedFunction(masked_k_prologue.fn)[(2,)](y, w, oracle)
    expected = y.transpose(0, 1).reshape(32, 40) @ w
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(oracle, expected)
    mtia = kernel.asm["mtia"]
    assert mtia.count("mtia.dma_load") == 2 and "mtia.gather" not in mtia and "tensor<8x2x64xf32>" in mtia


@pytest.mark.parametrize(
    ("max_rank", "box"), [(4, "tensor<2x256xf32>"), (3, "tensor<2x256xf32>"), (5, "tensor<2x8x2x4x4xf32>")]
)
def test_box_fits_the_dma_rank_of_the_machine(max_rank, box):
    """A permuted prologue's rank-5 A box (tests/backend/kernels.py `permuted_prologue_5d`) is moved as it is where
    MachineConfig.dma_max_rank allows 5 dimensions, else in memory order as [2, 256] (`fit_rank`); both match eager."""
    from tests.backend.kernels import permuted_prologue_5d

    sig = {"y_ptr": "*fp32", "w_ptr": "*fp32", "out_ptr": "*fp32"}
    options = {"machine_overrides": {"dma_max_rank": max_rank}}
    kernel = mtia_xdsl.compile(permuted_prologue_5d, sig, {"BLOCK_K": 32}, options)
    mtia = kernel.asm["mtia"]
    assert box in mtia and "mtia.gather" not in mtia
    y, w, out = torch.randn(2, 4, 8, 4, 4), torch.randn(64, 16), torch.zeros(16, 16)
    kernel[(1,)](y, w, out)
    torch.testing.assert_close(out, y.permute(0, 2, 1, 4, 3).reshape(16, 64) @ w)


@triton.jit
def split_by_runtime_scalar(in_ptr0, in_ptr1, out_ptr0, ks0, ks1, xnumel, XBLOCK: tl.constexpr):
    """Inductor's residual add of llama_mlp under `torch.compile(dynamic=True)` at batch 16 (its sequence
    length, one symbol for both): `x0 = xindex % ks0`, `x1 = xindex // ks0`, ks0 and ks1 run-time."""
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex % ks0
    x1 = xindex // ks0
    tmp0 = tl.load(in_ptr0 + xindex, xmask)
    tmp1 = tl.load(in_ptr1 + (x0 + 64 * x1 * ((ks1 * ks1) // ks1)), xmask)
    tl.store(out_ptr0 + xindex, tmp0 + tmp1, xmask)


@pytest.mark.parametrize(("ks0", "ks1", "rows"), [(48, 1, 5), (64, 1, 3), (32, 2, 7), (1024, 16, 2), (40, 1, 5)])
def test_split_by_runtime_scalar_is_rows_of_an_indexed_dma_and_matches_eager(ks0, ks1, rows):
    """Rows of ks0 elements at a stride of 64 * ks1, ks0 a run-time multiple of 16 (Triton's launch gives the
    argument `tt.divisibility` 16, as Inductor's `triton_meta` does): over aligned runs of 16 lanes the offset
    steps by 1, so the load is an indexed DMA of 16-element rows (their starts picked from the offset tile)
    whatever ks0 and the stride are, rows crossing inside a block of 64 (ks0 = 48) or not, the last block
    partly masked. ks0 = 40 has no such hint: a run may cross a row, the load stays an element gather."""
    n = ks0 * rows
    src = torch.randn(rows, 64 * ks1)
    x = torch.randn(n)
    out = torch.full((n,), -1.0)
    compiled = split_by_runtime_scalar[(triton.cdiv(n, 64),)](x, src, out, ks0, ks1, n, XBLOCK=64)
    torch.testing.assert_close(out, x + src[:, :ks0].reshape(-1))
    mtia = compiled.asm["mtia"]
    rows_dma = ks0 % 16 == 0
    assert ("mtia.dma_gather_rows %" in mtia) == rows_dma and ("mtia.gather" in mtia) != rows_dma

"""Element gathers from a small source block: one DMA of the block into LS, then a gather inside LS on the
vector core (memory_access.py `_ls_gather_access`, convert_tt_to_mtia.py `_ls_gather`), exact against eager
and Triton's interpreter, also for indices outside the block."""

import pytest
import torch
import triton
import triton.language as tl
from triton.runtime.interpreter import InterpretedFunction

import mtia_xdsl


@triton.jit
def tril_gather(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    """dlrm's interaction, as Inductor writes it: `z[b, li[k], lj[k]]` over the tril indices (li then lj in
    in_ptr0), into rows of 26 (the asserts are no-ops without debug, so they prove nothing)."""
    xnumel = 160
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex % 10
    x1 = xindex // 10
    tmp0 = tl.load(in_ptr0 + (x0), xmask, eviction_policy="evict_last")
    tmp6 = tl.load(in_ptr0 + (10 + x0), xmask, eviction_policy="evict_last")
    tmp1 = (tl.full([XBLOCK], 5, tl.int32)).to(tl.int32)
    tmp2 = tmp0 + tmp1
    tmp3 = tmp0 < 0
    tmp4 = tl.where(tmp3, tmp2, tmp0)
    tl.device_assert(((0 <= tmp4) & (tmp4 < 5)) | ~(xmask), "index out of bounds: 0 <= tmp4 < 5")
    tmp7 = tmp6 + tmp1
    tmp8 = tmp6 < 0
    tmp9 = tl.where(tmp8, tmp7, tmp6)
    tl.device_assert(((0 <= tmp9) & (tmp9 < 5)) | ~(xmask), "index out of bounds: 0 <= tmp9 < 5")
    tmp11 = tl.load(in_ptr1 + (tmp9 + 5 * tmp4 + 25 * x1), xmask, eviction_policy="evict_last")
    tl.store(out_ptr0 + (x0 + 26 * x1), tmp11, xmask)


def _run_tril(idx: torch.Tensor, z: torch.Tensor, xblock: int) -> tuple[torch.Tensor, str, int]:
    """Output, buffer-level program and the lanes the scalar core gathered."""
    out, oracle = torch.full((16, 26), -1.0), torch.full((16, 26), -1.0)
    kernel = mtia_xdsl.compile(tril_gather, constexprs={"XBLOCK": xblock})
    grid = (triton.cdiv(160, xblock),)
    run = kernel[grid](idx, z, out, 160)
    InterpretedFunction(tril_gather.fn)[grid](idx, z, oracle, 160, XBLOCK=xblock)
    torch.testing.assert_close(out, oracle)
    scalar_lanes = sum(c.elems for t in run.traces for c in t.commands if c.kind == "gather")
    return out, kernel.asm["mtia"], scalar_lanes


@pytest.mark.parametrize("xblock", [256, 64])  # one block of all 16 rows; blocks starting inside rows
def test_tril_gather_is_one_box_dma_and_an_ls_gather(xblock):
    li, lj = torch.tril_indices(5, 5, -1)
    z = torch.randn(16, 5, 5)
    out, mtia, scalar_lanes = _run_tril(torch.cat([li, lj]), z, xblock)
    expected = torch.full((16, 26), -1.0)
    expected[:, :10] = z[:, li, lj]
    torch.testing.assert_close(out, expected)
    rows = {256: 27, 64: 8}[xblock]  # rows of z[b] by DMA (flat, clipped at z's end), gathered in LS
    assert f"tensor<{rows * 25}xf32>" in mtia and "mtia.storage_extent" in mtia and "tt.gather" in mtia
    assert mtia.count("mtia.gather") == 1 and mtia.count("mtia.outside_box") == 1  # for lanes outside the box
    assert scalar_lanes == 0  # every index is in its row of z[b]


def test_tril_gather_outside_the_box_reads_memory_as_written():
    """Indices past a row of 25 (li = 6: `z[b, 6, j]` is `z[b + 1, 1, j]`) are not in the box of the rows the
    block's x1 touches: those lanes are gathered by the scalar core, so the kernel reads what it addresses."""
    li, lj = torch.tril_indices(5, 5, -1)
    li = li + torch.tensor([0, 5, 0, 0, 5, 0, 0, 0, 0, 0])  # two lanes one row of z further on
    z = torch.randn(17, 5, 5)  # a 17th batch so that row 15's reads past its block stay in memory
    out, _, scalar_lanes = _run_tril(torch.cat([li, lj]), z, 256)
    flat = z.reshape(-1)
    expected = torch.full((16, 26), -1.0)
    expected[:, :10] = flat[(25 * torch.arange(16)[:, None] + 5 * li + lj)]
    torch.testing.assert_close(out, expected)
    assert scalar_lanes == 2  # the box holds z[0..15]: only b = 15's two lanes read past it (z[16])


@triton.jit
def columns_mod_n(b_ptr, out_ptr, K, N: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    """Inductor's GEMM-template B tile when N < BLOCK_N (no hint): column `rn % N` of a K x N row-major B,
    rows `rk < K` (the bmm template's `EVEN_K=False` mask; `other=0`)."""
    pid_n = tl.program_id(0)
    tl.assume(pid_n >= 0)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rbn = rn % N
    rk = tl.arange(0, BLOCK_K)
    b = tl.load(b_ptr + (rk[:, None] * N + rbn[None, :]), mask=rk[:, None] < K, other=0.0)
    o = pid_n * BLOCK_K * BLOCK_N + rk[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    tl.store(out_ptr + o, b)


@pytest.mark.parametrize(("k", "n"), [(16, 13), (5, 5)])  # dlrm_train's mm and bmm B tiles
def test_wrapping_columns_are_one_box_dma_and_an_ls_gather(k, n):
    b = torch.randn(k, n)
    out, oracle = torch.empty(2, 16, 16), torch.empty(2, 16, 16)
    kernel = mtia_xdsl.compile(columns_mod_n, constexprs={"N": n, "BLOCK_K": 16, "BLOCK_N": 16})
    run = kernel[(2,)](b, out, k)
    InterpretedFunction(columns_mod_n.fn)[(2,)](b, oracle, k, N=n, BLOCK_K=16, BLOCK_N=16)
    rn = torch.arange(32).reshape(2, 16) % n
    expected = torch.zeros(2, 16, 16)
    expected[:, :k] = b[:, rn].permute(1, 0, 2)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(oracle, expected)
    mtia = kernel.asm["mtia"]
    assert "tt.gather" in mtia and f"tensor<{16 * n}xf32>" in mtia  # the box of 16 rows of n, moved flat
    # `rn % N` is provably a column of the box: the scalar core gathers only when the box is clipped at b's end
    assert mtia.count("mtia.gather") == 1 and "scf.if" in mtia
    assert not any(c.kind == "gather" for tr in run.traces for c in tr.commands)  # b ends with the box: no clip


@triton.jit
def nll_target(in_ptr0, in_ptr1, out_ptr, R0_BLOCK: tl.constexpr):
    """mlp_train's log-softmax target gather as Inductor writes it: row r0 of 8 log-probabilities, column
    `target[r0]` (ignore_index -100 read as 0): a [1, 16] tile from a box of 16 rows of 8, 8 times the tile."""
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_mask = r0_index < 16
    tmp0 = tl.load(in_ptr0 + r0_index, r0_mask, other=0.0)
    tmp9 = tl.where(tmp0 != -100, tmp0, tl.full([1, 1], 0, tl.int64))
    tmp11 = tl.load(in_ptr1 + (tmp9 + 8 * r0_index), r0_mask, other=0.0)
    tl.store(out_ptr + r0_index, tmp11, r0_mask)


def test_nll_target_gather_is_one_box_dma_and_an_ls_gather():
    target, logp = torch.randint(0, 8, (16,)), torch.randn(16, 8)
    target[3] = -100
    out = torch.empty(16)
    kernel = mtia_xdsl.compile(nll_target, constexprs={"R0_BLOCK": 16})
    kernel[(1,)](target, logp, out)
    expected = logp[torch.arange(16), target.clamp(min=0)]
    torch.testing.assert_close(out, expected)
    mtia = kernel.asm["mtia"]
    assert "tt.gather" in mtia and "tensor<128xf32>" in mtia and mtia.count("mtia.gather") == 1  # outside the box


@triton.jit
def gather_rows_of_8(x_ptr, t_ptr, out_ptr, BLOCK: tl.constexpr):
    """Lane r reads `x[t[r] + 8 * r]`, rows r < 32 (a box of 32 rows of 8 in LS)."""
    r = tl.arange(0, BLOCK)
    t = tl.load(t_ptr + r)
    v = tl.load(x_ptr + (t + 8 * r), r < 32)
    tl.store(out_ptr + r, v)


def test_box_past_the_end_of_the_tensor_is_clipped():
    """x ends partway through the last row the mask allows (252 = 8 * 32 - 4): no lane reads past it (t <= 3),
    so the box DMA stops at the end of x's storage rather than raising a false out-of-bounds error."""
    x, t = torch.randn(8 * 32 - 4), torch.arange(32) % 4
    out, oracle = torch.empty(32), torch.empty(32)
    kernel = mtia_xdsl.compile(gather_rows_of_8, constexprs={"BLOCK": 32})
    run = kernel[(1,)](x, t, out)
    InterpretedFunction(gather_rows_of_8.fn)[(1,)](x, t, oracle, BLOCK=32)
    torch.testing.assert_close(out, x[t + 8 * torch.arange(32)])
    torch.testing.assert_close(oracle, out)
    assert "tt.gather" in kernel.asm["mtia"]  # still the box DMA and the LS gather
    reads = sorted(c.global_read_bytes for tr in run.traces for c in tr.commands if c.kind == "dma_load")
    assert reads == [32 * 8, 252 * 4]  # t (i64), then the box up to x's end: 252 f32, not the 256 it spans


def test_lane_past_the_end_of_the_tensor_still_raises():
    """A lane that does read past x (t = 4 in the last row: x[252]) raises the out-of-bounds error naming
    the load's line, whichever path gathers it."""
    x, t = torch.randn(8 * 32 - 4), torch.arange(32) % 4
    t[31] = 4
    kernel = mtia_xdsl.compile(gather_rows_of_8, constexprs={"BLOCK": 32})
    with pytest.raises(
        Exception, match=r"test_ls_gather\.py:\d+.*out-of-bounds.*1 element\(s\) past the end of 'x_ptr'"
    ):
        kernel[(1,)](x, t, torch.empty(32))


@triton.jit
def wide_columns_mod_n(b_ptr, out_ptr, K, N: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    """`rk * N + rn % N` with N > BLOCK_N: the first block reads columns 0..BLOCK_N-1 of rows rk < K."""
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    b = tl.load(b_ptr + (rk[:, None] * N + (rn % N)[None, :]), mask=rk[:, None] < K, other=0.0)
    tl.store(out_ptr + rk[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :], b)


def test_exact_box_past_the_end_of_the_tensor():
    """The exact form (index `rn % N`, provably in its row) with a tensor ending partway through its last row
    (20 * 16 - 4 elements; lanes read columns < 16 only): the box DMA stops at the end of b's storage, as the
    checked form's does, rather than raising a false out-of-bounds error; every lane is gathered in LS."""
    b, out, oracle = torch.randn(20 * 16 - 4), torch.empty(16, 16), torch.empty(16, 16)
    kernel = mtia_xdsl.compile(wide_columns_mod_n, constexprs={"N": 20, "BLOCK_K": 16, "BLOCK_N": 16})
    InterpretedFunction(wide_columns_mod_n.fn)[(1,)](b, oracle, 16, N=20, BLOCK_K=16, BLOCK_N=16)
    run = kernel[(1,)](b, out, 16)
    torch.testing.assert_close(out, oracle)
    torch.testing.assert_close(out, b[torch.arange(16)[:, None] * 20 + torch.arange(16)])
    reads = [c.global_read_bytes for tr in run.traces for c in tr.commands if c.kind == "dma_load"]
    assert reads == [316 * 4]  # the box up to b's end: 316 f32, not the 320 its 16 rows of 20 span
    assert sum(c.elems for t in run.traces for c in t.commands if c.kind == "gather") == 0


def test_exact_box_lane_past_the_end_of_the_tensor_still_raises():
    """Program 1 of the same kernel reads columns 16..19 of row 15 (`rn % 20` for rn = 16..19): b[316..319],
    past b's end. The exact form's clipped box does not hold them: the scalar core gathers those lanes and
    raises the out-of-bounds error naming the load's line, as for the checked form."""
    b = torch.randn(20 * 16 - 4)
    kernel = mtia_xdsl.compile(wide_columns_mod_n, constexprs={"N": 20, "BLOCK_K": 16, "BLOCK_N": 16})
    with pytest.raises(
        mtia_xdsl.KernelRuntimeError, match=r"test_ls_gather\.py:\d+.*out-of-bounds.*past the end of 'b_ptr'"
    ):
        kernel[(2,)](b, torch.empty(2, 16, 16), 16)


@triton.jit
def target_gather(t_ptr, logp_ptr, out_ptr, C: tl.constexpr):
    """`logp[r, t[r]]` over 16 rows of C: a [16] tile from a box of 16 rows of C, C times the tile."""
    r = tl.arange(0, 16)
    tl.store(out_ptr + r, tl.load(logp_ptr + (tl.load(t_ptr + r) + C * r)))


@pytest.mark.parametrize(("placement", "in_ls"), [("llc", False), ("sram", True)])
def test_the_largest_box_follows_the_machine(placement: str, in_ls: bool):
    """A box 40 times the f32 tile: moving it costs more than the scalar core's gather with tensors behind
    the LLC (costed at DRAM, `cost.ls_gather_box_ratio` 17), less with tensors in SRAM (83)."""
    t, logp = torch.randint(0, 40, (16,)), torch.randn(16, 40)
    out = torch.empty(16)
    options = {"machine_overrides": {"global_placement": placement}}
    kernel = mtia_xdsl.compile(target_gather, constexprs={"C": 40}, options=options)
    kernel[(1,)](t, logp, out)
    torch.testing.assert_close(out, logp[torch.arange(16), t])
    mtia = kernel.asm["mtia"]
    assert ("tt.gather" in mtia) == in_ls and ("tensor<640xf32>" in mtia) == in_ls  # the box: 16 rows of 40
    assert ("mtia.outside_box" in mtia) == in_ls  # else every lane is the scalar core's

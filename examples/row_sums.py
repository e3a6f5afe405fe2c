# mtia-opt: kernel=row_sums_re constexprs=BLOCK_M:8,BLOCK_N:256
# mtia-opt: signature=x_ptr:*fp32,out_ptr:*fp32,M:i32,N:i32
"""Row sums of a short, wide matrix spread over the PEs of each PE row, with get_pe_id and re_reduce.

One program per PE (a persistent kernel): the PEs of PE row y take the row blocks y, y + H, y + 2H, ...
(H PE rows), and PE x of the row sums column chunk x of each. `row_sums_re` combines the W partial
sums of a block with `mtl.re_reduce` over the reduction engines' neighbour network and PE x = 0 stores
them; `row_sums_atomic` is the same kernel adding its partial sums into the output with `tl.atomic_add`
(element by element on the scalar core). `benchmarks/language.py` prints both times.
"""

import torch
import triton
import triton.language as tl

import mtia_xdsl.language as mtl


@triton.jit
def _partial_sums(x_ptr, rows, M, N, px, chunk, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    acc = tl.zeros([BLOCK_M], dtype=tl.float32)
    for n in range(0, chunk, BLOCK_N):
        cols = px * chunk + n + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        acc += tl.sum(tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0), axis=1)
    return acc


@triton.jit
def row_sums_re(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    px, py = mtl.get_pe_id(0), mtl.get_pe_id(1)
    width, height = mtl.get_num_pes(0), mtl.get_num_pes(1)
    chunk = tl.cdiv(tl.cdiv(N, width), BLOCK_N) * BLOCK_N  # columns per PE of a row
    for m0 in range(py * BLOCK_M, M, height * BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        acc = _partial_sums(x_ptr, rows, M, N, px, chunk, BLOCK_M, BLOCK_N)
        total = mtl.re_reduce(acc, 0, "sum")  # every PE of the row gets the row block's sums
        if px == 0:
            tl.store(out_ptr + rows, total, mask=rows < M)


@triton.jit
def row_sums_atomic(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    px, py = mtl.get_pe_id(0), mtl.get_pe_id(1)
    width, height = mtl.get_num_pes(0), mtl.get_num_pes(1)
    chunk = tl.cdiv(tl.cdiv(N, width), BLOCK_N) * BLOCK_N
    for m0 in range(py * BLOCK_M, M, height * BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        acc = _partial_sums(x_ptr, rows, M, N, px, chunk, BLOCK_M, BLOCK_N)
        tl.atomic_add(out_ptr + rows, acc, mask=rows < M)  # out starts at zero


def row_sums(
    x: torch.Tensor, reduce: str = "re", pe_subgrid: tuple[int, int, int] | None = None, **launch
) -> torch.Tensor:
    """Return x.sum(1); x: tensor<M x N x f32> contiguous. `reduce` is "re" (re_reduce) or "atomic".

    One program per PE of the launch's PE grid (the whole chip, or `pe_subgrid`); `launch` gives block sizes
    (BLOCK_M, BLOCK_N) and launch options (e.g. machine_overrides).
    """
    m, n = x.shape
    out = torch.zeros(m)
    meta = {"BLOCK_M": 64, "BLOCK_N": 256, **launch}
    options = {"pe_subgrid": pe_subgrid} if pe_subgrid else {}
    programs = pe_subgrid[1] * pe_subgrid[2] if pe_subgrid else 64  # MachineConfig mtia2i: 8 x 8 PEs
    kernel = row_sums_re if reduce == "re" else row_sums_atomic
    kernel[(programs,)](x, out, m, n, **meta, **options)
    return out

# mtia-opt: kernel=col_sums_per_pe constexprs=BLOCK_M:64,BLOCK_N:256
# mtia-opt: signature=x_ptr:*fp32,scratch_ptr:*fp32,M:i32,N:i32
"""Column sums of a tall matrix, one program per block of rows: PE-local partial sums with get_pe_id.

Every program sums the columns of its BLOCK_M rows. `col_sums_atomic` (plain Triton) adds those partial
sums into the output with `tl.atomic_add` (element by element on the scalar core). `col_sums_per_pe`
adds them into its PE's row of a scratch matrix (one row per PE, `mtl.get_pe_id()`) with a plain load and
store: the programs of a PE run one after the other, so the row is private to the PE and needs no atomic;
`combine` then sums the rows (a second, small launch). `col_sums_persistent` is the hand-written
alternative without get_pe_id: one program per PE, looping over row blocks, one atomic add per program.
`benchmarks/language.py` prints the three times.
"""

import torch
import triton
import triton.language as tl

import mtia_xdsl
import mtia_xdsl.language as mtl

PES = 64
"""PEs of the launch's grid: MachineConfig mtia2i's 8 x 8 (the whole chip)."""


@triton.jit
def _block_sums(x_ptr, m0, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows, cols = m0 + tl.arange(0, BLOCK_M), tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    return tl.sum(tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0), axis=0)


@triton.jit
def col_sums_atomic(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    partial = _block_sums(x_ptr, tl.program_id(0) * BLOCK_M, M, N, BLOCK_M, BLOCK_N)
    tl.atomic_add(out_ptr + cols, partial, mask=cols < N)  # out starts at zero


@triton.jit
def col_sums_per_pe(x_ptr, scratch_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    partial = _block_sums(x_ptr, tl.program_id(0) * BLOCK_M, M, N, BLOCK_M, BLOCK_N)
    row = scratch_ptr + mtl.get_pe_id() * N + cols  # this PE's row: no other PE touches it
    tl.store(row, tl.load(row, mask=cols < N) + partial, mask=cols < N)


@triton.jit
def combine(scratch_ptr, out_ptr, N, PES: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rows = tl.arange(0, PES)
    tile = tl.load(scratch_ptr + rows[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=0.0)
    tl.store(out_ptr + cols, tl.sum(tile, axis=0), mask=cols < N)


@triton.jit
def col_sums_persistent(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for m0 in range(tl.program_id(0) * BLOCK_M, M, tl.num_programs(0) * BLOCK_M):
        acc += _block_sums(x_ptr, m0, M, N, BLOCK_M, BLOCK_N)
    tl.atomic_add(out_ptr + cols, acc, mask=cols < N)


def col_sums(
    x: torch.Tensor, variant: str = "per_pe", BLOCK_M: int = 64, reports: list | None = None, **launch
) -> torch.Tensor:
    """Return x.sum(0); x: tensor<M x N x f32> contiguous, N <= 256 (one column block).

    `variant`: "per_pe" (get_pe_id scratch rows, then `combine`), "atomic" (tl.atomic_add per program) or
    "persistent" (one program per PE). `launch` gives launch options (e.g. machine_overrides); `reports`,
    if given, receives the machine model's report of each launch (two for "per_pe").
    Raises: ValueError for N > 256 or an unknown variant.
    """
    m, n = x.shape
    if n > 256:
        raise ValueError(f"col_sums handles up to 256 columns, got {n}")
    out = torch.zeros(n)
    block_n = triton.next_power_of_2(n)
    blocks = triton.cdiv(m, BLOCK_M)
    if variant == "atomic":
        col_sums_atomic[(blocks,)](x, out, m, n, BLOCK_M=BLOCK_M, BLOCK_N=block_n, **launch)
        _launched(reports)
    elif variant == "per_pe":
        scratch = torch.zeros(PES, n)
        col_sums_per_pe[(blocks,)](x, scratch, m, n, BLOCK_M=BLOCK_M, BLOCK_N=block_n, **launch)
        _launched(reports)
        combine[(1,)](scratch, out, n, PES=PES, BLOCK_N=block_n, **launch)
        _launched(reports)
    elif variant == "persistent":
        col_sums_persistent[(PES,)](x, out, m, n, BLOCK_M=BLOCK_M, BLOCK_N=block_n, **launch)
        _launched(reports)
    else:
        raise ValueError(f"unknown variant {variant!r}; expected 'per_pe', 'atomic' or 'persistent'")
    return out


def _launched(reports: list | None) -> None:
    if reports is not None:
        reports.append(mtia_xdsl.last_report())

"""The backward of LayerNorm and RMSNorm as mtia_xdsl's own Triton kernels (used by runtime/inductor.py).

Stock Inductor decomposes `aten.native_layer_norm_backward` and `aten._fused_rms_norm_backward`
(torch/_decomp/decompositions.py) into generic pointwise and reduction kernels. While mtia_xdsl's backend is
active, `inductor_config.norm_templates` is on and the rule (`unsupported_layer_norm_backward`,
`unsupported_rms_norm_backward`) takes the call, the decompositions here (`native_layer_norm_backward`,
`fused_rms_norm_backward`) call mtia_xdsl's kernel instead, one launch per norm backward, through the custom ops
`mtia_xdsl::layer_norm_backward` and `mtia_xdsl::rms_norm_backward` (`torch.library.triton_op`), so Inductor's
output code calls them and the kernel runs on MTIA through mtia_xdsl's driver like every generated kernel.

The kernel is written for MTIA's engines. Its programs (`programs`: one per PE, or one for a few rows) each take
BLOCK_M whole rows at a time ([BLOCK_M, BLOCK_N] row blocks of dy and x, which become DMA; BLOCK_N the row's next
power of two), read the saved mean and rstd, compute dx (the row reductions sum(dy w) and sum(dy w xhat) on the
RE, `tl.sum(axis=1)`) and add each block's column sums of dy xhat (dw) and dy (db) into the program's own row of a
[programs, K, N] f32 buffer of partial sums. The decomposition sums those rows (an ordinary `.sum(0)`, which
Inductor lowers to a kernel of its own; none for one program): no atomics. BLOCK_M is chosen by simulated time:
the kernel is a `triton.autotune` over BLOCK_M, whose benchmarker is mtia_xdsl's driver's
(`MtiaDriver.get_benchmarker`: the modelled time of the launch), with the configurations whose tiles cannot fit a
PE's local storage pruned first (`fits_local_storage`). The math is f32; dx has x's dtype.

The op is opaque to Inductor's scheduler: a pointwise producer of dy (a loss of y: `2 y` for `y.pow(2).sum()`) is a
kernel of its own, a read and a write of dy's size more, where the stock backward fused it into its first row
reduction. The kernel itself reads dy and x once (the stock backward twice: dx, then the column sums), near the
DRAM bound: 53.7 us for 1024 x 768 f32, whose 9.4 MB (dy and x read, dx written) take 51 us at MachineConfig's
sustained DRAM rate (benchmarks/norm_backward.py prints both cases: `ln_linear`, where dy is a matmul's gradient,
and `ln`, where it is such a producer).

On CPU, torch 2.13's `nn.RMSNorm` does not reach `aten._fused_rms_norm_backward` by itself: `torch.rms_norm`
and `aten._fused_rms_norm` are CompositeImplicitAutograd for every backend of the CPU build (no CPU kernel, no
autograd formula in use), so a training step's graph holds the pow, mean, rsqrt and mul of the composite and
their autograd backward. `inductor_rms_norm_pattern` rewrites that joint graph into its `_RmsNormFunction`, whose
backward is `aten._fused_rms_norm_backward` (without the weight: the weight's gradient stays as written), so the
backward's dx is this kernel.

This module imports torch and triton when loaded: import it only once Inductor has loaded (see
`mtia_xdsl.runtime.inductor.HOOK_AFTER`).
"""

# Triton has no type stubs and a @triton.jit kernel's parameters are untyped by Triton's convention:
# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false, reportUnknownVariableType=false
# pyright: reportUnknownArgumentType=false, reportUnknownParameterType=false, reportMissingParameterType=false
# pyright: reportUntypedFunctionDecorator=false
# tl.sum is typed as returning a tensor or a tuple (of several reduced operands), so arithmetic on it is not:
# pyright: reportOperatorIssue=false

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl
from torch._decomp import decompositions as stock
from torch.library import triton_op, wrap_triton

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
"""Element types of x and dy taken (the math is f32 whatever the dtype; dx is written in x's dtype)."""
BLOCK_MS = (1, 2, 4, 8, 16, 32)
"""Rows per block (BLOCK_M) the autotuning tries, those whose tiles fit LS (`fits_local_storage`)."""
LIVE_ROW_TILES = 8
"""[BLOCK_M, BLOCK_N] f32 tiles a program holds at once, an upper bound counted from the kernel: dy and x as
loaded and as f32, xhat, dy w, the product summed for dx's correction, and dx (in f32 and in x's dtype)."""
LIVE_COLUMN_VECTORS = 3
"""[BLOCK_N] f32 vectors a program holds through its loop: the weight, and dw's and db's partial sums."""


SINGLE_PROGRAM_ROWS = 16
"""At most this many rows are one program's: its partial sums are then dw and db themselves, and no reduction
launch follows. A LayerNorm backward of 16 rows of 64 (benchmarks/inductor.py's ln_train) took 0.91 us in one
program against 0.64 us in 16 programs and 0.46 us for the launch summing their partials."""


def programs(rows: int) -> int:
    """Programs of a launch over `rows` rows: one when rows <= SINGLE_PROGRAM_ROWS, else one per PE of the
    driver's target (MachineConfig.n_pes, 64 on MTIA-2i), at most one per row."""
    from mtia_xdsl.runtime.triton_backend.driver import target_machine_config

    return 1 if rows <= SINGLE_PROGRAM_ROWS else min(target_machine_config().n_pes, rows)


def tile_bytes(block_m: int, block_n: int) -> int:
    """Bytes of LS a program's live tiles take for [block_m, block_n] row blocks (LIVE_ROW_TILES and
    LIVE_COLUMN_VECTORS, f32, plus mean and rstd per row)."""
    return 4 * (LIVE_ROW_TILES * block_m * block_n + LIVE_COLUMN_VECTORS * block_n + 2 * block_m)


def fits_local_storage(block_m: int, block_n: int) -> bool:
    """True when `tile_bytes(block_m, block_n)` fit one PE's local storage (MachineConfig.ls_bytes of the
    driver's target, 384 KiB on MTIA-2i, S1/S6)."""
    from mtia_xdsl.runtime.triton_backend.driver import target_machine_config

    return tile_bytes(block_m, block_n) <= target_machine_config().ls_bytes


def _unsupported(x: torch.Tensor, normalized_shape: Any, others: dict[str, torch.Tensor | None]) -> str | None:
    """The rule shared by both backwards; `others` names dy and the saved statistics and parameters."""
    if any(isinstance(d, torch.SymInt) for t in (x, *others.values()) if t is not None for d in t.shape):
        return "symbolic sizes (dynamic shapes: the kernel's block sizes are compile-time)"
    if len(normalized_shape) != 1:
        return f"normalized_shape {list(normalized_shape)} (the last dimension only)"
    if x.dim() < 1 or x.shape[-1] != normalized_shape[0]:
        return f"x of shape {list(x.shape)} for normalized_shape {list(normalized_shape)}"
    dtypes = {name: t.dtype for name, t in others.items() if t is not None}
    if x.dtype not in DTYPES or any(d not in DTYPES for d in dtypes.values()):
        return f"dtypes x {x.dtype}, " + ", ".join(f"{n} {d}" for n, d in dtypes.items()) + " (f32, f16 or bf16)"
    rows, n = x.numel() // max(x.shape[-1], 1), x.shape[-1]
    if rows == 0 or n == 0:
        return f"an empty x of shape {list(x.shape)}"
    block_n = triton.next_power_of_2(n)
    if not fits_local_storage(1, block_n):
        return f"rows of {n} (a block of one row of {block_n} needs {tile_bytes(1, block_n)} bytes of LS)"
    return None


def unsupported_layer_norm_backward(
    grad_out: torch.Tensor,
    input: torch.Tensor,
    normalized_shape: Any,
    mean: torch.Tensor,
    rstd: torch.Tensor,
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
) -> str | None:
    """Why `layer_norm_backward` cannot compute `aten.native_layer_norm_backward(grad_out, input,
    normalized_shape, mean, rstd, weight, bias, ...)`, or None if it can: the one rule for which LayerNorm
    backwards run on mtia_xdsl's kernel.

    Taken: the last dimension normalised (one entry in normalized_shape), x, dy, mean, rstd, weight and bias of
    f32, f16 or bf16, static sizes, a non-empty x whose row (N, as a block of next_power_of_2(N)) fits LS with one
    row per block. The reason names the first condition that fails (benchmarks/inductor.py prints it).
    """
    others = {"grad_out": grad_out, "mean": mean, "rstd": rstd, "weight": weight, "bias": bias}
    return _unsupported(input, normalized_shape, others)


def unsupported_rms_norm_backward(
    grad_out: torch.Tensor,
    input: torch.Tensor,
    normalized_shape: Any,
    rstd: torch.Tensor,
    weight: torch.Tensor | None,
) -> str | None:
    """Why `rms_norm_backward` cannot compute `aten._fused_rms_norm_backward(grad_out, input, normalized_shape,
    rstd, weight, ...)`, or None if it can: the conditions of `unsupported_layer_norm_backward`, without mean
    and bias."""
    return _unsupported(input, normalized_shape, {"grad_out": grad_out, "rstd": rstd, "weight": weight})


def _prune(configs: list[triton.Config], named_args: dict[str, Any], **kwargs: Any) -> list[triton.Config]:
    """The autotuning's configurations whose tiles fit LS and whose block is no taller than a program's share of
    the rows needs (at least the one-row block, which the rule checked)."""
    block_n = kwargs["BLOCK_N"]
    rows = named_args["M"]
    share = triton.next_power_of_2(triton.cdiv(rows, programs(rows)))
    fitting = [c for c in configs if c.kwargs["BLOCK_M"] <= share and fits_local_storage(c.kwargs["BLOCK_M"], block_n)]
    return fitting or configs[:1]


@triton.jit
def _dx(g, xhat, rstd, N, HAS_MEAN: tl.constexpr):
    """dx = rstd (g - xhat mean(g xhat) [- mean(g)]) of a row block (g = dy w): the row sums on the RE."""
    c1 = tl.sum(g * xhat, axis=1) / N
    if HAS_MEAN:
        c2 = tl.sum(g, axis=1) / N
        return (g - xhat * c1[:, None] - c2[:, None]) * rstd[:, None]
    return (g - xhat * c1[:, None]) * rstd[:, None]


@triton.autotune(  # keyed on the sizes and the constexpr switches (Triton adds the dtypes)
    configs=[triton.Config({"BLOCK_M": m}) for m in BLOCK_MS],
    key=["M", "N", "HAS_MEAN", "HAS_W", "DX", "DW", "DB"],
    prune_configs_by={"early_config_prune": _prune},
)
@triton.jit
def _norm_backward_kernel(
    DY, X, W, Mean, Rstd, DXout, Part, M, N, stride_dy, stride_x, stride_dx, stride_part,
    HAS_MEAN: tl.constexpr, HAS_W: tl.constexpr, DX: tl.constexpr, DW: tl.constexpr, DB: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    """The backward of y = xhat w (+ b), xhat = (x - mean) rstd (HAS_MEAN, LayerNorm) or x rstd (RMSNorm), over
    the rows of x [M, N]: DXout = rstd (g - xhat mean(g xhat) [- mean(g)]) with g = dy w (dy without HAS_W);
    Part[p] = program p's column sums of dy xhat (DW) then of dy (DB), over the row blocks p, p + P, ... it takes
    (P = `num_programs(0)`).

    Shapes: DY, X, DXout [M, N] (rows at the given strides, columns at stride 1), W [N], Mean, Rstd [M],
    Part [P, DW + DB, N] (f32, rows at stride_part); tiles tensor<BLOCK_M x BLOCK_N>. Columns past N and rows
    past M are masked. DX, DW, DB switch each output off (aten's output_mask).
    """
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < N
    if HAS_W:
        w = tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)
    else:
        w = tl.full([BLOCK_N], 1.0, tl.float32)  # not read
    dw_acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    db_acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for m0 in range(pid * BLOCK_M, M, tl.num_programs(0) * BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        row_ok = rows < M
        ok = row_ok[:, None] & col_ok[None, :]
        dy = tl.load(DY + rows[:, None] * stride_dy + cols[None, :], mask=ok, other=0.0).to(tl.float32)
        x = tl.load(X + rows[:, None] * stride_x + cols[None, :], mask=ok, other=0.0).to(tl.float32)
        rstd = tl.load(Rstd + rows, mask=row_ok, other=0.0).to(tl.float32)
        if HAS_MEAN:
            mean = tl.load(Mean + rows, mask=row_ok, other=0.0).to(tl.float32)
            xhat = tl.where(ok, (x - mean[:, None]) * rstd[:, None], 0.0)
        else:
            xhat = x * rstd[:, None]
        if DX:
            if HAS_W:
                dx = _dx(dy * w[None, :], xhat, rstd, N, HAS_MEAN)
            else:
                dx = _dx(dy, xhat, rstd, N, HAS_MEAN)
            dx_ptrs = DXout + rows[:, None] * stride_dx + cols[None, :]
            tl.store(dx_ptrs, dx.to(DXout.dtype.element_ty), mask=ok)
        if DW:
            dw_acc += tl.sum(dy * xhat, axis=0)
        if DB:
            db_acc += tl.sum(dy, axis=0)
    if DW:
        tl.store(Part + pid * stride_part + cols, dw_acc, mask=col_ok)
    if DB:
        tl.store(Part + pid * stride_part + (stride_part - N) + cols, db_acc, mask=col_ok)


def _launch(
    dy: torch.Tensor,
    x: torch.Tensor,
    weight: torch.Tensor | None,
    mean: torch.Tensor | None,
    rstd: torch.Tensor,
    mask: list[bool],
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run the kernel on x, dy [.., N] (mean, rstd: one per row); return (dx of x's shape and dtype, [0] when
    mask[0] is False; the partial sums [P, K, N] f32: dw's, if mask[1] and a weight, then db's, if mask[2])."""
    n = x.shape[-1]
    x2, dy2 = (t.reshape(-1, n) for t in (x, dy))
    x2, dy2 = (t if t.stride(-1) == 1 else t.contiguous() for t in (x2, dy2))
    m = x2.shape[0]
    p = programs(m)
    mask = [mask[0], mask[1] and weight is not None, len(mask) > 2 and mask[2]]
    dx = torch.empty(x.shape if mask[0] else (0,), dtype=x.dtype, device=x.device)
    part = x.new_empty((p, int(mask[1]) + int(mask[2]), n), dtype=torch.float32)
    rstd = rstd.reshape(m)
    mean_arg = rstd if mean is None else mean.reshape(m)
    wrap_triton(_norm_backward_kernel)[(p,)](  # pyright: ignore[reportArgumentType] (an Autotuner is taken)
        dy2, x2, x2 if weight is None else weight, mean_arg, rstd, dx.view(m, n) if mask[0] else x2,
        part if part.numel() else x2, m, n, dy2.stride(0), x2.stride(0), n, part.shape[1] * n,
        HAS_MEAN=mean is not None, HAS_W=weight is not None, DX=mask[0], DW=mask[1], DB=mask[2],
        BLOCK_N=triton.next_power_of_2(n),
    )  # fmt: skip
    return dx, part


@triton_op("mtia_xdsl::layer_norm_backward", mutates_args=())
def layer_norm_backward(
    grad_out: torch.Tensor,
    input: torch.Tensor,
    mean: torch.Tensor,
    rstd: torch.Tensor,
    weight: torch.Tensor | None,
    output_mask: list[bool],
) -> tuple[torch.Tensor, torch.Tensor]:
    """The LayerNorm backward over the last dimension of input [.., N]: (dx of input's shape and dtype, [0] when
    output_mask[0] is False; partials [P, K, N] f32: dw's if output_mask[1] and weight is given, then db's if
    output_mask[2]). Summing the partials over their first dimension gives dw and db (one reduction for both);
    P = `programs(rows)`.

    mean, rstd: one per row of input, any shape of that many elements (aten's [.., 1]), f32, f16 or bf16.
    Requires: `unsupported_layer_norm_backward` is None (not checked here).
    """
    return _launch(grad_out, input, weight, mean, rstd, output_mask)


@triton_op("mtia_xdsl::rms_norm_backward", mutates_args=())
def rms_norm_backward(
    grad_out: torch.Tensor,
    input: torch.Tensor,
    rstd: torch.Tensor,
    weight: torch.Tensor | None,
    output_mask: list[bool],
) -> tuple[torch.Tensor, torch.Tensor]:
    """The RMSNorm backward over the last dimension of input [.., N]: (dx, partials [P, K, N] f32 of dw, K = 1 if
    output_mask[1] and weight is given, else 0), as `layer_norm_backward` without mean and bias. Requires:
    `unsupported_rms_norm_backward` is None (not checked here)."""
    return _launch(grad_out, input, weight, None, rstd, [*output_mask, False])


def _taken() -> bool:
    """`inductor_norms.take_templates()`: our backend active and `inductor_config.norm_templates` on."""
    from mtia_xdsl.runtime.inductor_norms import take_templates

    return take_templates()


def native_layer_norm_backward(
    grad_out: torch.Tensor,
    input: torch.Tensor,
    normalized_shape: list[int],
    mean: torch.Tensor,
    rstd: torch.Tensor,
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    output_mask: list[bool],
) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
    """Inductor's decomposition of `aten.native_layer_norm_backward`: `layer_norm_backward` (one launch of
    mtia_xdsl's kernel, then the sums of its partials) while `inductor_norms.take_templates()` (our backend active,
    `inductor_config.norm_templates` on) and `unsupported_layer_norm_backward` takes the call; else torch's
    stock decomposition (generic Inductor kernels). Returns aten's (dx, dw, db), None where output_mask is False
    or the parameter is None."""
    why = unsupported_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias)
    if why is not None or not _taken():
        return stock.native_layer_norm_backward(
            grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask
        )
    mask = [output_mask[0], output_mask[1] and weight is not None, output_mask[2] and bias is not None]
    dx, part = layer_norm_backward(grad_out, input, mean, rstd, weight, mask)
    sums = part[0] if part.shape[0] == 1 else part.sum(0)
    return (
        dx if mask[0] else None,
        sums[0].to(weight.dtype) if mask[1] and weight is not None else None,
        sums[-1].to(bias.dtype) if mask[2] and bias is not None else None,
    )


def fused_rms_norm_backward(
    grad_out: torch.Tensor,
    input: torch.Tensor,
    normalized_shape: list[int],
    rstd: torch.Tensor,
    weight: torch.Tensor | None,
    output_mask: list[bool],
) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """Inductor's decomposition of `aten._fused_rms_norm_backward`: `rms_norm_backward` under the conditions of
    `native_layer_norm_backward` (`unsupported_rms_norm_backward` the rule), else torch's stock decomposition.
    Returns aten's (dx, dw); dw in input's dtype, as the stock decomposition's."""
    why = unsupported_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight)
    if why is not None or not _taken():
        return stock._fused_rms_norm_backward(  # pyright: ignore[reportPrivateUsage] (torch's own decomposition)
            grad_out, input, normalized_shape, rstd, weight, output_mask
        )
    mask = [output_mask[0], output_mask[1] and weight is not None]
    dx, part = rms_norm_backward(grad_out, input, rstd, weight, mask)
    sums = part[0] if part.shape[0] == 1 else part.sum(0)
    return dx if mask[0] else None, sums[0].to(input.dtype) if mask[1] else None

"""A Linear and the LayerNorm or RMSNorm of its output in one Triton template launch (issue 18).

In an MLP of Linear -> LayerNorm -> ReLU layers (DLRM's bottom MLP with LayerNorm), stock Inductor already fuses
the norm and the activation into one reduction kernel, so `inductor_norms`' template alone removes no launch:
a layer is two launches either way, the GEMM template and the norm. `fuse_linear_norms` (run by Inductor's
post-grad custom pass while our backend is active, after `inductor_linear_groups.group_linears`) rewrites
`aten.addmm(bias, x, w)` or `aten.mm(x, w)` (through views) whose output's only user is `mtia_xdsl::layer_norm`
(or `mtia_xdsl::rms_norm`) into `mtia_xdsl::linear_layer_norm` (or `mtia_xdsl::linear_rms_norm`). Its Inductor
lowering is a `TritonTemplate`: one program computes BLOCK_M whole rows of the product (BLOCK_N =
next_power_of_2(N)) in a K loop of `tl.dot` (the DPE; every dot operand dimension at least 16, mtia_xdsl's
frontend minimum), adds the bias, then normalises the row block as `inductor_norms`' template (its norm lines,
the row sums on the RE) and stores through `store_output`, so the activation after the norm still fuses as an
epilogue: one launch per Linear + norm + activation. BLOCK_M and BLOCK_K choices (those `block_m_choices` fits in
LS with the K blocks) are picked by `autotune_select_algorithm` (simulated MTIA time).

The rewrite applies only when the product has no other user (a training graph saves it for the backward; the
norm templates take only inference graphs anyway) and `unsupported_linear_norm` accepts the shapes; otherwise
the graph is left as it is. Imports torch and Inductor when loaded: import it only once Inductor has loaded.
"""

# Inductor's lowering helpers and torch.library's decorators are untyped or partially typed:
# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import functools
from typing import Any

import torch
from torch._inductor import ir
from torch._inductor.lowering import empty_strided, register_lowering
from torch._inductor.runtime.runtime_utils import next_power_of_2
from torch._inductor.select_algorithm import TritonTemplate
from torch._inductor.virtualized import V

from mtia_xdsl.runtime import inductor_norms
from mtia_xdsl.runtime.inductor_norms import (
    DTYPES,
    ROW_INDICES,
    autotune_template,
    block_m_choices,
    layer_norm,
    rms_norm,
)

DOT_MIN = 16
"""Least size of a `tl.dot` operand dimension mtia_xdsl's frontend takes (the DPE's tile): BLOCK_M, BLOCK_K and
BLOCK_N are at least this."""
MAX_BLOCK_K = 128
"""Most columns of x per step of the K loop offered (K up to it is one DMA per operand)."""
MAX_K = 4 * MAX_BLOCK_K
"""K fused at most (at most four steps of the K loop); beyond, the GEMM is more than its launch's latency and
Inductor's autotuned GEMM template is the better kernel."""
MAX_KN = 4096
"""K x N (the weight's elements) fused at most, with N at most MAX_N. A program computes whole rows, so the
product's columns are not spread over the PEs as in Inductor's GEMM template. Simulated us of Linear -> LayerNorm
-> ReLU, M=16, stock (GEMM template + norm kernel) -> fused (a script timing `toolchain.run_kernel`'s reports):
KxN 64x32 1.06 -> 0.92, 32x32 1.01 -> 0.82, 128x32 1.17 -> 1.17; 13x64 1.01 -> 1.03, 32x64 1.04 -> 1.13, 64x64
1.12 -> 1.34 (slower by less than the launch removed, `MachineConfig.kernel_launch_cycles`, not in simulated us);
32x128 1.17 -> 1.74, 128x128 1.52 -> 3.02, 256x256 2.82 -> 9.44 (not fused)."""
MAX_N = 64
"""N (the row a program normalises) fused at most; see MAX_KN."""
_VIEWS = (torch.ops.aten.view.default, torch.ops.aten.reshape.default, torch.ops.aten._unsafe_view.default)


def _block_ks(k: int) -> list[int]:
    """BLOCK_K values offered for K: powers of two from DOT_MIN to min(MAX_BLOCK_K, next_power_of_2(K))."""
    top = max(DOT_MIN, min(MAX_BLOCK_K, next_power_of_2(k)))
    return [b for b in (16, 32, 64, 128) if b <= top]


def block_choices(kind: str, m: int, k: int, n: int) -> list[tuple[int, int]]:
    """(BLOCK_M, BLOCK_K) choices for `kind` ("linear_layer_norm" or "linear_rms_norm") on x [m, k] @ w [k, n]:
    BLOCK_M >= DOT_MIN (masked rows past m) that `inductor_norms.block_m_choices` fits in a PE's LS with the K
    blocks. Empty when none fits."""
    return [
        (bm, bk)
        for bk in _block_ks(k)
        for bm in block_m_choices(kind, max(m, DOT_MIN), max(n, DOT_MIN), block_k=bk)
        if bm >= DOT_MIN
    ]


def unsupported_linear_norm(kind: str, x: Any, w: Any, bias: Any) -> str | None:
    """Why x [M, K] @ w [K, N] (+ bias [N]) followed by the norm `kind` ("layer_norm" or "rms_norm") of its rows
    cannot be one `mtia_xdsl::linear_<kind>` launch, or None if it can: 2-D x and w of one dtype of DTYPES, static
    sizes, K <= MAX_K, K x N <= MAX_KN, N <= MAX_N, and a (BLOCK_M, BLOCK_K) whose tiles fit a PE's LS
    (`block_choices`)."""
    tensors = [t for t in (x, w, bias) if t is not None]
    if x.dim() != 2 or w.dim() != 2 or (bias is not None and bias.dim() != 1):
        return f"operands of {[list(t.shape) for t in tensors]} (2-D x and w, 1-D bias)"
    if any(isinstance(d, torch.SymInt) for t in tensors for d in (*t.shape, *t.stride())):
        return "symbolic sizes (dynamic shapes: the template's block sizes are compile-time)"
    if any(t.dtype != x.dtype for t in tensors) or x.dtype not in DTYPES:
        return f"dtypes {', '.join(str(t.dtype) for t in tensors)} (one of f32, f16 or bf16)"
    m, k = x.shape
    n = w.shape[1]
    if m == 0 or k == 0 or n == 0:
        return f"empty product {m} x {k} x {n}"
    if k > MAX_K:
        return f"K of {k} (at most {MAX_K}: a larger GEMM is left to Inductor's GEMM template)"
    if k * n > MAX_KN:
        return f"K x N of {k} x {n} (above {MAX_KN}: whole rows a program is slower than the GEMM template)"
    if n > MAX_N:
        return f"N of {n} (above {MAX_N}: whole rows a program is slower than the GEMM template)"
    if not block_choices(f"linear_{kind}", m, k, n):
        return f"rows of {n} (a row block and the K blocks do not fit a PE's LS)"
    return None


@torch.library.custom_op("mtia_xdsl::linear_layer_norm", mutates_args=())
def linear_layer_norm(
    x: torch.Tensor,
    w: torch.Tensor,
    bias: torch.Tensor | None,
    ln_weight: torch.Tensor | None,
    ln_bias: torch.Tensor | None,
    eps: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`mtia_xdsl::layer_norm(x @ w + bias, ln_weight, ln_bias, eps)`: x [M, K], w [K, N] (nn.Linear's weight
    transposed, the second matrix of aten.addmm), bias [N] or None; (y [M, N], mean [M] f32, rstd [M] f32). Host
    math; under Inductor, the template of `_lower_linear_layer_norm`."""
    h = x @ w if bias is None else torch.addmm(bias, x, w)
    return layer_norm(h, ln_weight, ln_bias, eps)


@linear_layer_norm.register_fake
def _(x: torch.Tensor, w: torch.Tensor, bias: Any, ln_weight: Any, ln_bias: Any, eps: float) -> Any:
    stats = x.new_empty((x.shape[0],), dtype=torch.float32)
    return x.new_empty((x.shape[0], w.shape[1])), stats, torch.empty_like(stats)


@torch.library.custom_op("mtia_xdsl::linear_rms_norm", mutates_args=())
def linear_rms_norm(
    x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, weight: torch.Tensor | None, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """`mtia_xdsl::rms_norm(x @ w + bias, weight, eps)`: shapes as `linear_layer_norm`'s; (y [M, N], rstd [M]
    f32). Host math; under Inductor, the template of `_lower_linear_rms_norm`."""
    h = x @ w if bias is None else torch.addmm(bias, x, w)
    return rms_norm(h, weight, eps)


@linear_rms_norm.register_fake
def _(x: torch.Tensor, w: torch.Tensor, bias: Any, weight: Any, eps: float) -> Any:
    return x.new_empty((x.shape[0], w.shape[1])), x.new_empty((x.shape[0],), dtype=torch.float32)


_NORM_TAIL = {
    kind: source.partition(inductor_norms._ROW_BLOCK)[2]  # pyright: ignore[reportPrivateUsage]
    for kind, source in (("layer_norm", inductor_norms._LAYER_NORM), ("rms_norm", inductor_norms._RMS_NORM))  # pyright: ignore[reportPrivateUsage]
}
"""The norm lines of `inductor_norms`' templates (after their row-block load): they normalise `x`, the f32 row
block, and store y through `store_output`. One home for the norm's math."""

_LINEAR_ROW_BLOCK = (
    r"""
    M = {{size("X", 0)}}
    K = {{size("X", 1)}}
    N = {{size("WT", 1)}}"""
    + ROW_INDICES
    + r"""    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K).to(INDEX_DTYPE)
        a = tl.load(X + idx_m * {{stride("X", 0)}} + rk[None, :] * {{stride("X", 1)}},
                    mask=(idx_m < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(WT + rk[:, None] * {{stride("WT", 0)}} + idx_n * {{stride("WT", 1)}},
                    mask=(rk[:, None] < K) & (idx_n < N), other=0.0)
{% if IEEE %}
        acc = tl.dot(a, b, acc, input_precision="ieee")
{% else %}
        acc = tl.dot(a, b, acc)
{% endif %}
{% if HAS_LINEAR_BIAS %}
    acc += tl.load(LINB + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
{% endif %}
    x = tl.where(mask, acc, 0.0)
"""
)
"""The product's row block: BLOCK_M rows x BLOCK_N columns of x @ w (+ bias) in f32, named `x` as the norm lines
expect (zero outside the box)."""

_DEF_KERNEL = {
    "layer_norm": r"""
{{def_kernel(*(["X", "WT"] + (["LINB"] if HAS_LINEAR_BIAS else []) + (["W"] if HAS_WEIGHT else [])
               + (["B"] if HAS_BIAS else []) + (["Mean", "Rstd"] if STORE_STATS else [])))}}""",
    "rms_norm": r"""
{{def_kernel(*(["X", "WT"] + (["LINB"] if HAS_LINEAR_BIAS else []) + (["W"] if HAS_WEIGHT else [])
               + (["Rstd"] if STORE_STATS else [])))}}""",
}
"""The kernels' parameters, in `_lower`'s order of inputs: x, w, the Linear's bias, the norm's weight (and bias),
the statistics when stored."""


@functools.cache
def _template(kind: str) -> TritonTemplate:
    """The TritonTemplate of `linear_<kind>` (kind "layer_norm" or "rms_norm"), created once."""
    source = _DEF_KERNEL[kind] + _LINEAR_ROW_BLOCK + _NORM_TAIL[kind]
    return TritonTemplate(name=f"mtia_xdsl_linear_{kind}", grid=inductor_norms._rows_grid, source=source)  # pyright: ignore[reportPrivateUsage]


def _lower(kind: str, x: Any, w: Any, bias: Any, params: dict[str, Any], eps: float, n_stats: int) -> Any:
    """The template choices for `linear_<kind>`, picked by `autotune_select_algorithm`; (y, *statistics)."""
    x, w = (ir.ExternKernel.realize_input(t) for t in (x, w))
    m, k = (V.graph.sizevars.guard_int(s) for s in x.get_size())
    n = V.graph.sizevars.guard_int(w.get_size()[1])
    inputs = [x, w] + [inductor_norms._contiguous(p) for p in (bias, *params.values()) if p is not None]  # pyright: ignore[reportPrivateUsage]
    stats = [empty_strided([m], None, dtype=torch.float32, device=x.get_device()) for _ in range(n_stats)]
    store_stats = inductor_norms._stats_read(tuple(range(1, n_stats + 1)))  # pyright: ignore[reportPrivateUsage]
    options: dict[str, Any] = {
        "BLOCK_N": max(DOT_MIN, next_power_of_2(n)),
        "EPS": float(eps),
        "STORE_STATS": store_stats,
        "IEEE": x.get_dtype() == torch.float32,
        "HAS_LINEAR_BIAS": bias is not None,
        **{f"HAS_{name.upper()}": params[name] is not None for name in params},
    }
    configs = [{"BLOCK_M": bm, "BLOCK_K": bk, **options} for bm, bk in block_choices(f"linear_{kind}", m, k, n)]
    y = autotune_template(_template(kind), configs, (m, n), inputs, stats if store_stats else [])
    return (y, *stats)


@register_lowering(torch.ops.mtia_xdsl.linear_layer_norm.default, type_promotion_kind=None)
def _lower_linear_layer_norm(x: Any, w: Any, bias: Any, ln_weight: Any, ln_bias: Any, eps: float) -> Any:
    """`mtia_xdsl::linear_layer_norm` in Inductor: the template (y, mean, rstd)."""
    return _lower("layer_norm", x, w, bias, {"weight": ln_weight, "bias": ln_bias}, eps, 2)


@register_lowering(torch.ops.mtia_xdsl.linear_rms_norm.default, type_promotion_kind=None)
def _lower_linear_rms_norm(x: Any, w: Any, bias: Any, weight: Any, eps: float) -> Any:
    """`mtia_xdsl::linear_rms_norm` in Inductor: the template (y, rstd)."""
    return _lower("rms_norm", x, w, bias, {"weight": weight}, eps, 1)


_NORMS = {
    torch.ops.mtia_xdsl.layer_norm.default: ("layer_norm", torch.ops.mtia_xdsl.linear_layer_norm.default),
    torch.ops.mtia_xdsl.rms_norm.default: ("rms_norm", torch.ops.mtia_xdsl.linear_rms_norm.default),
}


def _producer(norm: Any) -> tuple[Any, list[Any]] | None:
    """The addmm or mm node whose output, through views each of one user, is `norm`'s input and has no other
    user, with the views between (to erase); None if there is none."""
    node, views = norm.args[0], []
    while getattr(node, "target", None) in _VIEWS and len(node.users) == 1:
        views.append(node)
        node = node.args[0]
    mm_ops = (torch.ops.aten.addmm.default, torch.ops.aten.mm.default)
    if getattr(node, "target", None) not in mm_ops or node.kwargs or len(node.users) != 1:
        return None
    return node, views


def _linear_args(mm: Any) -> tuple[Any, Any, Any]:
    """(x, w, bias or None) of an addmm or mm node."""
    if mm.target is torch.ops.aten.mm.default:
        return mm.args[0], mm.args[1], None
    return mm.args[1], mm.args[2], mm.args[0]


def _vals(*nodes: Any) -> list[Any]:
    """The fake tensors (`meta["val"]`) of `nodes` (None stays None)."""
    return [None if n is None else n.meta.get("val") for n in nodes]


def _fuse(graph: Any, norm: Any) -> bool:
    """Rewrite `norm` and its producing Linear into one fused op when they qualify; whether it did."""
    found = _producer(norm)
    if found is None:
        return False
    mm, views = found
    kind, fused_op = _NORMS[norm.target]
    x, w, bias = _linear_args(mm)
    vals = _vals(x, w, bias)
    if any(v is None for v, n in zip(vals, (x, w, bias), strict=True) if n is not None):
        return False
    if unsupported_linear_norm(kind, *vals) is not None or tuple(mm.meta["val"].shape) != tuple(
        norm.args[0].meta["val"].shape
    ):
        return False
    with graph.inserting_before(norm):
        fused = graph.call_function(fused_op, (x, w, bias, *norm.args[1:]))
    fused.meta.update(norm.meta)
    norm.replace_all_uses_with(fused)
    graph.erase_node(norm)
    for node in (*views, mm):
        graph.erase_node(node)
    return True


def fuse_linear_norms(graph: Any) -> int:
    """Rewrite `graph` (Inductor's post-grad FX graph) in place: each `mtia_xdsl::layer_norm` / `rms_norm` whose
    input is an addmm or mm (through views) with no other user becomes `mtia_xdsl::linear_layer_norm` /
    `linear_rms_norm` (see the module docstring). Returns the number of norms fused."""
    norms = [n for n in graph.nodes if n.op == "call_function" and n.target in _NORMS]
    fused = sum(_fuse(graph, norm) for norm in norms)
    if fused:
        graph.lint()
    return fused

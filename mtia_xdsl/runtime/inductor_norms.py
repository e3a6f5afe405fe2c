"""LayerNorm and RMSNorm (forward) as Triton templates of mtia_xdsl, written for MTIA's engines (issue 18).

Stock Inductor lowers `aten.native_layer_norm` and `aten._fused_rms_norm` into generic reduction kernels and puts
the activation that follows into the same or another kernel by its own heuristics. While our backend is active
and `inductor_config.norm_templates` is on, the decompositions `layer_norm` and `rms_norm` (installed by
`mtia_xdsl.runtime.inductor.install()`) turn the cases `unsupported_layer_norm` / `unsupported_rms_norm` accept
into the custom ops `mtia_xdsl::layer_norm` and `mtia_xdsl::rms_norm` on the rows [M, N] of the input. Each op's
Inductor lowering is a `TritonTemplate` (torch._inductor.select_algorithm): one program normalises BLOCK_M whole
rows (BLOCK_N = next_power_of_2(N)) -- a [BLOCK_M, BLOCK_N] row block loaded with a box mask (one DMA), the
row sums on the RE (`tl.sum` along axis 1), the normalisation elementwise on the SE, in f32 -- and stores through
Inductor's `store_output`, so the scheduler fuses the pointwise ops that follow (GELU, SiLU, ReLU, a residual
add, a scale, a cast) into the template as an epilogue, as it does for its matmul templates. The BLOCK_M
choices (`block_m_choices`: those whose tiles fit a PE's LS) are picked by `autotune_select_algorithm`, which
mtia_xdsl's hooks make time by simulated MTIA time.

The statistics (mean and rstd, [M] f32) are extra outputs written by the kernel into buffers passed as mutated
inputs (`mutated_inputs`, Inductor's way for a template with several outputs, as flex_attention's logsumexp):
the template's own output stays its only epilogue-fusable one. When the graph reads neither statistic (inference),
the lowering leaves them out of the kernel altogether (`STORE_STATS=False`).

Outside Inductor (eager, or an FX-cache replay) the ops run ATen's reference math on the host.

This module imports torch and Inductor when loaded: import it only once Inductor has loaded (see
`mtia_xdsl.runtime.inductor.HOOK_AFTER`).
"""

# Inductor's lowering helpers and torch.library's decorators are untyped or partially typed:
# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import functools
import operator
from typing import Any

import torch
from torch._inductor import ir
from torch._inductor.lowering import empty_strided, register_lowering
from torch._inductor.runtime.runtime_utils import next_power_of_2
from torch._inductor.select_algorithm import SymbolicGridFn, TritonTemplate, autotune_select_algorithm
from torch._inductor.virtualized import V

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
"""Element types the templates take (the math is f32 for all; the output is stored in x's dtype)."""
LIVE_TILES = {"layer_norm": 7, "rms_norm": 6, "linear_layer_norm": 8, "linear_rms_norm": 7}
"""[BLOCK_M, BLOCK_N] tiles live at once in a program, each counted at 4 bytes (f32) per element: the loaded row
block, its f32 copy, (LayerNorm: the centred rows,) the normalised rows, the rows after weight and bias, and two
tiles for a fused epilogue (an operand such as a residual, and an intermediate: `gelu(y) + r * y` took 6 tiles plus
a scalar, 4 bytes over a PE's LS at one fewer); the `inductor_linear_norms` kinds one more, the matmul's
accumulator. The LS budget of `block_m_choices`."""
MAX_BLOCK_M = 32
"""Most rows per program offered: more rows amortise each DMA's fixed cost, fewer give more programs for the
64 PEs; the choice between is the simulated time's."""


def block_m_choices(kind: str, m: int, n: int, ls_bytes: int | None = None, block_k: int = 0) -> list[int]:
    """BLOCK_M values (rows per program, powers of two from 1 to min(MAX_BLOCK_M, next_power_of_2(m))) whose
    LIVE_TILES[kind] tiles of [BLOCK_M, next_power_of_2(n)] f32 elements fit `ls_bytes` (default: a PE's LS,
    `MachineConfig.ls_bytes` of `inductor.device_machine_config()`, 384 KiB on MTIA-2i, S1/S6), with, when
    `block_k` > 0 (a fused matmul's K step), the K blocks [BLOCK_M, block_k] and [block_k, next_power_of_2(n)]
    too. Empty when not even one row fits: the one home of the templates' LS arithmetic.
    """
    from mtia_xdsl.runtime.inductor_torch import device_machine_config

    budget: int = device_machine_config().ls_bytes if ls_bytes is None else ls_bytes
    row_bytes = (LIVE_TILES[kind] * next_power_of_2(n) + block_k) * 4
    fixed = block_k * next_power_of_2(n) * 4
    top = min(MAX_BLOCK_M, next_power_of_2(max(m, 1)))
    return [1 << i for i in range(top.bit_length()) if (1 << i) * row_bytes + fixed <= budget]


def _unsupported(kind: str, x: torch.Tensor, normalized_shape: Any, params: tuple[Any, ...]) -> str | None:
    """The rule shared by `unsupported_layer_norm` and `unsupported_rms_norm` (`params`: weight, bias or weight)."""
    if any(isinstance(d, torch.SymInt) for d in (*x.shape, *normalized_shape)):
        return "symbolic sizes (dynamic shapes: the template's block sizes are compile-time)"
    if len(normalized_shape) != 1 or x.dim() < 1 or x.shape[-1] != normalized_shape[0]:
        return f"normalized_shape {list(normalized_shape)} of x {list(x.shape)} (the last dimension only)"
    if x.dtype not in DTYPES or any(p is not None and p.dtype not in DTYPES for p in params):
        dtypes = [x.dtype, *(p.dtype for p in params if p is not None)]
        return f"dtypes {', '.join(map(str, dtypes))} (f32, f16 or bf16)"
    n = x.shape[-1]
    if n == 0 or x.numel() == 0:
        return f"empty x {list(x.shape)}"
    if not block_m_choices(kind, 1, n):
        return f"rows of {n} (one row of {LIVE_TILES[kind]} f32 tiles does not fit a PE's LS)"
    return None


def unsupported_layer_norm(
    x: torch.Tensor, normalized_shape: Any, weight: torch.Tensor | None, bias: torch.Tensor | None
) -> str | None:
    """Why `aten.native_layer_norm(x, normalized_shape, weight, bias, eps)` cannot take the template, or None if it
    can: normalised over x's last dimension only, x, weight and bias f32, f16 or bf16, every size a plain int (not
    a SymInt of dynamic shapes), a row that fits a PE's LS (`block_m_choices`). The reason names the first
    condition that fails (benchmarks/inductor.py's coverage table prints it)."""
    return _unsupported("layer_norm", x, normalized_shape, (weight, bias))


def unsupported_rms_norm(x: torch.Tensor, normalized_shape: Any, weight: torch.Tensor | None) -> str | None:
    """Why `aten._fused_rms_norm(x, normalized_shape, weight, eps)` cannot take the template, or None if it can:
    the conditions of `unsupported_layer_norm`."""
    return _unsupported("rms_norm", x, normalized_shape, (weight,))


@torch.library.custom_op("mtia_xdsl::layer_norm", mutates_args=())
def layer_norm(
    x: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None, eps: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """LayerNorm of each row of x [M, N]: (y [M, N] of x's dtype, mean [M] f32, rstd [M] f32), y = (x - mean) *
    rstd * weight + bias, rstd = 1 / sqrt(var + eps) (biased variance). weight, bias: [N] or None. ATen's math on
    the host; under Inductor, the template of `_lower_layer_norm`."""
    xf = x.float()
    mean = xf.mean(dim=1)
    rstd = torch.rsqrt(xf.var(dim=1, unbiased=False) + eps)
    y = (xf - mean[:, None]) * rstd[:, None]
    if weight is not None:
        y = y * weight.float()
    if bias is not None:
        y = y + bias.float()
    return y.to(x.dtype), mean, rstd


@layer_norm.register_fake
def _(x: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None, eps: float) -> Any:
    stats = x.new_empty((x.shape[0],), dtype=torch.float32)
    return torch.empty_like(x, memory_format=torch.contiguous_format), stats, torch.empty_like(stats)


@torch.library.custom_op("mtia_xdsl::rms_norm", mutates_args=())
def rms_norm(x: torch.Tensor, weight: torch.Tensor | None, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """RMSNorm of each row of x [M, N]: (y [M, N] of x's dtype, rstd [M] f32), y = x * rstd * weight, rstd = 1 /
    sqrt(mean(x^2) + eps). weight: [N] or None. ATen's math on the host; under Inductor, the template of
    `_lower_rms_norm`."""
    xf = x.float()
    rstd = torch.rsqrt(xf.pow(2).mean(dim=1) + eps)
    y = xf * rstd[:, None]
    if weight is not None:
        y = y * weight.float()
    return y.to(x.dtype), rstd


@rms_norm.register_fake
def _(x: torch.Tensor, weight: torch.Tensor | None, eps: float) -> Any:
    return torch.empty_like(x, memory_format=torch.contiguous_format), x.new_empty((x.shape[0],), dtype=torch.float32)


@SymbolicGridFn
def _rows_grid(m: Any, n: Any, meta: dict[str, Any], *, cdiv: Any) -> tuple[Any, int, int]:
    """One program per BLOCK_M rows."""
    return (cdiv(m, meta["BLOCK_M"]), 1, 1)


ROW_INDICES = r"""
    rows = tl.program_id(0).to(INDEX_DTYPE) * BLOCK_M + tl.arange(0, BLOCK_M).to(INDEX_DTYPE)
    cols = tl.arange(0, BLOCK_N).to(INDEX_DTYPE)
    idx_m = rows[:, None]
    idx_n = cols[None, :]
    col_ok = cols < N
    mask = (idx_m < M) & (idx_n < N)
"""
"""Template lines of every norm template (also `inductor_linear_norms`'): a program's BLOCK_M rows and BLOCK_N
columns of the [M, N] output, with their masks (M and N defined before)."""

_ROW_BLOCK = (
    r"""
    M = {{size("X", 0)}}
    N = {{size("X", 1)}}"""
    + ROW_INDICES
    + r"""    {{load_input("X", "x", ("idx_m", "idx_n"), mask="mask", other=0.0, index_shape=("BLOCK_M", "BLOCK_N"))}}
    x = x.to(tl.float32)
"""
)
"""Template lines shared by both norms: the [BLOCK_M, BLOCK_N] row block of x, one box-masked load (a DMA).
`load_input` lets Inductor fuse x's pointwise producer (a residual add, an embedding lookup) in as a prologue."""

_LAYER_NORM = (
    r"""
{{def_kernel(*(["X"] + (["W"] if HAS_WEIGHT else []) + (["B"] if HAS_BIAS else [])
                + (["Mean", "Rstd"] if STORE_STATS else [])))}}"""
    + _ROW_BLOCK
    + r"""
{% if HAS_WEIGHT %}
    w = tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
{% endif %}
{% if HAS_BIAS %}
    b = tl.load(B + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
{% endif %}
    mean = tl.sum(x, axis=1) / N
    xc = tl.where(mask, x - mean[:, None], 0.0)
    rstd = tl.rsqrt(tl.sum(xc * xc, axis=1) / N + EPS)
    y = xc * rstd[:, None]
{% if HAS_WEIGHT %}
    y = y * w
{% endif %}
{% if HAS_BIAS %}
    y = y + b
{% endif %}
{% if STORE_STATS %}
    tl.store(Mean + rows, mean, mask=rows < M)
    tl.store(Rstd + rows, rstd, mask=rows < M)
{% endif %}
    {{store_output(("idx_m", "idx_n"), "y", "mask", val_shape=("BLOCK_M", "BLOCK_N"))}}
"""
)

_RMS_NORM = (
    r"""
{{def_kernel(*(["X"] + (["W"] if HAS_WEIGHT else []) + (["Rstd"] if STORE_STATS else [])))}}"""
    + _ROW_BLOCK
    + r"""
{% if HAS_WEIGHT %}
    w = tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
{% endif %}
    rstd = tl.rsqrt(tl.sum(x * x, axis=1) / N + EPS)
    y = x * rstd[:, None]
{% if HAS_WEIGHT %}
    y = y * w
{% endif %}
{% if STORE_STATS %}
    tl.store(Rstd + rows, rstd, mask=rows < M)
{% endif %}
    {{store_output(("idx_m", "idx_n"), "y", "mask", val_shape=("BLOCK_M", "BLOCK_N"))}}
"""
)


@functools.cache
def _template(kind: str) -> TritonTemplate:
    """The TritonTemplate of `kind` ("layer_norm" or "rms_norm"), created once (Inductor's names are global)."""
    source = _LAYER_NORM if kind == "layer_norm" else _RMS_NORM
    return TritonTemplate(name=f"mtia_xdsl_{kind}", grid=_rows_grid, source=source)


def _stats_read(indices: tuple[int, ...]) -> bool:
    """Whether the FX graph being lowered reads any of the op's outputs `indices` (its statistics): not in an
    inference graph, where only y is used."""
    node = V.graph.current_node
    return any(user.target is not operator.getitem or user.args[1] in indices for user in node.users)


def _contiguous(node: Any) -> Any:
    """`node` realized as a buffer with contiguous strides (copied if it is not): the template indexes rows at
    stride N and columns at stride 1."""
    return ir.ExternKernel.require_contiguous(ir.ExternKernel.realize_input(node))


def _gathers(x: Any) -> bool:
    """Whether x is a pointwise computation not yet written (a prologue to be) reading some operand other than
    contiguously (an embedding lookup, a transposed view). In the template such a read is indexed by the flat
    `xindex` and became scalar gathers (no_grad embedding_ln 4.12 simulated us where Inductor's reduction kernel,
    which reads it by rows, takes 1.11); as a kernel of its own it is one more launch (3.16 us)."""
    from torch._inductor.dependencies import extract_read_writes

    data = x.data if isinstance(x, ir.TensorBox) else x
    while isinstance(data, ir.BaseView):
        data = data.data
    if not isinstance(data, ir.StorageBox) or not isinstance(data.data, ir.Pointwise):  # written already, or no loop
        return False
    reads = extract_read_writes(x.make_loader(), x.get_size()).reads
    return not all(_by_rows(dep) for dep in reads)


def _by_rows(dep: Any) -> bool:
    """Whether a prologue's read `dep` (Inductor's MemoryDep over the [M, N] loop of x) is read along x's rows: no
    indirect index (an embedding lookup), affine in the row and column variables (not a permuted view), the column
    at stride 1 or 0 (a transposed view has it at another)."""
    index = getattr(dep, "index", None)
    names = list(getattr(dep, "var_names", ()))
    if index is None or not names or not index.free_symbols <= set(names):
        return False
    index = V.graph.sizevars.simplify_with_ranges(index, dep.ranges)  # joins a reshape's (d // 3, d % 3) again
    coeffs = [index.coeff(name) for name in names]
    if any((index - c * name).has(name) for c, name in zip(coeffs, names, strict=True)):
        return False  # rows or columns permuted (a transpose): the template's flat xindex makes that a gather
    return coeffs[-1] in (0, 1)


def _shared_prologue(x: Any) -> bool:
    """Whether x is a pointwise computation not yet written (a prologue to be) that the graph also outputs: in a
    graph traced with grad, the backward saves the norm's input, most often a residual add's result. A template
    writes only its own output, so such a producer becomes a kernel of its own, where Inductor's reduction kernel
    computes it, writes it and normalises it in one launch (with grad, benchmarks/inductor.py's embedding_ln took
    1.71 -> 3.91 simulated us with the template, bert_layer 6.90 -> 10.49, mlp_mixer 4.15 -> 5.56)."""
    data: Any = x.data if isinstance(x, ir.TensorBox) else x
    while isinstance(data, ir.BaseView):
        data = data.data
    loop: Any = data.data if isinstance(data, ir.StorageBox) else None
    if isinstance(loop, ir.ComputedBuffer):  # realized already (it has several users), still a fusable loop
        loop = loop.data
    if not isinstance(loop, ir.Pointwise):  # a graph input, a template's or a library call's result
        return False
    current: Any = V.graph.current_node  # None outside an FX node's lowering
    node = current.args[0] if current is not None else None
    while isinstance(node, torch.fx.Node) and node.target in _VIEWS and len(node.users) == 1:
        node = node.args[0]
    return not isinstance(node, torch.fx.Node) or any(user.op == "output" for user in node.users)


_VIEWS = (torch.ops.aten.view.default, torch.ops.aten.reshape.default, torch.ops.aten._unsafe_view.default)
"""FX targets between a norm's input and its producer (or its output and its consumers) that `_shared_prologue`
and `_permuted_consumer` look through."""
_PERMUTES = (torch.ops.aten.permute.default, torch.ops.aten.transpose.int, torch.ops.aten.t.default)


def _permuted_consumer() -> bool:
    """Whether the norm's output y is read through a permutation (MLP-Mixer's token mixing transposes it): that
    consumer cannot be the template's epilogue, and as a kernel of its own it reads the template's y across rows,
    where Inductor's kernel recomputes it from the statistics (mlp_mixer called with grad: 4.15 -> 5.18 simulated
    us with the template)."""
    node: Any = V.graph.current_node  # None outside an FX node's lowering
    if node is None:
        return False
    ys = [user for user in node.users if user.target is operator.getitem and user.args[1] == 0]
    while ys:
        user = ys.pop()
        for consumer in user.users:
            if consumer.target in _PERMUTES:
                return True
            if consumer.target in _VIEWS:
                ys.append(consumer)
    return False


def _stock(x: Any, params: dict[str, Any], eps: float, n_stats: int) -> tuple[Any, ...]:
    """The norm in Inductor's own IR (what its decomposition of the aten op lowers to): a reduction kernel that reads
    x's producer by rows. (y, *statistics [M] f32), as `_lower`'s."""
    from torch._inductor.lowering import lowerings

    aten, prims = torch.ops.aten, torch.ops.prims
    xf = lowerings[prims.convert_element_type.default](x, torch.float32)
    if n_stats == 2:
        var, mean = lowerings[aten.var_mean.correction](xf, [1], correction=0, keepdim=True)
        centred = lowerings[aten.sub.Tensor](xf, mean)
    else:
        mean = var = lowerings[aten.mean.dim](lowerings[aten.mul.Tensor](xf, xf), [1], True)
        centred = xf
    rstd = lowerings[aten.rsqrt.default](lowerings[aten.add.Tensor](var, eps))
    y = lowerings[aten.mul.Tensor](centred, rstd)
    if params.get("weight") is not None:
        y = lowerings[aten.mul.Tensor](y, params["weight"])
    if params.get("bias") is not None:
        y = lowerings[aten.add.Tensor](y, params["bias"])
    y = lowerings[prims.convert_element_type.default](y, x.get_dtype())
    m = x.get_size()[0]
    stats = [lowerings[aten.view.default](s, [m]) for s in (mean, rstd)[-n_stats:]]
    return (y, *stats)


def _lower(kind: str, x: Any, params: dict[str, Any], eps: float, n_stats: int) -> tuple[Any, ...]:
    """The template choices for `kind` on x [M, N] with `params` (name -> weight/bias node, None left out),
    picked by `autotune_select_algorithm`; returns (y, *statistics) as TensorBoxes ([M] f32 each). Inductor's own
    lowering (`_stock`) instead when x's producer would be a gathering prologue (`_gathers`), is also an output of
    the graph (`_shared_prologue`), or y is read through a permutation (`_permuted_consumer`)."""
    if _gathers(x) or _shared_prologue(x) or _permuted_consumer():
        return _stock(x, params, eps, n_stats)
    x = _contiguous(x)
    m, n = (V.graph.sizevars.guard_int(s) for s in x.get_size())
    inputs = [x] + [_contiguous(p) for p in params.values() if p is not None]
    stats = [empty_strided([m], None, dtype=torch.float32, device=x.get_device()) for _ in range(n_stats)]
    store_stats = _stats_read(tuple(range(1, n_stats + 1)))
    options: dict[str, Any] = {
        "BLOCK_N": next_power_of_2(n),
        "EPS": float(eps),
        "STORE_STATS": store_stats,
        **{f"HAS_{name.upper()}": params[name] is not None for name in params},
    }
    configs = [{"BLOCK_M": block_m, **options} for block_m in block_m_choices(kind, m, n)]
    y = autotune_template(_template(kind), configs, (m, n), inputs, stats if store_stats else [])
    return (y, *stats)


def autotune_template(
    template: TritonTemplate, configs: list[dict[str, Any]], shape: tuple[int, int], inputs: list[Any], stats: list[Any]
) -> Any:
    """The output y of `shape` [M, N] (contiguous, of the first input's device and dtype) of `template`, the best of
    its `configs` (template options, one choice each) by `autotune_select_algorithm`, which mtia_xdsl's hooks make
    time by simulated MTIA time. Kernel parameters: `inputs`, then `stats` (buffers the kernel writes, passed as
    `mutated_inputs`; [] when none). The one home of the norm templates' choice."""
    x, (m, n) = inputs[0], shape
    layout = ir.FixedLayout(x.get_device(), x.get_dtype(), [m, n], ir.FlexibleLayout.contiguous_strides([m, n]))
    kernel_inputs = inputs + stats
    choices: list[Any] = []
    for config in configs:
        template.maybe_append_choice(
            choices,
            input_nodes=kernel_inputs,
            layout=layout,
            mutated_inputs=stats or None,
            num_stages=1,
            num_warps=1,
            **config,
        )
    y, _ = autotune_select_algorithm(template.name, choices, kernel_inputs, layout)
    return y


@register_lowering(torch.ops.mtia_xdsl.layer_norm.default, type_promotion_kind=None)
def _lower_layer_norm(x: Any, weight: Any, bias: Any, eps: float) -> tuple[Any, ...]:
    """`mtia_xdsl::layer_norm` in Inductor: the LayerNorm template (y, mean, rstd)."""
    return _lower("layer_norm", x, {"weight": weight, "bias": bias}, eps, 2)


@register_lowering(torch.ops.mtia_xdsl.rms_norm.default, type_promotion_kind=None)
def _lower_rms_norm(x: Any, weight: Any, eps: float) -> tuple[Any, ...]:
    """`mtia_xdsl::rms_norm` in Inductor: the RMSNorm template (y, rstd)."""
    return _lower("rms_norm", x, {"weight": weight}, eps, 1)


def _torch_internal(path: str) -> Any:
    """`inductor_torch.torch_internal`: the torch internal `path` names (InductorHookError if torch lacks it)."""
    from mtia_xdsl.runtime.inductor_torch import torch_internal as lookup

    return lookup(path)


def is_norm_template(buffer: Any) -> bool:
    """Whether Inductor's template buffer `buffer` is one of this module's templates (its origins, the FX nodes it
    was lowered from, hold `mtia_xdsl::layer_norm` or `mtia_xdsl::rms_norm`)."""
    ops = (torch.ops.mtia_xdsl.layer_norm.default, torch.ops.mtia_xdsl.rms_norm.default)
    return any(getattr(origin, "target", None) in ops for origin in buffer.get_origins())


def take_templates() -> bool:
    """Whether mtia_xdsl's norm templates are taken: our backend active and `inductor_config.norm_templates` on.
    The one condition of every norm hook (these decompositions, `inductor_norm_backward`'s and
    `inductor_rms_norm_pattern`'s rewrite). In inference and training graphs alike; the lowering (`_lower`) still
    keeps Inductor's own for the inputs and consumers a template cannot fuse (`_gathers`, `_shared_prologue`,
    `_permuted_consumer`)."""
    from mtia_xdsl.runtime import inductor_config
    from mtia_xdsl.runtime.inductor_torch import mtia_active

    return bool(inductor_config.norm_templates) and mtia_active()


def decompose_layer_norm(
    x: torch.Tensor, normalized_shape: Any, weight: torch.Tensor | None, bias: torch.Tensor | None, eps: float
) -> Any:
    """`aten.native_layer_norm` in Inductor's decomposition table: `mtia_xdsl::layer_norm` on x's rows [M, N] when
    `take_templates()` and `unsupported_layer_norm` accepts, with aten's outputs (y of x's shape and dtype; mean
    and rstd of shape x.shape[:-1] + [1] in x's dtype, as aten's CPU kernel); otherwise Inductor's own
    decomposition (`torch._inductor.decomposition._native_layer_norm`, generic reduction kernels)."""
    if not take_templates() or unsupported_layer_norm(x, normalized_shape, weight, bias) is not None:
        return _torch_internal("torch._inductor.decomposition._native_layer_norm")(
            x, normalized_shape, weight, bias, eps
        )
    stats_shape = (*x.shape[:-1], 1)
    y, mean, rstd = layer_norm(x.reshape(-1, x.shape[-1]), weight, bias, eps)
    return y.view(x.shape), mean.view(stats_shape).to(x.dtype), rstd.view(stats_shape).to(x.dtype)


def decompose_rms_norm(x: torch.Tensor, normalized_shape: Any, weight: torch.Tensor | None, eps: float | None) -> Any:
    """`aten._fused_rms_norm` in Inductor's decomposition table: `mtia_xdsl::rms_norm` on x's rows [M, N] when
    `take_templates()` and `unsupported_rms_norm` accepts, with aten's outputs (y of x's shape and dtype; rstd of
    shape x.shape[:-1] + [1] in f32; eps None is f32's machine epsilon, as aten's); otherwise torch's own
    decomposition (`torch._decomp.decompositions._fused_rms_norm`).

    On "cpu", `F.rms_norm` and `nn.RMSNorm` (torch 2.13) do not reach `aten._fused_rms_norm`: their
    CompositeImplicit kernel writes pow, mean, rsqrt and mul, which `inductor_rms_norm_pattern` rewrites into
    `mtia_xdsl::rms_norm`."""
    if not take_templates() or unsupported_rms_norm(x, normalized_shape, weight) is not None:
        return _torch_internal("torch._decomp.decompositions._fused_rms_norm")(x, normalized_shape, weight, eps)
    y, rstd = rms_norm(x.reshape(-1, x.shape[-1]), weight, torch.finfo(torch.float32).eps if eps is None else eps)
    return y.view(x.shape), rstd.view(*x.shape[:-1], 1)

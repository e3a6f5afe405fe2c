"""Hand-written RMSNorm as mtia_xdsl's RMSNorm template: the joint-graph pass `fuse_rms_norms`.

LLM code writes RMSNorm out by hand (Llama; benchmarks/inductor.py's `LlamaBlock`):

    x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight

or, as Hugging Face's `LlamaRMSNorm`, in f32 for a half-precision x:

    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    weight * h.to(x.dtype)

On device "cpu" (where Inductor's Triton path for our backend runs) `nn.RMSNorm` and `F.rms_norm` are the same
graph: ATen's `rms_norm` is a composite there (`aten._fused_rms_norm` is CompositeImplicitAutograd on CPU, so it
is decomposed before autograd and no decomposition of it is ever called), which writes the second form (weight on
the right, `add.Scalar` for the eps, the mean's dimension as a positive index). Stock Inductor lowers all of them
into generic reduction kernels. `fuse_rms_norms` (Inductor's joint-graph custom post pass while our backend is
active, see `mtia_xdsl.runtime.inductor`) rewrites the normalisation, `x * rsqrt(mean(x^2, -1) + eps)` with its
optional casts, into `mtia_xdsl::rms_norm(x.reshape(-1, N), None, eps)` (`inductor_norms.rms_norm`, a Triton
template whose epilogue takes the pointwise ops that follow): the weight multiply stays as written, after the
normalisation and its cast, and is such an epilogue. So the rewrite keeps the user's rounding (Hugging Face's
weight multiply in x's dtype, after the cast); a form without the casts in half precision is computed in f32 by
the template, as stock Inductor computes it, and rounded once.

The patterns are Inductor's `register_replacement`, traced from `_search_fn`'s forms and matched exactly
(re-traced with the candidate's shapes and dtypes, every literal compared), so the reduction is provably a mean of
the square over the last dimension with keepdim, plus a scalar eps; a mean over another dimension, a sum, a
tensor eps or a missing rsqrt is not matched, and the graph is left as it is. `_rewritable` then requires
mtia_xdsl's backend active, `inductor_config.norm_templates` on and a case `inductor_norms.unsupported_rms_norm`
accepts (f32, f16 or bf16, static sizes, a row that fits a PE's LS). The replacement calls the custom op itself:
`aten._fused_rms_norm` would be decomposed back into the matched graph on CPU while the replacement is traced.

Training: each form has three patterns (`TRACES`), tried in this order.
- Joint: its forward and backward traced together with x requiring grad (`joint_fwd_bwd`), replaced by
  `_RmsNormFunction`: the template forward, and as backward `aten._fused_rms_norm_backward(grad, x, [N], rstd,
  None)` of the template's rstd, which Inductor's decompositions turn into kernels (mtia_xdsl's backward template
  where `inductor_norm_backward` takes it). It matches only where x is read by the norm alone: autograd adds the
  gradients of x's readers term by term, so a residual's term sits inside the norm's sum.
- Forward: the normalisation alone (inference graphs, and training graphs where x does not require grad: the
  backward then reads only the normalised output, for the weight's gradient). Inductor's matcher refuses a match
  whose inner nodes have users outside it, so where the backward reads the rsqrt this pattern does not match.
- Forward with what the backward reads: the rsqrt (and the upcast forms' f32 x) as outputs too, replaced by the
  template and its rstd (in the rsqrt's dtype) (and x cast to f32); the stock backward reads those. This is the
  residual stream of a Llama block.
The weight's gradient (`sum(grad * y)`) stays as written in all three, reading the template's output.

Imports torch when loaded: import it only once Inductor has loaded.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import torch
from torch._inductor.fx_utils import FakeTensorUpdater
from torch._inductor.pattern_matcher import (
    Match,
    PatternMatcherPass,
    fwd_only,
    init_once_fakemode,
    joint_fwd_bwd,
    register_replacement,
    stable_topological_sort,
)

from mtia_xdsl.runtime.inductor_patterns import JOINT, traces_now

EPS_MARKER = 0.0001220703125
"""The eps the patterns are traced with (2^-13), to find it again in the traced graph (Inductor's
`scalar_workaround`); any eps a model uses is then matched and passed on."""

_aten = torch.ops.aten


FORMS = ((False, False), (True, False), (True, True))
"""The spellings matched, as (positive_dim, scalar_add): `mean(-1)` and `+ eps` (Llama's, Hugging Face's), the
mean's dimension written as a positive index (`mean(x.dim() - 1)`), and ATen's CPU composite `rms_norm`
(`nn.RMSNorm`, `F.rms_norm`: a positive dimension, `add.Scalar` for the eps)."""


def _search_fn(positive_dim: bool, scalar_add: bool, upcast: bool, stats: bool) -> Any:
    """The normalisation of hand-written RMSNorm, `x * rsqrt(mean(x^2, -1, keepdim) + eps)` (x [..., N]), in the
    spelling (`FORMS`) `positive_dim`, `scalar_add`; if `upcast`, in f32 and cast back to x's dtype (Hugging Face's
    `LlamaRMSNorm`, ATen's composite for a half-precision x). Returns the normalised x, and if `stats` also the
    values a backward reads: the rsqrt (and for `upcast` x in f32)."""

    def search(x: torch.Tensor, eps: float) -> Any:
        h = x.to(torch.float32) if upcast else x
        mean = h.pow(2).mean(h.dim() - 1 if positive_dim else -1, keepdim=True)
        rstd = torch.rsqrt(_aten.add.Scalar(mean, eps) if scalar_add else mean + eps)
        y = h * rstd
        y = y.to(x.dtype) if upcast else y
        if not stats:
            return y
        return (y, rstd, h) if upcast else (y, rstd)

    search.__name__ = f"rms_norm_{int(positive_dim)}{int(scalar_add)}{int(upcast)}{int(stats)}"
    return search


class _RmsNormFunction(torch.autograd.Function):
    """The replacement's autograd: forward `mtia_xdsl::rms_norm` of x's rows, backward ATen's RMSNorm backward
    (`aten._fused_rms_norm_backward`) of its rstd. x: [..., N]; returns [..., N] of x's dtype."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, eps: float) -> torch.Tensor:
        n = x.shape[-1]
        y, rstd = torch.ops.mtia_xdsl.rms_norm(x.reshape(-1, n), None, eps)
        ctx.save_for_backward(x, rstd.view(*x.shape[:-1], 1))
        return y.view(x.shape)

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> tuple[torch.Tensor, None]:
        x, rstd = ctx.saved_tensors
        grad_x, _ = _aten._fused_rms_norm_backward(grads[0], x, [x.shape[-1]], rstd, None, [True, False])
        return grad_x, None


def _rms_norm_template(x: torch.Tensor, eps: float) -> torch.Tensor:
    """What a matched form (its output only) is replaced by: `_RmsNormFunction` of x in x's own dtype (the template
    computes in f32 and rounds once, as the upcast forms do)."""
    function: Any = _RmsNormFunction  # torch's `Function.apply` is typed (...) -> Unknown
    return function.apply(x, eps)


def _rms_norm_template_stats(x: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """What a matched form with its rsqrt (`_search_fn`'s `stats`, no upcast) is replaced by: the template's y, and
    its rstd [..., 1] in x's dtype for the backward that read the rsqrt."""
    y, rstd = torch.ops.mtia_xdsl.rms_norm(x.reshape(-1, x.shape[-1]), None, eps)
    return y.view(x.shape), rstd.view(*x.shape[:-1], 1).to(x.dtype)


def _rms_norm_template_stats_upcast(x: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`_rms_norm_template_stats` for an upcast form: y, rstd [..., 1] in f32 and x in f32 (what its backward
    reads)."""
    y, rstd = torch.ops.mtia_xdsl.rms_norm(x.reshape(-1, x.shape[-1]), None, eps)
    return y.view(x.shape), rstd.view(*x.shape[:-1], 1), x.to(torch.float32)


def _rewritable(match: Match) -> bool:
    """Whether a matched form (exact, with the candidate's shapes and literals) becomes the template: eps a finite
    number, our backend active, `inductor_config.norm_templates` on and `inductor_norms.unsupported_rms_norm`
    accepting x (normalised over its last dimension, no weight: the weight multiply stays as written)."""
    eps = match.kwargs.get("eps")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(eps):
        return False
    x = match.kwargs["x"].meta.get("val")
    if not isinstance(x, torch.Tensor) or x.dim() < 1:
        return False
    from mtia_xdsl.runtime import inductor_norms  # its rule read when called (benchmarks/inductor.py records it)

    return enabled() and inductor_norms.unsupported_rms_norm(x, [x.shape[-1]], None) is None


def enabled() -> bool:
    """Whether `fuse_rms_norms` rewrites: `inductor_norms.take_templates()`."""
    from mtia_xdsl.runtime.inductor_norms import take_templates

    return take_templates()


def _example_inputs(dtype: torch.dtype) -> list[Any]:
    """x [2, 4, 16] of `dtype` requiring grad and the eps marker, to trace a pattern with (the first match ignores
    sizes and lists, the exact one is traced with the candidate's)."""
    return [torch.empty(2, 4, 16, dtype=dtype, requires_grad=True), EPS_MARKER]


TRACES = (JOINT, "forward", "forward_stats")
"""The patterns of each form, tried in this order: its forward and backward traced together (`joint_fwd_bwd`, x
requiring grad), its forward alone, and its forward with the values a backward reads as outputs."""


def _variants(traces: tuple[str, ...]) -> list[tuple[Any, Any, torch.dtype, Any]]:
    """(search function, replacement, example dtype, trace function) of every pattern of `traces` (of TRACES):
    each form of FORMS plain (f32) and upcast (bf16: the casts are in the graph only for a half-precision x; the
    exact match is traced in the candidate's dtype)."""
    variants: list[tuple[Any, Any, torch.dtype, Any]] = []
    for (positive_dim, scalar_add), upcast, trace in itertools.product(FORMS, (False, True), traces):
        dtype = torch.bfloat16 if upcast else torch.float32
        stats = trace == "forward_stats"
        search = _search_fn(positive_dim, scalar_add, upcast, stats)
        replace = (_rms_norm_template_stats_upcast if upcast else _rms_norm_template_stats) if stats else None
        variants.append((search, replace or _rms_norm_template, dtype, joint_fwd_bwd if trace == JOINT else fwd_only))
    return variants


@functools.cache
def rms_norm_patterns(traces: tuple[str, ...] = TRACES) -> PatternMatcherPass:
    """The pattern pass of `fuse_rms_norms` (its patterns traced once per process, in a fake mode); `traces`
    (default TRACES) chooses which of them (`inductor_patterns.traces_now`: no joint one under inference mode)."""
    patterns = PatternMatcherPass(pass_name="mtia_xdsl_rms_norm")
    pass_dicts: Any = patterns  # torch's `_PassDictsType` protocol calls `__getitem__`'s parameter `k`, the pass `item`

    @init_once_fakemode
    def register() -> None:
        for search_fn, replace_fn, dtype, trace in _variants(traces):
            register_replacement(
                search_fn, replace_fn, _example_inputs(dtype), trace, pass_dicts,
                extra_check=_rewritable, scalar_workaround={"eps": EPS_MARKER}, skip_duplicates=True,
            )  # fmt: skip

    register()
    return patterns


_SIGNS = (_aten.rsqrt.default, _aten.mean.dim, _aten.pow.Tensor_Scalar)
"""Ops every graph of a matched form holds: a graph without one of them is left alone before the patterns are
traced (most models' graphs)."""


def fuse_rms_norms(graph: torch.fx.Graph) -> int:
    """Rewrite each hand-written RMSNorm normalisation of `graph` (a joint or forward graph, before partitioning)
    that `_rewritable` accepts into mtia_xdsl's RMSNorm template; returns how many were rewritten. Does nothing
    unless `enabled()`."""
    targets = {node.target for node in graph.nodes}
    if not all(sign in targets for sign in _SIGNS) or not enabled():
        return 0
    gm = graph.owning_module
    updater = FakeTensorUpdater(gm) if gm is not None else None
    count = rms_norm_patterns(traces_now(TRACES)).apply(graph)  # inference mode: a pass of its own
    if count:
        stable_topological_sort(graph)  # a joint pattern's replacement sits before the gradient it reads
        if updater is not None:
            updater.incremental_update()
    return count

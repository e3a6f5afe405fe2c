"""Hand-written causal attention as SDPA: the joint-graph pass `fuse_causal_attention`.

GPT-2 style code writes causal attention out by hand (benchmarks/inductor.py's `CausalSelfAttention`):

    att = (q @ k.transpose(-2, -1)) * scale
    mask = torch.ones(t, t, dtype=torch.bool).tril()
    y = att.masked_fill(~mask, float("-inf")).softmax(dim=-1) @ v

Inductor's own attention patterns (torch/_inductor/fx_passes/fuse_attention.py, `_sfdp_pattern_*`) turn the
unmasked `softmax(q @ k^T * scale) @ v` into SDPA, but none matches this mask, so on MTIA it ran as about eight
launches (layout copies of q, k and v, a bmm template, the mask, the masked softmax, a second bmm).
`fuse_causal_attention` (Inductor's joint-graph custom post pass while our backend is active, see
`mtia_xdsl.runtime.inductor`) rewrites it into `aten.scaled_dot_product_attention(q, k, v, is_causal=True,
scale=scale)`, which Inductor's decompositions turn into mtia_xdsl's flash-attention kernel
(`inductor_attention.flash_attention`): one launch.

The patterns are Inductor's `register_replacement`: traced from `_causal_attention` with example inputs, then, on
each candidate, traced again with the candidate's own shapes, strides and dtypes and matched node for node, every
literal included, before `_rewritable` is asked. So the mask is provably `tril(ones(T, T))`, diagonal 0, T the
query's sequence length; `masked_fill` writes -inf; nothing (dropout) sits between the softmax and the second
matmul. A diagonal offset, a mask that is an input (a buffer), another fill value or a tensor scale is not
matched, and the graph is left as it is. `_rewritable` then requires the key's and value's sequence length equal
to the query's (so `tril` of the square is SDPA's top-left causal mask) and a case `inductor_attention.unsupported`
accepts.

Training: each pattern is registered twice, as a forward (inference graphs) and as a joint forward and backward
(`joint_fwd_bwd`, training graphs: the pattern's gradients of q, k and v are replaced by those of SDPA, autograd's
formula for `aten._scaled_dot_product_flash_attention_for_cpu`, whose outputs mtia_xdsl's kernel gives exactly).
In a training graph the forward-only pattern does not match: its softmax output has users outside it (the
backward), which Inductor's matcher refuses.
A model called with grad enabled is compiled as a joint graph even when only its forward runs (a model in eval
mode outside `torch.no_grad`, as benchmarks/inductor.py calls its inference models), so the joint patterns are
what most calls meet. The price is in a backward that does run: it is SDPA's, aten's CPU flash-attention
backward, a host call (as for every SDPA in a training step), where the written-out attention's backward ran on
MTIA as Triton kernels. Inductor's own attention patterns make the same trade for the unmasked form.

Imports torch when loaded: import it only once Inductor has loaded.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import torch
from torch._inductor.decomposition import select_decomp_table
from torch._inductor.fx_passes.joint_graph import constant_fold_uniform_value
from torch._inductor.fx_utils import FakeTensorUpdater
from torch._inductor.pattern_matcher import (
    Match,
    PatternMatcherPass,
    fwd_only,
    init_once_fakemode,
    joint_fwd_bwd,
    register_replacement,
)

from mtia_xdsl.runtime.inductor_patterns import JOINT, traces_now

SCALE_MARKER = 0.0712890625
"""The scale the patterns are traced with, to find it again in the traced graph (Inductor's `scalar_workaround`:
a float literal is otherwise burnt into the pattern); any scale a model uses is then matched and passed on."""

_aten = torch.ops.aten


def _causal_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, scale: float) -> torch.Tensor:
    """The hand-written causal attention `fuse_causal_attention` matches (query [B, H, T, E], key and value
    [B, H, S, E]). The mask is [T, S], so that tracing it again for a candidate with S != T does not fail (a
    logged error) but matches, and `_rewritable` refuses it: only the [T, T] square is SDPA's causal mask."""
    mask = torch.ones(query.size(-2), key.size(-2), dtype=torch.bool, device=query.device).tril()
    att = torch.matmul(query, key.transpose(-2, -1)).mul(scale)
    return att.masked_fill(~mask, float("-inf")).softmax(dim=-1).matmul(value)


def _sdpa_causal(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, scale: float) -> torch.Tensor:
    """What `_causal_attention` is replaced by: SDPA, causal, with the same scale."""
    return _aten.scaled_dot_product_attention(query, key, value, dropout_p=0.0, is_causal=True, scale=scale)


def _rewritable(match: Match) -> bool:
    """Whether a matched `_causal_attention` (exact, with the candidate's own shapes and literals) becomes SDPA:
    the scale is a number, q, k and v have one sequence length and `inductor_attention.unsupported` accepts them
    (the pass runs only while our backend is active: `mtia_xdsl.runtime.inductor` sets it then)."""
    from mtia_xdsl.runtime import inductor_attention

    scale = match.kwargs.get("scale")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale):
        return False
    values = [match.kwargs[name].meta.get("val") for name in ("query", "key", "value")]
    if not all(isinstance(v, torch.Tensor) for v in values):
        return False
    query, key, value = values
    if query.dim() != 4 or not query.shape[-2] == key.shape[-2] == value.shape[-2]:
        return False
    return inductor_attention.unsupported(query, key, value, 0.0, None) is None


def _example_inputs(dtype: torch.dtype, layout: str, batch: int) -> list[Any]:
    """q, k, v [batch, 4, 8, 16] of `dtype` requiring grad, and the scale marker, to trace a pattern with.

    `layout` "contiguous", or "heads" (views [B, T, H, E].transpose(1, 2) of one [B, T, 3 * H * E] projection, as
    GPT-2's split): the matmuls' reshapes copy non-contiguous operands, so each layout traces its own graph."""
    if layout == "contiguous":
        tensors = [torch.empty(batch, 4, 8, 16, dtype=dtype, requires_grad=True) for _ in range(3)]
    else:
        strides = (8 * 3 * 64, 16, 3 * 64, 1)
        tensors = [torch.empty_strided((batch, 4, 8, 16), strides, dtype=dtype, requires_grad=True) for _ in range(3)]
    return [*tensors, SCALE_MARKER]


def _trace_forward(fn: Any, args: Any, *, get_decomp_fn: Any = select_decomp_table) -> torch.fx.GraphModule:
    """`fwd_only` (Inductor's trace of an inference pattern), then the joint-graph passes that ran on the graph
    before `fuse_causal_attention` sees it (`constant_fold_uniform_value`: -inf is a `full`, not a
    `scalar_tensor`)."""
    gm = fwd_only(fn, args, get_decomp_fn=get_decomp_fn)
    constant_fold_uniform_value(gm)
    return gm


def _trace_joint(fn: Any, args: Any, *, get_decomp_fn: Any = select_decomp_table) -> torch.fx.GraphModule:
    """`joint_fwd_bwd` (Inductor's trace of a training pattern), then the joint-graph passes as `_trace_forward`."""
    gm = joint_fwd_bwd(fn, args, get_decomp_fn=get_decomp_fn)
    constant_fold_uniform_value(gm)
    return gm


PATTERN_DTYPES = (torch.float32, torch.float16)
"""Dtypes the patterns are traced in: the half one (softmax's upcast to f32 and back) matches bf16 as well, since
the first match ignores dtypes and the exact one is traced in the candidate's."""


TRACES = (JOINT, "forward")
"""The patterns of each variant, tried in this order: traced forward and backward together (`_trace_joint`,
training graphs) and forward alone (`_trace_forward`, inference graphs)."""

_TRACE_FNS = {JOINT: _trace_joint, "forward": _trace_forward}


@functools.cache
def causal_attention_patterns(traces: tuple[str, ...] = TRACES) -> PatternMatcherPass:
    """The pattern pass of `fuse_causal_attention` (its patterns traced once per process, in a fake mode); `traces`
    (default TRACES) chooses which of them (`inductor_patterns.traces_now`: no joint one under inference mode)."""
    patterns = PatternMatcherPass(pass_name="mtia_xdsl_causal_attention")
    pass_dicts: Any = patterns  # torch's `_PassDictsType` protocol calls `__getitem__`'s parameter `k`, the pass `item`
    variants = itertools.product(PATTERN_DTYPES, ("contiguous", "heads"), (1, 2), traces)

    @init_once_fakemode
    def register() -> None:
        for dtype, layout, batch, trace in variants:
            register_replacement(
                _causal_attention, _sdpa_causal, _example_inputs(dtype, layout, batch), _TRACE_FNS[trace], pass_dicts,
                extra_check=_rewritable, scalar_workaround={"scale": SCALE_MARKER}, skip_duplicates=True,
            )  # fmt: skip

    register()
    return patterns


_SIGNS = (_aten.bitwise_not.default, _aten.amax.default, _aten.bmm.default)
"""Ops every graph of `_causal_attention` holds (the inverted mask, the softmax's max, the matmuls): a graph without
one of them is left alone before the patterns are traced (most models' graphs)."""


def fuse_causal_attention(graph: torch.fx.Graph) -> int:
    """Rewrite each hand-written causal attention of `graph` (a joint or forward graph, before partitioning) that
    `_rewritable` accepts into SDPA; returns how many were rewritten."""
    targets = {node.target for node in graph.nodes}
    if not all(sign in targets for sign in _SIGNS):
        return 0
    gm = graph.owning_module
    updater = FakeTensorUpdater(gm) if gm is not None else None
    count = causal_attention_patterns(traces_now(TRACES)).apply(graph)  # inference mode: a pass of its own
    if count and updater is not None:
        updater.incremental_update()
    return count

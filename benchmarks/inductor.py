"""torch.compile on MTIA: a suite of small models through Inductor's Triton CPU path on the machine model.

Every model is plain torch with random weights (nothing downloaded), compiled with
`torch._inductor.config.cpu_backend = "triton"`, so each Triton kernel Inductor generates is compiled by
mtia_xdsl and run on the MTIA-2i machine model. Per model the script prints:

  kernels    Triton kernels in Inductor's output code / compiled by mtia_xdsl / launched in the timed call
  correct    the compiled model's outputs (training steps: loss, gradients and updated weights) match eager
  DMA %      of the tensor loads and stores in the launched kernels, the share that are DMA commands (plain
             strided blocks, or indexed rows); the rest are gathers/scatters/atomics on the scalar core
  sim us     simulated MTIA time of one call: the sum of its kernel launches' simulated times (Report.time_us;
             the launch itself, < 1 us each per S1, MachineConfig.kernel_launch_cycles, is not included)
  roofline   sum of the launches' roofline bounds / sum of their cycles (Report.achieved_fraction, summed)
  host ops   calls Inductor left to host libraries (extern_kernels.*, aten fallbacks): not run on MTIA and
             not in `sim us`
  charged us `sim us` plus each host call of the timed call charged two host-link transfers
             (`host_charge_us`, see `--baseline-rev` below)
  stock us   the same model compiled again with Inductor's stock choices (`stock_choices()` of
             mtia_xdsl/runtime/inductor.py: autotuning by host wall-clock time, device properties of the
             host), matmuls and embedding bags still on MTIA, so every kernel is counted in both columns; the
             compiler (index forms, DMA) is the same in both runs
  x          stock us / sim us: how much less simulated time per call our choices take

`--baseline-rev [REV]` also runs the chosen models with the package of commit REV (default FILING_REV,
main when issue 14 was filed: host-timed choices, matmuls and embedding bags as host calls, no index
forms) in a subprocess alongside, and prints per model its simulated time per call (then us) next to
this tree's (now us) and the ratio, with the issue's 10x goal line for GOAL_MODELS. A host library call
costs nothing in `sim us`, but MTIA-2i cannot run ATen, so the table also prints both times `charged`: each
host call of the timed call plus two host-link transfers, its inputs (the model's weights excepted) to the
host and its outputs back (`mtia_xdsl.runtime.inductor_host_calls.host_charge_us`:
MachineConfig.host_link_latency_cycles each, and the bytes at MachineConfig.host_link_bytes_per_s; the host's
compute is not charged), and the ratio both ways.

A coverage table follows, in the spirit of Meta's public Inductor-MTIA coverage reports: every kernel that
did not compile or run, every load/store that is not DMA, every host call and every wrong model, counted by
cause. The hash column (of the kernels' sources / of the simulated times of every launch) shows whether
two runs chose the same kernels and times; `--check-determinism` runs every chosen model twice in one
process and says so.

`--norm-templates` runs, instead of the suite, the models with normalization layers (NORM_MODELS: GPT-2's block, a
DLRM-style MLP with LayerNorm, an LLM block with nn.RMSNorm, a training step with LayerNorm, and a LayerNorm the
templates cannot take) twice each: with mtia_xdsl's LayerNorm/RMSNorm templates (the default) and with Inductor's
stock lowering of the norms (`mtia_xdsl.runtime.inductor_config.patch(norm_templates=False)`), both with
mtia_xdsl's choices otherwise; the inference models under `torch.no_grad()` (the templates take graphs traced
without grad), the training step with grad. Per model it prints the norms and the norm+activation pairs of the
model's FX graph (`norm_activation_pairs`), correctness and host calls, the simulated us per call and the kernel
launches of the timed call both ways, the launches removed, whether the templates are never slower and remove at
least one launch per pair, and the norms that fell back to stock lowering with the reason their rule gave
(`_RULES`).

Runs against the mtia_xdsl on PYTHONPATH (the one in the checkout by default), so the same script measures
an older tree: `PYTHONPATH=/path/to/old/tree python benchmarks/inductor.py`.

Example: python3 benchmarks/inductor.py [--models gpt2_block,dlrm] [--markdown] [--check-determinism] [--no-stock]
         [--baseline-rev [REV]] [--norm-templates]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if not os.environ.get("PYTHONPATH"):  # else measure the tree PYTHONPATH names
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="mtia-inductor-bench-"))
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="mtia-inductor-bench-ind-"))

import torch
import torch._inductor.config as inductor_config
from torch import nn

import mtia_xdsl
from mtia_xdsl.runtime import toolchain

try:
    from mtia_xdsl.runtime.inductor import normalized_output_code, stock_choices
except ImportError:  # a tree from before mtia_xdsl's Inductor hooks (--baseline-rev): Inductor's own choices
    stock_choices = contextlib.nullcontext

    def normalized_output_code(code: str) -> str:
        """Return the code as it is (a tree without the hooks; its hashes are not compared across runs)."""
        return code


try:
    from mtia_xdsl.runtime.inductor_host_calls import HostCall, HostCalls, host_charge_us
except ImportError:  # a tree from before it (--baseline-rev): this checkout's module, which needs only torch
    _spec = importlib.util.spec_from_file_location(
        "inductor_host_calls", Path(__file__).resolve().parent.parent / "mtia_xdsl/runtime/inductor_host_calls.py"
    )
    assert _spec is not None and _spec.loader is not None
    _host_calls = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_host_calls)
    HostCall, HostCalls, host_charge_us = _host_calls.HostCall, _host_calls.HostCalls, _host_calls.host_charge_us
try:
    from mtia_xdsl.runtime import inductor_config as mtia_config
except ImportError:  # a tree from before issue 18's switch (--baseline-rev): no --norm-templates
    mtia_config = None
from mtia_xdsl.transforms import convert_tt_to_mtia
from mtia_xdsl.transforms.analysis.memory_access import analyze_function

inductor_config.cpu_backend = "triton"
inductor_config.compile_threads = 1  # compile in this process, where the recording hooks below live
inductor_config.force_disable_caches = True  # every run compiles and autotunes afresh
MM_CONFIGS = 6
"""GEMM template configurations autotuned per matmul (Inductor's first ones): keeps the suite's run short."""
inductor_config.test_configs.max_mm_configs = MM_CONFIGS

DMA_OPS = ("mtia.dma_load", "mtia.dma_store", "mtia.dma_gather_rows")
"""Buffer-level ops that move a tensor by DMA (plain strided block, or rows gathered by an index tile)."""
SCALAR_OPS = ("mtia.gather", "mtia.scatter", "mtia.atomic_rmw", "mtia.atomic_cas")
"""Buffer-level tensor accesses done element by element on the scalar core."""
FILING_REV = "63dec53"
"""The commit of main when issue 14 ("torch.compile on MTIA") was filed, the parent of the first commit
of the work on it (a8de6f8): its "today's choices" are `--baseline-rev`'s default. That tree has none of
mtia_xdsl's Inductor hooks (host wall-clock autotuning, host device properties, matmuls and embedding bags
as host library calls, which are not in `sim us`) nor the compiler's Inductor index forms."""
GOAL_MODELS = ("gpt2", "gpt2_block", "embedding_ln", "dlrm", "two_tower", "jagged_sum")
"""The issue's "GPT-2-style and embedding-heavy models" (goal: 10x less simulated time per call than the
choices of FILING_REV): the GPT-2 models and the ones whose input is embedding lookups or bags."""


# ----------------------------------------------------------------------------------------------------------
# Models (small configurations, random weights)
# ----------------------------------------------------------------------------------------------------------


class Mlp(nn.Sequential):
    def __init__(self, sizes: list[int], last_act: bool = False) -> None:
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(sizes, sizes[1:], strict=False)):
            layers.append(nn.Linear(a, b))
            if i < len(sizes) - 2 or last_act:
                layers.append(nn.ReLU())
        super().__init__(*layers)


class Dlrm(nn.Module):
    """DLRM: bottom MLP on dense features, sum-pooled embedding bags, pairwise dot interaction, top MLP."""

    def __init__(self, tables: int = 4, rows: int = 1000, dim: int = 16) -> None:
        super().__init__()
        self.bottom = Mlp([13, 32, dim], last_act=True)
        self.tables = nn.ModuleList(nn.EmbeddingBag(rows, dim, mode="sum") for _ in range(tables))
        n = tables + 1
        self.top = Mlp([n * (n - 1) // 2 + dim, 32, 1])

    def forward(self, dense: torch.Tensor, ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        x = self.bottom(dense)
        feats = [x] + [t(ids[i], offsets) for i, t in enumerate(self.tables)]
        z = torch.stack(feats, dim=1)
        inter = torch.bmm(z, z.transpose(1, 2))
        i, j = torch.tril_indices(z.shape[1], z.shape[1], offset=-1)
        return torch.sigmoid(self.top(torch.cat([x, inter[:, i, j]], dim=1)))


def dlrm_inputs(batch: int = 16, tables: int = 4, rows: int = 1000, bag: int = 3) -> tuple[torch.Tensor, ...]:
    return (
        torch.randn(batch, 13),
        torch.randint(0, rows, (tables, batch * bag)),
        torch.arange(0, batch * bag, bag),
    )


class TwoTower(nn.Module):
    """Two-tower retrieval: user and item towers over mean-pooled embeddings, normalised, dot-product score."""

    def __init__(self, rows: int = 2000, dim: int = 32) -> None:
        super().__init__()
        self.user_emb = nn.EmbeddingBag(rows, dim, mode="mean")
        self.item_emb = nn.EmbeddingBag(rows, dim, mode="mean")
        self.user = Mlp([dim, 64, dim])
        self.item = Mlp([dim, 64, dim])

    def forward(self, user_ids: torch.Tensor, item_ids: torch.Tensor) -> torch.Tensor:
        u = nn.functional.normalize(self.user(self.user_emb(user_ids)), dim=-1)
        v = nn.functional.normalize(self.item(self.item_emb(item_ids)), dim=-1)
        return (u * v).sum(-1)


class EmbeddingLayerNorm(nn.Module):
    """Token embedding plus position embedding, then LayerNorm (the input block of every LLM)."""

    def __init__(self, vocab: int = 1000, dim: int = 64, positions: int = 64) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(positions, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(ids.shape[-1])
        return self.norm(self.tok(ids) + self.pos(pos))


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / (c // self.heads) ** 0.5)
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        return self.proj(y)


class Gpt2Block(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.out(nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt2(nn.Module):
    """GPT-2 architecture from a small configuration (2 layers, 64 wide, 4 heads, vocabulary 512)."""

    def __init__(self, vocab: int = 512, dim: int = 64, heads: int = 4, layers: int = 2, positions: int = 64) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(positions, dim)
        self.blocks = nn.ModuleList(Gpt2Block(dim, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[-1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


class LlamaBlock(nn.Module):
    """A Llama-style decoder MLP half: RMSNorm then a SwiGLU feed-forward, residual."""

    def __init__(self, dim: int = 64, hidden: int = 172) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.rand(dim) + 0.5)
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


class BertLayer(nn.Module):
    """A BERT encoder layer (post-norm, bidirectional attention, exact GELU)."""

    def __init__(self, dim: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln1 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.ln2 = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.ln1(x + self.attn(x, x, x, need_weights=False)[0])
        return self.ln2(x + self.ff(x))


class MoeTopK(nn.Module):
    """Mixture of experts: softmax router, top-2 experts per token, weighted sum of expert MLPs (dense)."""

    def __init__(self, dim: int = 32, experts: int = 4) -> None:
        super().__init__()
        self.router = nn.Linear(dim, experts)
        self.experts = nn.ModuleList(Mlp([dim, 64, dim]) for _ in range(experts))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        probs = self.router(x).softmax(-1)
        top, idx = probs.topk(2, dim=-1)
        gates = torch.zeros_like(probs).scatter(-1, idx, top / top.sum(-1, keepdim=True))
        outs = torch.stack([e(x) for e in self.experts], dim=-1)
        return (outs * gates.unsqueeze(-2)).sum(-1)


class SmallCnn(nn.Module):
    """A small CNN: two conv + BatchNorm (eval) + ReLU stages, max pooling, global average pool, classifier."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        )  # fmt: skip
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x).mean((2, 3)))


class MlpMixer(nn.Module):
    """An MLP-Mixer block: token mixing on the transposed patches, then channel mixing, each pre-norm."""

    def __init__(self, patches: int = 16, dim: int = 32) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.tokens = Mlp([patches, 32, patches])
        self.ln2 = nn.LayerNorm(dim)
        self.channels = Mlp([dim, 64, dim])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.tokens(self.ln1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channels(self.ln2(x))


class JaggedSum(nn.Module):
    """Jagged (variable-length) features: per-row sums of a packed value array by offsets, then a tanh MLP."""

    def __init__(self, rows: int = 500, dim: int = 16) -> None:
        super().__init__()
        self.emb = nn.EmbeddingBag(rows, dim, mode="sum")
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.Tanh())

    def forward(self, ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.emb(ids, offsets))


class TrainStep(nn.Module):
    """One SGD training step of `model` on `loss_fn`: returns the loss; gradients and weights are compared."""

    def __init__(self, model: nn.Module, loss_fn: Callable[..., torch.Tensor], lr: float = 0.1) -> None:
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn
        self.lr = lr

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        *args, target = inputs
        loss = self.loss_fn(self.model(*args), target)
        loss.backward()
        with torch.no_grad():
            for p in self.model.parameters():
                p -= self.lr * p.grad
                p.grad = None
        return loss.detach()


def _randomize_norms(module: nn.Module) -> nn.Module:
    """Give every LayerNorm/RMSNorm of `module` random affine weights (ones and zeros would hide a kernel that
    drops them from the comparison with eager)."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.LayerNorm | nn.RMSNorm) and m.weight is not None:
                m.weight.uniform_(0.5, 1.5)
            if isinstance(m, nn.LayerNorm) and m.bias is not None:
                m.bias.uniform_(-0.5, 0.5)
    return module


class LayerNormMlp(nn.Sequential):
    """A DLRM bottom MLP with LayerNorm: per layer Linear -> LayerNorm -> ReLU, on 13 dense features."""

    def __init__(self, sizes: tuple[int, ...] = (13, 64, 32, 16)) -> None:
        layers: list[nn.Module] = []
        for a, b in zip(sizes, sizes[1:], strict=False):
            layers += [nn.Linear(a, b), nn.LayerNorm(b), nn.ReLU()]
        super().__init__(*layers)
        _randomize_norms(self)


class RmsNormBlock(nn.Module):
    """A Llama-style decoder MLP half with torch's nn.RMSNorm: RMSNorm, SwiGLU feed-forward (SiLU), residual.

    LlamaBlock writes the RMSNorm by hand, the form a pattern pass takes."""

    def __init__(self, dim: int = 64, hidden: int = 172) -> None:
        super().__init__()
        self.norm = nn.RMSNorm(dim, eps=1e-6)
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)
        _randomize_norms(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


@dataclass
class Case:
    """One model of the suite: a factory for the module and one for its inputs (the same seed each run)."""

    name: str
    kind: str
    make: Callable[[], nn.Module]
    inputs: Callable[[], tuple[torch.Tensor, ...]]
    training: bool = False


def _dlrm_train() -> nn.Module:
    return TrainStep(Dlrm(), lambda y, t: nn.functional.binary_cross_entropy(y.squeeze(-1), t))


def _mlp_train() -> nn.Module:
    return TrainStep(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8)), nn.functional.cross_entropy)


def _ln_train() -> nn.Module:
    model = nn.Sequential(nn.Linear(32, 64), nn.LayerNorm(64), nn.GELU(), nn.Linear(64, 8))
    return TrainStep(_randomize_norms(model), nn.functional.cross_entropy)


def _ln_two_dims() -> nn.Module:
    return _randomize_norms(nn.Sequential(nn.LayerNorm([8, 16]), nn.ReLU()))


CASES = [
    Case("dlrm", "recommendation", Dlrm, dlrm_inputs),
    Case("two_tower", "recommendation", TwoTower,
         lambda: (torch.randint(0, 2000, (16, 8)), torch.randint(0, 2000, (16, 8)))),
    Case("embedding_ln", "embedding", EmbeddingLayerNorm, lambda: (torch.randint(0, 1000, (4, 32)),)),
    Case("jagged_sum", "recommendation", JaggedSum,
         lambda: (torch.randint(0, 500, (40,)), torch.tensor([0, 3, 10, 11, 20, 28, 33, 39]))),
    Case("gpt2", "llm", Gpt2, lambda: (torch.randint(0, 512, (2, 32)),)),
    Case("gpt2_block", "llm", lambda: Gpt2Block(64, 4), lambda: (torch.randn(2, 32, 64),)),
    Case("llama_mlp", "llm", LlamaBlock, lambda: (torch.randn(2, 16, 64),)),
    Case("bert_layer", "llm", BertLayer, lambda: (torch.randn(2, 16, 64),)),
    Case("moe_top2", "llm", MoeTopK, lambda: (torch.randn(16, 32),)),
    Case("cnn", "vision", lambda: SmallCnn().eval(), lambda: (torch.randn(2, 3, 16, 16),)),
    Case("mlp_mixer", "vision", MlpMixer, lambda: (torch.randn(2, 16, 32),)),
    Case("dlrm_train", "training", _dlrm_train, lambda: (*dlrm_inputs(), torch.rand(16)), training=True),
    Case("mlp_train", "training", _mlp_train, lambda: (torch.randn(16, 32), torch.randint(0, 8, (16,))),
         training=True),
]  # fmt: skip

NORM_CASES = [
    Case("ln_mlp", "norm", LayerNormMlp, lambda: (torch.randn(16, 13),)),
    Case("rms_block", "norm", RmsNormBlock, lambda: (torch.randn(2, 16, 64),)),
    Case("ln_train", "norm", _ln_train, lambda: (torch.randn(16, 32), torch.randint(0, 8, (16,))), training=True),
    Case("ln_two_dims", "norm", _ln_two_dims, lambda: (torch.randn(4, 8, 16),)),
]  # fmt: skip
"""Models for `--norm-templates` beyond the suite's (not in the default run): a DLRM-style MLP with LayerNorm, an
LLM block with nn.RMSNorm, a training step with LayerNorm, and a norm the templates cannot take (its fallback)."""
NORM_MODELS = ("gpt2_block", "ln_mlp", "rms_block", "ln_train", "ln_two_dims")
"""The models `--norm-templates` runs by default: issue 18's transformer block, DLRM-style MLP with LayerNorm,
RMSNorm LLM block and training step, and a model whose norm falls back to stock lowering."""


# ----------------------------------------------------------------------------------------------------------
# Recording what mtia_xdsl compiles and runs
# ----------------------------------------------------------------------------------------------------------


@dataclass
class Recorder:
    """What the hooks below saw: compile failures, fallback reasons per kernel, and the launches' reports."""

    compiled: set[str] = field(default_factory=set)
    failures: list[tuple[str, str]] = field(default_factory=list)
    reasons: dict[str, list[str]] = field(default_factory=dict)
    launches: list[tuple[Any, Any]] | None = None  # (module, report) while the timed call runs
    extern_fallbacks: dict[str, int] = field(default_factory=dict)
    """Extern choices (by name) kept because none of their template choices compiled and ran: name ->
    the number of template choices tried (see `extern_as_fallback`)."""
    unsupported: dict[str, set[str]] = field(default_factory=dict)
    """Ops (as `str` of the aten op) the hooks left to the host, and why (the rules of `_RULES`)."""


REC = Recorder()


def _install_recording() -> None:
    from mtia_xdsl.runtime.triton_backend.compiler import kernel_name

    lower, run_kernel = toolchain.lower, toolchain.run_kernel
    convert = convert_tt_to_mtia.convert_memory_accesses

    def recording_lower(module: Any, options: Any) -> Any:
        name = kernel_name(module)
        try:
            out = lower(module, options)
        except Exception as exc:
            REC.failures.append((name, _cause(exc)))
            raise
        REC.compiled.add(name)
        return out

    def recording_convert(func: Any) -> None:
        info = analyze_function(func)
        name = func.sym_name.data
        REC.reasons[name] = sorted(info.fallback_reasons.get(op, "") for op in info.fallback_reasons
                                   if hasattr(op.ptr.type, "get_shape"))  # fmt: skip
        convert(func)

    def recording_run(module: Any, grid: Any, args: Any, options: Any) -> Any:
        result = run_kernel(module, grid, args, options)
        if REC.launches is not None:
            REC.launches.append((module, result.report))
        return result

    try:
        from mtia_xdsl.runtime import inductor as hooks
    except ImportError:  # a tree without the hooks (--baseline-rev)
        hooks = None
    if hooks is not None and hasattr(hooks, "extern_as_fallback"):
        fallback = hooks.extern_as_fallback

        def recording_fallback(timings: dict[Any, float], is_extern: Callable[[Any], bool]) -> dict[Any, float]:
            out = fallback(timings, is_extern)
            templates = [c for c in timings if not is_extern(c)]
            if templates and not any(out[c] < float("inf") for c in templates):
                for c in timings:
                    if is_extern(c):
                        REC.extern_fallbacks[c.name] = len(templates)
            return out

        hooks.extern_as_fallback = recording_fallback
    for module, rule, op in _RULES:
        if importlib.util.find_spec(f"mtia_xdsl.runtime.{module}") is not None:  # not in --baseline-rev trees
            _record_unsupported(module, rule, op)
    toolchain.lower = recording_lower
    toolchain.run_kernel = recording_run
    convert_tt_to_mtia.convert_memory_accesses = recording_convert


_RULES = [
    ("inductor_attention", "unsupported", "_scaled_dot_product_flash_attention_for_cpu"),
    ("inductor_kernels", "backward_unsupported", "_embedding_bag_backward"),
    ("inductor_topk", "unsupported", "topk"),
    ("inductor_norms", "unsupported_layer_norm", "native_layer_norm"),
    ("inductor_norms", "unsupported_rms_norm", "_fused_rms_norm"),
    ("inductor_norm_backward", "unsupported_layer_norm_backward", "native_layer_norm_backward"),
    ("inductor_norm_backward", "unsupported_rms_norm_backward", "_fused_rms_norm_backward"),
    ("inductor_linear_norms", "unsupported_linear_norm", "addmm"),  # a Linear left apart from the norm after it
]
"""(module of mtia_xdsl.runtime, its rule function, the aten op it decides on): the hooks that leave a case of
an op to the host say why through the rule, which the coverage table prints."""


def _record_unsupported(module_name: str, rule: str, op_name: str) -> None:
    """Record in REC.unsupported why a hook left a call of aten op `op_name` to the host (the coverage table's
    cause): wrap the rule `rule` of mtia_xdsl.runtime.`module_name`."""
    module = importlib.import_module(f"mtia_xdsl.runtime.{module_name}")
    unsupported = getattr(module, rule, None)
    if unsupported is None:  # a tree from before the rule (--baseline-rev, or PYTHONPATH naming an older tree)
        return
    op = str(getattr(torch.ops.aten, op_name).default)

    def recording_unsupported(*args: Any, **kwargs: Any) -> str | None:
        reason = unsupported(*args, **kwargs)
        if reason is not None:
            REC.unsupported.setdefault(op, set()).add(reason)
        return reason

    setattr(module, rule, recording_unsupported)


def _host_call_cause(op: str) -> str:
    """Why Inductor left `op` (a name in its output code) to a host library."""
    if op.startswith("extern_kernels."):
        tried = REC.extern_fallbacks.get(op.split(".", 1)[1])
        if tried is not None:
            return f"autotuning fallback, none of {tried} template choices compiled and ran"
        return "extern kernel with no template choice"
    reasons = REC.unsupported.get(op.removeprefix("torch.ops."))
    if reasons:
        return f"not taken by mtia_xdsl's kernel: {'; '.join(sorted(reasons))}"
    return "Inductor fallback kernel (no lowering to Triton)"


def _cause(exc: BaseException) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if "error:" in first:
        first = first.split("error:", 1)[1].strip()
    first = re.sub(r" at /\S+", "", first)  # the kernel's file: a fresh temporary path every run
    return f"{type(exc).__name__}: {first[:90]}"


def _kernel_time_row(name: str, report: Any) -> list[str]:
    busy = max(report.engine_busy_used.items(), key=lambda kv: kv[1], default=("-", 0.0))
    hot_lines = getattr(report, "hot_lines", None)  # not in trees before per-line cost
    hot = hot_lines[0] if hot_lines else None
    line = f"{hot.loc.rsplit('/', 1)[-1]} {'+'.join(hot.engines)} {hot.cycles:.0f} cyc" if hot else "-"
    return [
        name, f"{report.time_us:.2f}", f"{report.launch_us:.2f}", f"{report.programs}/{report.pes_used}",
        f"{busy[0]} {100 * busy[1]:.0f} %", f"{report.roofline_limiter} {100 * report.achieved_fraction:.1f} %", line,
    ]  # fmt: skip


def _op_counts(module: Any) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    for op in module.walk():
        if "mtia.outside_box" in op.attributes:
            continue  # the lanes of an element gather from a DMA box that fall outside it: the access is the box's DMA
        if op.name in DMA_OPS or op.name in SCALAR_OPS:
            counts[op.name] += 1
    return counts


# ----------------------------------------------------------------------------------------------------------
# Running one model
# ----------------------------------------------------------------------------------------------------------


@dataclass
class Result:
    name: str
    kind: str
    generated: int = 0
    compiled: int = 0
    launched: int = 0
    correct: bool = False
    dma: int = 0
    accesses: int = 0
    sim_us: float = 0.0
    bound_cycles: float = 0.0
    cycles: float = 0.0
    host_ops: collections.Counter[str] = field(default_factory=collections.Counter)
    host_calls: list[HostCall] = field(default_factory=list)
    """Per host library call of the timed call: (op, bytes of its inputs other than the model's weights,
    bytes of its outputs), the figures `host_charge_us` charges."""
    causes: collections.Counter[str] = field(default_factory=collections.Counter)
    kernel_causes: list[tuple[str, str]] = field(default_factory=list)
    kernel_times: list[list[str]] = field(default_factory=list)
    """Per launch of the timed call: kernel, sim us, launch us, programs/PEs, busiest engine, roofline
    limiter and its fraction, hottest source line (printed with --hot)."""
    """(kernel, reason) for every load/store that is not DMA (printed with --per-kernel)."""
    code: str = ""
    kernels_hash: str = ""
    """Hash of Inductor's output code (the kernels' sources and the calls), per-compile comments removed."""
    times_hash: str = ""
    """Hash of the simulated cycles of every launch of the timed call, in order."""
    error: str = ""
    wall_s: float = 0.0
    stock: Result | None = None
    """The same model under Inductor's stock choices (`stock_choices()`), when measured."""
    unsupported: dict[str, list[str]] = field(default_factory=dict)
    """Aten ops (as `str` of the op) a hook of `_RULES` did not take in this run, and why: left to the host,
    or (the norm templates) to Inductor's stock lowering."""


def _outputs(case: Case, module: nn.Module, out: Any) -> list[torch.Tensor]:
    tensors = list(out) if isinstance(out, tuple | list) else [out]
    if case.training:
        tensors += [p.detach().clone() for p in module.parameters()]
    return tensors


def run_case(case: Case, stock: bool = False) -> Result:
    """Compile and run `case`; with `stock`, under Inductor's stock choices (see `stock_choices`)."""
    if stock:
        with stock_choices():
            return run_case(case)
    from torch._inductor.utils import run_and_get_code

    res = Result(case.name, case.kind)
    start = time.time()
    torch._dynamo.reset()
    torch.manual_seed(0)
    eager_model = case.make()
    torch.manual_seed(0)
    compiled_model = case.make()
    compiled_model.load_state_dict(eager_model.state_dict())
    torch.manual_seed(1)
    inputs = case.inputs()
    REC.failures.clear()
    REC.compiled.clear()
    REC.reasons.clear()
    REC.extern_fallbacks.clear()
    REC.unsupported.clear()
    try:
        expected = _outputs(case, eager_model, eager_model(*inputs))
        compiled = torch.compile(compiled_model)
        out, codes = run_and_get_code(compiled, *inputs)
        got = _outputs(case, compiled_model, out)
        res.correct = len(got) == len(expected) and all(
            torch.allclose(g, e, rtol=1e-3, atol=1e-4) for g, e in zip(got, expected, strict=True)
        )
        code = normalized_output_code("\n".join(codes))
        res.code = code
        res.generated = code.count("@triton.jit")
        for word in code.split():
            for prefix in ("extern_kernels.", "torch.ops.aten.", "aten."):
                if word.startswith(prefix) and "(" in word:
                    res.host_ops[word.split("(")[0]] += 1
        REC.launches = []
        weights = {t.untyped_storage().data_ptr() for t in (*compiled_model.parameters(), *compiled_model.buffers())}
        with HostCalls(set(res.host_ops), weights) as host_calls:
            compiled(*inputs)
        res.host_calls = host_calls.calls
        launches, REC.launches = REC.launches, None
        res.unsupported = {op: sorted(reasons) for op, reasons in REC.unsupported.items()}
    except Exception as exc:
        REC.launches = None
        res.error = _cause(exc)
        res.causes[f"model failed: {res.error}"] += 1
        if os.environ.get("MTIA_BENCH_TRACEBACK"):
            traceback.print_exc()
        res.wall_s = time.time() - start
        return res
    res.compiled = len(REC.compiled)
    for name, cause in REC.failures:
        res.causes[f"kernel not compiled: {cause}"] += 1
    seen: set[int] = set()
    res.kernels_hash = hashlib.sha256(code.encode()).hexdigest()[:8]
    times = hashlib.sha256()
    from mtia_xdsl.runtime.triton_backend.compiler import kernel_name

    res.launched = len({kernel_name(m) for m, _ in launches})
    for module, report in launches:
        res.sim_us += float(report.time_us)
        res.bound_cycles += float(report.roofline_bound_cycles)
        res.cycles += float(report.total_cycles)
        res.kernel_times.append(_kernel_time_row(kernel_name(module), report))
        times.update(f"{report.total_cycles};".encode())
        if id(module) in seen:
            continue
        seen.add(id(module))
        counts = _op_counts(module)
        res.dma += sum(counts[o] for o in DMA_OPS)
        res.accesses += sum(counts.values())
        name = kernel_name(module)
        scalar = sum(counts[o] for o in SCALAR_OPS)
        reasons = [r for r in REC.reasons.get(name, []) if r]
        for o in ("mtia.atomic_rmw", "mtia.atomic_cas"):
            if counts[o]:
                res.causes["access not DMA: atomic read-modify-write (scalar core)"] += counts[o]
                scalar -= counts[o]
        for r in reasons[:scalar]:
            res.causes[f"access not DMA: {r}"] += 1
            res.kernel_causes.append((name, r))
        if scalar > len(reasons):
            res.causes["access not DMA: other"] += scalar - len(reasons)
    for op, n in res.host_ops.items():
        res.causes[f"host call (not on MTIA): {op}: {_host_call_cause(op)}"] += n
    if not res.correct:
        res.causes["wrong result"] += 1
    res.times_hash = times.hexdigest()[:8]
    res.wall_s = time.time() - start
    return res


# ----------------------------------------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------------------------------------


def _table(headers: list[str], rows: list[list[str]], markdown: bool) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths))
    return "\n".join([fmt.format(*headers), *(fmt.format(*r) for r in rows)])


def report(results: list[Result], markdown: bool) -> str:
    try:
        from mtia_xdsl.runtime.inductor import device_machine_config
    except ImportError:  # a tree from before it (--baseline-rev's subprocess, which prints no table anyone reads)
        machine = None
    else:
        machine = device_machine_config()  # the chip the driver targets, whose host link charges the host calls
    rows = []
    for r in results:
        rows.append([
            r.name, r.kind, f"{r.generated}/{r.compiled}/{r.launched}", "yes" if r.correct else "NO",
            f"{100 * r.dma / r.accesses:.0f} %" if r.accesses else "-", f"{r.sim_us:.2f}",
            f"{100 * r.bound_cycles / r.cycles:.1f} %" if r.cycles else "-",
            str(sum(r.host_ops.values())),
            f"{r.sim_us + host_charge_us(machine, r.host_calls):.2f}" if machine else "-",
            *_stock_cells(r), f"{r.kernels_hash}/{r.times_hash}",
        ])  # fmt: skip
    out = [_table(["model", "kind", "kernels gen/comp/run", "correct", "DMA %", "sim us", "roofline", "host ops",
                   "charged us", "stock us", "x", "kernels/times hash"], rows, markdown)]  # fmt: skip
    dma, acc = sum(r.dma for r in results), sum(r.accesses for r in results)
    correct = sum(r.correct for r in results)
    out.append("")
    out.append(
        f"suite: {len(results)} models, {correct} correct; kernels generated {sum(r.generated for r in results)}, "
        f"compiled {sum(r.compiled for r in results)}, launched {sum(r.launched for r in results)}; "
        f"DMA {dma}/{acc} loads+stores = {100 * dma / acc if acc else 0:.1f} %; "
        f"simulated {sum(r.sim_us for r in results):.2f} us per call of all models"
    )
    measured = [r for r in results if r.stock is not None and not r.stock.error and r.sim_us]
    if measured:
        stock_us = sum(r.stock.sim_us for r in measured if r.stock is not None)
        ten = [r.name for r in measured if r.stock is not None and r.stock.sim_us >= 10 * r.sim_us]
        out.append(
            f"stock choices: {stock_us:.2f} us per call of the {len(measured)} models measured, "
            f"{stock_us / sum(r.sim_us for r in measured):.1f}x ours; 10x or more less simulated time: "
            f"{len(ten)}/{len(measured)} ({', '.join(ten) or 'none'})"
        )
    causes: collections.Counter[str] = collections.Counter()
    where: dict[str, list[str]] = collections.defaultdict(list)
    for r in results:
        for c, n in r.causes.items():
            causes[c] += n
            where[c].append(r.name)
    out.append("")
    out.append("coverage: every failure by cause")
    crow = [[c, str(n), ", ".join(sorted(set(where[c])))] for c, n in sorted(causes.items(), key=lambda x: -x[1])]
    out.append(_table(["cause", "count", "models"], crow, markdown) if crow else "(none)")
    return "\n".join(out)


def _stock_cells(r: Result) -> list[str]:
    """The `stock us` and `x` cells: the stock run's time and its ratio to ours ("-" if not measured)."""
    if r.stock is None:
        return ["-", "-"]
    if r.stock.error:
        return ["failed", "-"]
    return [f"{r.stock.sim_us:.2f}", f"{r.stock.sim_us / r.sim_us:.1f}" if r.sim_us else "-"]


# ----------------------------------------------------------------------------------------------------------
# --norm-templates: mtia_xdsl's normalization templates against Inductor's stock lowering (issue 18)
# ----------------------------------------------------------------------------------------------------------

NORM_OPS = frozenset({"layer_norm", "rms_norm", "native_layer_norm", "_fused_rms_norm"})
"""FX call targets (by name) that are a LayerNorm or an RMSNorm."""
ACTIVATIONS = frozenset({"gelu", "silu", "relu", "sigmoid", "tanh", "gelu_", "silu_", "relu_"})
"""FX call targets (by name) of the activations a norm template takes as an epilogue."""
POINTWISE_BETWEEN = frozenset({"add", "iadd", "sub", "mul", "imul", "truediv", "to", "float", "half", "getitem"})
"""FX call targets (by name) that may stand between a norm and its activation (a residual add, a scale, a cast,
a tuple element): pointwise, so they fuse into the epilogue with the activation."""


def _target_name(node: torch.fx.Node) -> str:
    if node.op not in ("call_function", "call_method"):
        return ""
    target = node.target
    return (target if isinstance(target, str) else getattr(target, "__name__", str(target))).split(".")[0]


def _reaches_activation(norm: torch.fx.Node) -> bool:
    frontier, seen = list(norm.users), set()
    while frontier:
        node = frontier.pop()
        if node in seen:
            continue
        seen.add(node)
        if _target_name(node) in ACTIVATIONS:
            return True
        if _target_name(node) in POINTWISE_BETWEEN:
            frontier.extend(node.users)
    return False


def norm_activation_pairs(graph: torch.fx.Graph) -> tuple[int, int]:
    """(norms, norm+activation pairs) of an FX graph: the LayerNorm/RMSNorm calls (NORM_OPS), and those of them
    whose output reaches an activation (ACTIVATIONS) directly or through POINTWISE_BETWEEN ops only, the pairs
    whose activation a norm template takes as an epilogue. A norm is one pair however many activations follow."""
    norms = [n for n in graph.nodes if _target_name(n) in NORM_OPS]
    return len(norms), sum(_reaches_activation(n) for n in norms)


def count_norms(case: Case) -> tuple[int, int]:
    """(norms, norm+activation pairs) of `case`'s model (`norm_activation_pairs`), summed over the FX graphs
    TorchDynamo captures of one call (a training step: its forward); no Inductor compile."""
    graphs: list[torch.fx.Graph] = []

    def capture(gm: torch.fx.GraphModule, example_inputs: Any) -> Callable[..., Any]:
        graphs.append(gm.graph)
        return gm.forward

    torch._dynamo.reset()
    torch.manual_seed(0)
    model = case.make()
    torch.manual_seed(1)
    torch.compile(model, backend=capture)(*case.inputs())
    torch._dynamo.reset()
    counts = [norm_activation_pairs(g) for g in graphs]
    return sum(n for n, _ in counts), sum(p for _, p in counts)


NORM_RULE_OPS = tuple(str(getattr(torch.ops.aten, op).default) for m, _, op in _RULES if "norm" in m)
"""The aten ops whose norm template's rule (`_RULES`) says why a call falls back to stock lowering."""


@dataclass
class NormRun:
    """One model of `--norm-templates`: its norms and norm+activation pairs (`count_norms`), and its runs with
    the norm templates (the default) and with Inductor's stock lowering (`norm_templates=False`)."""

    name: str
    norms: int
    pairs: int
    templates: Result
    stock: Result


def run_norm_templates(chosen: list[Case], markdown: bool) -> str:
    """Run every case twice, with mtia_xdsl's norm templates and with Inductor's stock lowering of the norms
    (`mtia_xdsl.runtime.inductor_config.patch(norm_templates=False)`), each compile afresh (`run_case`:
    TorchDynamo reset, Inductor's caches off); return `norm_report`'s table. An inference case runs under
    `torch.no_grad()` (the templates take graphs traced without grad; with grad its norms keep Inductor's
    lowering, `inductor_norms._take_template`); a training step runs with grad, as in the suite.

    Raises: SystemExit if the mtia_xdsl on PYTHONPATH has no `inductor_config` (a tree from before issue 18), or
    if the switch does not follow `patch` (MTIA_XDSL_NORM_TEMPLATES set: the variable takes precedence)."""
    if mtia_config is None:
        raise SystemExit("--norm-templates: this mtia_xdsl has no mtia_xdsl.runtime.inductor_config (no norm switch)")
    with mtia_config.patch(norm_templates=False):
        off = mtia_config.norm_templates
    if mtia_config.norm_templates is not True or off is not False:
        raise SystemExit(
            "--norm-templates: MTIA_XDSL_NORM_TEMPLATES="
            f"{os.environ.get('MTIA_XDSL_NORM_TEMPLATES')!r} overrides the switch both runs set; unset it"
        )
    runs = []
    for case in chosen:
        norms, pairs = count_norms(case)
        with contextlib.nullcontext() if case.training else torch.no_grad():  # the templates take no-grad graphs
            templates = run_case(case)
            with mtia_config.patch(norm_templates=False):
                stock = run_case(case)
        for label, r in (("templates", templates), ("stock lowering", stock)):
            print(f"  {r.name} ({label}): {r.wall_s:.0f} s{'  ' + r.error if r.error else ''}", file=sys.stderr,
                  flush=True)  # fmt: skip
        runs.append(NormRun(case.name, norms, pairs, templates, stock))
    return norm_report(runs, markdown)


def _fell_back(r: Result) -> str:
    """The templates run's norms left to stock lowering, with the rule's reasons ("-" if none)."""
    falls = [f"{op.removeprefix('aten.').removesuffix('.default')}: {'; '.join(r.unsupported[op])}"
             for op in NORM_RULE_OPS if r.unsupported.get(op)]  # fmt: skip
    return " | ".join(falls) or "-"


def _norm_row(run: NormRun) -> list[str]:
    t, s = run.templates, run.stock
    head = [run.name, str(run.norms), str(run.pairs)]
    if t.error or s.error:
        what = "; ".join(f"{label} failed: {r.error}" for label, r in (("templates", t), ("stock", s)) if r.error)
        return [*head, "-", "-", "-", "-", "-", "-", "-", "-", "-", what]
    removed = len(s.kernel_times) - len(t.kernel_times)
    fell = _fell_back(t)
    per_pair = "-" if not run.pairs else "fell back" if fell != "-" else "yes" if removed >= run.pairs else "NO"
    return [
        *head, f"{'yes' if s.correct else 'NO'}/{'yes' if t.correct else 'NO'}",
        f"{sum(s.host_ops.values())}/{sum(t.host_ops.values())}", f"{s.sim_us:.2f}", f"{t.sim_us:.2f}",
        str(len(s.kernel_times)), str(len(t.kernel_times)), str(removed), "yes" if t.sim_us <= s.sim_us else "NO",
        per_pair, fell,
    ]  # fmt: skip


def _named(label: str, names: list[str]) -> str:
    return f" ({label}: {', '.join(names)})" if names else ""


def norm_report(runs: list[NormRun], markdown: bool) -> str:
    """The `--norm-templates` table, one row per model: norms, norm+activation pairs, correct and host ops (calls
    left to host libraries, not in `us`) as stock/templates, simulated us per call and kernel launches of the
    timed call under stock lowering and the templates, launches removed, whether the templates are never slower
    (templates us <= stock us) and remove at least one launch per pair ("-": no pair; "fell back": a norm of
    the model did not take a template, so the model is not held to it), and the norms that fell back to stock
    lowering with the rules' reasons; then a summary line."""
    headers = ["model", "norms", "norm+act", "correct", "host ops", "stock us", "templates us", "stock launches",
               "templates launches", "removed", "never slower", ">= 1 per pair",
               "fell back to stock lowering"]  # fmt: skip
    rows = [_norm_row(run) for run in runs]
    ok = [run for run in runs if not run.templates.error and not run.stock.error]
    slower = [run.name for run in ok if run.templates.sim_us > run.stock.sim_us]
    fell = [run.name for run in ok if _fell_back(run.templates) != "-"]
    paired = [run for run in ok if run.pairs and run.name not in fell]
    short = [run.name for run in paired if len(run.stock.kernel_times) - len(run.templates.kernel_times) < run.pairs]
    stock_us, templates_us = sum(r.stock.sim_us for r in ok), sum(r.templates.sim_us for r in ok)
    summary = (
        f"norm templates: {len(ok)}/{len(runs)} models ran both ways; {templates_us:.2f} us per call of them "
        f"against {stock_us:.2f} us with stock lowering; never slower: {len(ok) - len(slower)}/{len(ok)}"
        f"{_named('slower', slower)}; at least one launch removed per norm+activation pair: "
        f"{len(paired) - len(short)}/{len(paired)}{_named('short', short)}; "
        f"fell back to stock lowering: {', '.join(fell) or 'none'}"
    )
    return "\n".join([_table(headers, rows, markdown), "", summary])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--models", help="comma-separated subset of: " + ",".join(c.name for c in (*CASES, *NORM_CASES))
    )
    parser.add_argument("--markdown", action="store_true", help="print tables as Markdown")
    parser.add_argument("--per-kernel", action="store_true", help="list every access that is not DMA by kernel")
    parser.add_argument("--hot", action="store_true", help="list every launch of the timed call, slowest first")
    parser.add_argument(
        "--no-stock", action="store_true", help="skip the second compile under Inductor's stock choices (stock us, x)"
    )
    parser.add_argument("--dump", metavar="DIR", help="write each model's Inductor output code to DIR/<model>.py")
    parser.add_argument("--json", metavar="FILE", help="write the per-model figures to FILE (JSON)")
    parser.add_argument(
        "--baseline-rev", nargs="?", const=FILING_REV, metavar="REV",
        help=f"also run the chosen models with the package of commit REV (default {FILING_REV}, when the issue "
        "was filed) and print its simulated time per call next to this tree's",
    )  # fmt: skip
    parser.add_argument(
        "--norm-templates", action="store_true",
        help="instead of the suite, run the norm models (default: " + ",".join(NORM_MODELS) + ") with mtia_xdsl's "
        "norm templates and with Inductor's stock lowering of the norms, and print the comparison",
    )  # fmt: skip
    parser.add_argument(
        "--check-determinism", action="store_true",
        help="run every chosen model a second time and report whether kernels and simulated times are the same",
    )  # fmt: skip
    args = parser.parse_args(argv)
    chosen = _chosen(args.models, NORM_MODELS if args.norm_templates else None)
    print(
        f"mtia_xdsl from {Path(mtia_xdsl.__file__).parent.parent}; torch {torch.__version__}; "
        f"at most {MM_CONFIGS} GEMM template configs per matmul",
        flush=True,
    )
    _install_recording()
    if args.norm_templates:
        print(run_norm_templates(chosen, args.markdown))
        return 0
    baseline = Baseline(args.baseline_rev, [c.name for c in chosen]) if args.baseline_rev else None
    results = []
    for case in chosen:
        r = run_case(case)
        print(f"  {r.name}: {r.wall_s:.0f} s{'  ' + r.error if r.error else ''}", file=sys.stderr, flush=True)
        if not args.no_stock:
            r.stock = run_case(case, stock=True)
            print(f"  {r.name} (stock choices): {r.stock.wall_s:.0f} s{'  ' + r.stock.error if r.stock.error else ''}",
                  file=sys.stderr, flush=True)  # fmt: skip
        results.append(r)
    print(report(results, args.markdown))
    if args.per_kernel:
        print("\naccesses not DMA, by kernel")
        rows = [[r.name, k, c] for r in results for k, c in r.kernel_causes]
        print(_table(["model", "kernel", "cause"], rows, args.markdown) if rows else "(none)")
    if args.hot:
        print("\nlaunches of the timed call, slowest first")
        rows = sorted(([r.name, *k] for r in results for k in r.kernel_times), key=lambda x: -float(x[2]))
        headers = ["model", "kernel", "sim us", "launch us", "programs/PEs", "busiest engine", "roofline", "hot line"]
        print(_table(headers, rows, args.markdown) if rows else "(none)")
    if baseline is not None:
        then = baseline.result()
        print()
        print(baseline_report(args.baseline_rev, then, results, args.markdown))
    if args.json:
        Path(args.json).write_text(json.dumps([result_json(r) for r in results], indent=1))
    if args.dump:
        Path(args.dump).mkdir(parents=True, exist_ok=True)
        for r in results:
            (Path(args.dump) / f"{r.name}.py").write_text(r.code)
    if args.check_determinism:
        print()
        print(determinism([run_case(case) for case in chosen], results))
    return 0


def _chosen(models: str | None, default: tuple[str, ...] | None) -> list[Case]:
    """The cases named in `models` (comma-separated; of CASES and NORM_CASES), else those named in `default`,
    else CASES (the suite)."""
    names = models.split(",") if models else default
    if names is None:
        return CASES
    return [c for c in (*CASES, *NORM_CASES) if c.name in names]


def result_json(r: Result) -> dict[str, Any]:
    """The figures of one model run (for `--json`, which `--baseline-rev` reads from its subprocess)."""
    return {
        "name": r.name, "correct": r.correct, "generated": r.generated, "compiled": r.compiled,
        "launched": r.launched, "dma": r.dma, "accesses": r.accesses, "sim_us": r.sim_us,
        "host_ops": dict(r.host_ops), "host_calls": r.host_calls, "error": r.error, "kernels_hash": r.kernels_hash,
        "times_hash": r.times_hash,
    }  # fmt: skip


class Baseline:
    """The chosen models run with the mtia_xdsl package of commit `rev`: this script, in a subprocess whose
    PYTHONPATH is a copy of that commit's tree (`git archive`, in a temporary directory removed by
    `result`), with Inductor's choices as that tree makes them (`--no-stock`). The subprocess starts at once
    and runs alongside this process's own models; `result` waits for it.

    Raises: RuntimeError naming the command if `git archive` or the subprocess fails.
    """

    def __init__(self, rev: str, models: list[str]) -> None:
        repo = Path(__file__).resolve().parent.parent
        self.tmp = Path(tempfile.mkdtemp(prefix="mtia-inductor-baseline-"))
        tree, self.out = self.tmp / "tree", self.tmp / "figures.json"
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", rev], capture_output=True)
        if archive.returncode:
            shutil.rmtree(self.tmp)
            raise RuntimeError(f"git archive {rev} failed: {archive.stderr.decode().strip()}")
        tar_path = self.tmp / "tree.tar"
        tar_path.write_bytes(archive.stdout)
        with tarfile.open(tar_path) as tar:
            tar.extractall(tree, filter="data")
        env = dict(os.environ, PYTHONPATH=str(tree))
        for var in ("TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR"):
            env[var] = str(self.tmp / var.lower())
        self.cmd = [sys.executable, str(Path(__file__).resolve()), "--models", ",".join(models), "--no-stock",
                    "--json", str(self.out)]  # fmt: skip
        self.tree = tree
        print(f"  baseline: {rev} in {tree}, alongside", file=sys.stderr, flush=True)
        self.proc = subprocess.Popen(self.cmd, env=env, stdout=sys.stderr)  # its own tables go to our stderr

    def result(self) -> dict[str, dict[str, Any]]:
        """Wait for the subprocess; its figures by model name."""
        try:
            code = self.proc.wait()
            if code:
                raise RuntimeError(
                    f"the baseline run failed (exit {code}): PYTHONPATH={self.tree} {' '.join(self.cmd)}"
                )
            return {r["name"]: r for r in json.loads(self.out.read_text())}
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)


def baseline_report(rev: str, then: dict[str, dict[str, Any]], now: list[Result], markdown: bool) -> str:
    """Per model: simulated time per call with the package of `rev` (then) and with this tree (now), each
    without and with the charge for its host library calls (`host_charge_us`), and then / now both ways; a
    summary line for GOAL_MODELS (the issue's 10x goal), like for like (charged) and uncharged."""
    from mtia_xdsl.runtime.inductor import device_machine_config

    machine = device_machine_config()  # the chip the driver targets (MTIA-2i), whose host link charges the calls
    rows, ratios, plain = [], {}, {}
    for r in now:
        t = then.get(r.name)
        if t is None or t["error"] or not r.sim_us or r.error:
            rows.append(
                [r.name, "failed" if t and t["error"] else "-", "-", "-", f"{r.sim_us:.2f}", "-", "-", "-", "-"]
            )
            continue
        then_charged = t["sim_us"] + host_charge_us(machine, t.get("host_calls", []))
        now_charged = r.sim_us + host_charge_us(machine, r.host_calls)
        plain[r.name] = t["sim_us"] / r.sim_us
        ratios[r.name] = then_charged / now_charged
        rows.append([
            r.name, f"{t['sim_us']:.2f}", str(sum(t["host_ops"].values())), f"{then_charged:.2f}", f"{r.sim_us:.2f}",
            str(sum(r.host_ops.values())), f"{now_charged:.2f}", f"{plain[r.name]:.1f}", f"{ratios[r.name]:.1f}",
        ])  # fmt: skip
    out = [
        f"against the package of {rev} (when the issue was filed). `us`: the simulated kernels only (host calls "
        "free); `charged`: plus each host library call's two host-link transfers (host_charge_us)",
        _table(["model", "then us", "then host ops", "then charged", "now us", "now host ops", "now charged",
                "x us", "x charged"], rows, markdown),
    ]  # fmt: skip
    goal = [m for m in GOAL_MODELS if m in ratios]
    if goal:
        met = [m for m in goal if ratios[m] >= 10]
        met_plain = [m for m in goal if plain[m] >= 10]
        out.append("")
        out.append(
            f"goal (GPT-2-style and embedding-heavy models 10x less simulated time per call than then), host calls "
            f"charged: {len(met)}/{len(goal)} ({', '.join(f'{m} {ratios[m]:.1f}x' for m in goal)}); uncharged: "
            f"{len(met_plain)}/{len(goal)} ({', '.join(f'{m} {plain[m]:.1f}x' for m in goal)})"
        )
    return "\n".join(out)


def determinism(second: list[Result], first: list[Result]) -> str:
    """Compare two runs' kernels and simulated times, model by model."""
    same = [
        a.name
        for a, b in zip(first, second, strict=True)
        if (a.kernels_hash, a.times_hash) == (b.kernels_hash, b.times_hash)
    ]
    lines = [f"determinism: {len(same)}/{len(first)} models gave the same kernels and simulated times on a second run"]
    for a, b in zip(first, second, strict=True):
        if a.name not in same:
            what = [
                w
                for w, x, y in (("kernels", a.kernels_hash, b.kernels_hash), ("times", a.times_hash, b.times_hash))
                if x != y
            ]
            lines.append(
                f"  {a.name}: {' and '.join(what)} differ "
                f"({a.kernels_hash}/{a.times_hash} vs {b.kernels_hash}/{b.times_hash})"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

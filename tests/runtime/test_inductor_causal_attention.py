"""Hand-written causal attention becomes mtia_xdsl's SDPA kernel (mtia_xdsl/runtime/inductor_causal_attention.py),
and only the exact `masked_fill(~tril(ones(T, T)), -inf)` form does."""

import pytest
import torch
import torch._inductor.config as inductor_config
from torch import nn

pytest.importorskip("triton")

SDPA_OP = "torch.ops.mtia_xdsl.scaled_dot_product_attention.default("


class CausalSelfAttention(nn.Module):
    """GPT-2's attention as benchmarks/inductor.py writes it (q, k, v heads split from one projection), and its
    variants the rewrite must leave alone: a tril `diagonal` offset, the mask as a buffer (`mask_buffer`), another
    `fill` value, the scale as a tensor buffer (`tensor_scale`), dropout between the softmax and the matmul."""

    def __init__(
        self,
        dim: int = 64,
        heads: int = 4,
        diagonal: int = 0,
        mask_buffer: bool = False,
        fill: float = float("-inf"),
        tensor_scale: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.heads, self.diagonal, self.fill, self.dropout = heads, diagonal, fill, dropout
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("mask", torch.ones(64, 64, dtype=torch.bool).tril() if mask_buffer else None)
        self.register_buffer("scale", torch.tensor((dim // heads) ** -0.5) if tensor_scale else None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v))
        scale = self.scale if self.scale is not None else 1.0 / (c // self.heads) ** 0.5
        att = (q @ k.transpose(-2, -1)) * scale
        mask = self.mask[:t, :t] if self.mask is not None else torch.ones(t, t, dtype=torch.bool).tril(self.diagonal)
        att = att.masked_fill(~mask, self.fill).softmax(dim=-1)
        att = nn.functional.dropout(att, self.dropout, self.training)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        return self.proj(y)


def _compile(model: nn.Module, *inputs: torch.Tensor) -> tuple[torch.Tensor, str]:
    """The compiled `model`'s output on `inputs` and Inductor's output code (all files)."""
    from torch._inductor.utils import run_and_get_code

    out, codes = run_and_get_code(torch.compile(model), *inputs)
    return out, "\n".join(codes)


@inductor_config.patch({"test_configs.max_mm_configs": 1})  # keep the autotuning short
@pytest.mark.parametrize(("heads", "t"), [(4, 20), (2, 32)])
def test_causal_attention_is_one_sdpa_launch(mtia_inductor, heads, t):
    """Inference: the attention is the custom op (no mask kernel, no attention bmm left), and matches eager;
    20 rows (not a multiple of the block) and head dims 16 and 32. The op's output is laid out [B, T, H, E] (its
    query's order), and the pass refreshes its users' metadata, so `transpose(1, 2).reshape` is a view: no copy
    kernel before the output projection."""
    torch.manual_seed(0)
    model = CausalSelfAttention(heads=heads).eval()
    x = torch.randn(2, t, 64)
    with torch.no_grad():
        out, code = _compile(model, x)
        torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-5)
    assert code.count(SDPA_OP) == 1, code
    assert "tril" not in code and "bmm" not in code and "_softmax" not in code
    assert "triton_poi" not in code  # no pointwise kernel: no layout copy


@inductor_config.patch({"test_configs.max_mm_configs": 1})
@pytest.mark.parametrize(("dtype", "tol"), [(torch.float16, 2e-3), (torch.bfloat16, 2e-2)])
def test_causal_attention_in_half(mtia_inductor, dtype, tol):
    """f16 and bf16 (softmax upcasts to f32 and back in the traced graph: the f16 pattern, traced again in the
    candidate's dtype) are rewritten and match eager within their rounding."""
    torch.manual_seed(0)
    model = CausalSelfAttention().eval().to(dtype)
    x = torch.randn(2, 20, 64).to(dtype)
    with torch.no_grad():
        out, code = _compile(model, x)
        torch.testing.assert_close(out, model(x), rtol=tol, atol=tol)
    assert code.count(SDPA_OP) == 1


@inductor_config.patch({"test_configs.max_mm_configs": 1})
def test_training_step_gradients_match_eager(compile_and_train, monkeypatch):
    """Training: the joint pattern's gradients are SDPA's (autograd's formula for aten's CPU flash attention, reading
    the kernel's output and log-sum-exp): output and every parameter's gradient match eager's."""
    torch.manual_seed(0)
    x = torch.randn(2, 20, 64)
    codes = compile_and_train(CausalSelfAttention, x, rtol=1e-4, atol=1e-5)
    code = "\n".join(codes)
    assert code.count(SDPA_OP) == 1 and "tril" not in code


@inductor_config.patch({"test_configs.max_mm_configs": 1})
@pytest.mark.parametrize(
    "variant",
    [
        {"diagonal": 1},
        {"diagonal": -1},
        {"mask_buffer": True},
        {"fill": -1e4},
        {"tensor_scale": True},
    ],
    ids=["tril_offset_1", "tril_offset_-1", "user_mask", "fill_-1e4", "tensor_scale"],
)
def test_other_masks_are_left_alone(mtia_inductor, variant):
    """A mask that is not provably `tril(ones(T, T))` with -inf, or a tensor scale: no custom op, eager's result."""
    torch.manual_seed(0)
    model = CausalSelfAttention(**variant).eval()
    x = torch.randn(2, 20, 64)
    with torch.no_grad():
        out, code = _compile(model, x)
        torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-5, equal_nan=True)  # tril(-1): row 0 is NaN
    assert SDPA_OP not in code


@inductor_config.patch({"test_configs.max_mm_configs": 1, "fallback_random": True})
def test_dropout_after_the_softmax_is_left_alone(mtia_inductor):
    """Dropout between the softmax and the matmul (training mode): no custom op; eager's result (eager's random
    numbers: `fallback_random`)."""
    torch.manual_seed(0)
    model = CausalSelfAttention(dropout=0.5).train()
    x = torch.randn(2, 20, 64)
    with torch.no_grad():
        torch.manual_seed(1)
        out, code = _compile(model, x)
        torch.manual_seed(1)
        torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-5)
    assert SDPA_OP not in code


def test_non_square_mask_is_left_alone(mtia_inductor):
    """16 queries over 24 keys with `tril` of the [16, 24] ones (not the [T, T] square): no custom op, eager's
    result."""

    def attend(q, k, v):
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
        att = (q @ k.transpose(-2, -1)) * 0.25
        return att.masked_fill(~mask, float("-inf")).softmax(dim=-1) @ v

    torch.manual_seed(0)
    q, k, v = torch.randn(2, 4, 16, 16), torch.randn(2, 4, 24, 16), torch.randn(2, 4, 24, 16)
    out, code = _compile(attend, q, k, v)
    torch.testing.assert_close(out, attend(q, k, v), rtol=1e-4, atol=1e-5)
    assert SDPA_OP not in code


def test_unsupported_head_dim_is_left_alone(mtia_inductor):
    """A head dim `inductor_attention.unsupported` refuses (24): the hand-written attention stays, eager's result."""

    def attend(q, k, v):
        mask = torch.ones(q.shape[-2], q.shape[-2], dtype=torch.bool).tril()
        att = (q @ k.transpose(-2, -1)) * 0.2
        return att.masked_fill(~mask, float("-inf")).softmax(dim=-1) @ v

    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 16, 24) for _ in range(3))
    out, code = _compile(attend, q, k, v)
    torch.testing.assert_close(out, attend(q, k, v), rtol=1e-4, atol=1e-5)
    assert SDPA_OP not in code


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Hand-written causal attention of q, k, v [B, H, T, E] (scale 0.25)."""
    mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
    att = (q @ k.transpose(-2, -1)) * 0.25
    return att.masked_fill(~mask, float("-inf")).softmax(dim=-1) @ v


def _traced(joint: bool) -> tuple[torch.fx.GraphModule, object]:
    """`_attend`'s graph (q, k, v [2, 4, 16, 16] f32), joint forward and backward if `joint` (q, k, v requiring
    grad) else forward only, traced in a fake mode as Inductor's joint-graph passes see it
    (`constant_fold_uniform_value` done), and that mode."""
    from torch._inductor.fx_passes.joint_graph import constant_fold_uniform_value
    from torch._inductor.pattern_matcher import fwd_only, joint_fwd_bwd
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode()
    with mode:
        qkv = [torch.randn(2, 4, 16, 16, requires_grad=joint) for _ in range(3)]
        gm = (joint_fwd_bwd if joint else fwd_only)(_attend, qkv)
    constant_fold_uniform_value(gm)
    return gm, mode


def test_inference_mode_first_keeps_the_joint_patterns(mtia_inductor):
    """A first rewrite under `torch.inference_mode()` (where Inductor registers no joint pattern) still rewrites
    there, and a training (joint) graph after it still meets the joint patterns: SDPA, no bmm of the attention
    left in forward or backward."""
    from torch._inductor.virtualized import V

    from mtia_xdsl.runtime import inductor_causal_attention as pattern

    forward, forward_mode = _traced(False)
    joint, joint_mode = _traced(True)
    pattern.causal_attention_patterns.cache_clear()
    with V.set_fake_mode(forward_mode), torch.inference_mode():
        assert pattern.fuse_causal_attention(forward.graph) == 1
    with V.set_fake_mode(joint_mode):
        assert pattern.fuse_causal_attention(joint.graph) == 1
    text = str(joint.graph)
    assert "scaled_dot_product" in text and "aten.bmm" not in text, text

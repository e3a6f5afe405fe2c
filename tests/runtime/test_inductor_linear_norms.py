"""A Linear and the LayerNorm or RMSNorm of its output as one Triton template launch
(mtia_xdsl/runtime/inductor_linear_norms.py): the ops' host math, the rule, and torch.compile with our backend
(one launch per Linear + norm + activation, matching eager; a product with another user, and the off switch,
keep the layers apart)."""

import re

import torch
import torch.nn.functional as F
from interpret_check import interpreter_check
from torch import nn

from mtia_xdsl.runtime import inductor_config as mtia_config
from mtia_xdsl.runtime import inductor_linear_norms as lln


def _kernels(codes: list[str]) -> int:
    """Triton kernels in Inductor's output code."""
    return "\n".join(codes).count("@triton.jit")


def _fused(codes: list[str]) -> int:
    """Kernels in Inductor's output code that hold both a matmul (`tl.dot`) and a norm (`rsqrt`)."""
    kernels = [k.split("'''")[0] for k in "\n".join(codes).split("@triton.jit")[1:]]  # each kernel's source
    return sum("tl.dot(" in k and "rsqrt" in k for k in kernels)


def test_ops_match_linear_then_norm():
    """`linear_layer_norm` and `linear_rms_norm` (host math) against nn.Linear then F.layer_norm / F.rms_norm."""
    g = torch.Generator().manual_seed(0)
    x, w, b, nw, nb = (torch.randn(*s, generator=g) for s in ((16, 32), (48, 32), (48,), (48,), (48,)))
    y, mean, rstd = lln.linear_layer_norm(x, w.t(), b, nw, nb, 1e-5)
    torch.testing.assert_close(y, F.layer_norm(F.linear(x, w, b), (48,), nw, nb, 1e-5))
    assert mean.shape == rstd.shape == (16,)
    y, _ = lln.linear_rms_norm(x, w.t(), None, nw, 1e-6)
    torch.testing.assert_close(y, F.rms_norm(F.linear(x, w), (48,), nw, 1e-6))


def test_unsupported_linear_norm_names_the_case():
    """A K past MAX_K, mixed dtypes, K x N past MAX_KN and N past MAX_N each name why; a small Linear is
    accepted."""
    x, w = torch.zeros(16, 32), torch.zeros(32, 48)
    assert lln.unsupported_linear_norm("layer_norm", x, w, torch.zeros(48)) is None
    big_k = lln.unsupported_linear_norm("rms_norm", torch.zeros(16, 4096), torch.zeros(4096, 48), None)
    assert big_k is not None and "K of 4096" in big_k
    mixed = lln.unsupported_linear_norm("layer_norm", x, w.bfloat16(), None)
    assert mixed is not None and "dtypes" in mixed
    big_kn = lln.unsupported_linear_norm("layer_norm", torch.zeros(16, 256), torch.zeros(256, 256), None)
    assert big_kn is not None and "K x N of 256 x 256" in big_kn
    wide = lln.unsupported_linear_norm("layer_norm", torch.zeros(16, 1), torch.zeros(1, 128), None)
    assert wide is not None and "N of 128" in wide
    # BLOCK_M >= 16 rows of 4096 columns do not fit LS; BLOCK_K runs up to K (32):
    too_big = lln.block_choices("linear_layer_norm", 16, 16, 4096)
    assert not too_big and lln.block_choices("linear_layer_norm", 16, 32, 64) == [(16, 16), (16, 32)]


class _Rms(nn.Module):
    """A hand-written RMSNorm (the form `inductor_rms_norm_pattern` rewrites)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


def _model() -> nn.Module:
    """Linear -> LayerNorm -> ReLU, then Linear -> RMSNorm (hand-written) -> SiLU: M=16, K=32, N=48 then 64."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 48), nn.LayerNorm(48), nn.ReLU(), nn.Linear(48, 64), _Rms(64), nn.SiLU())
    with torch.no_grad():
        model[1].weight.normal_()
        model[1].bias.normal_()
    return model


def test_linear_norm_activation_is_one_launch_per_layer(mtia_inductor):
    """Each Linear + norm + activation is one template launch matching eager and Triton's interpreter (two layers:
    2 kernels); stock
    lowering (the switch off) takes 2 a layer (a GEMM template and the norm kernel)."""
    from torch._inductor.utils import run_and_get_code

    model, x = _model(), torch.randn(16, 32)
    with torch.no_grad():
        with interpreter_check() as checked:  # every launch (autotuning's too) rerun under Triton's interpreter
            out, codes = run_and_get_code(torch.compile(model), x)
        torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-4)
        assert _kernels(codes) == 2 and _fused(codes) == 2, "\n".join(codes)
        defined = set(re.findall(r"^def (triton_\w+)\(", "\n".join(codes), re.M))
        assert len(defined) == 2 and defined <= {c.kernel for c in checked if c.written}, (defined, checked)
        torch._dynamo.reset()
        with mtia_config.patch(norm_templates=False):
            out, codes = run_and_get_code(torch.compile(model), x)
    torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-4)
    assert _kernels(codes) == 4 and _fused(codes) == 0, "\n".join(codes)


def test_product_with_another_user_is_not_fused(mtia_inductor):
    """A Linear whose output is also returned stays a GEMM of its own (the norm reads it): still correct."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    lin, x = nn.Linear(32, 48), torch.randn(16, 32)

    def f(x):
        h = lin(x)
        return F.relu(F.layer_norm(h, (48,))), h

    with torch.no_grad():
        out, codes = run_and_get_code(torch.compile(f), x)
        torch.testing.assert_close(out, f(x), rtol=1e-4, atol=1e-4)
    assert _kernels(codes) == 2 and _fused(codes) == 0, "\n".join(codes)


def _traced(k: int, extra_user: bool = False):
    """An FX graph (meta["val"] set, as Inductor's post-grad graph) of addmm -> view -> mtia_xdsl::layer_norm."""
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(x, w, b, nw):
        h = torch.ops.aten.addmm.default(b, x, w)
        y = torch.ops.mtia_xdsl.layer_norm.default(torch.ops.aten.view.default(h, [16, 48]), nw, None, 1e-5)[0]
        return (y, h) if extra_user else (y,)

    return make_fx(f, tracing_mode="fake")(torch.zeros(16, k), torch.zeros(k, 48), torch.zeros(48), torch.zeros(48))


def _targets(gm) -> list[str]:
    """The targets of the graph's calls, as strings."""
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def test_fuse_linear_norms_rewrites_only_a_sole_use_of_a_small_product():
    """The pass replaces addmm, the view and layer_norm by one linear_layer_norm; a product with another user, or a
    K past MAX_K, is left as it is."""
    gm = _traced(32)
    assert lln.fuse_linear_norms(gm.graph) == 1
    assert "mtia_xdsl.linear_layer_norm.default" in _targets(gm) and "aten.addmm.default" not in _targets(gm)
    gm.recompile()
    x, w, b, nw = torch.randn(16, 32), torch.randn(32, 48), torch.randn(48), torch.randn(48)
    torch.testing.assert_close(gm(x, w, b, nw)[0], F.layer_norm(torch.addmm(b, x, w), (48,), nw, None, 1e-5))
    for unfused in (_traced(32, extra_user=True), _traced(lln.MAX_K + 16)):
        assert lln.fuse_linear_norms(unfused.graph) == 0
        assert "aten.addmm.default" in _targets(unfused) and "mtia_xdsl.layer_norm.default" in _targets(unfused)

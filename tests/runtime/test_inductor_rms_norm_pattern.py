"""Hand-written RMSNorm becomes mtia_xdsl's RMSNorm template (mtia_xdsl/runtime/inductor_rms_norm_pattern.py), and
only the exact `x * rsqrt(mean(x^2, -1, keepdim) + eps)` normalisation does."""

import pytest
import torch
import torch._inductor.config as inductor_config
from torch import nn

pytest.importorskip("triton")

RMS_OP = "mtia_xdsl.rms_norm.default"
EPS = 1e-5


def llama(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Llama's RMSNorm (benchmarks/inductor.py's `LlamaBlock`)."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight


def hugging_face(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Hugging Face's `LlamaRMSNorm`: in f32, cast back, then the weight."""
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS)
    return weight * h.to(x.dtype)


def aten_rms_norm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """`F.rms_norm` (on "cpu" ATen's composite writes it out: `add.Scalar`, a positive dim, eps None -> f32's)."""
    return nn.functional.rms_norm(x, (x.shape[-1],), weight)


def no_weight(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Llama's normalisation with no weight (`weight` unused)."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 0.25)


def residual(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Llama's RMSNorm in a residual stream: x is read again after the norm, so autograd adds the norm's
    gradient of x to the residual's term by term, and no joint pattern matches the backward."""
    return x + llama(x, weight)


def mean_over_rows(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """A near miss: the mean over dim 0."""
    return x * torch.rsqrt(x.pow(2).mean(0, keepdim=True) + EPS) * weight


def sum_not_mean(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """A near miss: a sum where the mean goes."""
    return x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + EPS) * weight


def _joint_graph(fn, dtype: torch.dtype, x_grad: bool) -> tuple[torch.fx.GraphModule, object]:
    """`fn`'s joint forward and backward graph (x [2, 8, 48] of `dtype`, requiring grad if `x_grad`; weight [48],
    requiring grad), traced in a fake mode, and that mode; the forward graph if no gradient flows (`no_weight`
    of an x not requiring grad)."""
    from torch._inductor.pattern_matcher import fwd_only, joint_fwd_bwd
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode()
    trace = fwd_only if fn is no_weight and not x_grad else joint_fwd_bwd
    with mode:
        x = torch.randn(2, 8, 48, dtype=dtype, requires_grad=x_grad)
        weight = torch.randn(48, dtype=dtype, requires_grad=True)
        return trace(fn, [x, weight]), mode


@pytest.mark.parametrize(
    ("fn", "dtype"),
    [
        (llama, torch.float32),
        (llama, torch.bfloat16),
        (hugging_face, torch.float32),
        (hugging_face, torch.bfloat16),
        (hugging_face, torch.float16),
        (aten_rms_norm, torch.float32),
        (aten_rms_norm, torch.bfloat16),
        (no_weight, torch.float32),
    ],
)
@pytest.mark.parametrize("x_grad", [True, False])
def test_fuse_rms_norms_rewrites_each_form(mtia_inductor, fn, dtype, x_grad):
    """Each form, in a joint graph whose x requires grad (the joint pattern) or not (the forward one): one
    `mtia_xdsl::rms_norm` of the rows with its eps, no rsqrt or square left (the backward is aten's RMSNorm
    backward of the op's rstd)."""
    from torch._inductor.virtualized import V
    from torch.testing import FileCheck

    from mtia_xdsl.runtime.inductor_rms_norm_pattern import fuse_rms_norms

    gm, mode = _joint_graph(fn, dtype, x_grad)
    with V.set_fake_mode(mode):
        assert fuse_rms_norms(gm.graph) == 1
    text = str(gm.graph)
    eps = {no_weight: "0.25", aten_rms_norm: str(torch.finfo(torch.float32).eps)}.get(fn, str(EPS))
    FileCheck().check("aten.view.default").check(f"{RMS_OP}](args = (%view_default").check_same(
        f", None, {eps})"
    ).check_not("rsqrt").check_not("pow").run(text)


@pytest.mark.parametrize("fn", [mean_over_rows, sum_not_mean])
def test_near_misses_are_left_alone(mtia_inductor, fn):
    """A mean over dim 0 or a sum of the squares: no match, the graph unchanged."""
    from torch._inductor.virtualized import V

    from mtia_xdsl.runtime.inductor_rms_norm_pattern import fuse_rms_norms

    gm, mode = _joint_graph(fn, torch.float32, True)
    before = str(gm.graph)
    with V.set_fake_mode(mode):
        assert fuse_rms_norms(gm.graph) == 0
    assert str(gm.graph) == before


def test_forward_pattern_keeps_what_the_backward_reads(mtia_inductor):
    """In a training graph whose x requires grad the backward reads the normalisation's rsqrt: the forward-only
    patterns do not match there (Inductor's matcher refuses inner nodes with outside users); the joint one replaces
    the backward too."""
    from torch._inductor.virtualized import V

    from mtia_xdsl.runtime.inductor_rms_norm_pattern import rms_norm_patterns

    gm, mode = _joint_graph(llama, torch.float32, True)
    before = str(gm.graph)
    with V.set_fake_mode(mode):
        assert rms_norm_patterns(("forward",)).apply(gm.graph) == 0
    assert str(gm.graph) == before


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_residual_stream_keeps_the_stock_backward(mtia_inductor, dtype):
    """x read again after the norm (a residual): the joint patterns do not match (autograd accumulates x's
    gradient term by term), the forward with its rsqrt as an output does: the forward is the op, the stock backward
    reads the op's rstd (in x's dtype, as the rsqrt was) where it read the rsqrt."""
    from torch._inductor.virtualized import V
    from torch.testing import FileCheck

    from mtia_xdsl.runtime.inductor_rms_norm_pattern import fuse_rms_norms, rms_norm_patterns

    gm, mode = _joint_graph(residual, dtype, True)
    with V.set_fake_mode(mode):
        assert rms_norm_patterns(("joint", "forward")).apply(gm.graph) == 0
        assert fuse_rms_norms(gm.graph) == 1
    text = str(gm.graph)
    check = FileCheck().check(f"{RMS_OP}](").check("operator.getitem](args = (%rms_norm_default, 1)")
    if dtype != torch.float32:
        check = check.check("prims.convert_element_type.default").check_same("torch.bfloat16")
    check.check_not("aten.rsqrt.default").check("aten.pow.Tensor_Scalar").run(text)


def test_inference_mode_first_keeps_the_joint_patterns(mtia_inductor):
    """A first rewrite under `torch.inference_mode()` (where Inductor registers no joint pattern) still rewrites
    there, and a training graph after it still meets the joint patterns."""
    from torch._inductor.virtualized import V

    from mtia_xdsl.runtime import inductor_rms_norm_pattern as pattern

    forward, forward_mode = _joint_graph(no_weight, torch.float32, False)
    joint, joint_mode = _joint_graph(llama, torch.float32, True)
    pattern.rms_norm_patterns.cache_clear()
    with V.set_fake_mode(forward_mode), torch.inference_mode():
        assert pattern.fuse_rms_norms(forward.graph) == 1
    with V.set_fake_mode(joint_mode):
        assert pattern.fuse_rms_norms(joint.graph) == 1


def test_switch_off_or_inactive_backend_leaves_the_graph(mtia_inductor):
    """`inductor_config.norm_templates` off, or Inductor's C++ CPU backend (ours not active): no rewrite."""
    from torch._inductor.virtualized import V

    from mtia_xdsl.runtime import inductor_config as mtia_config
    from mtia_xdsl.runtime.inductor_rms_norm_pattern import fuse_rms_norms

    gm, mode = _joint_graph(llama, torch.float32, True)
    with V.set_fake_mode(mode):
        with mtia_config.patch(norm_templates=False):
            assert fuse_rms_norms(gm.graph) == 0
        with inductor_config.patch(cpu_backend="cpp"):
            assert fuse_rms_norms(gm.graph) == 0


class _Recorder:
    """A user joint custom pass (run after mtia_xdsl's): keeps the text of each joint graph it sees."""

    def __init__(self) -> None:
        self.graphs: list[str] = []

    def __call__(self, graph: torch.fx.Graph) -> None:
        self.graphs.append(str(graph))


def _compile(fn, *inputs: torch.Tensor) -> tuple[torch.Tensor, str, str]:
    """`torch.compile(fn)(*inputs)`, Inductor's output code (all files) and the joint graph after the pass."""
    from torch._inductor.utils import run_and_get_code

    recorder = _Recorder()
    with inductor_config.patch(joint_custom_post_pass=recorder):
        out, codes = run_and_get_code(torch.compile(fn), *inputs)
    return out, "\n".join(codes), "\n".join(recorder.graphs)


@pytest.mark.parametrize(("fn", "dtype", "tol"), [(llama, torch.float32, 1e-5), (hugging_face, torch.bfloat16, 1e-2)])
def test_inference_is_the_template(mtia_inductor, fn, dtype, tol):
    """Inference: the normalisation is mtia_xdsl's template kernel with the weight multiply as its epilogue (one
    launch, no reduction kernel of stock Inductor), and matches eager (HF's bf16: its rounding)."""
    torch.manual_seed(0)
    x, weight = torch.randn(8, 48, dtype=dtype), (torch.rand(48) + 0.5).to(dtype)
    with torch.no_grad():
        out, code, graph = _compile(fn, x, weight)
        torch.testing.assert_close(out, fn(x, weight), rtol=tol, atol=tol)
    assert graph.count(RMS_OP) == 1 and "rsqrt" not in graph
    assert code.count(".run(") == 1 and "triton_tem_fused_mul_rms_norm" in code and "triton_red" not in code


class _Block(nn.Module):
    """Three norms in a training step: Hugging Face's on the input (x does not require grad: the forward pattern,
    the weight's gradient reads its output), Llama's on a value read by it alone (the joint pattern), Llama's in a
    residual stream (the forward pattern with its rsqrt, the stock backward)."""

    def __init__(self, dim: int = 48) -> None:
        super().__init__()
        self.w1 = nn.Parameter(torch.rand(dim) + 0.5)
        self.w2 = nn.Parameter(torch.rand(dim) + 0.5)
        self.w3 = nn.Parameter(torch.rand(dim) + 0.5)
        self.lin = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = llama(x + self.lin(hugging_face(x, self.w1)), self.w2)
        return residual(h, self.w3).sum(-1)


@inductor_config.patch({"test_configs.max_mm_configs": 1})  # keep the autotuning short
def test_training_step_gradients_match_eager(compile_and_train):
    """Training: the three norms are the op in the joint graph, no rsqrt left; output and every parameter's gradient
    match eager's."""
    recorder = _Recorder()
    torch.manual_seed(0)
    with inductor_config.patch(joint_custom_post_pass=recorder):
        compile_and_train(_Block, torch.randn(2, 8, 48), rtol=1e-3, atol=1e-4)  # three norms of f32 rounding
    graph = "\n".join(recorder.graphs)
    assert graph.count(f"{RMS_OP}](") == 3 and "rsqrt" not in graph


@pytest.mark.parametrize("templates", [True, False])
def test_near_miss_and_switch_off_stay_stock(mtia_inductor, templates):
    """Compiled: a sum where the mean goes stays stock Inductor next to Llama's form, which is the op only while
    `norm_templates` is on; both match eager."""
    from mtia_xdsl.runtime import inductor_config as mtia_config

    def model(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        return sum_not_mean(x, weight) + 2 * llama(x, weight)

    torch.manual_seed(0)
    x, weight = torch.randn(8, 48), torch.rand(48) + 0.5
    with torch.no_grad(), mtia_config.patch(norm_templates=templates):
        out, code, graph = _compile(model, x, weight)
    torch.testing.assert_close(out, model(x, weight), rtol=1e-5, atol=1e-5)
    assert (
        graph.count(RMS_OP) == templates
        and "sum.dim_IntList" in graph
        and graph.count("aten.rsqrt.default") == 2 - templates
    )
    assert ("rms_norm" in code) == templates


def test_dynamic_rows_stay_stock(mtia_inductor):
    """Rows marked dynamic: `unsupported_rms_norm` refuses symbolic sizes, the norm stays stock (no op) and matches
    eager at two row counts."""
    torch.manual_seed(0)
    x, weight = torch.randn(8, 48), torch.rand(48) + 0.5
    torch._dynamo.mark_dynamic(x, 0)
    with torch.no_grad():
        out, _, graph = _compile(llama, x, weight)
        torch.testing.assert_close(out, llama(x, weight), rtol=1e-5, atol=1e-5)
        x13 = torch.randn(13, 48)
        torch.testing.assert_close(torch.compile(llama)(x13, weight), llama(x13, weight), rtol=1e-5, atol=1e-5)
    assert "aten.rsqrt.default" in graph and RMS_OP not in graph

"""LayerNorm and RMSNorm forward as mtia_xdsl's Triton templates (mtia_xdsl/runtime/inductor_norms.py): the custom
ops' host math against aten, the rules, and torch.compile with our backend (epilogue fusion, one launch, DMA loads,
the off switch, the fallback)."""

import pytest
import torch
import torch.nn.functional as F

from mtia_xdsl.runtime import inductor, inductor_norms, toolchain
from mtia_xdsl.runtime import inductor_config as mtia_config

RMS = torch.ops.aten._fused_rms_norm.default
"""What the RMSNorm decomposition replaces (on "cpu", `F.rms_norm` does not call it: see `decompose_rms_norm`)."""


def _recorded_modules(monkeypatch) -> list[str]:
    """The text of every program launched through our driver (filled as the compiled code runs)."""
    programs: list[str] = []
    run_kernel = toolchain.run_kernel

    def recording_run(module, *args, **kwargs):
        programs.append(str(module))
        return run_kernel(module, *args, **kwargs)

    monkeypatch.setattr(toolchain, "run_kernel", recording_run)
    return programs


def _epilogues(y: torch.Tensor, residual: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The pointwise ops that follow a norm in models: GELU, SiLU, ReLU, a residual add, a scale, a cast."""
    return F.gelu(y), F.silu(y), F.relu(y), y + residual, y * 0.5, y.to(torch.bfloat16)


def test_layer_norm_op_matches_aten():
    """y, mean and rstd of `mtia_xdsl::layer_norm` (host math) against aten's native_layer_norm, with and without
    weight and bias."""
    g = torch.Generator().manual_seed(0)
    x, w, b = torch.randn(5, 48, generator=g), torch.randn(48, generator=g), torch.randn(48, generator=g)
    for weight, bias in [(w, b), (None, None), (w, None)]:
        y, mean, rstd = inductor_norms.layer_norm(x, weight, bias, 1e-5)
        ey, emean, erstd = torch.native_layer_norm(x, [48], weight, bias, 1e-5)
        torch.testing.assert_close(y, ey)
        torch.testing.assert_close((mean, rstd), (emean.view(5), erstd.view(5)))
        assert mean.dtype == rstd.dtype == torch.float32


def test_rms_norm_op_matches_aten():
    """y and rstd of `mtia_xdsl::rms_norm` (host math) against aten's _fused_rms_norm, bf16 in, f32 statistics."""
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(5, 48, generator=g).bfloat16(), torch.randn(48, generator=g).bfloat16()
    y, rstd = inductor_norms.rms_norm(x, w, 1e-6)
    ey, erstd = RMS(x, [48], w, 1e-6)
    torch.testing.assert_close(y, ey)
    torch.testing.assert_close(rstd, erstd.view(5))
    assert y.dtype == torch.bfloat16 and rstd.dtype == torch.float32


def test_block_m_choices_fit_the_local_store():
    """Every offered BLOCK_M's live tiles fit LS; no more rows than the tensor has (rounded up to a power of
    two); none when one row does not fit."""
    choices = inductor_norms.block_m_choices("layer_norm", 1000, 4000, ls_bytes=384 * 1024)
    tiles = inductor_norms.LIVE_TILES["layer_norm"]
    assert choices and all(m * 4096 * 4 * tiles <= 384 * 1024 for m in choices)
    assert 2 * choices[-1] * 4096 * 4 * tiles > 384 * 1024  # the largest that fits is offered
    assert inductor_norms.block_m_choices("rms_norm", 3, 48) == [1, 2, 4]
    assert inductor_norms.block_m_choices("layer_norm", 8, 1 << 20) == []


@pytest.mark.parametrize(
    ("x", "shape", "weight", "reason"),
    [
        (torch.zeros(4, 4, 12), [4, 12], None, "the last dimension only"),
        (torch.zeros(4, 48, dtype=torch.float64), [48], None, "dtypes torch.float64"),
        (torch.zeros(4, 48), [48], torch.zeros(48, dtype=torch.float64), "dtypes torch.float32, torch.float64"),
        (torch.zeros(2, 1 << 20), [1 << 20], None, "does not fit a PE's LS"),
        (torch.zeros(0, 48), [48], None, "empty x"),
    ],
)
def test_unsupported_names_the_case(x, shape, weight, reason):
    """Normalising over several dimensions, f64, rows too long for LS and empty inputs stay stock lowering, each
    with the reason the coverage table prints; both rules say the same."""
    for got in (
        inductor_norms.unsupported_layer_norm(x, shape, weight, None),
        inductor_norms.unsupported_rms_norm(x, shape, weight),
    ):
        assert got is not None and reason in got, got
    assert inductor_norms.unsupported_layer_norm(torch.zeros(4, 48), [48], None, torch.zeros(48)) is None


def test_decompositions_are_stock_when_our_backend_is_inactive(monkeypatch):
    """With Inductor's C++ CPU backend (our backend inactive) the decompositions are torch's own: the custom ops
    are not called."""
    import torch._inductor.config as inductor_config

    def refuse(*args):
        raise AssertionError("mtia_xdsl's op called with our backend inactive")

    monkeypatch.setattr(inductor_norms, "layer_norm", refuse)
    monkeypatch.setattr(inductor_norms, "rms_norm", refuse)
    x, w = torch.randn(2, 3, 48), torch.randn(48)
    with inductor_config.patch(cpu_backend="cpp"):
        assert not inductor.mtia_active()
        got = inductor_norms.decompose_layer_norm(x, [48], w, None, 1e-5)
        rms = inductor_norms.decompose_rms_norm(x, [48], w, None)
    for g, e in zip((*got, *rms), (*torch.native_layer_norm(x, [48], w, None, 1e-5), *RMS(x, [48], w, None))):
        torch.testing.assert_close(g, e)


def test_layer_norm_and_each_epilogue_are_one_dma_launch(mtia_inductor, monkeypatch):
    """A post-norm residual block, LayerNorm(x + h) of [2, 3, 48] rows (N=48: not a power of two; M=6 rows in
    blocks of 4: the last block partial), followed by GELU, SiLU, ReLU, a residual add, a scale and a cast to bf16:
    one template launch computes the add (a prologue) and all six epilogues, matching eager; its row blocks are
    read by DMA with the row sums on the RE, no scalar gather."""
    from torch._inductor.utils import run_and_get_code

    monkeypatch.setattr(inductor_norms, "block_m_choices", lambda *args, **kwargs: [4])
    programs = _recorded_modules(monkeypatch)
    g = torch.Generator().manual_seed(0)
    x, h, residual = (torch.randn(2, 3, 48, generator=g) for _ in range(3))
    w, b = torch.randn(48, generator=g), torch.randn(48, generator=g)

    def f(x, h, residual, w, b):
        return _epilogues(F.layer_norm(x + h, (48,), w, b), residual)

    with torch.no_grad():  # an inference graph (`take_templates`)
        out, codes = run_and_get_code(torch.compile(f), x, h, residual, w, b)  # one choice: no autotuning launch
    torch.testing.assert_close(out, f(x, h, residual, w, b), rtol=1e-5, atol=1e-5)
    code = "\n".join(codes)
    assert code.count("@triton.jit") == 1 and "triton_tem_" in code, code  # no kernel of its own for x + h
    assert len(programs) == 1, len(programs)
    assert "mtia.dma_load" in programs[0] and "mtia.re_reduce" in programs[0] and "mtia.gather" not in programs[0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rms_norm_and_each_epilogue_are_one_launch(mtia_inductor, monkeypatch, dtype):
    """`mtia_xdsl::rms_norm` (what `inductor_rms_norm_pattern` makes of a hand-written RMSNorm) of 5 rows of 48 with
    the same six epilogues: one template launch, matching eager (bf16: y rounded to bf16 before each epilogue, as
    eager's)."""
    from torch._inductor.utils import run_and_get_code

    programs = _recorded_modules(monkeypatch)
    g = torch.Generator().manual_seed(0)
    x, residual, w = (torch.randn(*shape, generator=g).to(dtype) for shape in ((5, 48), (5, 48), (48,)))

    def f(x, residual, w):
        return _epilogues(torch.ops.mtia_xdsl.rms_norm(x, w, 1e-6)[0], residual)

    compiled = torch.compile(f)
    out, codes = run_and_get_code(compiled, x, residual, w)
    programs.clear()  # those of autotuning
    compiled(x, residual, w)
    tol = 1e-5 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(out, f(x, residual, w), rtol=tol, atol=tol)
    code = "\n".join(codes)
    assert code.count("@triton.jit") == 1 and "triton_tem_" in code, code
    assert len(programs) == 1, len(programs)


def test_rms_norm_decomposition_matches_aten(mtia_inductor):
    """`decompose_rms_norm` with our backend active (on "cpu" `F.rms_norm` never reaches `aten._fused_rms_norm`,
    whose kernel there is CompositeImplicit, so it is called directly): aten's shapes and dtypes, through the op."""
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(2, 3, 48, generator=g).half(), torch.randn(48, generator=g).half()
    got, expected = inductor_norms.decompose_rms_norm(x, [48], w, None), RMS(x, [48], w, None)
    for g_, e in zip(got, expected, strict=True):
        assert (g_.shape, g_.dtype) == (e.shape, e.dtype)
        torch.testing.assert_close(g_, e, rtol=2e-3, atol=2e-3)


def test_switch_off_gives_stock_lowering(mtia_inductor):
    """`inductor_config.patch(norm_templates=False)`: LayerNorm + GELU is Inductor's own kernel, no template."""
    from torch._inductor.utils import run_and_get_code

    x, w = torch.randn(6, 48), torch.randn(48)

    def f(x, w):
        return F.gelu(F.layer_norm(x, (48,), w))

    with mtia_config.patch(norm_templates=False), torch.no_grad():
        out, codes = run_and_get_code(torch.compile(f), x, w)
    torch.testing.assert_close(out, f(x, w), rtol=1e-5, atol=1e-5)
    code = "\n".join(codes)
    assert "triton_tem_" not in code and "mtia_xdsl" not in code and "triton_per_" in code


def test_unsupported_shape_falls_back_to_stock_lowering(mtia_inductor):
    """A LayerNorm over the last two dimensions: the rule gives its reason, and Inductor's own lowering computes it."""
    from torch._inductor.utils import run_and_get_code

    x = torch.randn(3, 4, 12)
    assert "the last dimension only" in inductor_norms.unsupported_layer_norm(x, [4, 12], None, None)

    def f(x):
        return F.relu(F.layer_norm(x, (4, 12)))

    with torch.no_grad():
        out, codes = run_and_get_code(torch.compile(f), x)
    torch.testing.assert_close(out, f(x), rtol=1e-5, atol=1e-5)
    assert "triton_tem_" not in "\n".join(codes)


def test_gathering_producer_keeps_stock_lowering(mtia_inductor):
    """LayerNorm of an embedding lookup (inference): the lookup, an indirect read, would be a prologue the template
    reads by scalar gathers, so Inductor's own reduction kernel (which reads it by rows) computes both: one kernel,
    no template; matches eager."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(50, 48), torch.nn.LayerNorm(48))
    ids = torch.randint(0, 50, (2, 8))
    with torch.no_grad():
        out, codes = run_and_get_code(torch.compile(model), ids)
        torch.testing.assert_close(out, model(ids), rtol=1e-5, atol=1e-5)
    code = "\n".join(codes)
    assert "triton_tem_" not in code and code.count("@triton.jit") == 1, code


def test_training_step_takes_the_template(compile_and_train):
    """A LayerNorm + GELU training step (its graph traced with grad enabled): the forward's norm, whose input is a
    graph input (no producer to fuse), is the template with GELU as its epilogue, writing the statistics the
    backward reads; output and gradients match eager. 16 rows: Inductor unrolls the weight-gradient reduction of 8
    rows or fewer into a kernel with more CBs than the CP has IDs."""
    torch.manual_seed(0)
    codes = compile_and_train(
        lambda: torch.nn.Sequential(torch.nn.LayerNorm(48), torch.nn.GELU()),
        torch.randn(2, 8, 48),
        rtol=1e-5,
        atol=1e-5,
    )
    assert "triton_tem_" in codes[0] and "'STORE_STATS': True" in codes[0], codes[0]


def test_norm_read_through_a_permutation_keeps_stock_lowering(mtia_inductor):
    """A norm whose output is read through a transpose (MLP-Mixer's token mixing) keeps Inductor's own lowering
    (`_permuted_consumer`: the transpose cannot be the template's epilogue); the result matches eager."""
    from torch._inductor.utils import run_and_get_code

    g = torch.Generator().manual_seed(0)
    x, w, b = torch.randn(2, 8, 48, generator=g), torch.randn(48, generator=g), torch.randn(48, generator=g)

    def f(x, w, b):
        return F.layer_norm(x, (48,), w, b).transpose(1, 2) * 2.0

    with torch.no_grad():
        out, codes = run_and_get_code(torch.compile(f), x, w, b)
    torch.testing.assert_close(out, f(x, w, b), rtol=1e-5, atol=1e-5)
    assert "triton_tem_" not in "\n".join(codes), codes


def test_statistics_are_written_when_read(mtia_inductor):
    """A graph that reads mean and rstd of `mtia_xdsl::layer_norm` (as a backward would): the template also writes
    them (STORE_STATS, buffers passed as mutated inputs), and GELU still fuses as its epilogue: one kernel."""
    from torch._inductor.utils import run_and_get_code

    g = torch.Generator().manual_seed(0)
    x, w, b = torch.randn(10, 48, generator=g), torch.randn(48, generator=g), torch.randn(48, generator=g)

    def f(x, w, b):
        y, mean, rstd = torch.ops.mtia_xdsl.layer_norm(x, w, b, 1e-5)
        return F.gelu(y), mean, rstd

    with torch.no_grad():
        out, codes = run_and_get_code(torch.compile(f), x, w, b)
    torch.testing.assert_close(out, f(x, w, b), rtol=1e-5, atol=1e-5)
    code = "\n".join(codes)
    assert code.count("@triton.jit") == 1 and "'STORE_STATS': True" in code, code


def test_cache_key_holds_mtia_xdsl_settings():
    """The uuid of mtia_xdsl's custom passes (in Inductor's FX graph and AOTAutograd cache keys) changes with
    `inductor_config`: output code compiled with the templates is not replayed once they are switched off."""
    from torch._inductor.custom_graph_pass import CustomGraphPass

    on = inductor.pass_uuid(None, CustomGraphPass)
    with mtia_config.patch(norm_templates=False):
        off = inductor.pass_uuid(None, CustomGraphPass)
    assert on != off and on == inductor.pass_uuid(None, CustomGraphPass)


def test_wide_rows_with_a_two_operand_epilogue_fit_ls(mtia_inductor):
    """A LayerNorm of 16384 columns whose output is read twice with another operand (`gelu(y) + r * y`, all fused
    into the template): the template's tiles plus its epilogue's must fit a PE's LS, else the norm keeps
    Inductor's lowering. A BLOCK_M whose norm tiles alone filled LS exactly (6 x 64 KiB) used to fail to compile
    (LocalStorageOutOfResources, 4 bytes over) once the epilogue fused in."""
    g = torch.Generator().manual_seed(0)
    ln = torch.nn.LayerNorm(16384).eval()
    x, r = torch.randn(2, 16384, generator=g), torch.randn(2, 16384, generator=g)

    def f(x, r):
        return F.gelu(ln(x)) + r * ln(x)

    with torch.no_grad():
        torch.testing.assert_close(torch.compile(f)(x, r), f(x, r), rtol=1e-5, atol=1e-5)

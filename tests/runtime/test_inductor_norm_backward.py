"""mtia_xdsl's LayerNorm and RMSNorm backward kernel (mtia_xdsl/runtime/inductor_norm_backward.py): the custom ops
against torch's stock decompositions, the BLOCK_M autotuning by simulated time, and training steps through
torch.compile with the kernel in the backward's output code (or not, with the switch off or an unsupported case)."""

import pytest
import torch
import triton
from torch._decomp import decompositions as stock

from mtia_xdsl.runtime import inductor_config, toolchain
from mtia_xdsl.runtime import inductor_norm_backward as nb

LN_OP = "torch.ops.mtia_xdsl.layer_norm_backward.default("
KERNEL = "_norm_backward_kernel"


def _inputs(m, n, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(m, n, generator=g).to(dtype) for _ in range(2)] + [torch.randn(n, generator=g).to(dtype)]


@pytest.fixture
def one_block_m(monkeypatch):
    """Run the kernel with one given BLOCK_M (no autotuning): `one_block_m(4)`."""

    def use(block_m):
        monkeypatch.setattr(nb._norm_backward_kernel, "configs", [triton.Config({"BLOCK_M": block_m})])
        monkeypatch.setattr(nb._norm_backward_kernel, "cache", {})

    return use


@pytest.mark.parametrize(
    ("dtype", "block_m", "affine", "mask", "tol"),
    [
        (torch.float32, 4, True, [True, True, True], 1e-5),  # 75 rows: the last block of 4 partial
        (torch.float32, 32, False, [True, False, False], 1e-5),  # 3 programs of 32 rows, 61 programs without rows
        (torch.float16, 1, True, [False, True, True], 2e-3),  # 75 rows over 64 programs: program 0..10 loop twice
        (torch.bfloat16, 4, True, [True, True, False], 2e-2),
    ],
)
def test_layer_norm_backward_matches_stock(one_block_m, dtype, block_m, affine, mask, tol):
    """dx, and dw and db as the sums of the partials, of 75 rows of 48 (a block of 64 columns, 16 masked) equal
    the stock decomposition's; outputs output_mask switches off are empty."""
    one_block_m(block_m)
    x, dy, w = _inputs(75, 48, dtype)
    b = torch.randn(48).to(dtype) if affine else None
    w = w if affine else None
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [48], w, b, 1e-5)
    dx, part = nb.layer_norm_backward(dy, x, mean, rstd, w, mask)
    expected = stock.native_layer_norm_backward(dy, x, [48], mean, rstd, w, b, [True, True, True])
    assert dx.shape == (x.shape if mask[0] else (0,)) and dx.dtype == dtype
    sums = iter(part.sum(0).to(dtype))  # dw's, if taken, then db's
    want = [mask[0], mask[1] and affine, mask[2]]
    assert part.shape == (min(64, 75), want[1] + want[2], 48)
    got = [dx, next(sums) if want[1] else None, next(sums) if want[2] else None]
    for on, g, e in zip(want, got, expected, strict=True):
        if on and e is not None:
            torch.testing.assert_close(g, e, rtol=tol, atol=tol * 4)


@pytest.mark.parametrize(
    ("dtype", "block_m", "weighted", "tol"), [(torch.float32, 4, True, 1e-5), (torch.bfloat16, 2, False, 2e-2)]
)
def test_rms_norm_backward_matches_stock(one_block_m, dtype, block_m, weighted, tol):
    """dx and dw of RMSNorm over rows of 48 (3-D input: rows are its first two dimensions) equal the stock
    decomposition's."""
    one_block_m(block_m)
    x, dy, w = (t.view(3, 25, 48) if t.dim() == 2 else t for t in _inputs(75, 48, dtype))
    w = w if weighted else None
    rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)
    dx, part = nb.rms_norm_backward(dy, x, rstd, w, [True, True])
    expected = stock._fused_rms_norm_backward(dy, x, [48], rstd, w, [True, True])
    torch.testing.assert_close(dx, expected[0], rtol=tol, atol=tol * 4)
    assert part.shape == (64, int(weighted), 48)
    if weighted:
        torch.testing.assert_close(part.sum(0)[0].to(dtype), expected[1], rtol=tol, atol=tol * 4)


def test_a_few_rows_are_one_program_whose_partials_are_the_sums():
    """16 rows (SINGLE_PROGRAM_ROWS): one program, so the partials [1, 2, N] are dw and db, no reduction needed."""
    x, dy, w = _inputs(nb.SINGLE_PROGRAM_ROWS, 48, torch.float32)
    b = torch.randn(48)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [48], w, b, 1e-5)
    dx, part = nb.layer_norm_backward(dy, x, mean, rstd, w, [True, True, True])
    expected = stock.native_layer_norm_backward(dy, x, [48], mean, rstd, w, b, [True, True, True])
    assert part.shape == (1, 2, 48)
    for g, e in zip([dx, part[0, 0], part[0, 1]], expected, strict=True):
        torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)


def test_block_m_is_chosen_by_simulated_time():
    """Triton's autotuner times each BLOCK_M that fits with mtia_xdsl's driver's benchmarker (the launch's modelled
    time), the same every run, and launches the fastest."""
    from triton.runtime import driver

    kernel = nb._norm_backward_kernel
    assert kernel.do_bench == driver.active.get_benchmarker()
    x, dy, w = _inputs(200, 48, torch.float32)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [48], w, None, 1e-5)
    timings = []
    for _ in range(2):
        kernel.cache.clear()
        nb.layer_norm_backward(dy, x, mean, rstd, w, [True, True, False])
        timings.append({c.kwargs["BLOCK_M"]: t for c, t in kernel.configs_timings.items()})
    assert sorted(timings[0]) == [1, 2, 4]  # 200 rows over 64 programs: at most 4 rows each
    assert timings[0] == timings[1]
    assert kernel.best_config.kwargs["BLOCK_M"] == min(timings[0], key=timings[0].get)


def test_configs_that_cannot_fit_local_storage_are_pruned():
    """Rows of 4096 (f32 tiles of 16 KiB a row): BLOCK_M 1 and 2 fit a PE's 384 KiB, 4 and more do not."""
    assert [m for m in nb.BLOCK_MS if nb.fits_local_storage(m, 4096)] == [1, 2]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"normalized_shape": [6, 8]}, "normalized_shape [6, 8] (the last dimension only)"),
        ({"x": torch.randn(4, 48, dtype=torch.float64)}, "dtypes x torch.float64"),
        ({"weight": torch.randn(48, dtype=torch.float64)}, "weight torch.float64"),
        ({"x": torch.randn(1, 1 << 17), "normalized_shape": [1 << 17]}, "rows of 131072"),
        ({"x": torch.randn(0, 48)}, "an empty x"),
    ],
)
def test_unsupported_names_the_case(change, reason):
    """Normalising more than the last dimension, f64, rows too long for LS and an empty input are left to the
    stock decomposition, each with the reason the coverage table prints."""
    args = {"x": torch.randn(4, 48), "normalized_shape": [48], "weight": torch.randn(48)} | change
    x = args["x"]
    ln = nb.unsupported_layer_norm_backward(x, x, args["normalized_shape"], x, x, args["weight"], None)
    rms = nb.unsupported_rms_norm_backward(x, x, args["normalized_shape"], x, args["weight"])
    assert ln is not None and reason in ln, ln
    assert rms is not None and reason in rms, rms
    assert (
        nb.unsupported_layer_norm_backward(*[torch.randn(4, 48)] * 2, [48], *[torch.randn(4, 1)] * 2, None, None)
        is None
    )


def _launches(monkeypatch) -> list[str]:
    """Record the kernel names launched through our driver (filled as the compiled code runs)."""
    from mtia_xdsl.runtime.triton_backend.compiler import kernel_name

    names: list[str] = []
    run_kernel = toolchain.run_kernel

    def recording_run(module, *args, **kwargs):
        names.append(kernel_name(module))
        return run_kernel(module, *args, **kwargs)

    monkeypatch.setattr(toolchain, "run_kernel", recording_run)
    return names


def _train(make_norm, x):
    """A compiled training step (forward, `out.pow(2).sum().backward()`) of one norm from `make_norm()` against
    an eager copy: asserts the grads of x and of every parameter match; returns the step's generated code."""
    from torch._inductor.utils import run_and_get_code

    norm, ref = make_norm(), make_norm()
    with torch.no_grad():
        for p in norm.parameters():
            p.uniform_(0.5, 1.5)
    ref.load_state_dict(norm.state_dict())
    xs = [x.clone().requires_grad_() for _ in range(2)]

    def step(t):
        norm(t).pow(2).sum().backward()

    _, codes = run_and_get_code(torch.compile(step), xs[0])
    ref(xs[1]).pow(2).sum().backward()
    for got, want in [(xs[0], xs[1]), *zip(norm.parameters(), ref.parameters(), strict=True)]:
        torch.testing.assert_close(got.grad, want.grad, rtol=1e-4, atol=1e-4)
    return "\n".join(codes)


@pytest.mark.parametrize(
    "make_norm",
    [
        lambda: torch.nn.LayerNorm(48),
        lambda: torch.nn.LayerNorm(48, bias=False),
        lambda: torch.nn.LayerNorm(48, elementwise_affine=False),
    ],
    ids=["affine", "no-bias", "no-affine"],
)
def test_layer_norm_training_step_runs_our_backward(mtia_inductor, monkeypatch, make_norm):
    """A LayerNorm training step over [3, 25, 48] (75 rows, rows of 48): the backward's output code calls
    mtia_xdsl::layer_norm_backward, whose kernel runs on MTIA; the grads of x, weight and bias are eager's."""
    launches = _launches(monkeypatch)
    code = _train(make_norm, torch.randn(3, 25, 48))
    assert code.count(LN_OP) == 1, code
    assert KERNEL in launches, launches  # (once per BLOCK_M the autotuning times, then the chosen one)


def test_switch_off_keeps_the_stock_backward(mtia_inductor, monkeypatch):
    """With `inductor_config.norm_templates` off, the backward is the stock decomposition (no call of our op, our
    kernel not launched) and the grads are still eager's."""
    launches = _launches(monkeypatch)
    with inductor_config.patch(norm_templates=False):
        code = _train(lambda: torch.nn.LayerNorm(48), torch.randn(75, 48))
    assert LN_OP not in code and KERNEL not in launches


def test_unsupported_case_falls_back_and_says_why(mtia_inductor, monkeypatch):
    """A LayerNorm over the last two dimensions is not taken: the stock backward runs (grads are eager's) and
    `unsupported_layer_norm_backward` says why."""
    reasons: list[str | None] = []
    rule = nb.unsupported_layer_norm_backward
    monkeypatch.setattr(nb, "unsupported_layer_norm_backward", lambda *a: reasons.append(rule(*a)) or reasons[-1])
    launches = _launches(monkeypatch)
    code = _train(lambda: torch.nn.LayerNorm([5, 48]), torch.randn(3, 5, 48))
    assert LN_OP not in code and KERNEL not in launches
    assert reasons and all(r is not None and "normalized_shape [5, 48]" in r for r in reasons), reasons


def test_fused_rms_norm_backward_in_a_graph_runs_our_kernel(mtia_inductor, monkeypatch):
    """A graph calling `aten._fused_rms_norm_backward` (no CPU kernel: eager is the stock decomposition) calls
    mtia_xdsl::rms_norm_backward in its output code; dx and dw are the stock decomposition's."""
    from torch._inductor.utils import run_and_get_code

    x, dy, w = _inputs(75, 48, torch.float32)
    rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)

    def backward(dy, x, rstd, w):
        return torch.ops.aten._fused_rms_norm_backward(dy, x, [48], rstd, w, [True, True])

    launches = _launches(monkeypatch)
    got, codes = run_and_get_code(torch.compile(backward), dy, x, rstd, w)
    for g, e in zip(got, stock._fused_rms_norm_backward(dy, x, [48], rstd, w, [True, True]), strict=True):
        torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)
    assert "torch.ops.mtia_xdsl.rms_norm_backward.default(" in "\n".join(codes)
    assert KERNEL in launches, launches


def test_rms_norm_training_step_runs_our_backward(mtia_inductor, monkeypatch):
    """nn.RMSNorm's training step gives eager's grads, with dx from our kernel. On CPU, torch 2.13's
    `torch.rms_norm` is a composite (pow, mean, rsqrt, mul); inductor_rms_norm_pattern's joint pattern rewrites it
    into a function whose backward is `aten._fused_rms_norm_backward`, which our decomposition takes."""
    launches = _launches(monkeypatch)
    code = _train(lambda: torch.nn.RMSNorm(48), torch.randn(75, 48))
    assert "torch.ops.mtia_xdsl.rms_norm_backward.default(" in code
    assert KERNEL in launches, launches

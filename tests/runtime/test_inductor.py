"""torch.compile with `cpu_backend = "triton"`: Inductor's autotuning by simulated MTIA time, MTIA device
properties, and the hooks' loud failure when torch changes (mtia_xdsl/runtime/inductor.py)."""

import pytest
import torch
import torch._inductor.config as inductor_config
from torch._inductor.runtime import benchmarking, triton_heuristics
from torch._inductor.runtime.hints import DeviceProperties

import mtia_xdsl
from mtia_xdsl.options import MtiaOptions
from mtia_xdsl.runtime import inductor, toolchain
from mtia_xdsl.runtime import inductor_config as mtia_config


class EmbeddingLayerNorm(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding = torch.nn.Embedding(1000, 64)
        self.norm = torch.nn.LayerNorm(64)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.norm(self.embedding(ids))


def test_device_properties_describe_the_machine(mtia_inductor):
    machine = MtiaOptions().machine_config
    props = DeviceProperties.create(torch.device("cpu"))
    assert props.multi_processor_count == machine.n_pes
    from triton.runtime import driver

    assert driver.active.utils.get_device_properties(0)["max_shared_mem"] == machine.ls_bytes


def test_host_properties_when_backend_is_cpp():
    inductor.install()
    from torch._dynamo.device_interface import CpuInterface

    with inductor_config.patch(cpu_backend="cpp"):
        assert not isinstance(CpuInterface.Worker.get_device_properties(), inductor.MtiaDeviceProperties)


@mtia_config.patch(norm_templates=False)
def test_autotuning_picks_best_simulated_config(mtia_inductor, monkeypatch):
    """The embedding + LayerNorm kernel: every XBLOCK is timed by the model; the fastest is launched, and two
    compiles from scratch give the same kernels and the same simulated times (run-to-run identity). Stock
    lowering of the LayerNorm (`norm_templates=False`): one generic kernel, autotuned by its XBLOCK."""
    from torch._inductor.utils import run_and_get_code

    timings: list[dict[str, float]] = []
    original = triton_heuristics.CachingAutotuner.benchmark_all_configs

    def record(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        timings.append({str(launcher.config.kwargs): t for launcher, t in result.items()})
        return result

    monkeypatch.setattr(triton_heuristics.CachingAutotuner, "benchmark_all_configs", record)
    torch.manual_seed(0)
    model = EmbeddingLayerNorm()
    ids = torch.randint(0, 1000, (32,))
    chosen_us, codes = [], []
    for _ in range(2):
        torch._dynamo.reset()
        out, code = run_and_get_code(torch.compile(model), ids)
        torch.testing.assert_close(out, model(ids))
        chosen_us.append(mtia_xdsl.last_report().time_us)
        codes.append([inductor.normalized_output_code(c) for c in code])
    assert len(timings) == 2 and len(timings[0]) > 1, timings
    assert timings[0] == timings[1]  # simulated: the same every run
    assert codes[0] == codes[1] and "XBLOCK" in codes[0][0]  # the same kernels, the same chosen config
    assert chosen_us[0] == chosen_us[1]
    assert chosen_us[0] / 1000.0 == pytest.approx(min(timings[0].values()))


def test_stock_choices_time_on_the_host_and_describe_the_host(mtia_inductor, monkeypatch):
    """Inside `stock_choices()` (the baseline of benchmarks/inductor.py) Inductor's own choices come back:
    its benchmarker times on the host's wall clock (never asking the driver for simulated time) and device
    properties describe the host; outside, both describe MTIA again."""
    from torch._dynamo.device_interface import CpuInterface
    from triton.runtime import driver

    asked: list[object] = []
    monkeypatch.setattr(driver.active, "simulated_time_ms", lambda fn: asked.append(fn) or 1.0)
    calls = []
    with inductor.stock_choices():
        host_cores = DeviceProperties.create(torch.device("cpu")).multi_processor_count
        assert host_cores == CpuInterface.Worker.get_device_properties().multi_processor_count
        assert not isinstance(CpuInterface.Worker.get_device_properties(), inductor.MtiaDeviceProperties)
        benchmarking.benchmarker.benchmark(lambda: calls.append(1), device="cpu", warmup=1, rep=1)
    assert not asked and len(calls) >= 2  # a wall-clock loop: warmup and repetitions
    assert DeviceProperties.create(torch.device("cpu")).multi_processor_count == MtiaOptions().machine_config.n_pes
    assert benchmarking.benchmarker.benchmark(lambda: None, device="cpu") == 1.0 and len(asked) == 1


def test_missing_torch_attribute_fails_loudly(monkeypatch):
    monkeypatch.setattr(inductor, "_installed", False)
    monkeypatch.delattr(benchmarking, "register_benchmarker")
    with pytest.raises(inductor.InductorHookError, match=r"register_benchmarker.*torch 2\.\d+.*tested with torch"):
        inductor.install()


def test_torch_internal_names_the_first_missing_piece():
    with pytest.raises(inductor.InductorHookError, match=r"`torch\._inductor\.config\.no_such_setting`"):
        inductor._torch_internal("torch._inductor.config.no_such_setting.default")
    with pytest.raises(inductor.InductorHookError, match=r"`no_such_package\.x`, which is not importable"):
        inductor._torch_internal("no_such_package.x")


@inductor_config.patch({"test_configs.max_mm_configs": 2})  # keep the autotuning short
def test_matmul_epilogue_is_a_dpe_template(mtia_inductor):
    """addmm + relu: a Triton template with the fused epilogue, run on the DPE, not a host library call."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    linear = torch.nn.Linear(32, 16)
    x = torch.randn(8, 32)
    out, codes = run_and_get_code(torch.compile(lambda t: torch.relu(linear(t))), x)
    torch.testing.assert_close(out, torch.relu(linear(x)))
    code = "\n".join(codes)
    assert "extern_kernels.addmm" not in code and "extern_kernels.mm" not in code
    assert "def triton_tem_fused_addmm_relu" in code
    run = mtia_xdsl.last_run()
    assert any(c.kind == "dpe_matmul" for t in run.traces for c in t.commands)


@inductor_config.patch({"test_configs.max_mm_configs": 1})  # keep the autotuning short
def test_backward_matmuls_are_dpe_templates(mtia_inductor):
    """A training step's backward graph, compiled lazily at the first backward (after torch.compile's
    entry point returned), also turns its matmuls into templates: no host library call in either graph."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    linear = torch.nn.Linear(32, 16)
    x = torch.randn(8, 32)

    def step(t):
        loss = torch.relu(linear(t)).sum()
        loss.backward()
        return loss.detach()

    _, codes = run_and_get_code(torch.compile(step), x)
    code = "\n".join(codes)
    assert len(codes) >= 2 and linear.weight.grad is not None  # forward and backward graphs
    grad = linear.weight.grad.clone()
    linear.weight.grad = None
    torch.relu(linear(x)).sum().backward()
    torch.testing.assert_close(grad, linear.weight.grad)
    assert "extern_kernels." not in code
    assert code.count("def triton_tem_fused") >= 2  # the forward addmm and the backward's weight gradient


def test_gemm_settings_apply_again_after_a_patch_and_yield_to_the_user():
    assert inductor.gemm_config(inductor_config) == inductor.GEMM_CONFIG
    with inductor_config.patch(inductor.GEMM_CONFIG):
        pass
    assert inductor.gemm_config(inductor_config) == inductor.GEMM_CONFIG  # every compile, not only the first
    with inductor_config.patch(max_autotune_gemm_backends="ATEN,TRITON"):
        assert "max_autotune_gemm_backends" not in inductor.gemm_config(inductor_config)


@inductor_config.patch({"test_configs.max_mm_configs": 1})  # keep the autotuning short
def test_embedding_bag_runs_on_mtia_and_trains(mtia_inductor, monkeypatch):
    """nn.EmbeddingBag (mean, by offsets, an empty bag): no `_embedding_bag` host call but mtia_xdsl's
    gather-and-sum kernel, whose rows are an indexed DMA; output and the weight's gradient (backward from the
    kernel's offset2bag and bag sizes) match eager."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    bag, ref = torch.nn.EmbeddingBag(100, 16, mode="mean"), torch.nn.EmbeddingBag(100, 16, mode="mean")
    ref.load_state_dict(bag.state_dict())
    ids, offsets = torch.randint(0, 100, (20,)), torch.tensor([0, 3, 3, 10, 19])
    kinds: set[str] = set()
    run_kernel = toolchain.run_kernel

    def recording_run(*args, **kwargs):
        result = run_kernel(*args, **kwargs)
        kinds.update(c.kind for t in result.traces for c in t.commands)
        return result

    monkeypatch.setattr(toolchain, "run_kernel", recording_run)
    out, codes = run_and_get_code(torch.compile(lambda i, o: bag(i, o)), ids, offsets)
    expected = ref(ids, offsets)
    torch.testing.assert_close(out, expected)
    assert "_embedding_bag.default(" not in "\n".join(codes)
    assert "dma_gather_rows" in kinds and "dpe_matmul" not in kinds, kinds  # rows by indexed DMA, summed on the SE
    assert "torch.ops.mtia_xdsl.embedding_bag" in "\n".join(codes)
    out.pow(2).sum().backward()
    expected.pow(2).sum().backward()
    torch.testing.assert_close(bag.weight.grad, ref.weight.grad)


def test_convolution_with_bias_compiles_and_matches_eager(mtia_inductor, monkeypatch):
    """A conv with a bias: Inductor's Triton conv templates take no bias, so the hook peels it off (as
    Inductor does on every device but "cpu"); before, benchmarking a template choice that fit passed the
    bias as an extra argument and the compile failed ("too many positional arguments")."""
    from torch._inductor.select_algorithm import ExternKernelCaller
    from torch._inductor.utils import run_and_get_code

    # ATen's host call looks faster than any simulated time; it is still only a fallback
    monkeypatch.setattr(ExternKernelCaller, "benchmark", lambda self, *args, out: 1e-9)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU()).eval()
    x = torch.randn(2, 8, 8, 8)
    with torch.no_grad():
        out, codes = run_and_get_code(torch.compile(model), x)
        torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-4)
    code = "\n".join(codes)
    assert "extern_kernels.convolution" not in code and "triton_tem_fused_convolution" in code


def test_extern_choices_are_a_fallback_only():
    """A host library call has no MTIA time: it loses to any template that ran, and is kept when none did."""
    timings = {"aten": 0.001, "tem_a": 0.03, "tem_b": float("inf")}
    chosen = inductor.extern_as_fallback(timings, lambda c: c == "aten")
    assert chosen == {"aten": float("inf"), "tem_a": 0.03, "tem_b": float("inf")}
    none_ran = {"aten": 0.001, "tem_a": float("inf")}
    assert inductor.extern_as_fallback(none_ran, lambda c: c == "aten") == none_ran


def test_missing_select_algorithm_hook_fails_loudly(monkeypatch):
    from torch._inductor import select_algorithm

    monkeypatch.setattr(inductor, "_installed", False)
    monkeypatch.delattr(select_algorithm.AlgorithmSelectorCache, "benchmark")
    with pytest.raises(inductor.InductorHookError, match=r"AlgorithmSelectorCache\.benchmark.*tested with torch"):
        inductor.install()


class StackedBags(torch.nn.Module):
    """DLRM's embedding part: a dense feature and three sum bags of tables of different sizes, stacked."""

    def __init__(self) -> None:
        super().__init__()
        self.tables = torch.nn.ModuleList(torch.nn.EmbeddingBag(rows, 8, mode="sum") for rows in (50, 9, 30))

    def forward(self, dense: torch.Tensor, ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        feats = [torch.relu(dense)] + [t(ids[i] % t.num_embeddings, offsets) for i, t in enumerate(self.tables)]
        return torch.stack(feats, dim=1).sum(-1)


def test_stacked_embedding_bags_are_one_grouped_launch(mtia_inductor):
    """The three bags feeding one stack become one `mtia_xdsl::embedding_bag_cat` launch (no per-table op),
    in inference and in a training step's forward (which saves the op's per-table offset2bag and sizes for
    backward); output and gradients match eager."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    model, ref = StackedBags(), StackedBags()
    ref.load_state_dict(model.state_dict())
    dense, ids, offsets = torch.randn(4, 8), torch.randint(0, 50, (3, 12)), torch.tensor([0, 3, 3, 7])

    with torch.no_grad():
        out, codes = run_and_get_code(torch.compile(model), dense, ids, offsets)
        torch.testing.assert_close(out, ref(dense, ids, offsets))
    code = "\n".join(codes)
    assert code.count("torch.ops.mtia_xdsl.embedding_bag_cat.default(") == 1
    assert "torch.ops.mtia_xdsl.embedding_bag.default(" not in code

    torch._dynamo.reset()
    out, codes = run_and_get_code(torch.compile(model), dense, ids, offsets)
    expected = ref(dense, ids, offsets)
    torch.testing.assert_close(out, expected)
    code = "\n".join(codes)
    assert code.count("torch.ops.mtia_xdsl.embedding_bag_cat.default(") == 1
    assert "torch.ops.mtia_xdsl.embedding_bag.default(" not in code
    out.pow(2).sum().backward()
    expected.pow(2).sum().backward()
    for got, want in zip(model.parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(got.grad, want.grad)


def test_missing_custom_pass_hook_fails_loudly(monkeypatch):
    """install() names the missing class. The modules install() reads are imported first: run alone, importing
    `torch._inductor.autotune_process` after the class is gone fails on torch's own import of it, and install()
    would name that module instead."""
    import torch._inductor.autotune_process  # noqa: F401
    from torch._inductor import custom_graph_pass

    monkeypatch.setattr(inductor, "_installed", False)
    monkeypatch.delattr(custom_graph_pass, "CustomGraphPass")
    with pytest.raises(inductor.InductorHookError, match=r"CustomGraphPass.*tested with torch"):
        inductor.install()


def test_missing_template_choices_hook_fails_loudly(monkeypatch):
    from torch._inductor import choices

    monkeypatch.setattr(inductor, "_installed", False)
    monkeypatch.delattr(choices.InductorChoices, "_finalize_template_configs")
    with pytest.raises(inductor.InductorHookError, match=r"InductorChoices\._finalize_template_configs.*tested with"):
        inductor.install()


class Towers(torch.nn.Module):
    """Two-tower retrieval's embedding part: a mean bag per tower (independent of each other), each into its own
    linear layer; with `chained`, the item tower's ids depend on the user tower's bag (so the bags cannot share
    a launch), and a sum bag of the same table width (another mode: another launch)."""

    def __init__(self, chained: bool = False) -> None:
        super().__init__()
        self.chained = chained
        self.user_emb = torch.nn.EmbeddingBag(40, 8, mode="mean")
        self.item_emb = torch.nn.EmbeddingBag(30, 8, mode="mean")
        self.extra_emb = torch.nn.EmbeddingBag(20, 8, mode="sum")
        self.user, self.item = torch.nn.Linear(8, 4), torch.nn.Linear(8, 4)

    def forward(self, user_ids: torch.Tensor, item_ids: torch.Tensor) -> torch.Tensor:
        u = self.user_emb(user_ids)
        if self.chained:
            item_ids = (item_ids + (u.sum(-1, keepdim=True) > 0).long()) % 30
        v = self.item_emb(item_ids) + self.extra_emb(item_ids % 20)
        return (self.user(u) * self.item(v)).sum(-1)


@pytest.mark.parametrize(("chained", "grouped", "single"), [(False, 1, 1), (True, 0, 3)])
def test_independent_embedding_bags_share_one_launch(compile_and_train, chained, grouped, single):
    """The towers' two mean bags, independent of each other, are one `mtia_xdsl::embedding_bag_cat` launch (the
    sum bag, another mode, its own launch); chained through the user bag's output they stay three launches.
    Output and gradients (through the grouped op's per-table offset2bag and sizes) match eager."""
    torch.manual_seed(0)
    user_ids, item_ids = torch.randint(0, 40, (6, 5)), torch.randint(0, 30, (6, 5))
    code = "\n".join(compile_and_train(lambda: Towers(chained), user_ids, item_ids))
    assert code.count("torch.ops.mtia_xdsl.embedding_bag_cat.default(") == grouped
    assert code.count("torch.ops.mtia_xdsl.embedding_bag.default(") == single


def test_independent_sets_keep_dependent_bags_apart():
    """On a hand-built graph: bag b reads bag a's output (through getitem), c reads neither; a and c share a set,
    b gets its own (it must wait for a)."""
    import operator

    from torch import fx

    from mtia_xdsl.runtime.inductor_bag_groups import independent_sets

    graph = fx.Graph()
    w, ids, offs = (graph.placeholder(n) for n in ("w", "ids", "offs"))
    a = graph.call_function(torch.ops.aten.mul.Tensor, (w, ids))
    a_out = graph.call_function(operator.getitem, (a, 0))
    b = graph.call_function(torch.ops.aten.mul.Tensor, (w, a_out))
    c = graph.call_function(torch.ops.aten.mul.Tensor, (w, offs))
    assert independent_sets([a, b, c]) == [[a, c], [b]]


class CrossedBags(torch.nn.Module):
    """Mean bags a and c, sum bags b and d: b's ids come from a's output and c's from d's. {a, c} and {b, d} are
    each independent, but grouped both at once each group would wait for the other (a cycle)."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.c = (torch.nn.EmbeddingBag(30, 8, mode="mean") for _ in range(2))
        self.b, self.d = (torch.nn.EmbeddingBag(30, 8, mode="sum") for _ in range(2))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        a, d = self.a(ids[0]), self.d(ids[3])
        b = self.b((ids[1] + (a.sum(-1, keepdim=True) > 0).long()) % 30)
        c = self.c((ids[2] + (d.sum(-1, keepdim=True) > 0).long()) % 30)
        return a + b + c + d


def test_crossed_independent_bags_group_one_set_only(mtia_inductor):
    """Of the two crossed sets the first (the mean bags) is one launch; the sum bags, which now depend on each
    other through it, stay two launches; the output matches eager."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    model = CrossedBags()
    ids = torch.randint(0, 30, (4, 6, 3))
    with torch.no_grad():
        out, codes = run_and_get_code(torch.compile(model), ids)
        torch.testing.assert_close(out, model(ids))
    code = "\n".join(codes)
    assert code.count("torch.ops.mtia_xdsl.embedding_bag_cat.default(") == 1
    assert code.count("torch.ops.mtia_xdsl.embedding_bag.default(") == 2


def _attention_launches(monkeypatch) -> list[str]:
    """Record the kernel names launched through our driver (filled as the compiled code runs)."""
    from mtia_xdsl.runtime.triton_backend.compiler import kernel_name

    names: list[str] = []
    run_kernel = toolchain.run_kernel

    def recording_run(module, *args, **kwargs):
        names.append(kernel_name(module))
        return run_kernel(module, *args, **kwargs)

    monkeypatch.setattr(toolchain, "run_kernel", recording_run)
    return names


@pytest.mark.parametrize(("dtype", "causal"), [(torch.float32, False), (torch.float32, True), (torch.float16, True)])
def test_sdpa_is_one_mtia_launch(mtia_inductor, monkeypatch, dtype, causal):
    """F.scaled_dot_product_attention (20 rows: not a multiple of the block) is one launch of mtia_xdsl's
    flash-attention kernel through the custom op, no host call left in Inductor's output code; matches eager."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 20, 16).to(dtype) for _ in range(3))

    def attend(q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

    launches = _attention_launches(monkeypatch)
    out, codes = run_and_get_code(torch.compile(attend), q, k, v)
    code = "\n".join(codes)
    tol = 1e-5 if dtype == torch.float32 else 2e-3
    torch.testing.assert_close(out, attend(q, k, v), rtol=tol, atol=tol)
    assert code.count("torch.ops.mtia_xdsl.scaled_dot_product_attention.default(") == 1
    assert "torch.ops.aten." not in code.replace("aten = torch.ops.aten", "") and "extern_kernels." not in code
    assert launches.count("_flash_attention_kernel") == 1 and len(launches) == 1, launches


def test_sdpa_gradients_match_eager(mtia_inductor, monkeypatch):
    """Training through the kernel: its outputs are aten's (attention and log-sum-exp), so autograd's backward of
    the aten op (a host call) gives eager's gradients of q, k and v."""
    torch.manual_seed(0)
    inputs = [torch.randn(2, 4, 20, 16) for _ in range(3)]

    def loss(q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).pow(2).sum()

    compiled = [t.clone().requires_grad_() for t in inputs]
    eager = [t.clone().requires_grad_() for t in inputs]
    launches = _attention_launches(monkeypatch)
    torch.compile(loss)(*compiled).backward()
    assert "_flash_attention_kernel" in launches, launches  # the forward ran on MTIA
    loss(*eager).backward()
    for c, e in zip(compiled, eager, strict=True):
        torch.testing.assert_close(c.grad, e.grad, rtol=1e-4, atol=1e-5)


def test_sdpa_with_a_mask_stays_on_the_host_and_says_why(mtia_inductor, monkeypatch):
    """An attention mask is not taken: aten's CPU op stays a host call (eager's result), and
    `inductor_attention.unsupported` (the cause benchmarks/inductor.py's coverage table prints) names the mask."""
    from torch._inductor.utils import run_and_get_code

    from mtia_xdsl.runtime import inductor_attention

    reasons: list[str | None] = []
    unsupported = inductor_attention.unsupported
    monkeypatch.setattr(inductor_attention, "unsupported", lambda *a: reasons.append(unsupported(*a)) or reasons[-1])
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 20, 16) for _ in range(3))
    mask = torch.zeros(20, 20)
    mask[:, -3:] = float("-inf")

    def attend(q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    launches = _attention_launches(monkeypatch)
    out, codes = run_and_get_code(torch.compile(attend), q, k, v)
    torch.testing.assert_close(out, attend(q, k, v))
    assert "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(" in "\n".join(codes)
    assert "_flash_attention_kernel" not in launches
    assert reasons and all(r is not None and "attn_mask" in r for r in reasons), reasons


@inductor_config.patch({"test_configs.max_mm_configs": 1})
@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_backward_runs_on_mtia(mtia_inductor, mode):
    """A training step through nn.EmbeddingBag: the weight gradient is mtia_xdsl's kernel (the custom op in the
    backward's output code, no `_embedding_bag_backward` host call) and matches eager's within f32 rounding."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    bag, ref = torch.nn.EmbeddingBag(100, 16, mode=mode), torch.nn.EmbeddingBag(100, 16, mode=mode)
    ref.load_state_dict(bag.state_dict())
    ids, offsets = torch.randint(0, 100, (20,)), torch.tensor([0, 3, 3, 10, 19])
    ids[[0, 5, 12]] = 9  # one row in three bags

    def step(i, o):
        bag(i, o).pow(2).sum().backward()
        return bag.weight.grad

    got, codes = run_and_get_code(torch.compile(step), ids, offsets)
    ref(ids, offsets).pow(2).sum().backward()
    torch.testing.assert_close(got, ref.weight.grad, rtol=1e-5, atol=1e-5)
    code = "\n".join(codes)
    assert "torch.ops.mtia_xdsl.embedding_bag_backward.default(" in code
    assert "aten._embedding_bag_backward.default(" not in code  # (comments name the aten op it replaces)


def _router(n: int, k: int):
    def route(x):
        probs = x.softmax(-1)
        return probs.topk(k, dim=-1)

    return torch.randn(16, n), route


def test_topk_is_one_mtia_launch(mtia_inductor):
    """An MoE router's top-2 of 8 experts with tied logits: mtia_xdsl's topk kernel through the custom op (no
    aten.topk host call), values and indices equal to eager's."""
    from torch._inductor.utils import run_and_get_code

    x, route = _router(8, 2)
    x[3] = 0.5  # a row of ties: aten's order, not lowest index first
    (values, indices), codes = run_and_get_code(torch.compile(route), x)
    expected = route(x)
    torch.testing.assert_close(values, expected[0])
    assert torch.equal(indices, expected[1])
    code = "\n".join(codes)
    assert code.count("torch.ops.mtia_xdsl.topk.default(") == 1
    assert "torch.ops.aten.topk.default(" not in code


def test_topk_of_long_rows_stays_on_the_host(mtia_inductor):
    """Rows longer than inductor_topk.MAX_N are not taken: aten's CPU op stays a host call (eager's result)."""
    from torch._inductor.utils import run_and_get_code

    from mtia_xdsl.runtime import inductor_topk

    x, route = _router(inductor_topk.MAX_N + 1, 2)
    (_, indices), codes = run_and_get_code(torch.compile(route), x)
    assert torch.equal(indices, route(x)[1])
    assert "torch.ops.aten.topk.default(" in "\n".join(codes)
    assert "mtia_xdsl.topk" not in "\n".join(codes)


@inductor_config.patch({"test_configs.max_mm_configs": 1})
def test_embedding_bag_backward_reads_gradient_views_in_place(mtia_inductor):
    """Two bags concatenated and scaled: each bag's gradient is a column slice of one computed tensor. The
    backward op has no layout constraint (`_flexible_fallback`), so no kernel copies a slice into a buffer of its
    own for it (Inductor named such copies after the op: `..._embedding_bag_backward_...`); gradients match eager."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    bags = [torch.nn.EmbeddingBag(50, 16, mode="sum") for _ in range(2)]
    refs = [torch.nn.EmbeddingBag(50, 16, mode="sum") for _ in range(2)]
    for b, r in zip(bags, refs, strict=True):
        r.load_state_dict(b.state_dict())
    ids, offsets, scale = torch.randint(0, 50, (12,)), torch.tensor([0, 4, 8]), torch.randn(3, 32)

    def step(models, i, o):
        (torch.cat([m(i, o) for m in models], 1) * scale).sum().backward()
        return [m.weight.grad for m in models]

    got, codes = run_and_get_code(torch.compile(lambda i, o: step(bags, i, o)), ids, offsets)
    for g, e in zip(got, step(refs, ids, offsets), strict=True):
        torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)
    code = "\n".join(codes)
    assert code.count("torch.ops.mtia_xdsl.embedding_bag_backward.default(") == 2
    assert "fused__embedding_bag_backward" not in code


BAD_BAGS = {
    "id past the table": ([1, 10], [0], None),
    "negative id": ([1, -1], [0], None),
    "offsets not from 0": ([1, 2, 3], [1, 2], None),
    "offsets past the ids": ([1, 2, 3], [0, 5], None),
    # eager: 'Expected i < index_size to be true, but got false.'
    "offsets decreasing": ([1, 2, 3], [0, 2, 1], r"^offsets have to be non-decreasing .*offsets\[2\] = 1 is less"),
}


@pytest.mark.parametrize("case", BAD_BAGS)
def test_bad_bag_inputs_raise_eagers_error_in_training(mtia_inductor, case):
    """A compiled training step (`mtia_xdsl::embedding_bag`, the training path's forward) raises eager's
    RuntimeError, in its words ('Index 1 of input takes value 10 which is not in the valid range [0, 10)') or, where
    eager's words name no input (decreasing offsets), words that do, before any kernel runs: not an out-of-bounds
    access at a line of mtia_xdsl's own kernel, nor (offsets not from 0 or decreasing) a result eager refuses.
    No gradient is written."""
    ids, offsets, message = BAD_BAGS[case]
    ids, offsets = torch.tensor(ids), torch.tensor(offsets)
    weight = torch.randn(10, 4, requires_grad=True)

    def step(w, i, o):
        torch.nn.functional.embedding_bag(i, w, o, mode="sum").pow(2).sum().backward()

    with pytest.raises(RuntimeError) as eager:
        step(weight, ids, offsets)
    with pytest.raises(RuntimeError, match=message) as compiled:
        torch.compile(step)(weight, ids, offsets)
    assert type(compiled.value) is type(eager.value)
    if message is None:
        assert str(compiled.value) == str(eager.value).splitlines()[0]  # (less aten's '[ torch.LongTensor{} ]')
    assert weight.grad is None


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_runs_on_mtia_in_inference(mtia_inductor, mode):
    """Inference with frozen weights (requires_grad=False, under torch.no_grad()): the graph holds
    `aten._embedding_bag_forward_only`, not `_embedding_bag` (torch.no_grad() alone, weights requiring grad, keeps
    `_embedding_bag`). It is mtia_xdsl's gather-and-sum kernel too (the custom op in the output code, no aten bag
    op left as a host call) and matches eager; a bad id raises eager's RuntimeError, in its words."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    bag = torch.nn.EmbeddingBag(100, 16, mode=mode).requires_grad_(False)
    ids, offsets = torch.randint(0, 100, (20,)), torch.tensor([0, 3, 3, 10, 19])
    compiled = torch.compile(lambda i, o: bag(i, o))
    with torch.no_grad():
        out, codes = run_and_get_code(compiled, ids, offsets)
        expected = bag(ids, offsets)
        code = "\n".join(codes)
        torch.testing.assert_close(out, expected)
        assert "torch.ops.mtia_xdsl.embedding_bag.default(" in code
        assert "aten._embedding_bag_forward_only.default(" not in code
        assert "aten._embedding_bag.default(" not in code
        bad = torch.tensor([1, 100])
        with pytest.raises(RuntimeError) as eager:
            bag(bad, torch.tensor([0]))
        with pytest.raises(RuntimeError) as raised:
            compiled(bad, torch.tensor([0]))
    assert type(raised.value) is type(eager.value)
    assert str(raised.value) == str(eager.value).splitlines()[0]  # (less aten's '[ torch.LongTensor{} ]')


@inductor_config.patch({"test_configs.max_mm_configs": 1})  # keep the autotuning short
def test_fused_prologue_with_a_partial_k_block_matches_eager(mtia_inductor):
    """Attention's output projection `linear(y.transpose(1, 2).reshape(B, T, H * d))`: Inductor fuses the
    transposing copy into the GEMM template's A load (a prologue) masked by `a_mask` with no `other`, and
    takes the masked lanes for 0 (`prologue_preserves_zero_mask`). K = 40 is no multiple of BLOCK_K, so the
    last K step has masked lanes, which read as NaN on MTIA (unwritten LS): the output was all NaN."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    linear = torch.nn.Linear(40, 16)
    y = torch.randn(2, 5, 12, 8)

    def project(t):
        return linear(t.transpose(1, 2).reshape(2, 12, 40))

    with torch.no_grad():
        out, codes = run_and_get_code(torch.compile(project), y)
        torch.testing.assert_close(out, project(y))
    assert "a_mask)" in "\n".join(codes)  # the prologue's load under the template's mask, with no `other`: fused


@pytest.mark.parametrize("dtype", [torch.float64, torch.int32])
@inductor_config.patch({"test_configs.max_mm_configs": 1})  # keep the autotuning short
def test_matmul_no_template_takes_stays_a_host_call(mtia_inductor, dtype):
    """A matmul of a dtype no GEMM template takes (float64, int32) is a valid model: it stays a host library
    call (the extern choice as fallback), where before no choice was left (templates only) and Inductor raised
    NoValidChoicesError telling the user to add ATEN to a setting they never set."""
    from torch._inductor.utils import run_and_get_code

    a = torch.arange(8 * 16, dtype=dtype).reshape(8, 16) % 7
    b = torch.arange(16 * 4, dtype=dtype).reshape(16, 4) % 5
    out, codes = run_and_get_code(torch.compile(lambda x, y: x @ y), a, b)
    torch.testing.assert_close(out, a @ b)
    assert "extern_kernels.mm" in "\n".join(codes)


MIXED_GEMMS = {
    "mm bf16 x f32": (torch.mm, (torch.bfloat16, torch.float32)),
    "mm f32 x bf16": (torch.mm, (torch.float32, torch.bfloat16)),
    "addmm f32 bias, bf16 x bf16": (torch.addmm, (torch.float32, torch.bfloat16, torch.bfloat16)),
    "linear f32 weight, bf16 input": (lambda x, w: torch.nn.functional.linear(x, w), (torch.bfloat16, torch.float32)),
}


@pytest.mark.parametrize("case", MIXED_GEMMS)
@inductor_config.patch({"test_configs.max_mm_configs": 1})  # keep the autotuning short
def test_a_gemm_of_mixed_dtypes_raises_eagers_error(mtia_inductor, case):
    """A matmul of a bf16 and an f32 operand, which eager refuses: the compiled model raises eager's RuntimeError in
    its words ('expected m1 and m2 to have the same dtype, but got: c10::BFloat16 != float'), when it runs. Before,
    the GEMM template was compiled with such operands and torch.compile raised mtia_xdsl's KernelError from inside
    the template's `tl.dot` ('Both operands must be same dtype. Got bf16 and fp32')."""
    op, dtypes = MIXED_GEMMS[case]
    args = [torch.randn(16, 16, dtype=dtype) for dtype in dtypes]
    with pytest.raises(RuntimeError) as eager:
        op(*args)
    with pytest.raises(RuntimeError) as compiled:
        torch.compile(op)(*args)
    assert type(compiled.value) is type(eager.value)
    assert str(compiled.value) == str(eager.value)


@inductor_config.patch({"test_configs.max_mm_configs": 1})  # keep the autotuning short
def test_empty_matmul_compiles(mtia_inductor):
    """K = 0 (a valid matmul of zeros): no template is listed for it, and it raised NoValidChoicesError too."""
    a, b = torch.randn(4, 0), torch.randn(0, 8)
    torch.testing.assert_close(torch.compile(lambda x, y: x @ y)(a, b), torch.zeros(4, 8))


def test_another_torch_release_is_warned_about():
    """The hooks check that torch's internals exist; a release that keeps their names but changes what they do
    is said so at install (a RuntimeWarning naming both versions), not left silent."""
    with pytest.warns(RuntimeWarning, match=r"tested with torch 2\.13\.0, not 2\.14\.0"):
        inductor._warn_unless_pinned("2.14.0")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        inductor._warn_unless_pinned(inductor.PINNED_TORCH + "+cpu")

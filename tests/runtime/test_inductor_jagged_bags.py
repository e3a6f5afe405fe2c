"""A jagged embedding bag and the layers it feeds in one launch (mtia_xdsl/runtime/inductor_jagged_bags.py)."""

import pytest
import torch

pytest.importorskip("triton")


@pytest.fixture
def jagged():
    """The module, imported once Inductor has loaded (it registers its custom op)."""
    from mtia_xdsl.runtime import inductor_jagged_bags

    return inductor_jagged_bags


def _layers(d, widths, dtype=torch.float32):
    """Per layer a transposed nn.Linear weight [K, N] and a bias [N]."""
    ws, bs, k = [], [], d
    for n in widths:
        ws.append(torch.randn(n, k).to(dtype).t())
        bs.append(torch.randn(n).to(dtype))
        k = n
    return ws, bs


def _eager(weight, ids, offsets, mode, include_last, ws, bs, acts):
    """aten's embedding bag, then addmm and the activation (0 none, 1 relu, 2 tanh) per layer."""
    out = torch.ops.aten._embedding_bag(weight, ids, offsets, mode=mode, include_last_offset=include_last)
    h, hs = out[0], []
    for w, b, act in zip(ws, bs, acts, strict=True):
        h = torch.addmm(b, h, w)
        h = h.relu() if act == 1 else h.tanh() if act == 2 else h
        hs.append(h)
    return (*out, hs)


@pytest.mark.parametrize(
    ("mode", "include_last", "offsets", "widths", "acts", "dtype"),
    [
        (0, False, [0, 3, 10, 11, 20, 28, 33, 39], [16], [2], torch.float32),  # jagged_sum's bags, tanh
        (1, False, [0, 3, 3, 11, 20, 28, 33, 40], [24, 8], [1, 0], torch.float32),  # a mean, empty bag, 2 layers
        (0, True, [0, 3, 3, 11, 20, 28, 33, 38], [16, 16, 8], [2, 1, 2], torch.float32),  # ids past the last offset
        (0, False, list(range(0, 40, 2)), [20], [1], torch.float32),  # 20 bags: two programs of bags
        (1, False, [0, 5, 17, 17], [16], [2], torch.bfloat16),  # bf16: offset2bag written, trailing empty bag
    ],
)
def test_jagged_bag_mlp_matches_aten(jagged, mode, include_last, offsets, widths, acts, dtype):
    """The bags, offset2bag, bag sizes, max_indices and every layer's output equal aten's embedding bag followed by
    addmm and the activation."""
    torch.manual_seed(0)
    weight, ids, offsets = torch.randn(500, 16).to(dtype), torch.randint(0, 500, (40,)), torch.tensor(offsets)
    ws, bs = _layers(16, widths, dtype)
    got = jagged.jagged_bag_mlp(weight, ids, offsets, mode, include_last, ws, bs, acts, [True] * (len(acts) + 1))
    want = _eager(weight, ids, offsets, mode, include_last, ws, bs, acts)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == torch.float32 else {"rtol": 2e-2, "atol": 2e-2}
    torch.testing.assert_close(got[0], want[0], **tol)
    for i in (1, 2, 3):
        assert torch.equal(got[i], want[i]), i
    for h, h_want in zip(got[4], want[4], strict=True):
        torch.testing.assert_close(h, h_want, **tol)


@pytest.mark.parametrize(
    ("ids", "offsets", "mode"),
    [
        ([], [0, 0, 0], 0),  # no ids: every bag empty
        ([3, 9, 0, 29, 4, 4, 17, 2, 8, 1], [0, 2, 2, 7], 1),  # int32 ids and offsets
        (list(range(100)), list(range(0, 100, 3)), 1),  # 34 bags (three programs of bags), 100 ids
    ],
)
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
def test_jagged_bag_mlp_edge_cases(jagged, ids, offsets, mode, index_dtype):
    """A table narrower than a `tl.dot` operand (D = 8), no ids at all, int32 indices and many bags: aten's
    outputs."""
    torch.manual_seed(0)
    weight, ids, offsets = (
        torch.randn(100, 8),
        torch.tensor(ids, dtype=index_dtype),
        torch.tensor(offsets, dtype=index_dtype),
    )
    ws, bs = _layers(8, [8])
    got = jagged.jagged_bag_mlp(weight, ids, offsets, mode, False, ws, bs, [2], [True, True])
    want = _eager(weight, ids, offsets, mode, False, ws, bs, [2])
    torch.testing.assert_close(got[0], want[0], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(got[4][0], want[4][0], rtol=1e-4, atol=1e-4)
    assert all(torch.equal(got[i], want[i]) for i in (1, 2, 3))


@pytest.mark.parametrize(
    ("mode", "step", "n", "dtype"),
    [(0, 5, 40, torch.float32), (1, 3, 60, torch.float32), (1, 4, 36, torch.bfloat16), (0, 2, 68, torch.float32)],
)
def test_jagged_bag_mlp_of_fixed_steps_matches_aten(jagged, mode, step, n, dtype):
    """With no offsets and a step (bags of `step` ids each, 34 bags in three programs for the last case), aten's
    outputs for offsets arange(0, n, step), and those offsets as the op's last output."""
    torch.manual_seed(0)
    weight, ids, offsets = torch.randn(50, 16).to(dtype), torch.randint(0, 50, (n,)), torch.arange(0, n, step)
    ws, bs = _layers(16, [8], dtype)
    got = jagged.jagged_bag_mlp(weight, ids, None, mode, False, ws, bs, [2], [True, True], step)
    want = _eager(weight, ids, offsets, mode, False, ws, bs, [2])
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == torch.float32 else {"rtol": 2e-2, "atol": 2e-2}
    torch.testing.assert_close(got[0], want[0], **tol)
    torch.testing.assert_close(got[4][0], want[4][0], **tol)
    assert all(torch.equal(got[i], want[i]) for i in (1, 2, 3)) and torch.equal(got[5], offsets)
    with pytest.raises(ValueError, match="a step dividing the 36 ids"):
        jagged.jagged_bag_mlp(weight, ids[:36], None, mode, False, ws, bs, [2], [True, True], 5)


def test_jagged_bag_mlp_writes_what_written_asks_for(jagged):
    """With written [False, False, True] the last layer's output, the sizes and offset2bag are aten's still (their
    programs do not depend on the others'); a written of the wrong length is a ValueError."""
    torch.manual_seed(0)
    weight, ids, offsets = torch.randn(50, 16), torch.randint(0, 50, (20,)), torch.tensor([0, 4, 4, 9, 20])
    ws, bs = _layers(16, [24, 8])
    got = jagged.jagged_bag_mlp(weight, ids, offsets, 1, False, ws, bs, [1, 2], [False, False, True])
    want = _eager(weight, ids, offsets, 1, False, ws, bs, [1, 2])
    torch.testing.assert_close(got[4][1], want[4][1], rtol=1e-4, atol=1e-4)
    assert all(torch.equal(got[i], want[i]) for i in (1, 2, 3))
    with pytest.raises(ValueError, match="written needs 3 entries"):
        jagged.jagged_bag_mlp(weight, ids, offsets, 1, False, ws, bs, [1, 2], [True])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("mean_last", "include_last_offset needs a sum"),
        ("ids", "257 ids"),
        ("wrong_k", "layer 0 needs w"),
        ("act", "activations"),
    ],
)
def test_jagged_bag_mlp_refuses_what_it_cannot_take(jagged, change, message):
    """A mean with include_last_offset (aten divides the last bag by N - its start), more ids than MAX_IDS, a
    weight whose K is not D and an unknown activation are ValueErrors naming what is needed."""
    weight, ids, offsets = torch.randn(10, 8), torch.randint(0, 10, (12,)), torch.tensor([0, 4, 12])
    ws, bs = _layers(8, [8])
    mode, include_last, acts = 0, False, [1]
    if change == "mean_last":
        mode, include_last = 1, True
    elif change == "ids":
        ids = torch.randint(0, 10, (257,))
    elif change == "wrong_k":
        ws = [torch.randn(8, 6).t()]
    else:
        acts = [3]
    with pytest.raises(ValueError, match=message):
        jagged.jagged_bag_mlp(weight, ids, offsets, mode, include_last, ws, bs, acts, [True, True])


@pytest.mark.parametrize(
    ("n_ids", "d", "widths", "mode", "dtype"),
    [
        (40, 256, [256], 1, torch.bfloat16),  # a layer of 65536 elements (the old limit was 128 x 128)
        (40, 128, [128, 128, 128], 1, torch.float32),  # three f32 layers of 128 x 128, a mean
        (256, 256, [16], 0, torch.float32),  # rows [256, 256] (the old limit was 64 x 256 elements)
        (256, 16, [16], 1, torch.float32),  # 64 bags of 256 ids: the sizes program's offset2bag, the larger program
    ],
)
def test_ls_bytes_needed_bounds_the_programs_ls(jagged, n_ids, d, widths, mode, dtype):
    """Ids and layers that fit LS by `ls_bytes_needed` run and match aten; the LS the kernel's CBs took
    (mtia-cb-allocate's high-water mark, the report's `ls_high_water_bytes`) is within that bound, itself within
    a PE's LS."""
    import mtia_xdsl
    from mtia_xdsl.runtime.triton_backend.driver import target_machine_config

    torch.manual_seed(0)
    n_bags = 8 if n_ids == 40 else 16 if d == 256 else 64
    weight, ids = torch.randn(300, d).to(dtype), torch.randint(0, 300, (n_ids,))
    offsets = torch.arange(0, n_ids, n_ids // n_bags)[:n_bags]
    ws, bs = _layers(d, widths, dtype)
    acts = [1] * len(widths)
    got = jagged.jagged_bag_mlp(weight, ids, offsets, mode, False, ws, bs, acts, [True] * (len(widths) + 1))
    bound = jagged.ls_bytes_needed(n_ids, n_bags, d, widths, dtype)
    assert mtia_xdsl.last_report().ls_high_water_bytes <= bound <= target_machine_config().ls_bytes
    want = _eager(weight, ids, offsets, mode, False, ws, bs, acts)
    assert all(torch.equal(got[i], want[i]) for i in (1, 2, 3))
    h, h_want = got[4][-1].float(), want[4][-1].float()
    torch.testing.assert_close(h, h_want, rtol=1e-2, atol=1e-2 * h_want.abs().max().item())


def test_jagged_bag_mlp_refuses_a_program_larger_than_ls(jagged):
    """An f32 layer of 256 x 256 (its weight and its transpose alone fill LS) is a ValueError naming the LS it
    needs and a PE's (`MachineConfig.ls_bytes`), before the launch."""
    weight, ids, offsets = torch.randn(10, 256), torch.randint(0, 10, (12,)), torch.tensor([0, 4, 12])
    ws, bs = _layers(256, [256])
    with pytest.raises(ValueError, match=r"needs up to \d+ bytes of LS but a PE has 393216 \(MachineConfig.ls_bytes\)"):
        jagged.jagged_bag_mlp(weight, ids, offsets, 0, False, ws, bs, [1], [True, True])


def test_jagged_bag_mlp_raises_atens_error_for_bad_offsets(jagged):
    """Offsets not starting at 0 are aten's RuntimeError, before the launch."""
    ws, bs = _layers(8, [8])
    with pytest.raises(RuntimeError, match=r"offsets\[0\] has to be 0"):
        jagged.jagged_bag_mlp(torch.randn(10, 8), torch.zeros(4, dtype=torch.long), torch.tensor([1, 2]), 0, False,
                              ws, bs, [0], [True, True])  # fmt: skip


class JaggedMlp(torch.nn.Module):
    """benchmarks/inductor.py's jagged_sum (a sum bag by offsets, Linear, Tanh), with `mode`, `act` and `depth`
    linear layers."""

    def __init__(self, mode: str = "sum", act: type[torch.nn.Module] = torch.nn.Tanh, depth: int = 1) -> None:
        super().__init__()
        self.emb = torch.nn.EmbeddingBag(500, 16, mode=mode)
        layers: list[torch.nn.Module] = []
        for _ in range(depth):
            layers += [torch.nn.Linear(16, 16), act()]
        self.mlp = torch.nn.Sequential(*layers)

    def forward(self, ids: torch.Tensor, offsets: torch.Tensor, psw: torch.Tensor | None = None) -> torch.Tensor:
        return self.mlp(self.emb(ids, offsets, per_sample_weights=psw))


def _compiled(model, *args):
    """(output, generated code, calls of `mtia_xdsl::jagged_bag_mlp` in it) of `torch.compile(model)(*args)`."""
    from torch._inductor.utils import run_and_get_code

    out, codes = run_and_get_code(torch.compile(model), *args)
    code = "\n".join(codes)
    return out, code, code.count("torch.ops.mtia_xdsl.jagged_bag_mlp.default(")


def _inputs():
    """jagged_sum's ids and offsets (8 bags of 40 ids)."""
    return torch.randint(0, 500, (40,)), torch.tensor([0, 3, 10, 11, 20, 28, 33, 39])


@pytest.mark.parametrize(
    ("mode", "act", "depth", "fixed"),
    [("sum", torch.nn.Tanh, 1, False), ("mean", torch.nn.ReLU, 2, False), ("mean", torch.nn.Tanh, 1, True)],
)
def test_jagged_bag_and_layers_are_one_launch_and_train(mtia_inductor, mode, act, depth, fixed):
    """The bag, each Linear and its activation are one `mtia_xdsl::jagged_bag_mlp` and no other kernel, in
    inference and in a training step (which saves the bag's output, its sizes and the layers' outputs for
    backward); output and gradients match eager. With `fixed`, bags of a 2-D input (offsets an arange, which
    the op writes: no arange launch)."""
    torch.manual_seed(0)
    model, ref = JaggedMlp(mode, act, depth), JaggedMlp(mode, act, depth)
    ref.load_state_dict(model.state_dict())
    ids, offsets = (torch.randint(0, 500, (8, 5)), None) if fixed else _inputs()
    with torch.no_grad():
        out, code, fused = _compiled(model, ids, offsets)
        torch.testing.assert_close(out, ref(ids, offsets), rtol=1e-4, atol=1e-5)
    assert fused == 1 and "@triton.jit" not in code and "addmm" not in code
    torch._dynamo.reset()
    out, code, fused = _compiled(model, ids, offsets)
    expected = ref(ids, offsets)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
    forward = code.split("def call(")[1]
    assert fused == 1 and "torch.ops.mtia_xdsl.embedding_bag.default(" not in forward and "addmm" not in forward
    # but for a last ReLU: Inductor saves relu(h) <= 0 (threshold_backward's mask), a pointwise kernel of its own
    assert forward.count(".run(") == (act is torch.nn.ReLU)
    out.pow(2).sum().backward()
    expected.pow(2).sum().backward()
    for got, want in zip(model.parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(got.grad, want.grad, rtol=1e-4, atol=1e-5)


def test_per_sample_weights_are_not_fused(mtia_inductor):
    """A bag scaled by per-sample weights stays the bag kernel and the GEMM template, and matches eager."""
    torch.manual_seed(0)
    model = JaggedMlp().eval()
    ids, offsets = _inputs()
    psw = torch.rand(40)
    with torch.no_grad():
        out, code, fused = _compiled(model, ids, offsets, psw)
        torch.testing.assert_close(out, model(ids, offsets, psw), rtol=1e-4, atol=1e-5)
    assert fused == 0 and "torch.ops.mtia_xdsl.embedding_bag.default(" in code


def _bag_graph(
    psw=False, mode=0, include_last=False, n_ids=40, alpha=False, w_of_bags=False, n_out=16, d=16, dtype=torch.float32
):
    """An FX graph as Inductor's post-grad graph has jagged_sum's: `mtia_xdsl::embedding_bag` of ids by offsets
    (scaled by per-sample weights with `psw`), its output 0 through addmm (alpha=2 with `alpha`; with `w_of_bags`
    the bags' transpose as its weight; n_out columns) and tanh; a table of width d, all of `dtype`."""
    import operator

    import torch.fx

    from mtia_xdsl.runtime import inductor_kernels

    graph = torch.fx.Graph()
    names = ["weight", "ids", "offsets", "w", "b"] + (["psw"] if psw else [])
    nodes = {name: graph.placeholder(name) for name in names}
    vals = {"weight": torch.empty(500, d, dtype=dtype), "ids": torch.zeros(n_ids, dtype=torch.long),
            "offsets": torch.zeros(8, dtype=torch.long), "w": torch.empty(n_out, d, dtype=dtype).t(),
            "b": torch.empty(n_out, dtype=dtype), "psw": torch.empty(n_ids, dtype=dtype)}  # fmt: skip
    for name, node in nodes.items():
        node.meta["val"] = vals[name]
    op = inductor_kernels.embedding_bag_sum._opoverload  # pyright: ignore[reportFunctionMemberAccess]
    bag = graph.call_function(op, (nodes["weight"], nodes["ids"], nodes["offsets"], mode, nodes.get("psw"),
                                   include_last))  # fmt: skip
    bag.meta["val"] = (
        torch.empty(8, d, dtype=dtype), torch.empty(0, dtype=torch.long), *(torch.empty(8, dtype=torch.long),) * 2
    )  # fmt: skip
    x = graph.call_function(operator.getitem, (bag, 0))
    x.meta["val"] = torch.empty(8, d, dtype=dtype)
    w = nodes["w"]
    if w_of_bags:
        w = graph.call_function(torch.ops.aten.permute.default, (x, [1, 0]))
        w.meta["val"] = torch.empty(8, 16).t()  # [K, N] = [16, 8]
        nodes["b"].meta["val"] = torch.empty(8)
    mm = graph.call_function(torch.ops.aten.addmm.default, (nodes["b"], x, w), {"alpha": 2} if alpha else {})
    mm.meta["val"] = torch.empty(8, w.meta["val"].shape[1], dtype=dtype)
    act = graph.call_function(torch.ops.aten.tanh.default, (mm,))
    act.meta["val"] = torch.empty(8, w.meta["val"].shape[1], dtype=dtype)
    graph.output((act,))
    return graph


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"psw": True},
        {"mode": 1, "include_last": True},
        {"n_ids": 300},
        {"n_out": 300},
        {"alpha": True},
        {"w_of_bags": True},
    ],
)
def test_fuse_jagged_bags_takes_only_what_the_op_computes(jagged, kwargs):
    """jagged_sum's graph becomes one `jagged_bag_mlp` (acts [2]: tanh folded; written [False, True]: only the layer's
    output has a reader) and nothing else; a bag scaled by per-sample weights, a mean with include_last_offset,
    more ids than MAX_IDS, a layer wider than MAX_WIDTH, an addmm with alpha and one whose weight is computed from
    the bags (the op would read its own output) stay as they are (max bags and a padding index are never
    `mtia_xdsl::embedding_bag`)."""
    from torch.testing import FileCheck

    graph = _bag_graph(**kwargs)
    before = str(graph)
    fused = jagged.fuse_jagged_bags(graph)
    if kwargs:
        assert fused == 0 and str(graph) == before
        return
    assert fused == 1
    text = str(graph)
    FileCheck().check("mtia_xdsl.jagged_bag_mlp.default").check("[%w], [%b], [2], [False, True]").check_not(
        "embedding_bag.default"
    ).check_not("addmm").check_not("tanh").run(text)


@pytest.mark.parametrize(
    ("d", "n_out", "dtype", "fused"),
    [
        (128, 256, torch.float32, True),  # a weight of 32768 elements (the old limit was 128 x 128) within LS
        (256, 256, torch.bfloat16, True),  # 65536 bf16 elements
        (256, 256, torch.float32, False),  # f32 [256, 256]: its weight and its transpose alone fill LS
    ],
)
def test_fuse_jagged_bags_fuses_what_fits_ls(jagged, d, n_out, dtype, fused):
    """A layer fuses when its program fits a PE's LS (`ls_bytes_needed`), whatever its weight's elements; one
    that does not is left as it is."""
    graph = _bag_graph(d=d, n_out=n_out, dtype=dtype)
    before = str(graph)
    assert jagged.fuse_jagged_bags(graph) == fused
    assert fused or str(graph) == before

"""Embedding bags and the MLP they feed in one launch (mtia_xdsl/runtime/inductor_bag_mlps.py)."""

import pytest
import torch

pytest.importorskip("triton")


@pytest.fixture
def bag_mlps():
    """The module, imported once Inductor has loaded (it registers its custom op)."""
    from mtia_xdsl.runtime import inductor_bag_mlps

    return inductor_bag_mlps


def _tables(g, rows, d, n_bags, step, widths, dtype=torch.float32):
    """G tables [rows, d], their ids [n_bags * step], and per table and layer a transposed nn.Linear weight
    [K, N] and a bias [N] (table-major)."""
    weights = [torch.randn(rows, d).to(dtype) for _ in range(g)]
    indices = [torch.randint(0, rows, (n_bags * step,)) for _ in range(g)]
    ws, bs = [], []
    for _ in range(g):
        k = d
        for n in widths:
            ws.append(torch.randn(n, k).to(dtype).t())
            bs.append(torch.randn(n).to(dtype))
            k = n
    return weights, indices, ws, bs


@pytest.mark.parametrize(
    ("mode", "step", "d", "widths", "relus"),
    [
        (1, 8, 32, [64, 32], [True, False]),  # two_tower's towers (`splits`: the first layer in halves)
        (0, 4, 16, [24, 8], [True, True]),  # two layers, the first of no power-of-two width: not split
        (0, 3, 20, [24], [False]),  # a step, width and layer width that are no powers of two
        (1, 5, 16, [16, 40, 8], [True, True, False]),  # three layers, a mean over 5 ids (a division)
        (0, 3, 8, [16], [True]),  # a table narrower than a tl.dot operand (D = 8: padded to 16 columns)
    ],
)
def test_embedding_bag_mlp_matches_aten(bag_mlps, mode, step, d, widths, relus):
    """Bags, their sizes, every layer's output and the offsets equal aten's embedding_bag (offsets
    arange(0, N, step)) followed by addmm (and relu) per table."""
    torch.manual_seed(0)
    g, n_bags = 2, 6
    weights, indices, ws, bs = _tables(g, 50, d, n_bags, step, widths)
    out, sizes, hs, offsets = bag_mlps.embedding_bag_mlp(weights, indices, step, mode, ws, bs, relus)
    want_offsets = torch.arange(0, n_bags * step, step)
    assert torch.equal(offsets, want_offsets)
    layers = len(widths)
    for t in range(g):
        bag, _, size, _ = torch.ops.aten._embedding_bag(weights[t], indices[t], want_offsets, mode=mode)
        torch.testing.assert_close(out[t * n_bags : (t + 1) * n_bags], bag)
        assert torch.equal(sizes[t], size)
        h = bag
        for l_ in range(layers):
            h = torch.addmm(bs[t * layers + l_], h, ws[t * layers + l_])
            h = h.relu() if relus[l_] else h
            torch.testing.assert_close(hs[l_][t], h, rtol=1e-4, atol=1e-4)


def test_embedding_bag_mlp_is_deterministic(bag_mlps):
    """Two calls give the same bits."""
    torch.manual_seed(0)
    weights, indices, ws, bs = _tables(2, 40, 16, 4, 4, [16])
    first = bag_mlps.embedding_bag_mlp(weights, indices, 4, 1, ws, bs, [True])
    second = bag_mlps.embedding_bag_mlp(weights, indices, 4, 1, ws, bs, [True])
    assert torch.equal(first[0], second[0]) and torch.equal(first[2][0], second[2][0])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("four_layers", "1 to 3 layers"),
        ("wrong_k", "layer 0 needs w"),
        ("step", "step 5 for 16 ids"),
        ("widths", "one width and dtype"),
    ],
)
def test_embedding_bag_mlp_refuses_what_it_cannot_take(bag_mlps, change, message):
    """Layers past MAX_LAYERS, a weight whose K is not the previous width, ids that are no whole number of
    bags and tables of two widths are ValueErrors naming what is needed."""
    weights, indices, ws, bs = _tables(1, 10, 8, 4, 4, [8])
    step, relus = 4, [False]
    if change == "four_layers":
        weights, indices, ws, bs = _tables(1, 10, 8, 4, 4, [8, 8, 8, 8])
        relus = [False] * 4
    elif change == "wrong_k":
        ws = [torch.randn(8, 6).t()]
    elif change == "step":
        step = 5
    else:
        weights, indices, ws, bs = _tables(2, 10, 8, 4, 4, [8])
        weights[1] = torch.randn(10, 4)
    with pytest.raises(ValueError, match=message):
        bag_mlps.embedding_bag_mlp(weights, indices, step, 0, ws, bs, relus)


def test_embedding_bag_mlp_raises_atens_error_for_an_id_outside_a_table(bag_mlps):
    """An id past the table is aten's RuntimeError, before the launch."""
    weights, indices, ws, bs = _tables(1, 10, 8, 4, 4, [8])
    indices[0][3] = 10
    with pytest.raises(RuntimeError, match=r"Index 3 of input takes value 10 which is not in the valid range"):
        bag_mlps.embedding_bag_mlp(weights, indices, 4, 0, ws, bs, [False])


def test_bags_per_program_fill_the_pes(bag_mlps):
    """One bag per program while the programs (and one per table for the sizes) fit the 64 PEs; more bags per
    program past them; two layers split when the first is a power of two of at least 32 columns."""
    assert bag_mlps.bags_per_program(16, 8, 2) == 1
    assert bag_mlps.bags_per_program(31, 8, 2) == 1
    assert bag_mlps.bags_per_program(32, 8, 2) == 2
    assert bag_mlps.bags_per_program(1000, 8, 2) == 8  # at most MAX_IDS_PER_PROGRAM ids
    assert bag_mlps.splits([64, 32]) and not bag_mlps.splits([24, 8]) and not bag_mlps.splits([64, 32, 8])


class TwoTower(torch.nn.Module):
    """Mean bags of a 2-D input (fixed-step bags) per tower, each through Linear, ReLU, Linear; with
    `offsets`, the bags of a 1-D input by offsets instead (not fixed-step)."""

    def __init__(self, offsets: bool = False) -> None:
        super().__init__()
        self.offsets = offsets
        self.emb = torch.nn.ModuleList(torch.nn.EmbeddingBag(50, 16, mode="mean") for _ in range(2))
        self.mlp = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.Linear(16, 24), torch.nn.ReLU(), torch.nn.Linear(24, 8)) for _ in range(2)
        )

    def forward(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if self.offsets:
            starts = torch.tensor([0, 2, 5, 6])
            a, b = self.emb[0](u.flatten(), starts), self.emb[1](v.flatten(), starts)
        else:
            a, b = self.emb[0](u), self.emb[1](v)
        return (self.mlp[0](a) * self.mlp[1](b)).sum(-1)


@pytest.mark.parametrize(("offsets", "fused"), [(False, 1), (True, 0)])
def test_towers_of_bags_are_one_launch_and_train(mtia_inductor, offsets, fused):
    """Fixed-step bags and both layers of both towers are one `mtia_xdsl::embedding_bag_mlp` (no launch for the
    offsets' arange, no `linear_group`); bags by offsets are not fused. Output and gradients match eager."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    model, ref = TwoTower(offsets), TwoTower(offsets)
    ref.load_state_dict(model.state_dict())
    u, v = torch.randint(0, 50, (4, 3)), torch.randint(0, 50, (4, 3))
    out, codes = run_and_get_code(torch.compile(model), u, v)
    expected = ref(u, v)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
    code = "\n".join(codes)
    assert code.count("torch.ops.mtia_xdsl.embedding_bag_mlp.default(") == fused
    assert ("linear_group" in code) == (not fused)
    assert not fused or "fused_arange" not in codes[0]  # the offsets, saved for backward, are the op's
    out.pow(2).sum().backward()
    expected.pow(2).sum().backward()
    for got, want in zip(model.parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(got.grad, want.grad, rtol=1e-4, atol=1e-5)


def _compiled(model, *args):
    """(output, generated code, calls of `mtia_xdsl::embedding_bag_mlp` in it) of `torch.compile(model)(*args)`."""
    from torch._inductor.utils import run_and_get_code

    out, codes = run_and_get_code(torch.compile(model), *args)
    code = "\n".join(codes)
    return out, code, code.count("torch.ops.mtia_xdsl.embedding_bag_mlp.default(")


def test_towers_of_bags_are_one_launch_in_inference(mtia_inductor):
    """Under no_grad each table's offsets are an iota of their own (no CSE across tables as in a joint graph):
    the towers are still one launch, and match eager."""
    torch.manual_seed(0)
    model = TwoTower().eval()
    u, v = torch.randint(0, 50, (4, 3)), torch.randint(0, 50, (4, 3))
    with torch.no_grad():
        out, code, fused = _compiled(model, u, v)
        torch.testing.assert_close(out, model(u, v), rtol=1e-4, atol=1e-5)
    assert fused == 1 and "linear_group" not in code and "fused_arange" not in code

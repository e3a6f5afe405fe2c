"""Independent linear layers of one shape in one launch (mtia_xdsl/runtime/inductor_linear_groups.py)."""

import pytest
import torch

pytest.importorskip("triton")


@pytest.fixture
def groups():
    """The module, imported once Inductor has loaded (it registers its custom op)."""
    from mtia_xdsl.runtime import inductor_linear_groups

    return inductor_linear_groups


@pytest.mark.parametrize(
    ("m", "k", "n", "dtype", "relu"),
    [(16, 32, 64, torch.float32, True), (5, 300, 20, torch.float32, False), (8, 16, 16, torch.float16, True)],
)
def test_linear_group_matches_stacked_addmm(groups, m, k, n, dtype, relu):
    """Three layers of x [m, k] @ w [k, n] (a transposed [n, k] weight, as `nn.Linear` passes it) + b equal
    `torch.stack` of aten's addmm (and relu): sizes not multiples of the tile, K over MAX_BLOCK_K (a K loop)."""
    torch.manual_seed(0)
    xs = [torch.randn(m, k).to(dtype) for _ in range(3)]
    ws = [torch.randn(n, k).to(dtype).t() for _ in range(3)]
    bs = [torch.randn(n).to(dtype) for _ in range(3)]
    got = groups.linear_group(xs, ws, bs, relu)
    want = torch.stack([torch.addmm(b.float(), x.float(), w.float()) for x, w, b in zip(xs, ws, bs, strict=True)])
    want = (want.relu() if relu else want).to(dtype)
    assert got.shape == (3, m, n) and got.dtype == dtype
    tol = 1e-4 if dtype == torch.float32 else 1e-2
    torch.testing.assert_close(got, want, rtol=tol, atol=tol)


def test_linear_group_rejects_layers_of_other_shapes(groups):
    """Layers of two shapes (or no layer) are a ValueError naming what they need."""
    xs, ws, bs = [torch.randn(4, 8), torch.randn(4, 16)], [torch.randn(8, 4), torch.randn(16, 4)], [torch.randn(4)] * 2
    with pytest.raises(ValueError, match="one shape, dtype and strides"):
        groups.linear_group(xs, ws, bs, False)
    with pytest.raises(ValueError, match="one entry per layer"):
        groups.linear_group([], [], [], False)


def test_blocks_fit_the_pes(groups):
    """16 x 16 tiles while the programs fit the 64 PEs; more layers or larger outputs take wider tiles."""
    assert groups.blocks(16, 64, 2) == (16, 16)
    assert groups.blocks(64, 64, 8) == (16, 32)
    assert groups.blocks(64, 64, 16) == (32, 32)
    assert groups.blocks(8, 16, 100) == (16, 16)  # no larger tile holds these layers in fewer programs


class Towers(torch.nn.Module):
    """Two MLP towers of one shape (each Linear, ReLU, Linear), independent unless `chained`, and a third
    layer too large to group."""

    def __init__(self, chained: bool = False) -> None:
        super().__init__()
        self.chained = chained
        self.user = torch.nn.Sequential(torch.nn.Linear(12, 24), torch.nn.ReLU(), torch.nn.Linear(24, 8))
        self.item = torch.nn.Sequential(torch.nn.Linear(12, 24), torch.nn.ReLU(), torch.nn.Linear(24, 8))

    def forward(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        a = self.user(u)
        if self.chained:
            v = v + a.sum()
        return (a * self.item(v)).sum(-1)


@pytest.mark.parametrize(("chained", "grouped"), [(False, 2), (True, 0)])
def test_independent_layers_are_one_launch_and_train(mtia_inductor, chained, grouped):
    """The towers' first layers (with their ReLU) are one `mtia_xdsl::linear_group`, their second layers another;
    chained through the user tower's output, no layer is grouped. Output and gradients match eager."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    model, ref = Towers(chained), Towers(chained)
    ref.load_state_dict(model.state_dict())
    u, v = torch.randn(6, 12), torch.randn(6, 12)
    out, codes = run_and_get_code(torch.compile(model), u, v)
    expected = ref(u, v)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
    assert "\n".join(codes).count("torch.ops.mtia_xdsl.linear_group.default(") == grouped
    out.pow(2).sum().backward()
    expected.pow(2).sum().backward()
    for got, want in zip(model.parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(got.grad, want.grad, rtol=1e-4, atol=1e-5)


def test_large_layers_are_left_to_the_gemm_template(groups):
    """A layer with more than MAX_OUTPUT outputs has no `linear_key` (Inductor's autotuned template keeps it)."""
    import torch.fx

    graph = torch.fx.Graph()
    b, x, w = graph.placeholder("b"), graph.placeholder("x"), graph.placeholder("w")
    small, large = 8, groups.MAX_OUTPUT
    for node, shape in ((b, (small,)), (x, (1, 4)), (w, (4, small))):
        node.meta["val"] = torch.empty(shape)
    mm = graph.call_function(torch.ops.aten.addmm.default, (b, x, w))
    assert groups.linear_key(mm) == (1, 4, small, torch.float32, (4, 1), (small, 1), False)
    for node, shape in ((b, (large,)), (x, (2, 4)), (w, (4, large))):
        node.meta["val"] = torch.empty(shape)
    assert groups.linear_key(mm) is None

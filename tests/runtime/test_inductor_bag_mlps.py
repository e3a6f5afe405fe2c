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


def test_embedding_bag_mlp_takes_int32_ids(bag_mlps):
    """int32 ids: the bags and layers of the same ids in int64; the sizes and offsets int32, as aten's for
    int32 ids and offsets (what `nn.EmbeddingBag` makes of a 2-D int32 input)."""
    torch.manual_seed(0)
    weights, indices, ws, bs = _tables(2, 50, 16, 6, 4, [16])
    want = bag_mlps.embedding_bag_mlp(weights, indices, 4, 1, ws, bs, [True])
    got = bag_mlps.embedding_bag_mlp(weights, [i.int() for i in indices], 4, 1, ws, bs, [True])
    assert torch.equal(got[0], want[0]) and torch.equal(got[2][0], want[2][0])
    offsets = torch.arange(0, 24, 4, dtype=torch.int32)
    size = torch.ops.aten._embedding_bag(weights[1], indices[1].int(), offsets, mode=1)[2]
    assert torch.equal(got[3], offsets) and torch.equal(got[1][1], size) and size.dtype == torch.int32


@pytest.mark.parametrize(
    ("d", "widths", "dtype"),
    [
        (128, [128, 128, 128], torch.float32),  # three layers as wide as the old per-layer limit (128 x 128)
        (256, [256], torch.bfloat16),  # one layer past it
    ],
)
def test_ls_bytes_needed_bounds_the_programs_ls(bag_mlps, d, widths, dtype):
    """Layers that fit LS by `ls_bytes_needed` run and match aten; the LS the kernel's CBs took (mtia-cb-allocate's
    high-water mark, the report's `ls_high_water_bytes`) is within that bound, itself within a PE's LS."""
    import mtia_xdsl
    from mtia_xdsl.runtime.triton_backend.driver import target_machine_config

    torch.manual_seed(0)
    weights, indices, ws, bs = _tables(2, 50, d, 16, 8, widths, dtype)
    relus = [True] * len(widths)
    _, _, hs, _ = bag_mlps.embedding_bag_mlp(weights, indices, 8, 0, ws, bs, relus)
    bound = bag_mlps.ls_bytes_needed(d, widths, dtype, 16, 8, 2)
    assert mtia_xdsl.last_report().ls_high_water_bytes <= bound <= target_machine_config().ls_bytes
    bag = torch.ops.aten._embedding_bag(weights[1], indices[1], torch.arange(0, 128, 8))[0]  # table 1
    w, b = ws[len(widths)].float(), bs[len(widths)].float()
    h = torch.addmm(b, bag.float(), w).relu()
    torch.testing.assert_close(hs[0][1].float(), h, rtol=1e-2, atol=1e-2 * h.abs().max().item())


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
    """Mean bags of a 2-D input (fixed-step bags) per tower, each through Linear, ReLU, Linear (then `last`, if
    given, on each tower); with `offsets`, the bags of a 1-D input by offsets instead (not fixed-step)."""

    def __init__(self, offsets: bool = False, last=None) -> None:
        super().__init__()
        self.offsets = offsets
        self.last = last
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
        a, b = self.mlp[0](a), self.mlp[1](b)
        if self.last is not None:
            a, b = self.last(a), self.last(b)
        return (a * b).sum(-1)


@pytest.mark.parametrize(("offsets", "fused"), [(False, 1), (True, 0)])
def test_towers_of_bags_are_one_launch_and_train(compile_and_train, offsets, fused):
    """Fixed-step bags and both layers of both towers are one `mtia_xdsl::embedding_bag_mlp` (no launch for the
    offsets' arange, no `linear_group`); bags by offsets are not fused. Output and gradients match eager."""
    torch.manual_seed(0)
    u, v = torch.randint(0, 50, (4, 3)), torch.randint(0, 50, (4, 3))
    codes = compile_and_train(lambda: TwoTower(offsets), u, v, rtol=1e-4, atol=1e-5)
    code = "\n".join(codes)
    assert code.count("torch.ops.mtia_xdsl.embedding_bag_mlp.default(") == fused
    assert ("linear_group" in code) == (not fused)
    assert not fused or "fused_arange" not in codes[0]  # the offsets, saved for backward, are the op's


def _compiled(model, *args):
    """(output, generated code, calls of `mtia_xdsl::embedding_bag_mlp` in it) of `torch.compile(model)(*args)`."""
    from torch._inductor.utils import run_and_get_code

    out, codes = run_and_get_code(torch.compile(model), *args)
    code = "\n".join(codes)
    return out, code, code.count("torch.ops.mtia_xdsl.embedding_bag_mlp.default(")


def test_towers_of_bags_are_one_launch_in_inference(mtia_inductor):
    """Under no_grad each table's offsets are an iota of their own (no CSE across tables as in a joint graph):
    the towers are still one launch, and match eager; with int32 ids (an int32 iota, offsets the op writes in
    the ids' dtype) and a sigmoid after the last layer (not the op's: a reader of its output, in the launch of
    the product that follows)."""
    torch.manual_seed(0)
    model = TwoTower(last=torch.sigmoid).eval()
    u, v = torch.randint(0, 50, (4, 3), dtype=torch.int32), torch.randint(0, 50, (4, 3), dtype=torch.int32)
    with torch.no_grad():
        out, code, fused = _compiled(model, u, v)
        torch.testing.assert_close(out, model(u, v), rtol=1e-4, atol=1e-5)
    assert fused == 1 and "linear_group" not in code and "fused_arange" not in code


def _bag_mlp_graph(
    bag_mlps, tables=2, n_bags=4, step=3, d=16, widths=(24, 8), dtype=torch.float32, ids_dtype=torch.int64
):  # fmt: skip
    """The post-grad graph `fuse_bag_mlps` takes, built by hand as `group_embedding_bags` and `group_linears`
    leave a two-tower model's: an `embedding_bag_cat` of fixed-step bags (one iota for every table) along dim 0,
    a per-table slice of its bags into a `linear_group` per layer (relu on all but the last), the last layer's
    per-table views the graph's output. Returns (graph, {name: node}): "cat", "iota", "bags" (its getitem 0),
    "layers" (the linear_group nodes), "w" and "b" (per table, per layer)."""
    import operator

    from torch import fx

    graph = fx.Graph()

    def placeholder(name, val):
        node = graph.placeholder(name)
        node.meta["val"] = val
        return node

    def call(target, args, val, kwargs=None):
        node = graph.call_function(target, args, kwargs)
        node.meta["val"] = val
        return node

    weights = [placeholder(f"table{t}", torch.empty(50, d, dtype=dtype)) for t in range(tables)]
    ids = [placeholder(f"ids{t}", torch.zeros(n_bags * step, dtype=ids_dtype)) for t in range(tables)]
    ws, bs = [[None] * len(widths) for _ in range(tables)], [[None] * len(widths) for _ in range(tables)]
    for t in range(tables):
        k = d
        for i, n in enumerate(widths):
            ws[t][i] = placeholder(f"w{t}_{i}", torch.empty(n, k, dtype=dtype).t())
            bs[t][i] = placeholder(f"b{t}_{i}", torch.empty(n, dtype=dtype))
            k = n
    kwargs = {"start": 0, "step": step, "dtype": ids_dtype, "device": torch.device("cpu"), "requires_grad": False}
    iota = call(torch.ops.prims.iota.default, (n_bags,), torch.arange(0, n_bags * step, step, dtype=ids_dtype), kwargs)
    out = torch.empty(tables * n_bags, d, dtype=dtype)
    sizes = [torch.empty(n_bags, dtype=ids_dtype)] * tables
    cat_val = (out, [torch.empty(0, dtype=ids_dtype)] * tables, sizes, sizes)
    cat = call(bag_mlps._BAG_CAT, (weights, ids, [iota] * tables, 1, [], False, 0), cat_val)
    bags = call(operator.getitem, (cat, 0), out)
    xs = [
        call(torch.ops.aten.slice.Tensor, (bags, 0, t * n_bags, (t + 1) * n_bags), out[:n_bags]) for t in range(tables)
    ]
    layers = []
    for i, n in enumerate(widths):
        h = torch.empty(tables, n_bags, n, dtype=dtype)
        relu = i < len(widths) - 1
        layer = call(
            bag_mlps._LINEAR_GROUP, (xs, [ws[t][i] for t in range(tables)], [bs[t][i] for t in range(tables)], relu), h
        )
        layers.append(layer)
        xs = [call(torch.ops.aten.select.int, (layer, 0, t), h[t]) for t in range(tables)]
    graph.output(tuple(xs))
    graph.lint()
    return graph, {"cat": cat, "iota": iota, "bags": bags, "layers": layers, "w": ws, "b": bs}


def test_fuse_bag_mlps_fuses_the_hand_built_towers(bag_mlps):
    """The hand-built graph of `_bag_mlp_graph` (the one the negative cases below change once each) is one
    `embedding_bag_mlp` with both layers and no iota or linear_group left; with int32 ids (and an int32 iota,
    as `nn.EmbeddingBag` makes for them) too, its offsets int32 as the graph's were."""
    for ids_dtype in (torch.int64, torch.int32):
        graph, _ = _bag_mlp_graph(bag_mlps, ids_dtype=ids_dtype)
        assert bag_mlps.fuse_bag_mlps(graph) == 1
        targets = [n.target for n in graph.nodes]
        assert targets.count(bag_mlps._OP) == 1 and bag_mlps._LINEAR_GROUP not in targets
        assert torch.ops.prims.iota.default not in targets
        (op,) = [n for n in graph.nodes if n.target is bag_mlps._OP]
        assert op.meta["val"][3].dtype == ids_dtype and op.args[-1] == [True, False]


def _set_arg(node, index, value):
    node.args = (*node.args[:index], value, *node.args[index + 1 :])


def _reader(graph, node, target=torch.ops.aten.sum.default):
    """A new reader `target(node)` of `node`, one of the graph's outputs."""
    out = next(n for n in graph.nodes if n.op == "output")
    with graph.inserting_before(out):
        reader = graph.call_function(target, (node,))
    reader.meta["val"] = torch.empty(())
    out.args = ((*out.args[0], reader),)


def _offsets_not_an_iota(graph, nodes):
    with graph.inserting_before(next(iter(graph.nodes))):
        offsets = graph.placeholder("offsets")
    offsets.meta["val"] = nodes["iota"].meta["val"]
    _set_arg(nodes["cat"], 2, [offsets, offsets])


def _iotas_of_two_steps(graph, nodes):
    iota = nodes["iota"]
    with graph.inserting_after(iota):
        other = graph.call_function(iota.target, iota.args, {**iota.kwargs, "step": 2})
    other.meta["val"] = iota.meta["val"]
    _set_arg(nodes["cat"], 2, [iota, other])


def _output_read(index):
    def change(graph, nodes):
        import operator

        cat = nodes["cat"]
        with graph.inserting_after(cat):
            item = graph.call_function(operator.getitem, (cat, index))
        item.meta["val"] = cat.meta["val"][index]
        _reader(graph, item, torch.ops.aten.cat.default)

    return change


def _weight_reads_layer_0(graph, nodes):
    """Table 1's weight of layer 1 plus the sum of table 0's layer 0 (through its view: a chain still)."""
    w, layer = nodes["w"][1][1], nodes["layers"][1]
    view = layer.args[0][0]
    with graph.inserting_after(view):
        total = graph.call_function(torch.ops.aten.sum.default, (view,))
    with graph.inserting_after(total):
        mixed = graph.call_function(torch.ops.aten.add.Tensor, (w, total))
    total.meta["val"], mixed.meta["val"] = torch.empty(()), w.meta["val"]
    _set_arg(layer, 1, [layer.args[1][0], mixed])


_CHANGES = {
    "offsets_not_an_iota": _offsets_not_an_iota,  # bags by offsets: not fixed-step
    "iota_not_from_0": lambda g, n: setattr(n["iota"], "kwargs", {**n["iota"].kwargs, "start": 1}),
    "iotas_of_two_steps": _iotas_of_two_steps,  # tables of two bag lengths
    # the op writes offsets of the ids' dtype
    "int32_offsets_int64_ids": lambda g, n: setattr(n["iota"], "kwargs", {**n["iota"].kwargs, "dtype": torch.int32}),
    "per_sample_weights": lambda g, n: _set_arg(n["cat"], 4, list(n["cat"].args[0])),
    "include_last_offset": lambda g, n: _set_arg(n["cat"], 5, True),
    "along_dim_1": lambda g, n: _set_arg(n["cat"], 6, 1),  # DLRM's concatenation: the tables' rows side by side
    "offset2bag_read": _output_read(1),  # the op does not write offset2bag
    "max_indices_read": _output_read(3),
    "bags_read_whole": lambda g, n: _reader(g, n["bags"]),  # a reader of all the bags, not a table's slice
    # table 1's rows first: not the op's layer
    "layer_takes_tables_swapped": lambda g, n: _set_arg(n["layers"][0], 0, list(reversed(n["layers"][0].args[0]))),
    "weight_reads_layer_0": _weight_reads_layer_0,  # the op would read its own output
}
"""One change each to the graph of `_bag_mlp_graph`, (graph, nodes) -> None, that the fused op cannot serve."""


@pytest.mark.parametrize("change", list(_CHANGES))
def test_fuse_bag_mlps_leaves_what_the_op_cannot_serve(bag_mlps, change):
    """One change to the hand-built towers that the fused op cannot serve: `fuse_bag_mlps` fuses nothing and
    leaves the graph as it was."""
    graph, nodes = _bag_mlp_graph(bag_mlps)
    _CHANGES[change](graph, nodes)
    graph.lint()
    before = str(graph)
    assert bag_mlps.fuse_bag_mlps(graph) == 0
    assert str(graph) == before


@pytest.mark.parametrize(
    "shape",
    [
        {"d": 256, "widths": (256,)},  # f32 [256, 256]: its weight and its transpose alone fill LS
        {"d": 128, "widths": (128, 128, 128, 128), "fused": 3},  # layers past MAX_LAYERS stay linear_group
        {"widths": (512,)},  # a layer wider than MAX_WIDTH
        {"n_bags": 40000, "step": 1},  # the sizes program's offsets [40000] do not fit LS
        {"dtype": torch.float64},
    ],
)
def test_fuse_bag_mlps_leaves_what_does_not_fit(bag_mlps, shape):
    """Layers or bags past what a program holds in LS (`ls_bytes_needed`), past MAX_WIDTH, of a dtype the op
    does not take: nothing fused; layers past MAX_LAYERS: the first MAX_LAYERS fused, the rest left."""
    shape = dict(shape)
    fused = shape.pop("fused", 0)
    graph, nodes = _bag_mlp_graph(bag_mlps, **shape)
    assert bag_mlps.fuse_bag_mlps(graph) == (1 if fused else 0)
    targets = [n.target for n in graph.nodes]
    assert targets.count(bag_mlps._LINEAR_GROUP) == len(nodes["layers"]) - fused


def test_fuse_bag_mlps_leaves_layers_of_two_dtypes(bag_mlps):
    """A layer whose weight and bias are not of the tables' dtype (the op takes one dtype) is not fused."""
    graph, nodes = _bag_mlp_graph(bag_mlps)
    for t in range(2):
        for node in (nodes["w"][t][1], nodes["b"][t][1]):
            node.meta["val"] = node.meta["val"].to(torch.bfloat16)
    assert bag_mlps.fuse_bag_mlps(graph) == 0


def test_a_layer_read_whole_is_the_ops_output(bag_mlps):
    """A reader of a whole layer (not a table's view) ends the chain there but reads the op's output of it:
    the op writes every layer's [G, n_bags, N], whatever reads it."""
    import operator

    graph, nodes = _bag_mlp_graph(bag_mlps)
    _reader(graph, nodes["layers"][0])
    assert bag_mlps.fuse_bag_mlps(graph) == 1
    (op,) = [n for n in graph.nodes if n.target is bag_mlps._OP]
    assert len(op.args[-1]) == 1  # layer 0 only: layer 1 stays a linear_group
    assert [n.target for n in graph.nodes].count(bag_mlps._LINEAR_GROUP) == 1
    (reader,) = [n for n in graph.nodes if n.target is torch.ops.aten.sum.default]
    layer0 = reader.args[0]  # getitem 0 of the op's layer outputs (its getitem 2)
    assert layer0.target is operator.getitem and layer0.args[1] == 0
    assert layer0.args[0].target is operator.getitem and layer0.args[0].args == (op, 2)

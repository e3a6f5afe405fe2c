"""mtia_xdsl's own Triton kernels for Inductor (mtia_xdsl/runtime/inductor_kernels.py) against aten."""

import pytest
import torch

from mtia_xdsl.runtime import inductor_kernels


@pytest.mark.parametrize(
    ("mode", "include_last_offset", "scaled"),
    [(0, False, False), (1, False, False), (1, True, False), (0, False, True)],
)
def test_embedding_bag_matches_aten(mode, include_last_offset, scaled):
    """All four outputs of `aten._embedding_bag` on CPU, shapes and values (offset2bag empty for an f32 sum, bag
    sizes 0 for sum), with an empty bag and a bag longer than one BLOCK_ROWS step."""
    torch.manual_seed(0)
    weight, ids = torch.randn(100, 24), torch.randint(0, 100, (30,))
    offsets = torch.tensor([0, 2, 2, 5] + ([30] if include_last_offset else []))  # bag 3 has 25 > 16 rows
    psw = torch.rand(30) if scaled else None
    got = inductor_kernels.embedding_bag_sum(weight, ids, offsets, mode, psw, include_last_offset)
    expected = torch.ops.aten._embedding_bag(weight, ids, offsets, False, mode, False, psw, include_last_offset)
    assert len(got) == 4
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape and g.dtype == e.dtype
        torch.testing.assert_close(g, e)


def test_embedding_bag_sizes_of_more_bags_than_one_block(monkeypatch):
    """Program 0 writes the bag sizes in blocks of MAX_BLOCK_BAGS: 5 bags in blocks of 2 (three blocks)."""
    monkeypatch.setattr(inductor_kernels, "MAX_BLOCK_BAGS", 2)
    torch.manual_seed(0)
    weight, ids, offsets = torch.randn(50, 8), torch.randint(0, 50, (12,)), torch.tensor([0, 1, 4, 4, 9])
    got = inductor_kernels.embedding_bag_sum(weight, ids, offsets, 1, None, False)
    expected = torch.ops.aten._embedding_bag(weight, ids, offsets, False, 1)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e)


def test_embedding_bag_per_sample_weights_view():
    """Per-sample weights that are a strided view (`psw[::2]`) scale each row by its own weight, as aten does: the
    kernel reads them at unit stride, so they are made contiguous first (they scaled rows by psw's neighbours)."""
    torch.manual_seed(0)
    weight, ids, offsets = torch.randn(50, 8), torch.randint(0, 50, (10,)), torch.tensor([0, 3, 7])
    psw = torch.rand(20)[::2]
    got = inductor_kernels.embedding_bag_sum(weight, ids, offsets, 0, psw, False)
    expected = torch.ops.aten._embedding_bag(weight, ids, offsets, False, 0, False, psw, False)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape and g.dtype == e.dtype
        torch.testing.assert_close(g, e)


@pytest.mark.parametrize(
    ("mode", "scaled", "include_last_offset", "dim"), [(0, False, False, 1), (1, False, True, 1), (0, True, False, 0)]
)
def test_embedding_bag_cat_matches_cat_of_aten_bags(mode, scaled, include_last_offset, dim):
    """One launch for three tables of different sizes (an empty bag, a bag longer than BLOCK_ROWS) equals
    `torch.cat` of aten's bags, along dim 1 (DLRM's stack) and dim 0, with each table's other outputs."""
    torch.manual_seed(0)
    weights = [torch.randn(rows, 24) for rows in (100, 7, 50)]
    ids = [torch.randint(0, w.shape[0], (30,)) for w in weights]
    last = [30] if include_last_offset else []
    offsets = [torch.tensor([*starts, *last]) for starts in ([0, 2, 2, 5], [0, 1, 1, 29], [0, 0, 3, 9])]
    psws = [torch.rand(30) for _ in weights] if scaled else []
    got, offset2bags, bag_sizes, max_indices = inductor_kernels.embedding_bag_cat(
        weights, ids, offsets, mode, psws, include_last_offset, dim
    )
    bags = [
        torch.ops.aten._embedding_bag(w, i, o, False, mode, False, p, include_last_offset)
        for w, i, o, p in zip(weights, ids, offsets, psws or [None] * 3, strict=True)
    ]
    expected = torch.cat([bag[0] for bag in bags], dim)
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected)
    for t, bag in enumerate(bags):  # the outputs a backward reads, per table, as aten gives them
        for g, e in zip((offset2bags[t], bag_sizes[t], max_indices[t]), bag[1:], strict=True):
            assert g.shape == e.shape
            torch.testing.assert_close(g, e)


def test_embedding_bag_cat_refuses_tables_of_different_widths():
    weights = [torch.randn(10, 8), torch.randn(10, 16)]
    ids, offsets = [torch.tensor([1, 2])] * 2, [torch.tensor([0, 1])] * 2
    with pytest.raises(ValueError, match="one width and dtype"):
        inductor_kernels.embedding_bag_cat(weights, ids, offsets, 0, [], False, 1)


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("no tables", "one entry per table"),
        ("ids of one table missing", "one entry per table"),
        ("dim 2", "dim=2 not 0 or 1"),
        ("one per-sample weight for two tables", "no entry or one per table"),
        ("per-sample weights of two strides", "one stride"),
    ],
)
def test_embedding_bag_cat_refuses_inconsistent_tables(case, message):
    weights = [torch.randn(10, 8), torch.randn(10, 8)]
    ids, offsets, psws, dim = [torch.tensor([1, 2])] * 2, [torch.tensor([0, 1])] * 2, [], 1
    if case == "no tables":
        weights, ids, offsets = [], [], []
    elif case == "ids of one table missing":
        ids = ids[:1]
    elif case == "dim 2":
        dim = 2
    elif case == "one per-sample weight for two tables":
        psws = [torch.rand(2)]
    else:  # aten writes offset2bag for a strided per-sample weight (writes_offset2bag), not for a dense one
        psws = [torch.rand(2), torch.rand(4)[::2]]
    with pytest.raises(ValueError, match=message):
        inductor_kernels.embedding_bag_cat(weights, ids, offsets, 0, psws, False, dim)


def test_embedding_bag_wider_than_one_block_of_columns(monkeypatch):
    """A table wider than MAX_BLOCK_D takes several programs per bag along the columns (grid axis 1), each
    summing its own columns; offset2bag (written for mean) is that of aten."""
    monkeypatch.setattr(inductor_kernels, "MAX_BLOCK_D", 8)
    torch.manual_seed(0)
    weight, ids, offsets = torch.randn(40, 20), torch.randint(0, 40, (11,)), torch.tensor([0, 4, 4, 6])
    got = inductor_kernels.embedding_bag_sum(weight, ids, offsets, 1, None, False)
    expected = torch.ops.aten._embedding_bag(weight, ids, offsets, False, 1)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape
        torch.testing.assert_close(g, e)

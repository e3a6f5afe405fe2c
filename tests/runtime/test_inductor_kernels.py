"""mtia_xdsl's own Triton kernels for Inductor (mtia_xdsl/runtime/inductor_kernels.py) against aten."""

import pytest
import torch

from mtia_xdsl.runtime import inductor_kernels


@pytest.fixture(params=["all ids", "ids per step"])
def ids_load(request, monkeypatch):
    """Both ways the bag kernels read ids: every id in one tile (the default for these small bags) and, with
    MAX_ALL_IDS below the id count, a step's ids at a time (`all_ids_block`)."""
    if request.param == "ids per step":
        monkeypatch.setattr(inductor_kernels, "MAX_ALL_IDS", 4)
    return request.param


def test_all_ids_block():
    """A power of two >= the id count (at least 1) up to MAX_ALL_IDS ids, else 0 (ids a step at a time)."""
    n = inductor_kernels.MAX_ALL_IDS
    assert [inductor_kernels.all_ids_block(k) for k in (0, 1, 30, n, n + 1)] == [1, 1, 32, n, 0]


@pytest.mark.parametrize(
    ("mode", "include_last_offset", "scaled"),
    [(0, False, False), (1, False, False), (1, True, False), (0, False, True)],
)
def test_embedding_bag_matches_aten(mode, include_last_offset, scaled, ids_load):
    """All four outputs of `aten._embedding_bag` on CPU, shapes and values (offset2bag empty for an f32 sum, bag
    sizes 0 for sum), with an empty bag and a bag longer than one BLOCK_ROWS step, both ways of reading ids."""
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
def test_embedding_bag_cat_matches_cat_of_aten_bags(mode, scaled, include_last_offset, dim, ids_load):
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


def test_embedding_bag_cat_raises_atens_error_for_an_id_outside_a_table():
    """An id past the second table raises aten's RuntimeError naming the index and the table's range, before the
    launch (not an out-of-bounds access at a line of the kernel)."""
    weights = [torch.randn(10, 8), torch.randn(5, 8)]
    ids, offsets = [torch.tensor([1, 2]), torch.tensor([1, 5])], [torch.tensor([0, 1])] * 2
    with pytest.raises(
        RuntimeError, match=r"^Index 1 of input takes value 5 which is not in the valid range \[0, 5\)$"
    ):
        inductor_kernels.embedding_bag_cat(weights, ids, offsets, 0, [], False, 1)


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


@pytest.mark.parametrize(
    ("mode", "scaled", "include_last_offset", "dtype", "tol"),
    [
        (0, False, False, torch.float32, 1e-5),
        (1, False, True, torch.float32, 1e-5),
        (0, True, False, torch.float32, 1e-5),
        (1, False, False, torch.bfloat16, 2e-2),
        (0, False, False, torch.float16, 2e-3),
    ],
)
def test_embedding_bag_backward_matches_aten(mode, scaled, include_last_offset, dtype, tol):
    """The dense weight gradient of aten's `_embedding_bag_backward` for 130 rows (three row blocks, the last
    partial): duplicate ids accumulate (one id in three bags, twice in one), an empty bag, a bag longer than one
    id step. f32 sums in another order than aten's: equal within a tolerance, not bit for bit."""
    torch.manual_seed(0)
    weight, ids = torch.randn(130, 24).to(dtype), torch.randint(0, 130, (90,))
    ids[[0, 1, 10, 80]] = 7
    offsets = torch.tensor([0, 2, 2, 5, 80] + ([90] if include_last_offset else []))  # bag 3 has 75 > 64 ids
    psw = torch.rand(90).to(dtype) if scaled else None
    fwd = torch.ops.aten._embedding_bag(weight, ids, offsets, False, mode, False, psw, include_last_offset)
    grad = torch.randn(5, 24).to(dtype)
    expected = torch.ops.aten._embedding_bag_backward(
        grad, ids, offsets, fwd[1], fwd[2], fwd[3], 130, False, mode, False, psw
    )
    assert inductor_kernels.backward_unsupported(grad, ids, offsets, 130, False, mode, False) is None
    got = inductor_kernels.embedding_bag_backward(grad, ids, offsets, fwd[2], 130, mode, psw, -1)
    assert (got.shape, got.dtype) == (expected.shape, expected.dtype)
    torch.testing.assert_close(got.float(), expected.float(), rtol=tol, atol=tol)


def test_embedding_bag_backward_of_a_strided_grad_with_padding():
    """A gradient that is a column slice (stride 40, not 24) is read at its strides; ids equal to padding_idx give
    no gradient (their row stays 0), as aten's."""
    torch.manual_seed(0)
    weight, ids, offsets = torch.randn(30, 24), torch.randint(0, 30, (20,)), torch.tensor([0, 6, 13])
    ids[[2, 9]] = 4
    fwd = torch.ops.aten._embedding_bag(weight, ids, offsets, False, 0, False, None, False, 4)
    grad = torch.randn(3, 40)[:, 8:32]
    expected = torch.ops.aten._embedding_bag_backward(
        grad, ids, offsets, fwd[1], fwd[2], fwd[3], 30, False, 0, False, None, 4
    )
    got = inductor_kernels.embedding_bag_backward(grad, ids, offsets, fwd[2], 30, 0, None, 4)
    torch.testing.assert_close(got, expected)
    assert not got[4].any()


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"sparse": True}, "sparse=True"),
        ({"scale_grad_by_freq": True}, "scale_grad_by_freq=True"),
        ({"mode": 2}, "mode=2"),
        ({"grad": torch.zeros(4, 8, dtype=torch.float64)}, "grad torch.float64"),
        ({"grad": torch.zeros(4, 512)}, "at most 256 columns"),
        ({"num_weights": 1 << 20}, "1048576 rows x 12 ids x 4 bags"),
    ],
)
def test_embedding_bag_backward_unsupported_names_the_case(change, reason):
    """Sparse gradients, scaling by frequency, max bags, f64, tables wider than MAX_BLOCK_D and work above
    BACKWARD_MAX_WORK stay aten's host call, each with the reason the coverage table prints."""
    args = {"grad": torch.zeros(4, 8), "indices": torch.zeros(12, dtype=torch.int64),
            "offsets": torch.tensor([0, 3, 6, 9]), "num_weights": 100, "scale_grad_by_freq": False, "mode": 0,
            "sparse": False} | change  # fmt: skip
    got = inductor_kernels.backward_unsupported(**args)
    assert got is not None and reason in got, got


def test_backward_block_rows_fill_the_pes():
    """The least rows per program (16, 32 or 64) whose programs fit on MTIA-2i's 64 PEs, else 64."""
    rows = [inductor_kernels.backward_block_rows(n) for n in (100, 1000, 1025, 2048, 4097, 100_000)]
    assert rows == [16, 16, 32, 32, 64, 64]

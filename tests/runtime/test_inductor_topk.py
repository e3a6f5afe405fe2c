"""mtia_xdsl's topk kernel (mtia_xdsl/runtime/inductor_topk.py) against aten's CPU topk, ties and NaNs included."""

import pytest
import torch

from mtia_xdsl.runtime import inductor_topk


def _tied_rows(rows: int, n: int, seed: int) -> torch.Tensor:
    """Rows of few distinct values (many ties), some with NaNs and signed zeros."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-1, 2, (rows, n), generator=g).float()
    x[torch.rand(rows, n, generator=g) < 0.1] = float("nan")
    x[torch.rand(rows, n, generator=g) < 0.1] = -0.0
    return x


def _assert_same(got, expected):
    """Values bit for bit (NaN, -0.0) and indices equal, shapes and dtypes too."""
    for g, e in zip(got, expected, strict=True):
        assert (g.shape, g.dtype) == (e.shape, e.dtype)
    assert torch.equal(got[1], expected[1]), (got[1], expected[1])
    assert torch.equal(got[0].view(torch.int32 if got[0].dtype == torch.float32 else torch.int16),
                       expected[0].view(torch.int32 if expected[0].dtype == torch.float32 else torch.int16))  # fmt: skip


@pytest.mark.parametrize("n", range(1, inductor_topk.MAX_N + 1))
@pytest.mark.parametrize(("largest", "sorted_"), [(True, True), (False, True), (True, False)])
def test_topk_matches_aten_tie_for_tie(n, largest, sorted_):
    """Every k of rows of n with ties, NaNs and signed zeros: the indices aten's CPU kernel picks (its
    introselect's order, not lowest index first) and their values, bit for bit."""
    x = _tied_rows(24, n, seed=n)
    for k in range(1, n + 1):
        got = inductor_topk.topk(x, k, largest, sorted_)
        _assert_same(got, torch.ops.aten.topk(x, k, -1, largest, sorted_))


def test_ties_are_not_lowest_index_first():
    """The case that tells aten's order from a stable one: [1, 0, 0, 1], k=1 gives index 3 (the partition moved it
    first), as aten does."""
    x = torch.tensor([[1.0, 0.0, 0.0, 1.0]])
    assert inductor_topk.topk(x, 1, True, True)[1].tolist() == [[3]]
    assert torch.ops.aten.topk(x, 1)[1].tolist() == [[3]]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_topk_half_dtypes(dtype):
    """f16 and bf16 rows (3-D, the router of a batch of sequences), values picked by their 16-bit patterns."""
    x = _tied_rows(2 * 8, 8, seed=1).to(dtype).view(2, 8, 8)
    x[0, 0] = torch.randn(8).to(dtype)
    for k in (1, 2, 5):
        _assert_same(inductor_topk.topk(x, k, True, True), torch.ops.aten.topk(x, k))


def test_topk_of_a_strided_view():
    """Rows of a transposed tensor (last dimension not at unit stride) are read after a copy: aten's results."""
    x = torch.randn(6, 5).t()
    _assert_same(inductor_topk.topk(x, 2, True, True), torch.ops.aten.topk(x, 2))


@pytest.mark.parametrize(
    ("x", "k", "dim", "reason"),
    [
        (torch.zeros(4, 10), 2, -1, "k=2 of rows of 10 (rows of 1 to 9"),
        (torch.zeros(4, 4, dtype=torch.float64), 2, -1, "dtype torch.float64"),
        (torch.zeros(4, 4, dtype=torch.int64), 2, -1, "dtype torch.int64"),
        (torch.zeros(4, 4), 2, 0, "dim=0 of a 2-D tensor"),
        (torch.zeros(4, 4), 0, -1, "k=0 of rows of 4"),
    ],
)
def test_unsupported_names_the_case(x, k, dim, reason):
    """Rows longer than MAX_N, other dtypes, another dim and k=0 stay aten's host call, each with its reason."""
    got = inductor_topk.unsupported(x, k, dim, True)
    assert got is not None and reason in got, got

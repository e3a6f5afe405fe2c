"""Control flow from upstream's tests and other kernels that the machine model refused."""

import pytest
import torch
import triton
import triton.language as tl


@triton.jit
def _halve_until_zero(x, y, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))
    while tl.max(v) > 0:  # carries only a tensor: after bufferizing, its value lives in a CB
        v = v // 2
    tl.store(y + tl.arange(0, N), v + 1)


def test_a_while_loop_carrying_only_a_tensor_runs_to_its_end():
    x = torch.tensor([5, 9, 100, 3], dtype=torch.int32)
    y = torch.full((4,), 7, dtype=torch.int32)
    _halve_until_zero[(1,)](x, y, 4)
    assert y.tolist() == [1, 1, 1, 1]


@triton.jit
def _spin_on_a_tensor(x, y, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))
    while tl.max(v) > 0:  # never changes: v is reloaded unchanged
        v = tl.load(x + tl.arange(0, N))
    tl.store(y + tl.arange(0, N), v)


def test_a_while_loop_whose_tensor_never_changes_is_still_reported():
    x, y = torch.ones(4, dtype=torch.int32), torch.zeros(4, dtype=torch.int32)
    with pytest.raises(Exception, match="never ends"):
        _spin_on_a_tensor[(1,)](x, y, 4)


@triton.jit
def _nested_if_else_return(c1, c2, c3, v1, v2, v3, out):
    val = 0
    if tl.load(c1):
        if tl.load(c2):
            val = tl.load(v1)
        else:
            return
    else:
        if tl.load(c3):
            val = tl.load(v2)
        else:
            val = tl.load(v3)
    tl.store(out, val)


@pytest.mark.parametrize(("c1", "c2", "c3", "expected"), [(1, 1, 0, 1), (1, 0, 1, -1), (0, 0, 1, 2), (0, 1, 0, 3)])
def test_nested_if_else_with_a_return_runs(c1, c2, c3, expected):
    def one(v: int) -> torch.Tensor:
        return torch.tensor([v], dtype=torch.int32)

    out = one(-1)
    _nested_if_else_return[(1,)](one(c1), one(c2), one(c3), one(1), one(2), one(3), out)
    assert out.item() == expected

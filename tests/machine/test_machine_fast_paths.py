"""Fast paths of the machine model's functional run agree with the general (per-lane) paths.

`GlobalMemory.read_block`/`write_block` take a strided view of the working memory when a block lies
whole in one region; the result, the bytes written and the undo log must be those of the per-lane
`gather`/`scatter` over the block's addresses. `semantics.dot` adds C in place and runs large products on
one BLAS thread; its results must be those of the plain float64 `a @ b + c`.
"""

import numpy as np
import pytest
import torch

from mtia_xdsl.machine.interpret.values import GlobalMemory
from mtia_xdsl.semantics.dot import dot

CASES = [
    # (base element offsets per program (None: one program), strides, shape, bounds per dim)
    (None, [1], [16], [16]),
    (None, [1], [16], [5]),
    ([0, 16, 32, 48], [1], [16], [16]),
    ([0, 16, 32, 48], [1], [16], [np.array([16, 16, 16, 3])]),
    ([0, 20, 40], [10, 1], [4, 8], [4, 8]),
    ([0, 20, 40], [10, 1], [4, 8], [np.array([4, 2, 0]), 5]),  # blocks overlap: per-lane write
    ([0, 40, 80], [10, 1], [4, 8], [np.array([4, 2, 0]), 5]),
    ([0, 10, 20], [1], [16], [10]),  # rows padded to 16: masked-off parts overlap the next row
    ([0, 30, 60], [10, 1], [4, 8], [3, 8]),
    ([3, 3, 3], [1], [8], [8]),  # every program the same block: the write overlaps, per-lane path
    ([0, 8, 16], [1, 2], [2, 4], [2, 4]),  # transposed block
    ([5, 1, 9], [1], [4], [4]),  # bases not in arithmetic progression
    ([0, 100], [1], [128], [np.array([128, 100])]),  # the last block runs past the tensor: per-lane path
]


def _memory(dtype: torch.dtype) -> tuple[GlobalMemory, torch.Tensor]:
    t = (torch.arange(200, dtype=torch.float32) * 0.5 - 7).to(dtype)
    return GlobalMemory.from_tensors([t], ["x"]), t


def _block(t: torch.Tensor, case: tuple) -> tuple:
    offs, strides, shape, bounds = case
    size = t.element_size()
    base = t.data_ptr() if offs is None else t.data_ptr() + np.asarray(offs, dtype=np.int64) * size
    return base, strides, shape, bounds


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int16])
@pytest.mark.parametrize("case", CASES)
def test_read_block_equals_gather(dtype: torch.dtype, case: tuple) -> None:
    mem, t = _memory(dtype)
    elem = {torch.float32: "f32", torch.bfloat16: "bf16", torch.int16: np.dtype(np.int16)}[dtype]
    base, strides, shape, bounds = _block(t, case)
    if case == CASES[-1]:
        with pytest.raises(Exception, match="out-of-bounds"):
            mem.read_block(base, strides, shape, [np.array([128, 128])], elem, 0)
    got = mem.read_block(base, strides, shape, bounds, elem, -1)
    addrs, mask = mem._block_addrs(base, strides, shape, bounds, elem)
    want = mem.gather(addrs, elem, mask, -1)
    np.testing.assert_array_equal(np.broadcast_to(got, want.shape), want)


@pytest.mark.parametrize("case", CASES)
def test_write_block_equals_scatter_and_undoes(case: tuple) -> None:
    fast, t = _memory(torch.float32)
    slow = GlobalMemory.from_tensors([t], ["x"])
    base, strides, shape, bounds = _block(t, case)
    batch = () if case[0] is None else (len(case[0]),)
    values = np.random.default_rng(0).standard_normal(batch + tuple(shape)).astype(np.float32)
    before = fast.regions[0].working.copy()
    fast.begin_undo()
    fast.write_block(base, strides, shape, bounds, values, "f32")
    addrs, mask = slow._block_addrs(base, strides, shape, bounds, "f32")
    slow.scatter(addrs, values, "f32", mask)
    np.testing.assert_array_equal(fast.regions[0].working, slow.regions[0].working)
    assert not np.array_equal(fast.regions[0].working, before) or not mask.any()
    fast.undo()
    np.testing.assert_array_equal(fast.regions[0].working, before)


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "c_shape"),
    [
        ((4, 64, 32), (4, 32, 64), (4, 64, 64)),
        ((4, 64, 64), (4, 64, 64), (64, 64)),  # C broadcast over the batch
        ((64, 64), (64, 64), (3, 64, 64)),  # C batched, A and B not: the sum has C's shape
        ((2, 128, 32), (2, 32, 128), (2, 128, 128)),  # above ONE_THREAD_MACS: one BLAS thread
        ((128, 128), (128, 128), ()),
    ],
)
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_dot_equals_float64_product_plus_c(a_shape: tuple, b_shape: tuple, c_shape: tuple, dtype: type) -> None:
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(a_shape) * rng.choice([1e-3, 1.0, 1e3], size=a_shape)).astype(dtype)
    b, c = rng.standard_normal(b_shape).astype(dtype), rng.standard_normal(c_shape).astype(np.float32)
    got = dot(a, b, c, 2)
    want = a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)
    assert got.dtype == np.float64 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)

"""Unit tests of the runtime value model: bf16 rounding, element formats, GlobalMemory."""

import numpy as np
import pytest
import torch
from xdsl.dialects import builtin
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.machine.interpret.values import (
    Divergence,
    GlobalMemory,
    as_value,
    bf16_bits_to_f32,
    broadcast_batch,
    element_format,
    f32_to_bf16_bits,
    location_str,
    to_bf16_f32,
    uniform,
)
from mtia_xdsl.semantics.casts import f16_to_f64, f32_to_f16


def test_bf16_rounding_matches_torch_f32():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(20000, generator=gen) * torch.logspace(-30, 30, 20000)
    special = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), 3.4e38, -3.4e38, 1e-40, 1.00390625])
    x = torch.cat([x, special])
    got = to_bf16_f32(x.numpy())
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, x.bfloat16().float().numpy())


def test_bf16_rounding_matches_torch_f64_without_double_rounding():
    # 1 + 2^-8 + 2^-30 in f64 rounds up to 1 + 2^-7 in bf16 (LLVM fptrunc); through f32 first it would
    # tie to 1, which is what torch does.
    x = np.array([1 + 2**-8 + 2**-30, 1 + 2**-8, -(1 + 2**-8 + 2**-40)])
    np.testing.assert_array_equal(to_bf16_f32(x), [1 + 2**-7, 1.0, -(1 + 2**-7)])
    gen = torch.Generator().manual_seed(1)
    r = torch.randn(5000, dtype=torch.float64, generator=gen) * 1e3
    np.testing.assert_array_equal(to_bf16_f32(r.numpy()), r.bfloat16().float().numpy())


def test_bf16_nan_stays_nan_and_bits_round_trip():
    bits = f32_to_bf16_bits(np.array([np.nan, -np.nan], dtype=np.float32))
    assert np.isnan(bf16_bits_to_f32(bits)).all()
    raw = torch.randn(100).bfloat16()
    bits = raw.view(torch.int16).numpy()
    np.testing.assert_array_equal(bf16_bits_to_f32(bits), raw.float().numpy())
    np.testing.assert_array_equal(f32_to_bf16_bits(raw.float().numpy()).view(np.int16), bits)


@pytest.mark.parametrize("layout", ["contiguous", "strided", "broadcast", "small"])
def test_f32_to_f16_gives_numpys_bits_nans_and_subnormals_included(layout: str) -> None:
    gen = np.random.default_rng(0)
    bits = np.concatenate(
        [
            gen.integers(0, 1 << 32, 60000, dtype=np.uint64).astype(np.uint32),  # every exponent, NaN payloads
            np.arange(0x33000000, 0x33000000 + 5000, dtype=np.uint32),  # around the smallest f16 subnormal
            np.arange(0x477FE000 - 2500, 0x477FE000 + 2500, dtype=np.uint32),  # around f16's overflow
            np.array([0x7F800001, 0xFFC00001, 0x7FBFFFFF, 0x7F802000], dtype=np.uint32),  # NaN payloads
        ]
    )
    x = bits.view(np.float32)
    x = {
        "contiguous": x,
        "strided": x[::2],
        "broadcast": np.broadcast_to(x[:4096], (3, 4096)),
        "small": x[:100],
    }[layout]
    with np.errstate(all="ignore"):  # overflow to inf is the rounding asked for
        want = x.astype(np.float16)
        got = f32_to_f16(x)
    assert got.dtype == np.float16 and got.shape == x.shape
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
    assert x.size < 4096 or np.isnan(x).any()  # the test reaches the NaN lanes of the vector path


def test_f16_to_f64_gives_numpys_bits_for_every_half() -> None:
    halves = np.tile(np.arange(1 << 16, dtype=np.uint16).view(np.float16), 3)  # signalling NaNs included
    for x in (halves, halves[::3], halves[:100]):
        np.testing.assert_array_equal(f16_to_f64(x).view(np.uint64), x.astype(np.float64).view(np.uint64))


def test_element_formats():
    assert element_format(builtin.i1).compute == np.bool_
    assert element_format(builtin.i1).size_bytes == 1
    assert element_format(builtin.IntegerType(16)).compute == np.int16
    assert element_format(builtin.bf16).compute == np.float32
    assert element_format(builtin.bf16).size_bytes == 2
    assert element_format(builtin.f16).compute == np.float16
    assert element_format(np.dtype(np.float32)).name == "f32"
    with pytest.raises(InterpretationError, match="no representation"):
        element_format(builtin.IntegerType(128))


def test_location_str():
    loc = builtin.FileLineColLoc(builtin.StringAttr("k.py"), builtin.IntAttr(14), builtin.IntAttr(12))
    assert location_str(loc) == "k.py:14:12"


def test_gather_scatter_masks_and_other():
    a = torch.arange(8, dtype=torch.float32)
    mem = GlobalMemory.from_tensors([a], ["a_ptr"])
    addrs = a.data_ptr() + 4 * np.arange(10)
    mask = np.arange(10) < 8
    got = mem.gather(addrs, builtin.f32, mask, np.float32(-7))
    np.testing.assert_array_equal(got, [0, 1, 2, 3, 4, 5, 6, 7, -7, -7])
    mem.scatter(addrs, np.full(10, 9.0, np.float32), builtin.f32, (np.arange(10) % 2 == 0) & mask)
    mem.commit()
    np.testing.assert_array_equal(a.numpy(), [9, 1, 9, 3, 9, 5, 9, 7])


def test_bf16_and_bool_memory():
    b = torch.tensor([1.5, -2.25, 3.0], dtype=torch.bfloat16)
    flags = torch.tensor([True, False, True])
    mem = GlobalMemory.from_tensors([b, flags])
    vals = mem.gather(b.data_ptr() + 2 * np.arange(3), builtin.bf16)
    np.testing.assert_array_equal(vals, [1.5, -2.25, 3.0])
    mem.scatter(b.data_ptr() + 2 * np.arange(3), np.array([1.00390625, 1.01171875, 7.0], np.float32), builtin.bf16)
    got_flags = mem.gather(flags.data_ptr() + np.arange(3), builtin.i1)
    assert got_flags.dtype == np.bool_ and got_flags.tolist() == [True, False, True]
    mem.commit()
    expected = torch.tensor([1.00390625, 1.01171875, 7.0]).bfloat16()
    assert torch.equal(b, expected)


def test_views_share_storage():
    base = torch.zeros(16, dtype=torch.int32)
    lo, hi = base[:8], base[8:]
    mem = GlobalMemory.from_tensors([lo, hi, 3.0], ["lo", "hi", "scale"])
    assert len(mem.regions) == 1
    mem.scatter(lo.data_ptr() + 4 * np.arange(10), np.arange(10, dtype=np.int32), builtin.i32)
    # lanes 8 and 9 of `lo` land in `hi`, as on real memory
    np.testing.assert_array_equal(mem.gather(hi.data_ptr() + 4 * np.arange(2), builtin.i32), [8, 9])
    mem.commit()
    assert hi[:2].tolist() == [8, 9]


def test_out_of_bounds_message_names_argument_distance_and_location():
    x = torch.zeros(100, dtype=torch.float32)
    y = torch.zeros(50, dtype=torch.float16)
    mem = GlobalMemory.from_tensors([x, y], ["x_ptr", "y_ptr"])
    addrs = y.data_ptr() + 2 * np.arange(53)
    with pytest.raises(InterpretationError) as info:
        mem.gather(addrs, builtin.f16, where="kernel.py:12:8")
    msg = str(info.value)
    assert "kernel.py:12:8" in msg
    assert "'y_ptr'" in msg
    assert "1 element(s) past the end" in msg
    assert f"{y.data_ptr() + 100:#x}" in msg
    # a masked-off lane is never checked
    mem.gather(addrs, builtin.f16, np.arange(53) < 50)
    with pytest.raises(InterpretationError, match="before the start of 'x_ptr'"):
        mem.scatter(np.array([x.data_ptr() - 8]), np.zeros(1, np.float32), builtin.f32, where="k.py:1:1")


def test_misaligned_access_raises():
    x = torch.zeros(4, dtype=torch.float32)
    mem = GlobalMemory.from_tensors([x], ["x_ptr"])
    with pytest.raises(InterpretationError, match="misaligned"):
        mem.gather(np.array([x.data_ptr() + 2]), builtin.f32)


def test_failed_run_leaves_tensors_untouched():
    x = torch.ones(4)
    mem = GlobalMemory.from_tensors([x], ["x_ptr"])
    mem.scatter(x.data_ptr() + 4 * np.arange(4), np.zeros(4, np.float32), builtin.f32)
    with pytest.raises(InterpretationError):
        mem.scatter(x.data_ptr() + 4 * np.arange(5), np.zeros(5, np.float32), builtin.f32)
    assert x.tolist() == [1, 1, 1, 1]  # no commit: caller's tensor unchanged


def test_read_write_block_bounds():
    m = torch.arange(20, dtype=torch.float32).reshape(4, 5)
    mem = GlobalMemory.from_tensors([m])
    block = mem.read_block(m.data_ptr() + 4 * 6, [5, 1], [4, 4], [3, 2], builtin.f32, other=-1.0)
    expected = np.full((4, 4), -1.0, np.float32)
    expected[:3, :2] = m.numpy()[1:4, 1:3]
    np.testing.assert_array_equal(block, expected)
    mem.write_block(m.data_ptr(), [1, 5], [2, 8], [2, 4], np.zeros((2, 8), np.float32), builtin.f32)
    mem.commit()
    assert m[:4, :2].sum().item() == 0  # transposed write of the first two columns
    assert m[0, 2].item() == 2


def test_as_value_keeps_leading_batch_dims():
    t = builtin.TensorType(builtin.f32, [2, 3])
    assert as_value(np.ones((5, 1, 3)), t).shape == (5, 2, 3)
    assert as_value(np.ones((2, 3)), t).shape == (2, 3)
    assert as_value(np.float64(2.0), t).shape == (2, 3)
    assert as_value(np.arange(4), builtin.i32).shape == (4,)  # a batch of scalars


def test_broadcast_batch_aligns_batch_dims_only():
    a, b = broadcast_batch([np.zeros((3, 4)), np.ones(4)], [1, 1])
    assert a.shape == b.shape == (3, 4)
    a, b = broadcast_batch([np.zeros(4), np.ones(4)], [1, 1])
    assert a.shape == b.shape == (4,)


def test_uniform_returns_the_shared_value_or_raises_divergence():
    assert uniform(np.array([3, 3, 3]), None) == 3
    assert uniform(np.int32(7), None) == 7
    op = builtin.ModuleOp([])
    with pytest.raises(Divergence) as info:
        uniform(np.array([1, 2, 1]), op)
    assert list(info.value.values) == [1, 2, 1]


def test_batched_block_read_and_undo_of_writes():
    x = torch.arange(12, dtype=torch.float32)
    mem = GlobalMemory.from_tensors([x])
    base = x.data_ptr() + np.array([0, 16, 32], dtype=np.int64)  # three programs, rows of 4
    got = mem.read_block(base, [1], [4], [np.array([4, 4, 2])], "f32", other=-1.0)
    np.testing.assert_array_equal(got, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, -1, -1]])
    mem.begin_undo()
    mem.write_block(base, [1], [4], [np.array([4, 1, 0])], np.zeros((3, 4)), "f32")
    assert mem.gather(x.data_ptr() + 16, "f32") == 0.0
    mem.undo()
    mem.end_undo()
    mem.commit()
    assert torch.equal(x, torch.arange(12, dtype=torch.float32))

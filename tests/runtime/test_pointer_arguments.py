"""Pointer arguments other than plain torch tensors: triton.reinterpret's TensorWrapper, null pointers."""

import pytest
import torch
import triton
import triton.language as tl

from mtia_xdsl.runtime.launch import KernelLaunchError, runtime_args


@triton.jit
def _twice_plus_one(x, y, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y + offs, tl.load(x + offs) * 2 + 1)


def test_reinterpreted_unsigned_tensors_are_read_and_written_in_place():
    x = torch.tensor([0, 1, -1, 2**31 - 1], dtype=torch.int32)  # as uint32: 0, 1, 2^32-1, 2^31-1
    y = torch.zeros(4, dtype=torch.int32)
    _twice_plus_one[(1,)](triton.reinterpret(x, tl.uint32), triton.reinterpret(y, tl.uint32), 4)
    expected = ((x.to(torch.int64) & 0xFFFFFFFF) * 2 + 1) & 0xFFFFFFFF
    assert torch.equal(y.to(torch.int64) & 0xFFFFFFFF, expected)


class _NotATensor:
    dtype = torch.float32

    def data_ptr(self) -> int:
        return 1234


def test_an_object_with_data_ptr_but_no_tensor_behind_it_is_refused():
    with pytest.raises(KernelLaunchError, match="data_ptr"):
        runtime_args(
            _twice_plus_one, {"x": "*fp32", "y": "*fp32", "N": "constexpr"}, [_NotATensor(), torch.zeros(4), 4]
        )


@triton.jit
def _copy_through_loaded_pointers(ptrs, N: tl.constexpr):
    src = tl.load(ptrs).to(tl.pointer_type(tl.float32))
    dst = tl.load(ptrs + 1).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, N)
    tl.store(dst + offs, tl.load(src + offs) + 1)


def test_pointers_loaded_from_memory_reach_the_tensors_they_point_into():
    # as tutorial 08 keeps A.data_ptr() in an int64 tensor: src and dst are no kernel arguments
    src, dst = torch.arange(8.0), torch.zeros(8)
    ptrs = torch.tensor([src.data_ptr(), dst.data_ptr()], dtype=torch.int64)
    _copy_through_loaded_pointers[(1,)](ptrs, 8)
    assert torch.equal(dst, src + 1)


def test_a_loaded_pointer_into_no_live_tensor_is_still_out_of_bounds():
    src = torch.arange(8.0)
    ptrs = torch.tensor([src.data_ptr(), 64], dtype=torch.int64)  # 64: no tensor there
    with pytest.raises(Exception, match="out-of-bounds"):
        _copy_through_loaded_pointers[(1,)](ptrs, 8)


def test_a_loaded_pointer_is_resolved_while_functional_tensors_are_alive() -> None:
    """torch.compile leaves FunctionalTensors (no data pointer) among the live objects the lookup scans."""
    from torch._subclasses.functional_tensor import FunctionalTensor, FunctionalTensorMode

    with FunctionalTensorMode():
        functional = FunctionalTensor.to_functional(torch.empty(4))
    test_pointers_loaded_from_memory_reach_the_tensors_they_point_into()
    assert functional.shape == (4,)


def test_a_loaded_pointer_into_no_live_tensor_is_out_of_bounds_while_fake_tensors_are_alive() -> None:
    """A FakeTensor (torch.compile) reports device cpu but has no data: address 64 must not resolve into it."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        fake = torch.empty(1024)
    test_a_loaded_pointer_into_no_live_tensor_is_still_out_of_bounds()
    assert fake.shape == (1024,)

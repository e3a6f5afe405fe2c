"""ctypes.Structure kernel arguments: passed by field, types from the declarations, errors name the field."""

import ctypes

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl
from examples.tensor_view import Epilogue, TensorView, scale, scale_view
from mtia_xdsl.language.structs import StructFieldError, field_type
from mtia_xdsl.runtime.launch import KernelLaunchError


def _strided() -> torch.Tensor:
    return torch.randn(70, 90, generator=torch.Generator().manual_seed(3))[
        5:, ::2
    ].t()  # 45 x 65, strides (2, 90): columns of a row are 90 elements apart


def test_tensor_view_of_a_strided_tensor_through_triton_launch():
    x = _strided()
    torch.testing.assert_close(scale(x, 1.5, -2.0), x * 1.5 - 2.0)
    torch.testing.assert_close(scale(x, 1.5, -2.0, by_struct=False), x * 1.5 - 2.0)


def test_tensor_view_through_mtia_xdsl_compile():
    x, out = _strided(), torch.zeros(45, 65)
    kernel = mtia_xdsl.compile(scale_view, constexprs={"BLOCK_M": 32, "BLOCK_N": 64})
    kernel[(2, 2)](TensorView.of(x, 2.0, 1.0), out)
    torch.testing.assert_close(out, x * 2.0 + 1.0)


def test_field_types_follow_the_declarations():
    class Inner(ctypes.Structure):
        _fields_ = [("flag", ctypes.c_bool), ("code", ctypes.c_char), ("u", ctypes.c_uint16)]

    class Outer(ctypes.Structure):
        _fields_ = [
            ("p", ctypes.POINTER(ctypes.c_int8)),
            ("raw", ctypes.c_void_p),
            ("dims", (ctypes.c_int32 * 2) * 2),
            ("inner", Inner),
            ("x", ctypes.c_double),
            ("n", ctypes.c_uint64),
        ]

    ty = field_type(Outer, "o")
    assert ty._fields == ("p", "raw", "dims", "inner", "x", "n")
    assert tuple(ty) == ("*i8", "*i8", (("i32", "i32"), ("i32", "i32")), ty.inner, "fp64", "u64")
    assert tuple(ty.inner) == ("i1", "i8", "u16")


class _Pair(ctypes.Structure):
    _fields_ = [("a", ctypes.c_int32), ("b", ctypes.c_int32)]


@pytest.mark.parametrize(
    ("ctype", "why"),
    [
        (ctypes.c_longdouble, "c_longdouble, which has no Triton type"),
        (ctypes.c_wchar, "c_wchar, which has no Triton type"),
        (ctypes.py_object, "py_object, which has no Triton type"),
        (type("U", (ctypes.Union,), {"_fields_": [("i", ctypes.c_int)]}), "U, which has no Triton type"),
        (ctypes.POINTER(_Pair), r"LP__Pair, which has no Triton type \(a pointer to _Pair\)"),
    ],
)
def test_a_field_with_no_triton_type_is_named(ctype, why):
    bad = type("Bad", (ctypes.Structure,), {"_fields_": [("ok", ctypes.c_int32), ("field", ctype)]})
    with pytest.raises(StructFieldError, match=f"field 'v.field' has ctypes type {why}; use one of: c_bool"):
        field_type(bad, "v")


def test_a_bit_field_is_named():
    bits = type("Bits", (ctypes.Structure,), {"_fields_": [("low", ctypes.c_int32, 4)]})
    with pytest.raises(
        StructFieldError, match=r"field 'v.low' has ctypes type c_int, which has no Triton type \(a bit"
    ):
        field_type(bits, "v")


@triton.jit
def _first(view, out_ptr):
    tl.store(out_ptr, tl.load(view.data))


def test_launch_refuses_an_unmappable_field_naming_it():
    bad = type("BadView", (ctypes.Structure,), {"_fields_": [("data", ctypes.c_void_p), ("t", ctypes.c_longdouble)]})
    with pytest.raises(StructFieldError, match=r"field 'BadView.t' has ctypes type c_longdouble"):
        _first[(1,)](bad(0, 1.0), torch.zeros(1))


def test_pointer_outside_every_visible_tensor_is_named():
    x, out = torch.arange(4.0), torch.zeros(1)
    view = TensorView.of(x)
    del view.tensor  # nothing visible holds x's storage any more
    with pytest.raises(
        KernelLaunchError,
        match=r"argument 'view': field 'view.data' points to 0x[0-9a-f]+, inside no "
        "tensor the launch can see; keep the tensor",
    ):
        _first[(1,)](view, out)
    assert out.eq(0).all()


def test_null_and_misaligned_pointers_are_named():
    with pytest.raises(StructFieldError, match=r"field 'TensorView.data' is a NULL pointer"):
        _first[(1,)](TensorView(None, (0, 0), (0, 0), Epilogue(1.0, 0.0)), torch.zeros(1))
    x = torch.arange(8.0)
    view = TensorView.of(x)
    view.data = ctypes.cast(x.data_ptr() + 2, ctypes.POINTER(ctypes.c_float))
    with pytest.raises(
        KernelLaunchError,
        match=r"field 'view.data' \(\*fp32\) points 2 bytes into a tensor's "
        "storage, not a multiple of its element size 4",
    ):
        _first[(1,)](view, torch.zeros(1))


def test_pointer_into_another_argument_is_visible():
    out = torch.tensor([0.0, 0.0, 9.0, 0.0])
    view = TensorView(ctypes.cast(out.data_ptr() + 8, ctypes.POINTER(ctypes.c_float)), (1, 1), (1, 1), Epilogue())
    _first[(1,)](view, out)
    assert out.tolist() == [9.0, 0.0, 9.0, 0.0]


def test_triton_interpreter_refuses_a_structure_at_the_launch_line():
    from triton.runtime.interpreter import InterpretedFunction

    x = torch.arange(4.0)
    with pytest.raises(
        Exception,
        match=r"test_language_structs.py:\d+: error: a ctypes.Structure argument "
        r"\(TensorView\) is an MTIA language extension and cannot run under Triton's interpreter",
    ):
        InterpretedFunction(_first.fn)[(1,)](TensorView.of(x), torch.zeros(1))

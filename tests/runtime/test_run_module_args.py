"""run_module checks its tensor arguments against the kernel's pointer parameters (found by the breaker)."""

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from xdsl.utils.exceptions import InterpretationError

import mtia_xdsl
from examples.vector_add import add_kernel
from mtia_xdsl import KernelRuntimeError
from mtia_xdsl.backend import host, riscv
from mtia_xdsl.errors import KernelLaunchError
from mtia_xdsl.frontend import build_tt_module
from mtia_xdsl.machine import run_tt

SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32", "BLOCK_SIZE": "constexpr"}


def _module():
    return build_tt_module(add_kernel, SIG, {"BLOCK_SIZE": 64})


@pytest.mark.parametrize("x", [np.arange(8, dtype=np.float64), torch.arange(8, dtype=torch.int32)])
def test_a_tensor_of_another_element_type_is_refused_not_reinterpreted(x) -> None:
    """A float64 array for a `*fp32` parameter ran and read its bytes as float32 (out was [1, 1, 1, 2.875, ...]);
    `kernel[grid]` and `mtia-run` refuse it, and so does run_module now, before anything is written."""
    out = np.full(8, 7, np.float32)
    with pytest.raises(KernelLaunchError, match=r"vector_add\.py:\d+:1: error: argument 'x_ptr' .* \*fp32"):
        mtia_xdsl.run_module(_module(), 1, [x, np.ones(8, np.float32), out, 8])
    assert (out == 7).all()


def test_tensors_of_the_pointee_type_and_unsigned_of_a_signless_one_still_run() -> None:
    x, y, out = (np.arange(8, dtype=np.float32) for _ in range(3))
    mtia_xdsl.run_module(_module(), 1, [x, y, out, 8])
    assert (out == 2 * x).all()


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _executor_available(name: str) -> bool:
    if name == "riscv":
        return riscv.toolchain_available()
    return name == "model" or host.compiler_available()


@pytest.mark.parametrize("executor", ["model", "cpp", "llvm", "riscv"])
def test_a_read_only_output_array_is_refused_and_not_written(executor: str) -> None:
    """A read-only array took the kernel's stores (torch.from_numpy shares it; the commit copied into it); every
    executor refuses the store and writes no tensor."""
    if not _executor_available(executor):
        pytest.skip(f"executor {executor} is not available here")
    x, out = np.ones(8, np.float32), _read_only(np.zeros(8, np.float32))
    with pytest.raises(
        KernelRuntimeError,
        match=r"vector_add\.py:\d+:\d+: error: .*argument 'output_ptr' is a read-only numpy array .*writable",
    ):
        mtia_xdsl.run_module(_module(), 1, [x, x, out, 8], options={"executor": executor})
    assert (out == 0).all()


def test_read_only_input_arrays_still_run() -> None:
    x, y, out = _read_only(np.arange(8, dtype=np.float32)), _read_only(np.ones(8, np.float32)), np.zeros(8, np.float32)
    mtia_xdsl.run_module(_module(), 1, [x, y, out, 8])
    assert (out == x + 1).all()


@pytest.mark.parametrize("grid", [2.5, "4", None])
def test_a_grid_that_is_not_ints_is_a_type_error_saying_what_a_grid_is(grid) -> None:
    """A float grid was "'float' object is not iterable"."""
    x = np.ones(8, np.float32)
    with pytest.raises(TypeError, match=r"grid must be an int or 1 to 3 ints"):
        mtia_xdsl.run_module(_module(), grid, [x, x, x.copy(), 8])


def test_the_reference_semantics_refuse_a_store_into_a_read_only_array_too() -> None:
    x, out = np.ones(8, np.float32), _read_only(np.zeros(8, np.float32))
    with pytest.raises(InterpretationError, match=r"vector_add\.py:\d+:\d+: error: .*'output_ptr' is a read-only"):
        run_tt(_module(), 1, [x, x, out, 8])
    assert (out == 0).all()


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def _copy_module(pointer: str):
    sig = {"x_ptr": pointer, "out_ptr": pointer, "n": "i32", "BLOCK": "constexpr"}
    return build_tt_module(copy_kernel, sig, {"BLOCK": 8})


@pytest.mark.parametrize(
    ("pointer", "dtype"),
    [("*i8", torch.uint8), ("*u8", torch.int8), ("*i1", torch.bool), ("*fp8e5", torch.float8_e5m2)],
)
def test_a_tensor_fits_the_pointer_its_own_signature_lowers_to(pointer: str, dtype: torch.dtype) -> None:
    """Triton's rule (`launch.pointer_fits`): TTIR integers are signless, so `*u8` and `*i8` are both
    `!tt.ptr<i8>` and a uint8 tensor fits a kernel compiled for `*i8`; a bool tensor is `*u1`, `!tt.ptr<i1>`."""
    x = torch.arange(8).to(dtype)
    out = torch.zeros(8, dtype=dtype)
    mtia_xdsl.run_module(_copy_module(pointer), 1, [x, out, 8])
    assert torch.equal(out.view(torch.uint8), x.view(torch.uint8))


@pytest.mark.parametrize(
    ("pointer", "dtype", "got"),
    [("*i8", torch.bool, r"\*u1"), ("*i1", torch.int8, r"\*i8"), ("*fp8e4nv", torch.float8_e5m2, r"\*fp8e5")],
)
def test_a_tensor_of_another_ttir_pointee_is_refused(pointer: str, dtype: torch.dtype, got: str) -> None:
    """A bool tensor ran for `*i8` and an int8 one for `*i1` (integers matched by width), an e5m2 tensor for an
    e4m3 pointer (any 1-byte float matched an fp8 pointee): Triton would have lowered each to another type."""
    x, out = torch.zeros(8, dtype=dtype), torch.zeros(8, dtype=dtype)
    with pytest.raises(
        KernelLaunchError, match=rf"test_run_module_args\.py:\d+:1: error: argument 'x_ptr' is a {got} "
    ):
        mtia_xdsl.run_module(_copy_module(pointer), 1, [x, out, 8])

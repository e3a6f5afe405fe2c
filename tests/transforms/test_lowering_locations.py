"""Every op of a lowered kernel carries a kernel source location (STYLE: new ops inherit locations)."""

import pytest
from xdsl.dialects.builtin import UnknownLoc

import mtia_xdsl
from examples import layer_norm, matmul, softmax, vector_add

KERNELS = {
    "vector_add": (vector_add.add_kernel, {"BLOCK_SIZE": 1024}, "*fp32,*fp32,*fp32,i32"),
    "softmax": (softmax.softmax_kernel, {"BLOCK_SIZE": 1024}, "*fp32,*fp32,i32,i32,i32"),
    "matmul": (
        matmul.matmul_kernel,
        {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8},
        "*fp16,*fp16,*fp16" + ",i32" * 9,
    ),
    "layer_norm": (
        layer_norm._layer_norm_fwd_fused,
        {"BLOCK_SIZE": 1024},
        "*fp32,*fp32,*fp32,*fp32,*fp32,*fp32,i32,i32,fp32",
    ),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_lowered_op_has_a_location(name: str) -> None:
    fn, constexprs, types = KERNELS[name]
    params = [a for a in fn.arg_names if a not in constexprs]
    kernel = mtia_xdsl.compile(fn, dict(zip(params, types.split(","), strict=True)), constexprs)
    assert kernel.fixed is not None
    missing = [op.name for op in kernel.fixed.program.walk() if isinstance(op.location, UnknownLoc)]
    assert missing == []

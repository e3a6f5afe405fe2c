"""Conformance: our tt module, printed generic and run through upstream's TTIR passes, equals upstream's TTIR.

For each kernel: build with `build_tt_module`, `inline_and_clean`, print generic, parse with libtriton,
run the TTIR passes of `make_ttir` (inliner, canonicalizer, combine, cse, licm, symbol-dce, loop-unroll);
separately build upstream's own TTIR with libtriton's builder (`ASTSource.make_ir`, CUDA target sm80,
same dot precision) and run the same passes. Both, printed without debug locations, must be identical.
"""

from __future__ import annotations

from typing import Any

import pytest

triton = pytest.importorskip("triton")

import test_frontend_kernels as fk  # noqa: E402

from examples.layer_norm import _layer_norm_fwd_fused  # noqa: E402
from examples.matmul import matmul_kernel  # noqa: E402
from examples.softmax import softmax_kernel  # noqa: E402
from examples.vector_add import add_kernel  # noqa: E402
from tests.conformance.ttir_compare import _new_context, _run_ttir_passes, our_ttir  # noqa: E402, F401
from tests.conformance.ttir_compare import upstream_ttir as _upstream_ttir  # noqa: E402

CASES: dict[str, tuple[Any, dict[str, str], dict[str, object]]] = {
    "vector_add": (
        add_kernel,
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32",
         "BLOCK_SIZE": "constexpr"},
        {"BLOCK_SIZE": 1024},
    ),
    "softmax": (
        softmax_kernel,
        {"output_ptr": "*fp32", "input_ptr": "*fp32", "input_row_stride": "i32", "output_row_stride": "i32",
         "n_cols": "i32", "BLOCK_SIZE": "constexpr"},
        {"BLOCK_SIZE": 256},
    ),
    "matmul": (
        matmul_kernel,
        {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
         "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32", "stride_cm": "i32",
         "stride_cn": "i32", "BLOCK_SIZE_M": "constexpr", "BLOCK_SIZE_N": "constexpr",
         "BLOCK_SIZE_K": "constexpr", "GROUP_SIZE_M": "constexpr"},
        {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8},
    ),
    "layer_norm": (
        _layer_norm_fwd_fused,
        {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16", "Mean": "*fp32", "Rstd": "*fp32",
         "stride": "i32", "N": "i32", "eps": "fp32", "BLOCK_SIZE": "constexpr"},
        {"BLOCK_SIZE": 512},
    ),
    "helpers_and_casts": (
        fk.helpers_and_casts,
        {"x_ptr": "*fp16", "y_ptr": "*fp16", "n": "i32", "BLOCK": "constexpr"},
        {"BLOCK": 128},
    ),
    "hints_and_asserts": (
        fk.hints_and_asserts,
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        {"BLOCK": 128},
    ),
    "if_and_while": (
        fk.if_and_while,
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "flag": "i32", "BLOCK": "constexpr"},
        {"BLOCK": 64},
    ),
    "many_ops": (
        fk.many_ops,
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "f": "fp32", "BLOCK": "constexpr"},
        {"BLOCK": 256},
    ),
    "reductions_2d": (
        fk.reductions_2d,
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"},
        {"BLOCK_M": 16, "BLOCK_N": 32},
    ),
}  # fmt: skip


def upstream_ttir(
    fn: Any, signature: dict[str, str], constexprs: dict[str, object], debug: bool = False, capability: int = 80
) -> str:
    """Upstream's TTIR for the kernel, for CUDA sm80 unless `capability` says otherwise."""
    return _upstream_ttir(fn, signature, constexprs, debug, capability)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_upstream_ttir(name: str) -> None:
    fn, signature, constexprs = CASES[name]
    assert our_ttir(fn, signature, constexprs) == upstream_ttir(fn, signature, constexprs)

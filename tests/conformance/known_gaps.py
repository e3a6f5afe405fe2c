"""Corpus kernels our compiler or model cannot handle yet: kernel -> check -> (stage, error's first line).

Checks: "ttir" (op for op against libtriton), "tt" (tt reference interpreter), "machine" (kernel[grid] on the
machine model). Stages: frontend, tt-interpreter, lowering, machine. The harness marks each listed check
xfail(strict=True), so a fix shows up as XPASS: then delete the entry (or regenerate this file with
`python3 tests/conformance/refresh_gaps.py`).
"""

GAPS: dict[str, dict[str, tuple[str, str]]] = {
    "cf_early_return": {
        "tt": (
            "tt-interpreter",
            "ValueError: 'block' property of Region class is only available for single-block regions.",
        )
    },
    "cf_loop_carried_tensors": {
        "ttir": ("frontend", "TTIR differs from upstream: +    %c1_i32 = arith.constant 1 : i32")
    },
    "cf_swizzle_cdiv_assume": {
        "ttir": ("frontend", "TTIR differs from upstream: -    %c0_i32 = arith.constant 0 : i32")
    },
    "cf_tl_range": {"ttir": ("frontend", "TTIR differs from upstream: +    %c16_i32 = arith.constant 16 : i32")},
    "dt_bool_i1": {
        "ttir": ("frontend", "TTIR differs from upstream: -    %cst = arith.constant dense<2> : tensor<32xi32>")
    },
    "dt_fp16_fp64_arith": {
        "ttir": (
            "frontend",
            "TTIR differs from upstream: -    %cst = arith.constant dense<5.000000e-01> : tensor<32xf64>",
        )
    },
    "dt_fp8_casts": {
        "tt": (
            "tt-interpreter",
            "InterpretationError: /work/main/tests/conformance/kernels_dtypes.py:83:10: error: "
            "tt.fp_to_fp: element type f8E4M3FN has no representation in the machine model (program "
            "id (0, 0, 0))",
        )
    },
    "dt_promotion": {
        "ttir": (
            "frontend",
            "TTIR differs from upstream: -    %cst = arith.constant dense<1.500000e+00> : tensor<32xf32>",
        )
    },
    "dt_uint_arith": {
        "ttir": ("frontend", "TTIR differs from upstream: -    %cst = arith.constant dense<2> : tensor<32xi8>")
    },
    "ew_libdevice_nearbyint": {
        "machine": (
            "machine",
            "InterpretationError: "
            "/work/main/tests/conformance/kernels_elementwise.py:286:29: error: "
            "external function '__nv_nearbyintf' has no reference semantics; known "
            "stems: abs, acos, acosh, asin, asinh, atan",
        ),
        "tt": (
            "tt-interpreter",
            "InterpretationError: "
            "/work/main/tests/conformance/kernels_elementwise.py:286:29: error: external "
            "function '__nv_nearbyintf' has no reference semantics; known stems: abs, acos, "
            "acosh, asin, asinh, atan",
        ),
    },
    "ew_libdevice_rounding": {
        "machine": (
            "machine",
            "wrong r_ptr: 29 elements beyond Tol(ulp=0, atol=0.0), first at [2]: got -0.0, want -1.0 (1065353216 ulp)",
        ),
        "tt": (
            "tt-interpreter",
            "wrong r_ptr: 29 elements beyond Tol(ulp=0, atol=0.0), first at [2]: got -0.0, want -1.0 (1065353216 ulp)",
        ),
    },
    "rnd_dropout": {"ttir": ("frontend", "TTIR differs from upstream: -    %c32_i64 = arith.constant 32 : i64")},
    "rnd_rand": {"ttir": ("frontend", "TTIR differs from upstream: -    %c32_i64 = arith.constant 32 : i64")},
    "rnd_randint": {"ttir": ("frontend", "TTIR differs from upstream: -    %c32_i64 = arith.constant 32 : i64")},
    "rnd_randint4x_rounds": {
        "ttir": (
            "frontend",
            "TTIR differs from upstream: -    %cst = arith.constant dense<4.6566126E-10> : tensor<32xf32>",
        )
    },
    "rnd_randn": {"ttir": ("frontend", "TTIR differs from upstream: -    %c32_i64 = arith.constant 32 : i64")},
    "rs_topk": {
        "ttir": ("frontend", "TTIR differs from upstream: -    %cst = arith.constant dense<0> : tensor<1x1x1x2x2xi32>")
    },
}

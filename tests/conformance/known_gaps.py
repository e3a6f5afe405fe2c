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
    "dt_fp8_casts": {
        "tt": (
            "tt-interpreter",
            "InterpretationError: /work/main/tests/conformance/kernels_dtypes.py:83:10: error: "
            "tt.fp_to_fp: element type f8E4M3FN has no representation in the machine model (program "
            "id (0, 0, 0))",
        )
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
}

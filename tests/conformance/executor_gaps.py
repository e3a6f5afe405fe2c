"""Kernels an executor other than the model cannot run like the model yet: executor -> name -> reason.

Names are corpus kernels (CORPUS_GAPS) and example launches of examples/launches.py (EXAMPLE_GAPS). The
harness (test_executors.py) marks a listed pair xfail(strict=True), so a fix shows up as XPASS and the entry
must go: the lists only shrink. Print the current state of every pair with `python scripts/executor_matrix.py`.
"""

CORPUS_GAPS: dict[str, dict[str, str]] = {
    "llvm": {
        "ew_libdevice_inductor": "output 0: 16 elements beyond Tol(ulp=4, atol=0.0), first at [7]: got "
        "0.01370549201965332, want 0.013705521821975708 (32 ulp) (bound 4 ulp from "
        "math.cbrt, math.expm1, math.log1p, math.sinh)"
    },
    "riscv": {
        "cf_debug_builtins": "CppEmitError: tests/conformance/kernels_control.py:153:12: error: the C++ emitter "
        "(mtia-cpp) does not handle values of type tensor<32xi1> (mtia.cb_read)",
        "cf_noinline_helpers": "CppEmitError: tests/conformance/kernels_control.py:104:50: error: the C++ "
        "emitter (mtia-cpp) does not handle this op (tt.call)",
        "cf_swizzle_cdiv_assume": "CppEmitError: tests/conformance/kernels_control.py:206:5: error: the C++ "
        "emitter (mtia-cpp) does not handle this op (ttg.barrier)",
        "dt_downcast_rtz": "output 1: 22 elements beyond Tol(ulp=0, atol=0.0), first at [3]: got -1.7412109375, "
        "want -1.740234375 (1 ulp) (must be bit-exact)",
        "ew_libdevice": "CppEmitError: tests/conformance/kernels_elementwise.py:113:28: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.extern_elementwise)",
        "ew_libdevice_inductor": "CppEmitError: tests/conformance/kernels_elementwise.py:224:28: error: the C++ "
        "emitter (mtia-cpp) does not handle this op in an engine body "
        "(tt.extern_elementwise)",
        "ew_libdevice_nearbyint": "CppEmitError: tests/conformance/kernels_elementwise.py:286:29: error: the "
        "C++ emitter (mtia-cpp) does not handle this op in an engine body "
        "(tt.extern_elementwise)",
        "ew_libdevice_rounding": "CppEmitError: tests/conformance/kernels_elementwise.py:278:28: error: the C++ "
        "emitter (mtia-cpp) does not handle this op in an engine body "
        "(tt.extern_elementwise)",
        "lay_cat_sum": "CppEmitError: tests/conformance/kernels_layout.py:43:9: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.cat)",
        "lay_gather": "CppEmitError: tests/conformance/kernels_layout.py:92:30: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.gather)",
        "lay_histogram": "CppEmitError: tests/conformance/kernels_layout.py:100:44: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.histogram)",
        "lay_interleave": "CppEmitError: tests/conformance/kernels_layout.py:34:27: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.join)",
        "lay_join_split": "CppEmitError: tests/conformance/kernels_layout.py:20:9: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.join)",
        "lay_reshape_view": "IndexError: list index out of range",
        "mem_atomic_2d_fp16": "CppEmitError: tests/conformance/kernels_memory.py:214:5: error: the C++ emitter "
        "(mtia-cpp) does not handle this op (mtia.atomic_rmw)",
        "mem_atomic_bitwise": "CppEmitError: tests/conformance/kernels_memory.py:45:5: error: the C++ emitter "
        "(mtia-cpp) does not handle this op (mtia.atomic_rmw)",
        "mem_atomic_max_min": "CppEmitError: tests/conformance/kernels_memory.py:35:5: error: the C++ emitter "
        "(mtia-cpp) does not handle this op (mtia.atomic_rmw)",
        "mem_atomic_scalar": "CppEmitError: tests/conformance/kernels_memory.py:65:5: error: the C++ emitter "
        "(mtia-cpp) does not handle this op (mtia.atomic_rmw)",
        "mem_atomic_xchg_cas": "CppEmitError: tests/conformance/kernels_memory.py:55:11: error: the C++ emitter "
        "(mtia-cpp) does not handle this op (mtia.atomic_rmw)",
        "mem_gather_scatter": "CppEmitError: tests/conformance/kernels_memory.py:86:28: error: the C++ emitter "
        "(mtia-cpp) does not handle this op (mtia.gather)",
        "rs_argmax_argmin_ties": "CppEmitError: tests/conformance/kernels_reduce_scan.py:34:30: error: the C++ "
        "emitter (mtia-cpp) does not handle values of type tensor<32xi32> "
        "(mtia.cb_read)",
        "rs_argmax_nan": "IndexError: list index out of range",
        "rs_associative_scan": "CppEmitError: tests/conformance/kernels_reduce_scan.py:123:12: error: the C++ "
        "emitter (mtia-cpp) does not handle this op in an engine body (tt.scan)",
        "rs_cumsum_cumprod": "CppEmitError: tests/conformance/kernels_reduce_scan.py:105:29: error: the C++ "
        "emitter (mtia-cpp) does not handle this op in an engine body (tt.scan)",
        "rs_reduce_custom": "IndexError: list index out of range",
        "rs_scan_axis0_2d": "CppEmitError: tests/conformance/kernels_reduce_scan.py:135:46: error: the C++ "
        "emitter (mtia-cpp) does not handle this op in an engine body (tt.scan)",
        "rs_topk": "IndexError: list index out of range",
        "rs_xor_or_sum": "CppEmitError: tests/conformance/kernels_reduce_scan.py:56:28: error: the C++ emitter "
        "(mtia-cpp) does not handle values of type tensor<32xi32> (mtia.cb_read)",
    },
}

EXAMPLE_GAPS: dict[str, dict[str, str]] = {
    "llvm": {},
    "riscv": {
        "row_sums_re": "CppEmitError: examples/row_sums.py:37:17: error: the C++ emitter (mtia-cpp) does not "
        "handle values of type tensor<16xf32> (mtia.cb_read)"
    },
}

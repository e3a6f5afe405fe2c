"""Kernels an executor other than the model cannot run like the model yet: executor -> name -> reason.

Names are corpus kernels (CORPUS_GAPS) and example launches of examples/launches.py (EXAMPLE_GAPS). The
harness (test_executors.py) marks a listed pair xfail(strict=True), so a fix shows up as XPASS and the entry
must go: the lists only shrink. Print the current state of every pair with `python scripts/executor_matrix.py`.
"""

CORPUS_GAPS: dict[str, dict[str, str]] = {
    "cpp": {
        "cf_debug_builtins": "CppEmitError: tests/conformance/kernels_control.py:153:12: error: the C++ emitter "
        "(mtia-cpp) does not handle this op (tt.assert)",
        "cf_loop_carried_tensors": "CppBuildError: the C++ source did not compile: kernel.cpp:256:23: error: "
        "unused variable 'i32' [-Werror=unused-variable]",
        "cf_noinline_helpers": "CppEmitError: tests/conformance/kernels_control.py:104:50: error: the C++ emitter "
        "(mtia-cpp) does not handle this op (tt.call)",
        "cf_reduce_in_loop": "CppBuildError: the C++ source did not compile: kernel.cpp:90:13: error: variable "
        "'r8' set but not used [-Werror=unused-but-set-variable]",
        "cf_swizzle_cdiv_assume": "CppEmitError: tests/conformance/kernels_control.py:201:5: error: the C++ "
        "emitter (mtia-cpp) does not handle this op (llvm.intr.assume)",
        "cf_while_data_dependent": "CppBuildError: the C++ source did not compile: kernel.cpp:81:13: error: "
        "variable 'r6' set but not used [-Werror=unused-but-set-variable]",
        "dt_bitcast": "CppEmitError: tests/conformance/kernels_dtypes.py:94:12: error: the C++ emitter (mtia-cpp) "
        "does not handle this op in an engine body (tt.bitcast)",
        "dt_bool_i1": "CppEmitError: tests/conformance/kernels_dtypes.py:71:9: error: the C++ emitter (mtia-cpp) "
        "does not handle this op (tt.bitcast)",
        "dt_downcast_rtz": "CppEmitError: tests/conformance/kernels_dtypes.py:245:30: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.fp_to_fp)",
        "dt_promotion": "CppEmitError: tests/conformance/kernels_dtypes.py:60:9: error: the C++ emitter "
        "(mtia-cpp) does not handle this op (tt.bitcast)",
        "dt_uint_arith": "CppEmitError: tests/conformance/kernels_dtypes.py:108:5: error: the C++ emitter "
        "(mtia-cpp) does not handle this op (tt.bitcast)",
        "ew_compare_select": "CppEmitError: tests/conformance/kernels_elementwise.py:81:5: error: the C++ emitter "
        "(mtia-cpp) does not handle this op (tt.bitcast)",
        "ew_float_mod_fdiv": "CppEmitError: tests/conformance/kernels_elementwise.py:136:28: error: the C++ "
        "emitter (mtia-cpp) does not handle this op in an engine body (arith.remf)",
        "ew_fma_clamp": "CppEmitError: tests/conformance/kernels_elementwise.py:39:28: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.clampf)",
        "ew_libdevice": "CppEmitError: tests/conformance/kernels_elementwise.py:113:28: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.extern_elementwise)",
        "ew_libdevice_inductor": "CppEmitError: tests/conformance/kernels_elementwise.py:224:28: error: the C++ "
        "emitter (mtia-cpp) does not handle this op in an engine body "
        "(tt.extern_elementwise)",
        "ew_libdevice_nearbyint": "CppEmitError: tests/conformance/kernels_elementwise.py:286:29: error: the C++ "
        "emitter (mtia-cpp) does not handle this op in an engine body "
        "(tt.extern_elementwise)",
        "ew_libdevice_rounding": "CppEmitError: tests/conformance/kernels_elementwise.py:278:28: error: the C++ "
        "emitter (mtia-cpp) does not handle this op in an engine body "
        "(tt.extern_elementwise)",
        "ew_nan_propagation": "CppEmitError: tests/conformance/kernels_elementwise.py:90:9: error: the C++ "
        "emitter (mtia-cpp) does not handle a non-uniform dense constant in an engine body "
        "(arith.constant)",
        "ew_umulhi": "CppEmitError: tests/conformance/kernels_elementwise.py:48:30: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.mulhiui)",
        "lay_cat_sum": "CppEmitError: tests/conformance/kernels_layout.py:43:9: error: the C++ emitter (mtia-cpp) "
        "does not handle this op in an engine body (tt.cat)",
        "lay_gather": "CppEmitError: tests/conformance/kernels_layout.py:92:30: error: the C++ emitter (mtia-cpp) "
        "does not handle this op in an engine body (tt.gather)",
        "lay_histogram": "CppEmitError: tests/conformance/kernels_layout.py:100:44: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.histogram)",
        "lay_interleave": "CppEmitError: tests/conformance/kernels_layout.py:34:27: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.join)",
        "lay_join_split": "CppEmitError: tests/conformance/kernels_layout.py:20:9: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.join)",
        "lay_reshape_view": "IndexError: list index out of range",
        "mem_atomic_2d_fp16": "CppEmitError: tests/conformance/kernels_memory.py:214:5: error: the C++ emitter "
        "(mtia-cpp) does not handle this op (mtia.atomic_rmw)",
        "mem_atomic_add": "CppEmitError: tests/conformance/kernels_memory.py:26:5: error: the C++ emitter "
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
        "rnd_dropout": "CppEmitError: tests/conformance/kernels_random.py:46:12: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.mulhiui)",
        "rnd_rand": "CppEmitError: tests/conformance/kernels_random.py:14:30: error: the C++ emitter (mtia-cpp) "
        "does not handle this op in an engine body (tt.mulhiui)",
        "rnd_randint": "CppEmitError: tests/conformance/kernels_random.py:26:30: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.mulhiui)",
        "rnd_randint4x_rounds": "CppEmitError: tests/conformance/kernels_random.py:33:22: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.mulhiui)",
        "rnd_randn": "CppEmitError: tests/conformance/kernels_random.py:20:30: error: the C++ emitter (mtia-cpp) "
        "does not handle this op in an engine body (tt.mulhiui)",
        "rs_argmax_argmin_ties": "CppEmitError: tests/conformance/kernels_reduce_scan.py:34:30: error: the C++ "
        "emitter (mtia-cpp) does not handle values of type tensor<32xi32> (mtia.cb_read)",
        "rs_argmax_nan": "IndexError: list index out of range",
        "rs_associative_scan": "CppEmitError: tests/conformance/kernels_reduce_scan.py:123:12: error: the C++ "
        "emitter (mtia-cpp) does not handle this op in an engine body (tt.scan)",
        "rs_cumsum_cumprod": "CppEmitError: tests/conformance/kernels_reduce_scan.py:105:29: error: the C++ "
        "emitter (mtia-cpp) does not handle this op in an engine body (tt.scan)",
        "rs_reduce_custom": "IndexError: list index out of range",
        "rs_scan_axis0_2d": "CppEmitError: tests/conformance/kernels_reduce_scan.py:135:46: error: the C++ "
        "emitter (mtia-cpp) does not handle this op in an engine body (tt.scan)",
        "rs_sort": "CppEmitError: tests/conformance/kernels_reduce_scan.py:144:29: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.bitcast)",
        "rs_topk": "IndexError: list index out of range",
        "rs_xor_or_sum": "CppEmitError: tests/conformance/kernels_reduce_scan.py:56:28: error: the C++ emitter "
        "(mtia-cpp) does not handle values of type tensor<32xi32> (mtia.cb_read)",
    },
    "llvm": {},
    "riscv": {
        "cf_noinline_helpers": "CppEmitError: tests/conformance/kernels_control.py:104:50: error: the C++ emitter "
        "(mtia-cpp) does not handle this op (tt.call)",
        "ew_nan_propagation": "CppEmitError: tests/conformance/kernels_elementwise.py:90:9: error: the C++ emitter "
        "(mtia-cpp) does not handle a non-uniform dense constant in an engine body (arith.constant)",
        "rs_sort": "CppEmitError: tests/conformance/kernels_reduce_scan.py:144:29: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (tt.reduce)",
    },
}

EXAMPLE_GAPS: dict[str, dict[str, str]] = {
    "cpp": {
        "column_sums_atomic": "CppEmitError: examples/column_sums.py:36:5: error: the C++ emitter (mtia-cpp) does "
        "not handle this op (mtia.atomic_rmw)",
        "column_sums_persistent": "CppEmitError: examples/column_sums.py:61:5: error: the C++ emitter (mtia-cpp) "
        "does not handle this op (mtia.atomic_rmw)",
        "layer_norm": "output 0: 4802 elements beyond Tol(ulp=0, atol=0.0), first at [0, 0]: got "
        "0.493849515914917, want 0.4938497543334961 (8 ulp) (must be bit-exact)",
        "row_sums_atomic": "CppEmitError: examples/row_sums.py:50:9: error: the C++ emitter (mtia-cpp) does not "
        "handle this op (mtia.atomic_rmw)",
        "row_sums_re": "CppEmitError: examples/row_sums.py:37:17: error: the C++ emitter (mtia-cpp) does not "
        "handle values of type tensor<16xf32> (mtia.cb_read)",
        "sliding_window_slices": "CppEmitError: examples/sliding_window.py:25:37: error: the C++ emitter "
        "(mtia-cpp) does not handle this op in an engine body (mtia.extract_slice)",
        "softmax": "output 0: 1481 elements beyond Tol(ulp=4, atol=0.0), first at [0, 3]: got "
        "0.0006774735520593822, want 0.0006774738430976868 (5 ulp) (bound 4 ulp from math.exp)",
    },
    "llvm": {},
    "riscv": {
        "row_sums_re": "CppEmitError: examples/row_sums.py:37:17: error: the C++ emitter (mtia-cpp) does not "
        "handle values of type tensor<16xf32> (mtia.cb_read)",
    },
}

"""Kernels an executor other than the model cannot run like the model yet: executor -> name -> reason.

Names are corpus kernels (CORPUS_GAPS) and example launches of examples/launches.py (EXAMPLE_GAPS). The
harness (test_executors.py) marks a listed pair xfail(strict=True), so a fix shows up as XPASS and the entry
must go: the lists only shrink. Print the current state of every pair with `python scripts/executor_matrix.py`.
"""

CORPUS_GAPS: dict[str, dict[str, str]] = {
    "llvm": {
        "ew_libdevice_inductor": "output 0: 16 elements beyond Tol(ulp=4, atol=0.0), first at [7]: got "
        "0.01370549201965332, want 0.013705521821975708 (32 ulp) (bound 4 ulp from "
        "math.cbrt, math.expm1, math.log1p, math.sinh)",
        "mem_atomic_2d_fp16": "NotHandled: tests/conformance/kernels_memory.py:214:5: error: the LLVM IR emitter "
        "(mtia-llvm) does not handle mtia.atomic_rmw (an atomic on f16 (the host runtime "
        "has f32, i32, i64)); run the kernel on",
        "mem_atomic_xchg_cas": "NotHandled: tests/conformance/kernels_memory.py:58:12: error: the LLVM IR "
        "emitter (mtia-llvm) does not handle mtia.atomic_cas",
        "rs_topk": "NotHandled: tests/conformance/kernels_reduce_scan.py:152:51: error: the LLVM IR emitter "
        "(mtia-llvm) does not handle mtia.mlu_compute (a tile of rank 5 (at most 4))",
    },
}

EXAMPLE_GAPS: dict[str, dict[str, str]] = {
    "llvm": {
        "row_sums_re": "NotHandled: examples/row_sums.py:37:17: error: the LLVM IR emitter (mtia-llvm) does not "
        "handle mtia.cb_read (a whole tile read into the scalar core)"
    },
}

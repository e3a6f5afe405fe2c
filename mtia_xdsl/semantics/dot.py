"""A dot product's arithmetic: input rounding by precision and exact accumulation.

Shapes: a [..., M, K], b [..., K, N], c [..., M, N] (numpy, broadcasting batch dims). Integer inputs
accumulate exactly in int64; float inputs in float64, the caller rounding once to the result type.
Input precision (Triton's InputPrecision encoding): 0 "tf32" rounds f32 inputs to tf32 (the DPE's one
pass), 1 "tf32x3" and 2 "ieee" keep them (the DPE's three-pass fp32, see MachineConfig.dpe_fp32_ieee_passes).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from mtia_xdsl.semantics.casts import f16_to_f64
from mtia_xdsl.semantics.scalar import round_tf32

TF32 = 0
"""Input precision code of "tf32" (Triton's InputPrecision.TF32)."""

ONE_THREAD_MACS = 1 << 18
"""Float products with more multiply-accumulates per matrix than this run with numpy's BLAS on one thread.
OpenBLAS (numpy's BLAS) threads a gemm above 65536 x 4 = 2^18 MACs (interface/gemm.c: SMP_THRESHOLD_MIN x
GEMM_MULTITHREAD_THRESHOLD), and its threads busy-wait: on a loaded 2-core machine a float64
16 x (128x32 @ 32x128) product took 14.4 ms of CPU threaded against 0.43 ms on one thread."""


def dot(a: Any, b: Any, c: Any, input_precision: int) -> np.ndarray:
    """Return a @ b + c, exact (int64 for integers, float64 for floats) before the caller's rounding."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if a.dtype.kind in "iub":
        return a.astype(np.int64) @ b.astype(np.int64) + c.astype(np.int64)
    if input_precision == TF32 and a.dtype == np.float32:
        a, b = round_tf32(a), round_tf32(b)
    a, b = _to_f64(a), _to_f64(b)
    if a.shape[-2] * a.shape[-1] * b.shape[-1] > ONE_THREAD_MACS:
        with _one_blas_thread():
            acc = a @ b
    else:
        acc = a @ b
    if np.broadcast_shapes(acc.shape, c.shape) != acc.shape:
        return acc + c.astype(np.float64)
    acc += c  # float64 += float32 converts c exactly: the same sums as adding c.astype(float64)
    return acc


def _to_f64(x: np.ndarray) -> np.ndarray:
    """`x` as float64 (exact); float16 through semantics/casts.py's vectorized widening."""
    if x.dtype == np.float16:
        return f16_to_f64(x)
    return x.astype(np.float64)


_blas: dict[str, Any] = {}
"""threadpoolctl's view of the process's BLAS libraries ("controller"), made at the first large product."""


def _one_blas_thread() -> AbstractContextManager[Any]:
    """A context in which numpy's BLAS runs on one thread (threadpoolctl; restored on exit)."""
    controller: Any = _blas.get("controller")
    if controller is None:
        from threadpoolctl import ThreadpoolController  # pyright: ignore[reportMissingTypeStubs]

        controller = _blas["controller"] = ThreadpoolController()  # pyright: ignore[reportUnknownVariableType]
    return controller.limit(limits=1, user_api="blas")

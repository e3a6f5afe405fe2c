"""A dot product's arithmetic: input rounding by precision and exact accumulation.

Shapes: a [..., M, K], b [..., K, N], c [..., M, N] (numpy, broadcasting batch dims). Integer inputs
accumulate exactly in int64; float inputs in float64, the caller rounding once to the result type.
Input precision (Triton's InputPrecision encoding): 0 "tf32" rounds f32 inputs to tf32 (the DPE's one
pass), 1 "tf32x3" and 2 "ieee" keep them (the DPE's three-pass fp32, see MachineConfig.dpe_fp32_ieee_passes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mtia_xdsl.semantics.scalar import round_tf32

TF32 = 0
"""Input precision code of "tf32" (Triton's InputPrecision.TF32)."""


def dot(a: Any, b: Any, c: Any, input_precision: int) -> np.ndarray:
    """Return a @ b + c, exact (int64 for integers, float64 for floats) before the caller's rounding."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if a.dtype.kind in "iub":
        return a.astype(np.int64) @ b.astype(np.int64) + c.astype(np.int64)
    if input_precision == TF32 and a.dtype == np.float32:
        a, b = round_tf32(a), round_tf32(b)
    return a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)

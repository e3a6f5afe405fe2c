"""numpy casts between float16 and float32/float64, bit for bit numpy's `astype`, through torch's vectorized
conversion (the CPU's F16C instructions) for large arrays: numpy converts halves in a scalar loop.

The machine model rounds every fp16 result (`machine/interpret/values.as_value`) and widens fp16 dot
operands to float64 (`semantics/dot.py`); on causal attention 4x512x64 fp16 those casts were about a
tenth of the functional run's instructions (callgrind).
"""

from __future__ import annotations

from typing import Any

import numpy as np

F16_VECTOR_CAST_ELEMS = 4096
"""float32 arrays of at least this many elements round to float16 through torch (`f32_to_f16`)."""
_TORCH_SERIAL_ELEMS = (1 << 15) - 1
"""Elements per torch cast call: below torch's parallel grain size (32768, at::internal::GRAIN_SIZE), so the
cast runs on the calling thread, never on torch's intra-op threads; as large as that allows, since each call
costs a few microseconds (a float16 (32, 64, 64) tile: 29 us in chunks of 2^14, 22 us in chunks of 2^15 - 1)."""


def f32_to_f16(x: np.ndarray) -> np.ndarray:
    """float32 array `x` rounded to float16 (nearest even): bit for bit numpy's `x.astype(np.float16)`.

    numpy's cast is a scalar loop of bit arithmetic; large arrays go through torch's vectorized cast (the CPU's
    F16C conversion), which rounds to the same bits (IEEE nearest even, subnormals and overflow included;
    tests/machine/test_values.py) except NaNs, whose payload its scalar tail may make canonical: NaN lanes take
    numpy's.
    """
    if x.size < F16_VECTOR_CAST_ELEMS:
        return x.astype(np.float16)
    return _nan_lanes_from_numpy(_torch_cast(x, np.float32, np.float16), x, x)


def f16_to_f64(x: np.ndarray) -> np.ndarray:
    """float16 array `x` widened to float64 (exact): bit for bit numpy's `x.astype(np.float64)`.

    Large arrays widen through float32 with torch's vectorized cast (F16C), several times faster than
    numpy's direct half-to-double loop; NaN lanes, which F16C quiets, take numpy's bits.
    """
    if x.size < F16_VECTOR_CAST_ELEMS:
        return x.astype(np.float64)
    wide = _torch_cast(x, np.float16, np.float32)
    return _nan_lanes_from_numpy(wide.astype(np.float64), x, wide)


def _nan_lanes_from_numpy(out: np.ndarray, x: np.ndarray, probe: np.ndarray) -> np.ndarray:
    """`out` (x cast by torch) with its NaN lanes replaced by numpy's cast of x's, which keeps their payload.

    `probe` is NaN exactly where `x` is, in float32 or float64: numpy tests halves for NaN one element at a
    time (HALF_isnan, about a tenth of causal attention 4x512x64 fp16's instructions under callgrind), wider
    floats in SIMD. A maximum is NaN exactly when some element is (numpy's max propagates NaN), and costs
    less than a NaN mask: the mask is made only then."""
    if probe.size == 0 or not np.isnan(probe.max()):
        return out
    nan = np.isnan(probe)
    out[nan] = x[nan].astype(out.dtype)
    return out


def _torch_cast(x: np.ndarray, src_dtype: Any, dtype: Any) -> np.ndarray:
    """`x` (of `src_dtype`) cast to `dtype` by torch, on the calling thread (`_TORCH_SERIAL_ELEMS`)."""
    import torch

    src = x if x.flags.c_contiguous and x.flags.writeable else np.array(x, dtype=src_dtype)
    out = np.empty(x.shape, dtype=dtype)
    flat_in = torch.from_numpy(src.reshape(-1))  # pyright: ignore[reportUnknownMemberType]
    flat_out = torch.from_numpy(out.reshape(-1))  # pyright: ignore[reportUnknownMemberType]
    step = _TORCH_SERIAL_ELEMS
    for k in range(0, x.size, step):
        flat_out[k : k + step].copy_(flat_in[k : k + step])
    return out

"""Element-wise semantics of libdevice functions (`tt.extern_elementwise`: `tl.extra.libdevice`, `__nv_*`,
`__ocml_*`, `__mtia_*`) on numpy values, keyed by stem (`__nv_expf` -> "exp", see `libdevice_stem`).

Shapes and dtypes as in `scalar`: each function computes in its argument's dtype, so the `_rn` forms and
the exact functions (rounding, fdim, copysign, ...) match CUDA bit for bit; transcendental functions are
within a few ulp of libdevice's. A stem that is an `arith` or `math` op is that op's function in
`scalar` (one semantics for both spellings). `round`/`llround` round halves away from zero,
`rint`/`nearbyint`/`llrint` to even, as CUDA does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mtia_xdsl.semantics.scalar import FLOAT_BINARY, FLOAT_UNARY, Fn


def _fdim(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """libdevice `fdim`: x - y if x > y, else +0; NaN if either is NaN."""
    return np.where(np.isnan(x) | np.isnan(y), x + y, np.where(x > y, x - y, np.zeros_like(x)))


def _saturate(x: np.ndarray) -> np.ndarray:
    """libdevice `saturatef`: clamp to [0, 1]; NaN gives 0."""
    return np.where(np.isnan(x), np.zeros_like(x), np.clip(x, 0, 1))


def _reciprocal(x: Any) -> Any:
    return 1 / x


def _ldexp(x: Any, n: Any) -> Any:
    return np.ldexp(x, n)


def _exp10(x: Any) -> Any:
    return np.power(x.dtype.type(10), x)


def _torch_special(name: str) -> Fn:
    """The `torch.special` function `name` of x, computed in float64 (numpy has none of these) and rounded once
    to the result type by the caller, as semantics.scalar's `erf`: within an ulp of libdevice's f32 forms."""

    def fn(x: Any) -> np.ndarray:
        import torch

        x64 = np.ascontiguousarray(x, dtype=np.float64)
        return getattr(torch.special, name)(torch.as_tensor(x64)).numpy().reshape(np.shape(x))

    return fn


TORCH_SPECIAL = {
    "erfc": "erfc", "erfinv": "erfinv", "lgamma": "gammaln", "erfcx": "erfcx", "cyl_bessel_i0": "i0",
    "cyl_bessel_i1": "i1", "j0": "bessel_j0", "j1": "bessel_j1", "y0": "bessel_y0", "y1": "bessel_y1",
}  # fmt: skip
"""libdevice stems with no numpy function, by their `torch.special` name: the special functions Inductor's Triton
code calls through libdevice (`libdevice.erfinv(x)`, `libdevice.cyl_bessel_i0(x)` for torch.erfinv, torch.i0)."""


SAME_AS_OP = {
    "exp": "math.exp", "exp2": "math.exp2", "expm1": "math.expm1", "log": "math.log", "log2": "math.log2",
    "log10": "math.log10", "log1p": "math.log1p", "sqrt": "math.sqrt", "rsqrt": "math.rsqrt", "cbrt": "math.cbrt",
    "sin": "math.sin", "cos": "math.cos", "tan": "math.tan", "asin": "math.asin", "acos": "math.acos",
    "atan": "math.atan", "sinh": "math.sinh", "cosh": "math.cosh", "tanh": "math.tanh", "asinh": "math.asinh",
    "acosh": "math.acosh", "atanh": "math.atanh", "floor": "math.floor", "ceil": "math.ceil",
    "trunc": "math.trunc", "round": "math.round", "llround": "math.round", "lround": "math.round",
    "rint": "math.roundeven", "nearbyint": "math.roundeven", "llrint": "math.roundeven",
    "lrint": "math.roundeven", "fabs": "math.absf", "abs": "math.absf", "llabs": "math.absf", "erf": "math.erf",
    "pow": "math.powf", "atan2": "math.atan2", "fmod": "arith.remf", "copysign": "math.copysign",
    "fadd_rn": "arith.addf", "fsub_rn": "arith.subf", "fmul_rn": "arith.mulf", "fdiv_rn": "arith.divf",
    "fsqrt_rn": "math.sqrt", "dadd_rn": "arith.addf", "dsub_rn": "arith.subf", "dmul_rn": "arith.mulf",
    "ddiv_rn": "arith.divf", "dsqrt_rn": "math.sqrt", "fmax": "arith.maxnumf", "fmin": "arith.minnumf",
    "fast_tanh": "math.tanh",
}  # fmt: skip
"""libdevice stems that compute what an `arith`/`math` op computes."""

LIBDEVICE: dict[str, Fn] = {
    **{stem: FLOAT_UNARY.get(name) or FLOAT_BINARY[name] for stem, name in SAME_AS_OP.items()},
    "exp10": _exp10, "hypot": np.hypot, "fdim": _fdim,
    "saturate": _saturate, "ldexp": _ldexp, "scalbn": _ldexp, "nextafter": np.nextafter, "isnan": np.isnan,
    "isinf": np.isinf, "isfinite": np.isfinite, "finite": np.isfinite, "signbit": np.signbit,
    "frcp_rn": _reciprocal, "drcp_rn": _reciprocal,
    **{stem: _torch_special(name) for stem, name in TORCH_SPECIAL.items()},
}  # fmt: skip
"""libdevice function stems and what they compute."""


def libdevice_stem(symbol: str) -> str:
    """The stem of a libdevice symbol: without its library prefix (`__nv_`, `__ocml_`, `__mtia_`), its
    width suffix (`_f32`, ...) and a final `f`/`d` type letter (`__nv_isnanf` -> "isnan")."""
    for prefix in ("__nv_", "__ocml_", "__mtia_"):
        symbol = symbol.removeprefix(prefix)
    for suffix in ("_f64", "_f32", "_f16"):
        symbol = symbol.removesuffix(suffix)
    if symbol not in LIBDEVICE and symbol[-1:] in ("f", "d"):
        symbol = symbol[:-1]
    return symbol


def libdevice_function(symbol: str) -> Fn | None:
    """What libdevice function `symbol` computes, or None if it has no semantics here."""
    return LIBDEVICE.get(libdevice_stem(symbol))

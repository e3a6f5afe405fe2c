"""Element-wise semantics of `arith` and `math` ops on numpy values, keyed by MLIR op name.

Shapes: operands are numpy scalars or arrays that broadcast; the result has the broadcast shape.
Floats compute in the operand dtype (bf16 values are float32 arrays; the caller rounds results to the
result type, see `round_bf16`). Integer ops take signed int64 storage and return int64 the caller wraps to
the result width; the `UINT_BINARY` ones take the unsigned reinterpretation (uint64, see `unsigned`).
MLIR's rules with these choices: `divsi`/`remsi` truncate toward zero; an integer division by zero gives
`INT_DIV_BY_ZERO` (Triton kernels compute such lanes under a mask and discard them); `maxnumf`/`minnumf`
return the non-NaN operand, `maximumf`/`minimumf` propagate NaN (`MAX_MIN`), and all four order
-0.0 < +0.0 (IEEE 754-2019); tf32 keeps `TF32_MANTISSA_BITS`; `round_toward_zero` is `rounding = rtz`.

The emitters (backend/cpp.py's prelude, backend/llvm_scalar.py, llvm_engines.py) write these rules as code
from the constants and tables here, so a change here changes the model, the C++ and the LLVM IR together;
tests/backend/test_semantics_rules.py runs each rule on all three.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Fn = Callable[..., Any]


# ----------------------------------------------------------------------------------------------------
# float formats
# ----------------------------------------------------------------------------------------------------


def f32_to_bf16_bits(a: Any) -> np.ndarray:
    """Round float32 values to bf16 (nearest even) and return their 16-bit patterns (uint16).

    NaNs stay NaN (quiet, sign kept); overflow rounds to +-inf as IEEE requires.
    """
    arr = np.asarray(a, dtype=np.float32)
    u = np.ascontiguousarray(arr).view(np.uint32).reshape(arr.shape)  # ascontiguousarray makes 0-d 1-d
    rounded = (u + (np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1)))) >> np.uint32(16)
    is_nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    quiet_nan = (u >> np.uint32(16)) | np.uint32(0x0040)
    return np.where(is_nan, quiet_nan, rounded).astype(np.uint16)


def bf16_bits_to_f32(bits: Any) -> np.ndarray:
    """Widen 16-bit bf16 patterns (uint16/int16) to the float32 values they encode (exact)."""
    b = np.asarray(bits).astype(np.uint16).astype(np.uint32) << np.uint32(16)
    return b.view(np.float32).reshape(b.shape)


def round_bf16(a: Any) -> np.ndarray:
    """Round float32 values to the nearest bf16 (even on ties), as float32 (Shapes: as `a`)."""
    return bf16_bits_to_f32(f32_to_bf16_bits(a))


TF32_MANTISSA_BITS = 10
"""Mantissa bits tf32 keeps of float32's 23 (rounded to nearest even; inf and NaN kept). Source: NVIDIA's
TF32 format, which Triton's input_precision "tf32" names."""

TF32_DROPPED_BITS = 23 - TF32_MANTISSA_BITS
"""Low float32 mantissa bits `round_tf32` rounds away (13)."""


def round_tf32(x: Any) -> np.ndarray:
    """Round float32 values to tf32 (`TF32_MANTISSA_BITS`, nearest even), as float32; inf and NaN stay.

    The DPE's one-pass fp32 `tl.dot` (input_precision "tf32") reads its inputs this way."""
    x = np.asarray(x)
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).reshape(np.shape(x))
    half = np.uint32((1 << (TF32_DROPPED_BITS - 1)) - 1)
    lsb = (u >> np.uint32(TF32_DROPPED_BITS)) & np.uint32(1)
    rounded = (u + (half + lsb)) & np.uint32(~((1 << TF32_DROPPED_BITS) - 1) & 0xFFFFFFFF)
    r = rounded.view(np.float32)
    return np.where(np.isfinite(x), r, x)


def round_toward_zero(x: Any, dtype: Any) -> np.ndarray:
    """Round float values to the float `dtype` (np.float16 or np.float32) toward zero (`rounding = rtz`).

    The rule: the nearest `dtype` value, stepped one ulp toward zero where it lies farther from zero than x;
    inf and NaN are kept. bf16 (no numpy dtype) is `round_toward_zero_bf16`. Shapes: as `x`."""
    x = np.asarray(x)
    with np.errstate(over="ignore"):
        r = x.astype(dtype)
    too_far = np.isfinite(x) & (np.abs(r.astype(np.float64)) > np.abs(x.astype(np.float64)))
    return np.where(too_far, np.nextafter(r, np.zeros((), dtype)), r)


def round_toward_zero_bf16(x: Any) -> np.ndarray:
    """Round float32 values to bf16 toward zero (the high 16 bits), as float32; NaN kept. Shapes: as `x`."""
    x = np.asarray(x, dtype=np.float32)
    bits = np.ascontiguousarray(x).view(np.uint32).reshape(x.shape) >> np.uint32(16)
    return np.where(np.isnan(x), x, bf16_bits_to_f32(bits.astype(np.uint16)))


# ----------------------------------------------------------------------------------------------------
# floats
# ----------------------------------------------------------------------------------------------------


def ieee_max_min(a: Any, b: Any, nan_propagates: bool, is_max: bool) -> Any:
    """Return IEEE max/min: -0 < +0; NaN propagates (maximumf) or loses to a number (maxnumf)."""
    if is_max:
        pick = np.maximum if nan_propagates else np.fmax
    else:
        pick = np.minimum if nan_propagates else np.fmin
    r = pick(a, b)
    both_zero = (a == 0) & (b == 0)
    if np.any(both_zero):
        neg_a = np.signbit(a)
        zero = np.where(neg_a != is_max, a, b) if is_max else np.where(neg_a, a, b)
        r = np.where(both_zero, zero, r)
    return r


def erf(x: Any) -> np.ndarray:
    """Return the error function of x in float64 (numpy has no erf; torch's is used)."""
    import torch

    x64 = np.ascontiguousarray(x, dtype=np.float64)
    return torch.special.erf(torch.from_numpy(x64)).numpy().reshape(np.shape(x))


def _rsqrt(x: Any) -> Any:
    return np.reciprocal(np.sqrt(x))


def round_half_away(x: Any) -> Any:
    """Round to the nearest integer, halves away from zero (`math.round`, libdevice `round`).

    x - trunc(x) is exact, so no value rounds wrong; adding 0.5 first (as this once did) rounds
    0.49999997 to 1 and 2^23 + 1 to 2^23 + 2 in f32."""
    t = np.trunc(x)
    with np.errstate(invalid="ignore"):  # inf - inf: the comparison is false and inf stays
        return np.where(np.abs(x - t) >= 0.5, t + np.copysign(np.ones_like(t), x), t)


@dataclass(frozen=True)
class MaxMin:
    """The rule of one float max/min op: which it picks, and what a NaN operand does. -0.0 < +0.0 always."""

    is_max: bool
    nan_propagates: bool
    """True: a NaN operand gives NaN (IEEE 754-2019 maximum/minimum); False: the other operand
    (maximumNumber/minimumNumber)."""

    @property
    def stem(self) -> str:
        """`maximum`/`minimum` (NaN propagates) or `maxnum`/`minnum`: the `arith` op's name without `f`,
        the C++ prelude's helper `mtia_<stem>`."""
        return ("max" if self.is_max else "min") + ("imum" if self.nan_propagates else "num")

    @property
    def llvm_intrinsic(self) -> str:
        """The LLVM intrinsic with this rule (`llvm.maximum`, `llvm.maximumnum`, ...)."""
        return "llvm." + ("max" if self.is_max else "min") + ("imum" if self.nan_propagates else "imumnum")

    def __call__(self, a: Any, b: Any) -> Any:
        return ieee_max_min(a, b, self.nan_propagates, self.is_max)


MAX_MIN: dict[str, MaxMin] = {
    "arith.maximumf": MaxMin(is_max=True, nan_propagates=True),
    "arith.minimumf": MaxMin(is_max=False, nan_propagates=True),
    "arith.maxnumf": MaxMin(is_max=True, nan_propagates=False),
    "arith.minnumf": MaxMin(is_max=False, nan_propagates=False),
}
"""The float max/min ops (Triton's tl.maximum is maxnumf; propagate_nan=ALL gives maximumf)."""

FLOAT_BINARY: dict[str, Fn] = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.remf": np.fmod,
    **MAX_MIN,
    "math.atan2": np.arctan2,
    "math.copysign": np.copysign,
    "math.powf": np.power,
    "math.fpowi": lambda x, n: np.power(x, n.astype(x.dtype)),
}
"""Float ops of two operands (math.fpowi: a float and an integer exponent)."""


def _widened(fn: Fn) -> Fn:
    """`fn` on f32 values computed in f64 and rounded once (other dtypes: `fn` itself)."""

    def run(x: Any) -> Any:
        a = np.asarray(x)
        if a.dtype != np.float32:
            return fn(x)
        return fn(a.astype(np.float64)).astype(np.float32)[()]

    return run


WIDENED_F32 = frozenset({"math.expm1", "math.log1p", "math.sinh", "math.cbrt"})
"""Float ops whose f32 result is the f64 function rounded once to f32, on every executor (the model here,
backend/cpp.py in its C++). numpy's float32 loops for them are up to 2-3 ulp off (numpy's
`umath-validation-set-<ufunc>.csv`) and glibc's float functions differ from them, and Inductor's
`log1p(|x|) + expm1(x)` or `hypot(x, y) + sinh(x / 10) + cbrt(x)` cancel, so 1 ulp of a function became 8 to
32 ulp of the output; numpy's float64 loops call the C library's double functions (within 1 double ulp), so
both paths compute the same bits on one host, correctly rounded f32 but for rare double roundings."""

FLOAT_UNARY: dict[str, Fn] = {
    "arith.negf": np.negative,
    "math.absf": np.abs,
    "math.ceil": np.ceil,
    "math.floor": np.floor,
    "math.trunc": np.trunc,
    "math.roundeven": np.rint,
    "math.round": round_half_away,
    "math.exp": np.exp,
    "math.exp2": np.exp2,
    "math.expm1": _widened(np.expm1),
    "math.log": np.log,
    "math.log2": np.log2,
    "math.log10": np.log10,
    "math.log1p": _widened(np.log1p),
    "math.sqrt": np.sqrt,
    "math.rsqrt": _rsqrt,
    "math.cbrt": _widened(np.cbrt),
    "math.sin": np.sin,
    "math.cos": np.cos,
    "math.tan": np.tan,
    "math.sinh": _widened(np.sinh),
    "math.cosh": np.cosh,
    "math.tanh": np.tanh,
    "math.asin": np.arcsin,
    "math.acos": np.arccos,
    "math.atan": np.arctan,
    "math.asinh": np.arcsinh,
    "math.acosh": np.arccosh,
    "math.atanh": np.arctanh,
    "math.erf": erf,
}
"""Float ops of one operand."""


# ----------------------------------------------------------------------------------------------------
# integers
# ----------------------------------------------------------------------------------------------------


def unsigned(x: Any, width: int) -> np.ndarray:
    """Reinterpret signed storage as unsigned integers of `width` bits (as uint64 for arithmetic)."""
    if width == 1:
        return np.asarray(x).astype(np.uint64)
    return np.asarray(x).astype(np.int64).astype(np.uint64) & np.uint64((1 << width) - 1)


INT_DIV_BY_ZERO = 0
"""What an integer division or remainder by zero gives (divsi, remsi, divui, remui, floordivsi, ceildivsi):
MLIR leaves it undefined; Triton kernels compute such lanes under a mask and discard them. A signed
INT_MIN / -1 wraps to INT_MIN and its remainder is 0 (no trap)."""


def _divsi(a: Any, b: Any) -> Any:
    """Signed division rounding toward zero; MIN / -1 wraps to MIN (|MIN| has no positive twin, so the
    quotient is the floor quotient corrected by one where the signs differ and a remainder is left)."""
    safe = np.where(b == 0, 1, b)
    q = np.floor_divide(a, safe)
    inexact = (a - q * safe) != 0
    q = np.where(inexact & ((a < 0) != (safe < 0)), q + 1, q)
    return np.where(b == 0, INT_DIV_BY_ZERO, q)


def _remsi(a: Any, b: Any) -> Any:
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, INT_DIV_BY_ZERO, np.fmod(a, safe))


def _floordivsi(a: Any, b: Any) -> Any:
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, INT_DIV_BY_ZERO, np.floor_divide(a, safe))


def _ceildivsi(a: Any, b: Any) -> Any:
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, INT_DIV_BY_ZERO, -np.floor_divide(-a, safe))


def _udiv(a: Any, b: Any) -> Any:
    return np.where(b == 0, np.uint64(INT_DIV_BY_ZERO), a // np.where(b == 0, np.uint64(1), b))


def _urem(a: Any, b: Any) -> Any:
    return np.where(b == 0, np.uint64(INT_DIV_BY_ZERO), a % np.where(b == 0, np.uint64(1), b))


def _uceildiv(a: Any, b: Any) -> Any:
    q, r = _udiv(a, b), _urem(a, b)
    return q + (r != 0).astype(np.uint64)


INT_BINARY: dict[str, Fn] = {
    "arith.addi": np.add,
    "arith.subi": np.subtract,
    "arith.muli": np.multiply,
    "arith.divsi": _divsi,
    "arith.remsi": _remsi,
    "arith.floordivsi": _floordivsi,
    "arith.ceildivsi": _ceildivsi,
    "arith.maxsi": np.maximum,
    "arith.minsi": np.minimum,
    "arith.andi": np.bitwise_and,
    "arith.ori": np.bitwise_or,
    "arith.xori": np.bitwise_xor,
}
"""Integer ops on signed int64 storage (the result wraps to the result width)."""

UINT_BINARY: dict[str, Fn] = {
    "arith.divui": _udiv,
    "arith.remui": _urem,
    "arith.ceildivui": _uceildiv,
    "arith.maxui": np.maximum,
    "arith.minui": np.minimum,
}
"""Integer ops on the unsigned reinterpretation (uint64) of their operands."""


def _shift_amount(b: Any, width: int) -> tuple[Any, Any]:
    too_far = (b < 0) | (b >= width)
    return np.where(too_far, 0, b).astype(np.uint64), too_far


def _shli(a: Any, b: Any, width: int) -> Any:
    amount, too_far = _shift_amount(b, width)
    return np.where(too_far, 0, (np.asarray(a).astype(np.uint64) << amount).astype(np.int64))


def _shrui(a: Any, b: Any, width: int) -> Any:
    amount, too_far = _shift_amount(b, width)
    return np.where(too_far, 0, (unsigned(a, width) >> amount).astype(np.int64))


def _shrsi(a: Any, b: Any, width: int) -> Any:
    a = -np.asarray(a) if width == 1 else np.asarray(a)  # i1 true is -1 when signed
    amount, too_far = _shift_amount(b, width)
    return np.where(too_far, np.where(a < 0, -1, 0), a >> amount.astype(np.int64))


SHIFTS: dict[str, Callable[[Any, Any, int], Any]] = {"arith.shli": _shli, "arith.shrui": _shrui, "arith.shrsi": _shrsi}
"""Shifts (value, amount, width) on int64 storage: a shift by >= the width (or a negative amount) gives 0,
or the sign for `shrsi`, instead of poison."""


def eval_int(name: str, a: int, b: int, width: int) -> int:
    """Evaluate integer op `name` (`INT_BINARY`, `UINT_BINARY` or `SHIFTS`) on two Python ints of `width` bits.

    Returns the result wrapped to a signed `width`-bit value. Raises: KeyError for another op.
    """
    mask = (1 << width) - 1
    half = 1 << (width - 1)
    with np.errstate(all="ignore"):
        if name in SHIFTS:
            sa, sb = ((a & mask) ^ half) - half, ((b & mask) ^ half) - half
            r = int(SHIFTS[name](np.int64(sa), np.int64(b & mask), width))
        elif name in UINT_BINARY:
            r = int(UINT_BINARY[name](np.uint64(a & mask), np.uint64(b & mask)))
        else:
            sa, sb = ((a & mask) ^ half) - half, ((b & mask) ^ half) - half
            r = int(INT_BINARY[name](np.int64(sa), np.int64(sb)))
    return ((r & mask) ^ half) - half if width > 1 else r & 1

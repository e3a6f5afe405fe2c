"""fp8 formats and their exact numpy conversions, shared by the fp8 emulation pass and the interpreters.

`decode_fp8_np` / `encode_fp8_np` are the reference the emulation's integer IR sequences are tested
against (bit-exact with torch's `.to(torch.float8_*)`), and how the tt interpreter and the machine model
keep fp8 values: float32 holding fp8-representable values, 8-bit patterns in memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import builtin


@dataclass(frozen=True)
class Fp8Format:
    """An 8-bit float format: exponent and mantissa widths, exponent bias, how inf/NaN are encoded."""

    exp_bits: int
    mant_bits: int
    bias: int
    kind: str
    """"ieee" (all-ones exponent: inf/NaN), "fn" (no inf; S.1111.111 is NaN), "fnuz" (no inf, no -0; 0x80 is NaN)."""

    @property
    def max_code(self) -> int:
        """Bit pattern (sign clear) of the largest finite value."""
        top = ((1 << self.exp_bits) - 1) << self.mant_bits
        return {"ieee": top - 1, "fn": top + (1 << self.mant_bits) - 2, "fnuz": 0x7F}[self.kind]

    @property
    def overflow_code(self) -> int:
        """Bit pattern (sign clear) that overflow produces: inf (E5M2), the largest finite value (E4M3FN,
        saturating as torch and NVIDIA's cvt.rn.satfinite do), NaN (the FNUZ formats), as torch does."""
        top = ((1 << self.exp_bits) - 1) << self.mant_bits
        return {"ieee": top, "fn": self.max_code, "fnuz": 0x80}[self.kind]

    @property
    def nan_code(self) -> int:
        top = ((1 << self.exp_bits) - 1) << self.mant_bits
        return {"ieee": top | ((1 << self.mant_bits) - 1), "fn": 0x7F, "fnuz": 0x80}[self.kind]


FP8_FORMATS: dict[type, Fp8Format] = {
    builtin.Float8E5M2Type: Fp8Format(5, 2, 15, "ieee"),
    builtin.Float8E4M3FNType: Fp8Format(4, 3, 7, "fn"),
    builtin.Float8E5M2FNUZType: Fp8Format(5, 2, 16, "fnuz"),
    builtin.Float8E4M3FNUZType: Fp8Format(4, 3, 8, "fnuz"),
}


def decode_fp8_np(bits: Any, fmt: Fp8Format) -> np.ndarray:
    """Decode 8-bit patterns to the float32 values they encode (exact)."""
    u = np.asarray(bits).astype(np.uint8).astype(np.int64)
    e = (u >> fmt.mant_bits) & ((1 << fmt.exp_bits) - 1)
    m = u & ((1 << fmt.mant_bits) - 1)
    mag = np.where(
        e == 0,
        m * 2.0 ** (1 - fmt.bias - fmt.mant_bits),
        (1 + m / (1 << fmt.mant_bits)) * np.exp2((e - fmt.bias).astype(np.float64)),
    )
    out = np.where(u & 0x80, -mag, mag)
    if fmt.kind == "ieee":
        top = e == (1 << fmt.exp_bits) - 1
        out = np.where(top & (m == 0), np.where(u & 0x80, -np.inf, np.inf), out)
        out = np.where(top & (m != 0), np.nan, out)
    elif fmt.kind == "fn":
        out = np.where((u & 0x7F) == 0x7F, np.nan, out)
    else:
        out = np.where(u == 0x80, np.nan, out)
    return out.astype(np.float32)


def encode_fp8_np(x: Any, fmt: Fp8Format, rtz: bool = False) -> np.ndarray:
    """Encode float32 values as 8-bit patterns (uint8), rounding as the IR sequence of `_encode` does."""
    a_bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.int64)
    sign = (a_bits >> 24) & 0x80
    a = a_bits & 0x7FFFFFFF
    shift = 23 - fmt.mant_bits
    rnd = 0 if rtz else ((1 << (shift - 1)) - 1) + ((a >> shift) & 1)
    code_n = ((a + rnd) >> shift) - ((127 - fmt.bias) << fmt.mant_bits)
    q = a.astype(np.uint32).view(np.float32).astype(np.float64) * 2.0 ** (fmt.bias - 1 + fmt.mant_bits)
    code_s = np.trunc(q) if rtz else np.round(q)  # np.round rounds half to even
    is_sub = (a >> 23) - 127 < 1 - fmt.bias
    code = np.where(is_sub, code_s, code_n).astype(np.int64)
    code = np.where(code > fmt.max_code, fmt.overflow_code, code)
    out = code | sign
    if fmt.kind == "fnuz":
        out = np.where(code == 0, 0, np.where(code == 0x80, 0x80, out))
    out = np.where(a > 0x7F800000, fmt.nan_code | (sign if fmt.kind != "fnuz" else 0), out)
    return out.astype(np.uint8)


__all__ = ["FP8_FORMATS", "Fp8Format", "decode_fp8_np", "encode_fp8_np"]

"""`tl.dot_scaled` emulated with ordinary tt ops: decode, scale, then `tl.dot` in fp32.

MTIA-2i's DPE has no microscaling (mxfp) formats, so, as fp8 is today, the operands are decoded on the
vector core: e2m1 nibbles (two per uint8, along K or along M/N) and fp8 e4m3/e5m2 to fp32; each block of
`K / scale_cols` values along K is multiplied by its e8m0 scale 2^(s - 127) (s = 255 is NaN); the product
is an fp32 `tl.dot` with `input_precision="ieee"` (three BF16 DPE passes, docs/machine.md) accumulating
into `acc` in `out_dtype`. Numerically this is the reference upstream's tests compare with (operands
upcast, then an fp32 matmul). `fast_math` changes nothing (NaN scales stay NaN). 3-D (batched) operands
[B, M, K] x [B, K, N] are decoded and scaled the same way along their last two dimensions (scales
[B, M, K / f] and [B, N, K / f]), then a batched fp32 `tl.dot`.
"""

from __future__ import annotations

from typing import Any


def emulated_dot_scaled(
    self: Any,
    lhs: Any,
    lhs_scale: Any,
    lhs_format: str,
    rhs: Any,
    rhs_scale: Any,
    rhs_format: str,
    acc: Any,
    fast_math: bool,
    lhs_k_pack: bool,
    rhs_k_pack: bool,
    out_dtype: Any,
) -> Any:
    """TritonSemantic.dot_scaled with the same arguments, built from decode, scale and `dot`.

    Shapes: lhs [M, K / pack] or [M / pack, K], rhs [K / pack, N] or [K, N / pack] (pack = 2 for e2m1,
    along K when `*_k_pack`), scales [M, K / f] and [N, K / f] uint8 or None; result [M, N] of `out_dtype`.
    Batched: a leading [B] on every operand, scale and the result.
    Raises: ValueError for an unknown format or operands of rank other than 2 or 3 (Triton asserts first).
    """
    if len(lhs.shape) not in (2, 3) or len(rhs.shape) != len(lhs.shape):
        raise ValueError("tl.dot_scaled takes two 2-D or two 3-D (batched) operands")
    a = _decode(self, lhs, lhs_format, lhs_k_pack, packed_dim=-2)  # [.., M, K] fp32
    b = _decode(self, rhs, rhs_format, rhs_k_pack, packed_dim=-1)  # [.., K, N] fp32
    lead = _shape(a)[:-2]
    if not _is_none(lhs_scale):
        a = self.mul(a, _expand_scale(self, lhs_scale, lead, _dim(a, -2), _dim(a, -1), transpose=False), False)
    if not _is_none(rhs_scale):
        b = self.mul(b, _expand_scale(self, rhs_scale, lead, _dim(b, -1), _dim(b, -2), transpose=True), False)
    if acc is None:
        acc = self.full([*lead, _dim(a, -2), _dim(b, -1)], 0.0, out_dtype)
    return self.dot(a, b, acc, "ieee", None, out_dtype)


def _dim(x: Any, d: int) -> int:
    """Dimension `d` of a tensor's shape as a Python int (Triton's shapes hold constexprs)."""
    value = x.shape[d]
    return int(getattr(value, "value", value))


def _shape(x: Any) -> list[int]:
    return [_dim(x, d) for d in range(len(x.shape))]


def _is_none(scale: Any) -> bool:
    from triton.language import core as tl

    return scale is None or (isinstance(scale, tl.constexpr) and scale.value is None)


def _decode(self: Any, x: Any, fmt: str, k_pack: bool, packed_dim: int) -> Any:
    """Operand -> fp32 [.., rows, cols] in the dot's orientation; `packed_dim` (-2 or -1) is the non-K one."""
    from triton.language import core as tl

    if fmt in ("fp16", "bf16", "e4m3", "e5m2"):
        return self.cast(self._bitcast_to_fp_type(x, fmt), tl.float32)
    if fmt != "e2m1":
        raise ValueError(f"tl.dot_scaled format {fmt!r} is not supported")
    lo = self.and_(x, self.full(_shape(x), 0xF, tl.uint8))
    hi = self.lshr(x, self.full(_shape(x), 4, tl.uint8))
    pairs = self.join(lo, hi)  # [.., r, c, 2], low nibble first
    *lead, rows, cols = _shape(x)
    k_dim = -3 - packed_dim  # lhs: K is the last dimension; rhs: K is the one before
    along = k_dim if k_pack else packed_dim
    if along == -1:  # pairs extend the columns: [.., r, c, 2] -> [.., r, 2c]
        nibbles = self.reshape(pairs, [*lead, rows, 2 * cols], False)
    else:  # pairs extend the rows: [.., r, c, 2] -> [.., r, 2, c] -> [.., 2r, c]
        order = (*range(len(lead)), len(lead), len(lead) + 2, len(lead) + 1)
        nibbles = self.reshape(self.permute(pairs, order), [*lead, 2 * rows, cols], False)
    return _e2m1_value(self, nibbles)


def _e2m1_value(self: Any, v: Any) -> Any:
    """fp32 value of e2m1 nibbles (uint8): sign bit 3, exponent bits 2-1 (bias 1), mantissa bit 0.

    Twice the magnitude is an integer (0, 1, 2, 3, 4, 6, 8, 12), so the decode runs on int8 tiles (a
    quarter of the local storage of int32 ones) and only the signed result is converted to fp32.
    """
    from triton.language import core as tl

    def const(value: int | float, dtype: Any) -> Any:
        return self.full(_shape(v), value, dtype)

    v = self.cast(v, tl.int8)  # 0..15
    exponent = self.and_(self.ashr(v, const(1, tl.int8)), const(3, tl.int8))
    mantissa = self.and_(v, const(1, tl.int8))
    normal = self.ashr(self.shl(self.add(const(2, tl.int8), mantissa, False), exponent), const(1, tl.int8))
    twice = self.where(self.equal(exponent, const(0, tl.int8)), mantissa, normal)  # 2 * |value|
    negative = self.not_equal(self.and_(v, const(8, tl.int8)), const(0, tl.int8))
    signed = self.where(negative, self.minus(twice), twice)
    return self.mul(self.cast(signed, tl.float32), const(0.5, tl.float32), False)


def _expand_scale(self: Any, scale: Any, lead: list[int], rows: int, k: int, transpose: bool) -> Any:
    """e8m0 scales [.., rows, k / f] (uint8) -> fp32 factors 2^(s - 127), [*lead, rows, k] (or [*lead, k, rows]
    if `transpose`); a scale without the batch dimensions `lead` is broadcast over them."""
    from triton.language import core as tl

    s = self.cast(scale, tl.int32)
    shape = _shape(s)
    bits = self.shl(s, self.full(shape, 23, tl.int32))
    factor = self.bitcast(bits, tl.float32)
    factor = self.where(self.equal(s, self.full(shape, 0, tl.int32)), self.full(shape, 2.0**-127, tl.float32), factor)
    factor = self.where(
        self.equal(s, self.full(shape, 255, tl.int32)), self.full(shape, float("nan"), tl.float32), factor
    )
    groups = shape[-1]
    block = k // groups
    factor = self.expand_dims(factor, len(shape))
    for _ in range(len(lead) + 2 - len(shape)):
        factor = self.expand_dims(factor, 0)
    factor = self.broadcast_impl_shape(factor, [*lead, rows, groups, block])
    factor = self.reshape(factor, [*lead, rows, k], False)
    if not transpose:
        return factor
    return self.permute(factor, (*range(len(lead)), len(lead) + 1, len(lead)))

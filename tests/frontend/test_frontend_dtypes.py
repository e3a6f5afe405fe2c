"""Every Triton dtype through the builder, with Triton's cast and promotion rules, checked against libtriton.

For each dtype a tiny kernel loads a block, converts it to and from fp32 and int32, mixes it with an i32
and an fp32 scalar (integer and float promotion) and bitcasts it; its module, printed generic and run
through libtriton's TTIR passes, must equal upstream's TTIR (tests/frontend/test_frontend_conformance.py).
The kernels are top-level so other tests can reuse them.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

BLOCK = 32


@triton.jit
def dtype_casts(x_ptr, y_ptr, f_ptr, i_ptr, BLOCK: tl.constexpr):
    """Round trips through fp32 and int32 (float->int, int->float, truncation, extension)."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, (x.to(tl.float32) * 2.0).to(x.dtype))
    tl.store(f_ptr + offs, x.to(tl.float32))
    tl.store(i_ptr + offs, x.to(tl.int32))


@triton.jit
def fp8_casts(x_ptr, y_ptr, f_ptr, h_ptr, BLOCK: tl.constexpr):
    """fp8 is a storage format: up to fp32 and fp16, down from fp32 (RTNE) and from fp16 (RTZ)."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    f = x.to(tl.float32)
    tl.store(f_ptr + offs, f)
    tl.store(h_ptr + offs, x.to(tl.float16))
    tl.store(y_ptr + offs, (f * 2.0).to(x.dtype))
    tl.store(y_ptr + BLOCK + offs, x.to(tl.float16).to(x.dtype, fp_downcast_rounding="rtz"))


@triton.jit
def dtype_promotion(x_ptr, f_ptr, i_ptr, k, s, BLOCK: tl.constexpr):
    """x + i32 scalar, x * fp32 scalar, x compared with 0, and a masked load with `other`."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < k, other=0)
    tl.store(i_ptr + offs, (x + k).to(tl.int32) + (x > 0).to(tl.int32))
    tl.store(f_ptr + offs, (x * s).to(tl.float32))


@triton.jit
def dtype_bitcast(x_ptr, y_ptr, BLOCK: tl.constexpr, INT: tl.constexpr):
    """Bitcast to the same-width integer and back, xor in between."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    bits = x.to(INT, bitcast=True)
    tl.store(y_ptr + offs, (bits ^ 1).to(x.dtype, bitcast=True))


INTS = ["i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOATS = ["fp16", "bf16", "fp32", "fp64"]
SAME_WIDTH_INT = {"fp16": tl.int16, "bf16": tl.int16, "fp32": tl.int32, "fp64": tl.int64, "i8": tl.int8,
                  "i16": tl.int16, "i32": tl.int32, "i64": tl.int64, "u8": tl.int8, "u16": tl.int16,
                  "u32": tl.int32, "u64": tl.int64, "fp8e4nv": tl.int8, "fp8e5": tl.int8,
                  "fp8e4b15": tl.int8}  # fmt: skip


def _check(fn: object, signature: dict[str, str], constexprs: dict[str, object], capability: int = 80) -> None:
    from test_frontend_conformance import our_ttir, upstream_ttir

    assert our_ttir(fn, signature, constexprs) == upstream_ttir(fn, signature, constexprs, capability=capability)


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_casts_match_upstream(dtype: str) -> None:
    sig = {"x_ptr": f"*{dtype}", "y_ptr": f"*{dtype}", "f_ptr": "*fp32", "i_ptr": "*i32"}
    _check(dtype_casts, sig, {"BLOCK": BLOCK})


FP8_CAPABILITY = {"fp8e5": 80, "fp8e4nv": 90}
"""The CUDA target whose upstream TTIR we compare with (sm80 has no fp8e4nv)."""


@pytest.mark.parametrize("dtype", sorted(FP8_CAPABILITY))
def test_fp8_casts_match_upstream(dtype: str) -> None:
    sig = {"x_ptr": f"*{dtype}", "y_ptr": f"*{dtype}", "f_ptr": "*fp32", "h_ptr": "*fp16"}
    _check(fp8_casts, sig, {"BLOCK": BLOCK}, FP8_CAPABILITY[dtype])


def _e4b15_decode(b: np.ndarray) -> np.ndarray:
    bits = ((b.astype(np.uint16) & 0x80) << 8) | ((b.astype(np.uint16) & 0x7F) << 7)
    return bits.astype(np.uint16).view(np.float16)


def _e4b15_encode(h: np.ndarray) -> np.ndarray:
    bits = h.astype(np.float16).view(np.uint16).astype(np.int32)
    mag = np.minimum(bits & 0x7FFF, 0x3F00)
    return (((bits >> 8) & 0x80) | ((mag * 2 + 0x80) >> 8)).astype(np.uint8)


def test_fp8e4b15_casts_are_integer_ops_with_cuda_results() -> None:
    """Upstream's CUDA path converts fp8e4b15 (i8 in the IR) with inline PTX; ours computes the same bits."""
    from mtia_xdsl.frontend import build_tt_module, inline_and_clean
    from mtia_xdsl.machine.reference import run_tt

    sig = {"x_ptr": "*fp8e4b15", "y_ptr": "*fp8e4b15", "f_ptr": "*fp32", "h_ptr": "*fp16"}
    module = inline_and_clean(build_tt_module(fp8_casts, sig, {"BLOCK": BLOCK}))
    assert not any(op.name == "tt.elementwise_inline_asm" for op in module.walk())
    x = torch.arange(256, dtype=torch.int32).to(torch.uint8)[::8].clone()  # 32 codes, both signs
    y, f, h = torch.zeros(2 * BLOCK, dtype=torch.uint8), torch.zeros(BLOCK), torch.zeros(BLOCK, dtype=torch.float16)
    run_tt(module, (1,), [x, y, f, h])
    half = _e4b15_decode(x.numpy())
    assert np.array_equal(h.numpy().view(np.uint16), half.view(np.uint16))
    assert np.array_equal(f.numpy(), half.astype(np.float32))
    doubled = (half.astype(np.float32) * 2).astype(np.float32)
    towards_zero = torch.from_numpy(doubled).to(torch.float64)  # fp32 -> fp16 rounds towards zero first
    rtz = _f16_rtz(towards_zero.numpy())
    assert np.array_equal(y.numpy()[:BLOCK], _e4b15_encode(rtz))
    assert np.array_equal(y.numpy()[BLOCK:], _e4b15_encode(half))


def _f16_rtz(x: np.ndarray) -> np.ndarray:
    """Round float64 values to fp16 towards zero."""
    r = x.astype(np.float16)
    over = np.isfinite(x) & (np.abs(r.astype(np.float64)) > np.abs(x))
    return np.where(over, np.nextafter(r, np.float16(0)), r)


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_promotion_matches_upstream(dtype: str) -> None:
    sig = {"x_ptr": f"*{dtype}", "f_ptr": "*fp32", "i_ptr": "*i32", "k": "i32", "s": "fp32"}
    _check(dtype_promotion, sig, {"BLOCK": BLOCK})


@pytest.mark.parametrize("dtype", sorted(SAME_WIDTH_INT))
def test_bitcast_matches_upstream(dtype: str) -> None:
    sig = {"x_ptr": f"*{dtype}", "y_ptr": f"*{dtype}"}
    _check(dtype_bitcast, sig, {"BLOCK": BLOCK, "INT": SAME_WIDTH_INT[dtype]}, 90 if dtype == "fp8e4nv" else 80)


_ = triton

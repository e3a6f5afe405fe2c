"""Ops Triton's own library functions make (tl.zeros, tl.argmax: @jit helpers in standard.py) are
attributed to the user's line once inlined, so reports and errors name the kernel, not standard.py."""

import triton
import triton.language as tl

from mtia_xdsl.frontend import build_tt_module
from mtia_xdsl.transforms.canonicalization.tt import inline_and_clean


@triton.jit
def _zeros_and_argmax(x, y, z, N: tl.constexpr):
    acc = tl.zeros((N,), dtype=tl.float32)
    v = tl.load(x + tl.arange(0, N)) + acc
    tl.store(y + tl.arange(0, N), v)
    tl.store(z, tl.argmax(v, axis=0))


def test_inlined_library_ops_carry_the_callers_line():
    module = inline_and_clean(
        build_tt_module(_zeros_and_argmax, {"x": "*fp32", "y": "*fp32", "z": "*i32", "N": "constexpr"}, {"N": 16})
    )
    files = {op.location.filename.data for op in module.walk() if hasattr(op.location, "filename")}
    assert files == {__file__}
    lines = {op.location.line.data for op in module.walk() if hasattr(op.location, "line")}
    source = open(__file__).read().splitlines()
    assert any("tl.zeros" in source[n - 1] for n in lines) and any("tl.argmax" in source[n - 1] for n in lines)

"""One op-semantics table: the machine's engine reductions and the reference interpreter agree bit for bit.

IEEE 754-2019 `maximum`/`maximumNumber` order -0.0 < +0.0; numpy's `maximum`/`fmax` return either zero.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _maximum(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _minimum(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _max_min(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr, tl.max(x, axis=0))
    tl.store(out_ptr + 1, tl.min(x, axis=0))
    tl.store(out_ptr + 2, tl.reduce(x, 0, _maximum))
    tl.store(out_ptr + 3, tl.reduce(x, 0, _minimum))


def test_re_reduce_max_orders_signed_zeros() -> None:
    """max of {-0, +0} is +0 and min is -0, on the machine's RE as in the reference interpreter."""
    for x in (torch.tensor([-0.0, 0.0] * 8), torch.tensor([0.0, -0.0] * 8)):
        out = torch.full((4,), 7.0)
        _max_min[(1,)](x, out, BLOCK=16)
        assert torch.equal(torch.signbit(out), torch.tensor([False, True, False, True])), out

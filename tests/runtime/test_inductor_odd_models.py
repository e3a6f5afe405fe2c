"""torch.compile of models outside benchmarks/inductor.py's suite (a new user's odd models): each matches eager.

Found by compiling small models a Triton/PyTorch user would write (dynamic shapes, special functions,
pooling, sorting) against eager; each test here was a failure first."""

import torch
import torch.nn.functional as F


def _compiled_matches_eager(fn, calls, rtol=1e-4, atol=1e-5, **compile_kw):
    """`torch.compile(fn, **compile_kw)` on each argument tuple of `calls` gives eager's result."""
    compiled = torch.compile(fn, **compile_kw)
    for args in calls:
        torch.testing.assert_close(compiled(*args), fn(*args), rtol=rtol, atol=atol)


def test_sdpa_with_dynamic_sizes_matches_eager(mtia_inductor):
    """dynamic=True makes every size a SymInt: the attention rule used to hash them (`set(head_dims)`), a
    TypeError out of the compile; sequence lengths 1 and 17 now compile and match eager."""
    torch.manual_seed(0)

    def attend(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    calls = [tuple(torch.randn(1, 2, n, 16) for _ in range(3)) for n in (1, 17)]
    _compiled_matches_eager(attend, calls, dynamic=True)

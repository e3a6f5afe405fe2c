"""Sub-tiling a GEMM whose loop carries an unsplit value (the B pointer block advanced by BK * N each step)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _matmul(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = A + rm[:, None] * K + rk[None, :]
    b_ptrs = B + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in range(0, K, BK):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(C + rm[:, None] * N + rn[None, :], acc)


def _run(**options):
    g = torch.Generator().manual_seed(0)
    m, n, k = 128, 64, 128
    a = torch.randn(m, k, generator=g).half()
    b = torch.randn(k, n, generator=g).half()
    c = torch.zeros(m, n)
    _matmul[(m // 64,)](a, b, c, m, n, k, BM=64, BN=64, BK=32, **options)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-3, atol=1e-3)


def test_a_carried_pointer_survives_automatic_sub_tiling():
    """20 kB of LS forces the fitting to split the rows; the carried B pointers keep one copy."""
    _run(machine_overrides={"ls_bytes": 20_000})


def test_a_carried_pointer_survives_a_forced_sub_block():
    """sub_block=32 fits as asked: the report says sub-tiling was applied, though no fitting was needed."""
    import mtia_xdsl

    _run(sub_block=32)
    report = mtia_xdsl.last_report()
    assert report.fit[0].startswith("applied sub_block=32 (compile option): 2 x 32 of the 64 rows at ")
    assert "sub-tiled (compile option sub_block):" in report.format()


def test_a_crash_inside_a_fitting_step_surfaces_as_an_internal_error_not_out_of_resources(monkeypatch):
    """A fitting step whose lowering crashes is a compiler bug: it surfaces as InternalCompilerError (the crash
    chained, the step in a note), never as an OutOfResources that an autotuner would skip quietly."""
    import pytest
    from triton.runtime.errors import OutOfResources

    from mtia_xdsl.transforms import mtia_sub_tile
    from mtia_xdsl.transforms.errors import InternalCompilerError

    def broken(*_args, **_kwargs):
        raise AttributeError("a rewrite bug")

    monkeypatch.setattr(mtia_sub_tile, "apply_sub_tile", broken)
    with pytest.raises(InternalCompilerError) as info:  # an LS size of its own: not the cached kernel of a test above
        _run(machine_overrides={"ls_bytes": 19_999})
    assert not isinstance(info.value, OutOfResources)
    assert "internal compiler error while lowering (AttributeError: a rewrite bug)" in str(info.value)
    assert isinstance(info.value.__cause__, AttributeError)
    note = "\n".join(info.value.__notes__)
    assert "while lowering again to make the kernel fit (sub-tiling: " in note and "as written: the CBs need" in note


def test_a_fitting_step_the_kernel_refuses_is_noted_and_out_of_resources_stays(monkeypatch):
    """A step whose lowering refuses the kernel with a located error (a pass that cannot apply) is noted as not
    applicable; with no step fitting, the launch raises Triton's OutOfResources (autotune skips the config)."""
    import pytest
    from triton.runtime.errors import OutOfResources
    from xdsl.utils.exceptions import PassFailedException

    from mtia_xdsl.transforms import mtia_sub_tile

    def refuses(*_args, **_kwargs):
        raise PassFailedException("kernel.py:3:4: error: these rows cannot be sub-tiled")

    monkeypatch.setattr(mtia_sub_tile, "apply_sub_tile", refuses)
    with pytest.raises(OutOfResources) as info:
        _run(machine_overrides={"ls_bytes": 19_998})
    assert "sub-tiling: 2 sub-tiles of 32 rows, unrolled, shared operands loaded once (mtia-sub-tile{sub-block=32}): " \
           "not applicable (kernel.py:3:4: error: these rows cannot be sub-tiled)" in str(info.value)  # fmt: skip

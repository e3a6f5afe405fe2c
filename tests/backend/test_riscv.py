"""Examples' emitted C++ cross-built for rv64gcv (RVV loops) and run under qemu-riscv64: model's results, model's cycles.

Skipped only when the toolchain is absent outside CI (in CI, scripts/setup.sh installs it: the tests run).
"""

import os
import shutil

import pytest
import torch
from xdsl.utils.exceptions import InterpretationError

import mtia_xdsl
from mtia_xdsl.backend import riscv
from mtia_xdsl.backend.cpp import emit_cpp

if not riscv.toolchain_available() and not os.environ.get("CI"):
    pytest.skip(f"RISC-V toolchain absent: {riscv.INSTALL_COMMAND}", allow_module_level=True)


def _model_and_riscv(kernel, sig, consts, grid, make_args):
    """Run `kernel` on the model and its C++ through riscv+qemu on equal inputs; return both args and cycles."""
    k = mtia_xdsl.compile(kernel, sig, consts)
    source = emit_cpp(k.specialize(sig).program)
    assert "#ifdef __riscv_vector" in source
    model_args, rv_args = make_args(), make_args()
    k[grid](*model_args)
    stats: dict[str, float] = {}
    result = riscv.run_riscv(source, grid, rv_args, stats=stats)
    assert stats["run_s"] > 0
    return model_args, rv_args, k.last_report.total_cycles, result.report.total_cycles, source


def test_vector_add_through_riscv_gives_the_models_results_and_cycles() -> None:
    """A ragged vector add (masked tail) on RVV: every element and the cycle count equal the model's."""
    from examples.vector_add import add_kernel

    n = 9_000 + 17
    x, y = torch.rand(n, generator=torch.Generator().manual_seed(1)), torch.rand(n)

    def args():
        return [x, y, torch.full_like(x, -7.0), n]

    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"}
    grid = (-(-n // 1024),)
    model, rv, model_cycles, rv_cycles, source = _model_and_riscv(add_kernel, sig, {"BLOCK_SIZE": 1024}, grid, args)
    assert "vfadd_vv_f32m1" in source
    assert torch.equal(rv[2], model[2])
    assert torch.equal(rv[2], x + y)
    assert rv_cycles == model_cycles


def test_softmax_through_riscv_matches_the_host_cpp_bit_for_bit_and_the_models_cycles() -> None:
    """Softmax's RVV loops (`.vf` forms of the row max and sum, exp lane by lane) compute bit for bit what the
    portable C++ computes on the host, within float rounding of the model (the RE sums in another order), in
    the model's cycles."""
    from examples.softmax import softmax_kernel

    rows, cols = 9, 781
    a = torch.randn(rows, cols, generator=torch.Generator().manual_seed(2)) * 4

    def args():
        out = torch.empty_like(a)
        return [out, a, a.stride(0), out.stride(0), cols]

    sig = {"output_ptr": "*fp32", "input_ptr": "*fp32", "input_row_stride": "i32", "output_row_stride": "i32"}
    sig["n_cols"] = "i32"
    model, rv, model_cycles, rv_cycles, source = _model_and_riscv(
        softmax_kernel, sig, {"BLOCK_SIZE": 1024}, (rows,), args
    )
    assert "vfdiv_vf_f32m1" in source and "vfsub_vf_f32m1" in source
    assert rv_cycles == model_cycles
    torch.testing.assert_close(rv[0], model[0], rtol=1e-5, atol=1e-9)
    if shutil.which("c++") or shutil.which("g++") or shutil.which("clang++"):
        from mtia_xdsl.backend.host import run_cpp

        host = args()
        run_cpp(source, (rows,), host)
        assert torch.equal(rv[0], host[0])


def test_missing_qemu_is_one_line_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without qemu-riscv64 on PATH, run_riscv stops before building with one line naming it and the fix."""
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "qemu-riscv64" else real_which(name))
    with pytest.raises(riscv.ToolchainMissing) as e:
        riscv.run_riscv("", (1,), [])
    assert "\n" not in str(e.value)
    assert "qemu-riscv64" in str(e.value) and riscv.INSTALL_COMMAND in str(e.value)


@pytest.mark.skipif(shutil.which("c++") is None, reason="no host C++ compiler to compare with")
def test_attention_through_the_riscv_executor_equals_the_host_cpp_and_the_models_cycles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A plain launch with MTIA_EXECUTOR=riscv: causal attention's RVV loops (2-D row/column broadcasts, i1
    masks as bytes, exp2 lane by lane) give the portable C++'s bits and the model's cycles."""
    from examples.attention import attention

    g = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(1, 2, 100, 64, generator=g).half() for _ in range(3))
    outs, cycles = {}, {}
    for name in ("model", "cpp", "riscv"):
        monkeypatch.setenv("MTIA_EXECUTOR", name)
        outs[name] = attention(q, k, v, causal=True)
        cycles[name] = mtia_xdsl.last_report().total_cycles
    assert cycles["riscv"] == cycles["model"]
    assert torch.equal(outs["riscv"], outs["cpp"])
    torch.testing.assert_close(outs["riscv"].float(), outs["model"].float(), atol=2e-3, rtol=0)


def test_a_cb_protocol_error_in_edited_cpp_names_the_kernel_line_and_program_and_writes_nothing() -> None:
    """vector_add's C++ edited to never pop its output CB: the qemu run reports the runtime's error with the
    kernel location and the first failing program id, and the output tensor keeps its values."""
    from examples.vector_add import add_kernel

    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"}
    source = emit_cpp(mtia_xdsl.compile(add_kernel, sig, {"BLOCK_SIZE": 1024}).specialize(sig).program)
    pops = [line for line in source.splitlines() if "mtia_cb_pop(" in line]
    edited = source.replace(pops[-1], "")
    x = torch.rand(3000)
    out = torch.full_like(x, -7.0)
    with pytest.raises(InterpretationError) as e:
        riscv.run_riscv(edited, (3,), [x, x, out, 3000])
    assert "vector_add.py:" in str(e.value) and "unbalanced CB protocol" in str(e.value)
    assert "(program id (0, 0, 0))" in str(e.value)
    assert (out == -7.0).all()


def test_a_cross_pe_reduction_that_never_completes_is_the_models_error() -> None:
    """mtia.re_allreduce under qemu: PE x = 1 of each row skips it; the error is the model's, nothing written."""
    import triton
    import triton.language as tl

    import mtia_xdsl.language as mtl
    from mtia_xdsl.machine.run import run_kernel

    @triton.jit
    def row_total(x_ptr, out_ptr):
        v = tl.load(x_ptr + tl.program_id(0))
        if mtl.get_pe_id(0) == 1:
            v = v * 2.0
        else:
            v = mtl.re_reduce(v, 0, "sum")
        tl.store(out_ptr + tl.program_id(0), v)

    k = mtia_xdsl.compile(row_total, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {}, {"pe_subgrid": (0, 4, 2)})
    assert k.fixed is not None
    args = [torch.randn(8), torch.zeros(8)]
    with pytest.raises(InterpretationError, match="never arrives") as model_error:
        run_kernel(k.fixed.program, (8,), args)
    with pytest.raises(InterpretationError, match="never arrives") as riscv_error:
        riscv.run_riscv(emit_cpp(k.fixed.program), (8,), args)
    assert str(riscv_error.value) == str(model_error.value)
    assert not args[1].any()


import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def _scaled_chain(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, (((v * 2.0 + 1.0) * 3.0 - v) * 0.5 + v) * (s * 3.0 + 1.0), mask=m)


def test_a_fused_body_reading_an_unnamed_scalar_builds_and_matches_the_model() -> None:
    """`s * 3.0 + 1.0` is computed on the scalar core under a generated name (`v3`) and read by a long fused SE
    body: the RVV chunk's register names must not shadow it (it did: `vfmul_vf_f32m1(v7, v3, vl)` with `v3` a
    vector register, a build error under __riscv_vector)."""
    n = 40
    x = torch.randn(n, generator=torch.Generator().manual_seed(3))

    def args():
        return [x, torch.zeros(n), n, 1.5]

    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "s": "fp32"}
    model, rv, model_cycles, rv_cycles, _ = _model_and_riscv(_scaled_chain, sig, {"BLOCK": 64}, (1,), args)
    assert torch.equal(rv[1], model[1])
    assert rv_cycles == model_cycles

"""The C++ path (backend/cpp.py, backend/host.py): the unmodified C++ of a kernel gives the machine model's
commands, cycles and results; an edited one gives correct results and new cycles; unsupported constructs
and a missing compiler are clear errors. Builds are cached (backend/host.py), so reruns compile nothing."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from xdsl.utils.exceptions import InterpretationError

import mtia_xdsl
import mtia_xdsl.language as mtl
from examples.matmul import matmul_kernel
from examples.vector_add import add_kernel
from mtia_xdsl.backend import host
from mtia_xdsl.backend.cpp import CppEmitError, emit_cpp
from mtia_xdsl.machine.run import run_kernel
from tests.backend.kernels import calls_tuple_helper, embedding_rows, permuted_prologue_5d, permuted_store_5d

pytestmark = pytest.mark.skipif(not host.compiler_available(), reason=host.INSTALL_HINT)

MM_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
          "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32", "stride_cm": "i32",
          "stride_cn": "i32"}  # fmt: skip
MM_CONSTS = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}


def _matmul_args(m: int = 100, n: int = 70, k: int = 90) -> list:
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(m, k, generator=g).half(), torch.randn(k, n, generator=g).half()
    c = torch.zeros(m, n).half()
    return [a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1)]


def _model_then_cpp(program, grid, args, source=None):
    """Run the model, then the C++ on the same (restored) tensors; return both results and both outputs."""
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    model = run_kernel(program, grid, args)
    model_out = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    for a, b in zip(args, before, strict=True):
        if isinstance(a, torch.Tensor):
            a.copy_(b)
    cpp = host.run_cpp(source or emit_cpp(program), grid, args)
    return model, cpp, model_out


@pytest.mark.parametrize("which", ["vector_add", "matmul"])
def test_unmodified_cpp_gives_the_model_commands_and_cycles(which: str) -> None:
    if which == "vector_add":
        k = mtia_xdsl.compile(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32",
                                           "n_elements": "i32"}, {"BLOCK_SIZE": 1024})  # fmt: skip
        n = 2500
        args, grid = [torch.rand(n), torch.rand(n), torch.empty(n), n], (3,)
    else:
        k = mtia_xdsl.compile(matmul_kernel, MM_SIG, MM_CONSTS)
        args, grid = _matmul_args(), (4,)
    assert k.fixed is not None
    model, cpp, model_out = _model_then_cpp(k.fixed.program, grid, args)
    assert len(model.traces) == len(cpp.traces)
    for tm, tc in zip(model.traces, cpp.traces, strict=True):
        assert tm.program_id == tc.program_id
        assert tm.commands == tc.commands  # every field: engine, slots, bytes, runs, work, scalar instructions
        assert tm.tail_scalar_instrs == tc.tail_scalar_instrs
        assert (tm.cb_depth, tm.cb_tile_bytes, tm.cb_ls_offset) == (tc.cb_depth, tc.cb_tile_bytes, tc.cb_ls_offset)
    assert cpp.report.total_cycles == model.report.total_cycles
    for a, b in zip(args, model_out, strict=True):
        if isinstance(a, torch.Tensor):
            assert torch.equal(a, b)  # the add and the fp16 matmul (exact accumulation, one rounding) agree bit for bit


def test_edited_cpp_gives_correct_results_and_new_cycles() -> None:
    """Hand-tuning: the A and B CBs of the matmul's K loop back from 2 slots to 1 (no prefetch)."""
    k = mtia_xdsl.compile(matmul_kernel, MM_SIG, MM_CONSTS)
    assert k.fixed is not None
    source = k.fixed.asm["cpp"]
    assert source.count("/*depth*/ 2,") == 2
    edited = source.replace("/*depth*/ 2,", "/*depth*/ 1,")
    args = _matmul_args(64, 64, 256)
    model, cpp, model_out = _model_then_cpp(k.fixed.program, (1,), args, edited)
    assert torch.equal(args[2], model_out[2])
    assert cpp.report.total_cycles > model.report.total_cycles


@triton.jit(noinline=True)
def _half(v):
    return v // 2


@triton.jit(noinline=True)
def _quarter(v):
    return _half(_half(v))


@triton.jit
def _calls_helper_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs), mask=offs < _quarter(n) + _half(n))


def test_noinline_helpers_are_cpp_functions_run_like_the_model() -> None:
    """tt.call: each callee a static C++ function, a callee's callee defined before it; the model's cycles."""
    k = mtia_xdsl.compile(_calls_helper_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}, {"BLOCK": 64})
    assert k.fixed is not None
    source = emit_cpp(k.fixed.program)
    half, quarter = source.index("static int32_t fn_"), source.index("_quarter_")
    assert half < quarter  # _half is defined before _quarter, which calls it
    x = torch.rand(64)
    args = [x, torch.zeros(64), 40]
    model, cpp, model_out = _model_then_cpp(k.fixed.program, (1,), args, source)
    assert torch.equal(args[1], model_out[1]) and torch.equal(args[1][:30], x[:30]) and not args[1][30:].any()
    assert cpp.report.total_cycles == model.report.total_cycles


def test_noinline_helper_returning_several_values_returns_a_tuple_run_like_the_model() -> None:
    """tt.call of a helper returning several scalars: a C++ function returning a std::tuple of their types, read
    back with std::get; the model's results and cycles."""
    k = mtia_xdsl.compile(calls_tuple_helper, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}, {"BLOCK": 64})
    assert k.fixed is not None and "tt.call" in k.asm["mtia"]
    source = emit_cpp(k.fixed.program)
    assert "static std::tuple<int32_t, int32_t, float> fn_" in source and "std::get<2>(" in source
    x = torch.rand(64)
    args = [x, torch.zeros(64), 41]
    model, cpp, model_out = _model_then_cpp(k.fixed.program, (1,), args, source)
    assert torch.equal(args[1], model_out[1]) and torch.equal(args[1][:15], x[:15] * 20.5) and not args[1][15:].any()
    assert cpp.report.total_cycles == model.report.total_cycles


def test_unsupported_construct_names_the_kernel_line() -> None:
    from mtia_xdsl.frontend import build_tt_module

    module = build_tt_module(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"},
                             {"BLOCK_SIZE": 64})  # fmt: skip
    where = r"vector_add\.py:\d+:\d+: error: the C\+\+ emitter \(mtia-cpp\) does not handle a tensor-level program"
    with pytest.raises(CppEmitError, match=where):
        emit_cpp(module)


def test_missing_compiler_is_one_line_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setattr(host.shutil, "which", lambda name: None)
    with pytest.raises(host.CompilerMissingError, match=r"^no C\+\+ compiler found .*apt-get install -y g\+\+\)$"):
        host.build_kernel("int x;")


def test_mtia_run_reports_a_cpp_that_does_not_compile(tmp_path, capsys) -> None:
    from mtia_xdsl.tools.mtia_run import main

    bad = tmp_path / "kernel.cpp"
    bad.write_text('#include "mtia_runtime.h"\nint broken(\n')
    assert main([str(bad), "--grid", "1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mtia-run: the C++ source did not compile") and "kernel.cpp" in err


def test_cpp_runs_after_the_runtime_library_was_loaded_globally() -> None:
    """The LLVM path loads the host runtime with RTLD_GLOBAL (llvmlite's load_library_permanently); a C++
    kernel run later in the same process must still call its own runtime copy, not the global one (whose
    tensor map is empty: every access was 'outside every tensor argument')."""
    import ctypes

    ctypes.CDLL(str(host.build_runtime_library()), mode=ctypes.RTLD_GLOBAL)
    k = mtia_xdsl.compile(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32",
                                       "n_elements": "i32"}, {"BLOCK_SIZE": 1024})  # fmt: skip
    assert k.fixed is not None
    x, y, out = torch.rand(1500), torch.rand(1500), torch.zeros(1500)
    host.run_cpp(k.fixed.asm["cpp"], (2,), [x, y, out, 1500])
    assert torch.equal(out, x + y)


@pytest.mark.parametrize(
    ("n", "message"),
    [(1500.5, r"'n_elements' is i32 but got float 1500\.5"), (1 << 40, r"'n_elements' = 1099511627776 does not fit in i32"),
     (torch.tensor([1500, 1]), r"'n_elements' is a scalar of type i32 but got a tensor of 2 elements")],
)  # fmt: skip
def test_run_cpp_refuses_a_scalar_argument_of_the_wrong_type(n, message) -> None:
    """As the model does (machine/reference.py): a float for an integer parameter is not truncated, an integer
    that does not fit is not wrapped, and the caller's tensors stay unchanged."""
    from xdsl.utils.exceptions import InterpretationError

    k = mtia_xdsl.compile(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32",
                                       "n_elements": "i32"}, {"BLOCK_SIZE": 1024})  # fmt: skip
    assert k.fixed is not None
    x, y, out = torch.rand(1500), torch.rand(1500), torch.zeros(1500)
    with pytest.raises(InterpretationError, match=r"vector_add\.py:\d+:\d+: error: " + message):
        host.run_cpp(k.fixed.asm["cpp"], (2,), [x, y, out, n])
    assert not out.any()


def test_mtia_run_compile_error_names_the_users_file(tmp_path, capsys) -> None:
    """The compiler's message points at the user's .cpp, not at the build cache's temporary copy."""
    from mtia_xdsl.tools.mtia_run import main

    bad = tmp_path / "broken.cpp"
    bad.write_text('#include "mtia_runtime.h"\nint broken(\n')
    assert main([str(bad), "--grid", "1"]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:2:" in err
    assert str(host.cache_dir()) not in err


def test_strip_mining_width_is_the_compiled_chips_vector_register() -> None:
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"}
    default = mtia_xdsl.compile(add_kernel, sig, {"BLOCK_SIZE": 256})
    narrow = mtia_xdsl.compile(
        add_kernel, sig, {"BLOCK_SIZE": 256}, options={"machine_overrides": {"vec_register_bits": 256}}
    )
    assert "#define MTIA_VLEN_BYTES 64 " in default.asm["cpp"]
    assert "#define MTIA_VLEN_BYTES 32 " in narrow.asm["cpp"]


def test_indexed_dma_gives_the_model_commands_and_cycles() -> None:
    k = mtia_xdsl.compile(embedding_rows, {"ids_ptr": "*i64", "table_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                          {"R": 32, "XBLOCK": 8})  # fmt: skip
    assert k.fixed is not None
    assert "mtia.dma_gather_rows" in k.asm["mtia"]
    g = torch.Generator().manual_seed(0)
    ids, table = torch.randint(-100, 100, (13,), generator=g), torch.randn(100, 32, generator=g)
    args = [ids, table, torch.zeros(13, 32), 13]  # the last block has 5 valid rows of 8
    model, cpp, model_out = _model_then_cpp(k.fixed.program, (2,), args)
    assert torch.equal(args[2], model_out[2]) and torch.equal(args[2], table[ids] * 2.0)
    for tm, tc in zip(model.traces, cpp.traces, strict=True):
        assert [c for c in tm.commands if c.kind == "dma_gather_rows"] == [
            c for c in tc.commands if c.kind == "dma_gather_rows"
        ]
    assert cpp.report.total_cycles == model.report.total_cycles


@triton.jit
def _row_total(x_ptr, out_ptr, SKIP: tl.constexpr):
    """Each program adds its element across its PE row (re_reduce); with SKIP, PE x = 1 never takes part."""
    px = mtl.get_pe_id(0)
    v = tl.load(x_ptr + tl.program_id(0))
    if SKIP and px == 1:
        v = v * 2.0
    else:
        v = mtl.re_reduce(v, 0, "sum")
    tl.store(out_ptr + tl.program_id(0), v)


@pytest.mark.parametrize("skip", [False, True])
def test_cross_pe_reduction_runs_like_the_model(skip: bool) -> None:
    """mtia.re_allreduce in C++: the model's sums and cycles; a PE that never arrives is the model's error."""
    k = mtia_xdsl.compile(_row_total, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"SKIP": skip},
                          {"pe_subgrid": (0, 4, 2)})  # fmt: skip
    assert k.fixed is not None
    x = torch.randn(8, generator=torch.Generator().manual_seed(1))
    args = [x, torch.zeros(8)]
    if skip:
        with pytest.raises(InterpretationError, match=r"re_reduce: participant .* never arrives") as model_error:
            run_kernel(k.fixed.program, (8,), args)
        with pytest.raises(InterpretationError, match=r"never arrives") as cpp_error:
            host.run_cpp(emit_cpp(k.fixed.program), (8,), args)
        assert str(cpp_error.value) == str(model_error.value)
        assert torch.equal(args[1], torch.zeros(8))  # nothing written
        return
    model, cpp, model_out = _model_then_cpp(k.fixed.program, (8,), args)
    assert torch.equal(args[1], model_out[1])
    assert torch.allclose(args[1][:4], x[:4].sum().expand(4))  # PE row 0: programs 0..3 (row-major mapping)
    assert cpp.report.total_cycles == model.report.total_cycles
    assert [c.kind for c in cpp.traces[0].commands].count("re_link") == 1


def _vector_add_cpp() -> tuple[str, list]:
    k = mtia_xdsl.compile(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32",
                                       "n_elements": "i32"}, {"BLOCK_SIZE": 256})  # fmt: skip
    assert k.fixed is not None
    n = 1000
    return k.fixed.asm["cpp"], [torch.rand(n), torch.rand(n), torch.zeros(n), n]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("/*CB ID*/ 2,", "/*CB ID*/ 14,"), r"mtia_cb_alloc: CB ID 14 is not below the 14 CB IDs of a PE's CP"),
        (("/*CB ID*/ 1,", "/*CB ID*/ 0,"), r"mtia_cb_reserve: CB ID 0 is still in use by CB #0, which holds tiles"),
        (("/*LS offset*/ 1024,", "/*LS offset*/ 0,"),
         r"se_compute reads a tile whose LS bytes another CB has written since: CB #1 \(CB ID 1\), written at "),
    ],
)  # fmt: skip
def test_edited_cpp_breaking_the_cb_allocation_is_an_error_naming_the_call(edit, message) -> None:
    """A hand-edited CB ID out of range, a CB ID two CBs hold at once, or LS bytes two live CBs share give the
    model's error naming the runtime call and the kernel line, never silently wrong results."""
    source, args = _vector_add_cpp()
    assert source.count(edit[0]) == 1
    with pytest.raises(InterpretationError, match=message) as err:
        host.run_cpp(source.replace(*edit), (4,), args)
    assert "vector_add.py:" in str(err.value)


@triton.jit
def _slice_rows(x_ptr, out_ptr, k):
    tile = tl.load(x_ptr + tl.arange(0, 16)[:, None] * 8 + tl.arange(0, 8)[None, :])
    part = mtl.extract_slice(tile, [k + tl.program_id(0), 4], [4, 4])
    tl.store(out_ptr + tl.program_id(0) * 16 + tl.arange(0, 4)[:, None] * 4 + tl.arange(0, 4)[None, :], part)


def test_extract_slice_past_the_tile_is_the_models_error_in_cpp() -> None:
    """A dynamic extract_slice offset past the tile stops the C++ run with the model's message at the kernel
    line and the command, never a read of other LS bytes."""
    out = torch.zeros(3 * 16)
    with pytest.raises(
        Exception,
        match=r"test_cpp.py:\d+:\d+: error: .*extract_slice: offset 13 \+ size 4 leaves dimension 0 of the tile "
        r"\(extent 16\); keep 0 <= offset <= 12",
    ):
        _slice_rows[(3,)](torch.zeros(128), out, 11, executor="cpp")
    assert out.eq(0).all()
    x = torch.arange(128, dtype=torch.float32)
    _slice_rows[(3,)](x, out, 5, executor="cpp")  # in range: the model's values
    assert torch.equal(out, torch.stack([x.view(16, 8)[5 + p : 9 + p, 4:8] for p in range(3)]).reshape(-1))


def test_box_of_rank_5_runs_in_cpp_like_the_model() -> None:
    """A permuted prologue's A box has five dimensions, the DMA's descriptor four (MachineConfig.dma_max_rank):
    moved in memory order it is one run per outer index, the MLU permutes it (memory_access.py `fit_rank`), so the
    C++ emits it (it was `does not handle a DMA block of rank 5`) and gives the model's commands, cycles and
    results."""
    k = mtia_xdsl.compile(permuted_prologue_5d, {"y_ptr": "*fp32", "w_ptr": "*fp32", "out_ptr": "*fp32"},
                          {"BLOCK_K": 32})  # fmt: skip
    assert k.fixed is not None
    assert "mtia.gather" not in k.asm["mtia"] and "tensor<2x256xf32>" in k.asm["mtia"]
    g = torch.Generator().manual_seed(0)
    y, w = torch.randn(2, 4, 8, 4, 4, generator=g), torch.randn(64, 16, generator=g)
    args = [y, w, torch.zeros(16, 16)]
    model, cpp, model_out = _model_then_cpp(k.fixed.program, (1,), args)
    for tm, tc in zip(model.traces, cpp.traces, strict=True):
        assert tm.commands == tc.commands
    assert cpp.report.total_cycles == model.report.total_cycles
    assert torch.equal(args[2], model_out[2])
    torch.testing.assert_close(args[2], y.permute(0, 2, 1, 4, 3).reshape(16, 64) @ w)


def test_store_box_of_rank_5_runs_in_cpp_like_the_model() -> None:
    """The store side: the tile is permuted to memory order by the MLU and stored as one run (`fit_rank`)."""
    k = mtia_xdsl.compile(permuted_store_5d, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {})
    assert k.fixed is not None
    assert "mtia.scatter" not in k.asm["mtia"] and "tensor<1024xf32>" in k.asm["mtia"]
    x = torch.randn(16, 64, generator=torch.Generator().manual_seed(0))
    args = [x, torch.zeros(2, 4, 8, 4, 4)]
    model, cpp, model_out = _model_then_cpp(k.fixed.program, (1,), args)
    assert cpp.report.total_cycles == model.report.total_cycles
    assert torch.equal(args[1], model_out[1])
    assert torch.equal(args[1], (x * 2.0).reshape(2, 8, 4, 4, 4).permute(0, 2, 1, 4, 3))


def test_descriptor_rank_is_the_headers_and_holds_the_default_machines_boxes() -> None:
    """MAX_RANK (both emitters') is MTIA_MAX_RANK of mtia_runtime.h, and the default chip's DMA boxes
    (MachineConfig.dma_max_rank, which the memory-access analysis fits every box to) fit in it."""
    import re
    from pathlib import Path

    from mtia_xdsl.backend.runtime_api import MAX_RANK
    from mtia_xdsl.machine import MachineConfig

    header = (Path(host.__file__).parent / "runtime" / "mtia_runtime.h").read_text()
    assert re.search(r"#define MTIA_MAX_RANK (\d+)", header).group(1) == str(MAX_RANK)  # type: ignore[union-attr]
    assert MachineConfig().dma_max_rank <= MAX_RANK

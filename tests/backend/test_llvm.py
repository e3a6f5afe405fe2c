"""The LLVM IR path (backend/llvm.py, llvm_jit.py): examples run as LLVM IR through llvmlite against the host
runtime give the machine model's results and exactly its cycles; constructs it does not translate are errors
at the kernel line; compiled kernels offer their LLVM IR."""

from __future__ import annotations

import re

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl
from examples import attention, layer_norm, matmul, softmax, vector_add
from tests.backend.kernels import calls_tuple_helper, embedding_rows, permuted_prologue_5d
from tests.backend.llvm_differential import differential

pytest.importorskip("llvmlite")


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(torch.uint8)


def _launches(run) -> list:
    with differential() as record:
        run()
    assert record.launches, "the block launched no kernel"
    return record.launches


def test_vector_add_bit_exact_and_same_cycles() -> None:
    """Data movement and an fp32 add: the LLVM run writes the model's bytes, in the model's cycles."""
    g = torch.Generator().manual_seed(1)
    x, y = torch.rand(3001, generator=g), torch.rand(3001, generator=g)
    for launch in _launches(lambda: vector_add.add(x, y, BLOCK_SIZE=1024)):
        assert launch.llvm_cycles == launch.model_cycles
        assert all(
            torch.equal(_bits(a), _bits(b)) for a, b in zip(launch.model, launch.llvm) if isinstance(a, torch.Tensor)
        )


def test_layer_norm_bit_exact_and_same_cycles() -> None:
    """Float sums in the model's (numpy's pairwise) order, a division and a square root: the model's bits."""
    g = torch.Generator().manual_seed(4)
    x, w, b = torch.randn(3, 1500, generator=g), torch.rand(1500, generator=g), torch.randn(1500, generator=g)
    for launch in _launches(lambda: layer_norm.layer_norm(x, w, b, 1e-5)):
        assert launch.llvm_cycles == launch.model_cycles
        assert all(
            torch.equal(_bits(p), _bits(q)) for p, q in zip(launch.model, launch.llvm) if isinstance(p, torch.Tensor)
        )


def test_matmul_bit_exact_and_same_cycles() -> None:
    """DPE matmul of f16 tiles with ragged edges (valid extents): exact f64 accumulation, so bit-exact."""
    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(70, 45, generator=g).half(), torch.randn(45, 66, generator=g).half()
    for launch in _launches(lambda: matmul.matmul(a, b)):
        assert launch.llvm_cycles == launch.model_cycles
        assert all(
            torch.equal(_bits(x), _bits(y)) for x, y in zip(launch.model, launch.llvm) if isinstance(x, torch.Tensor)
        )


@pytest.mark.parametrize("name", ["softmax", "attention"])
def test_transcendental_examples_close_and_same_cycles(name: str) -> None:
    """exp / exp2 are libm's here and numpy's in the model (a few ulp apart); cycles are the model's."""
    g = torch.Generator().manual_seed(3)
    runs = {
        "softmax": lambda: softmax.softmax(torch.randn(5, 300, generator=g)),
        "attention": lambda: attention.attention(
            *(torch.randn(1, 1, 70, 64, generator=g).half() for _ in range(3)), causal=True
        ),
    }
    for launch in _launches(runs[name]):
        assert launch.llvm_cycles == launch.model_cycles
        for m, ll in zip(launch.model, launch.llvm):
            if isinstance(m, torch.Tensor) and m.is_floating_point():
                torch.testing.assert_close(ll, m, rtol=2e-3, atol=2e-3, equal_nan=True)


def test_not_handled_names_the_kernel_line() -> None:
    """A libdevice function without an LLVM lowering is refused at its kernel line by asm["llir"], not
    translated wrongly."""
    import triton.language as tl
    from triton.language.extra import libdevice

    from mtia_xdsl.backend.llvm_scalar import NotHandled

    @triton.jit
    def ldexp_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, libdevice.ldexp(tl.load(x_ptr + offs), offs))

    k = mtia_xdsl.compile(ldexp_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32"}, {"BLOCK": 16})
    with pytest.raises(NotHandled, match=r"test_llvm\.py:\d+:\d+: error: .* does not handle tt\.extern_elementwise"):
        k.asm["llir"]


def test_scans_and_custom_reduce_in_a_body_bit_exact() -> None:
    """tt.scan (forward, reverse, bf16 sum) and a two-operand tt.reduce inside engine bodies: the lanes combine
    in the model's order (Hillis-Steele steps, a pairwise tree), so the results are the model's bits."""
    import triton.language as tl

    @triton.jit
    def pick(a, ia, b, ib):
        left = (tl.abs(a) < tl.abs(b)) | ((tl.abs(a) == tl.abs(b)) & (ia < ib))
        return tl.where(left, a, b), tl.where(left, ia, ib)

    @triton.jit
    def scans(x_ptr, h_ptr, c_ptr, r_ptr, v_ptr, i_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        h = tl.load(h_ptr + offs)
        tl.store(c_ptr + offs, tl.cumsum(x, 0) * 0.5)
        tl.store(r_ptr + offs, tl.cumsum(h, 0, reverse=True))
        v, i = tl.reduce((x, offs), 0, pick)
        tl.store(v_ptr, v)
        tl.store(i_ptr, i)

    g = torch.Generator().manual_seed(5)
    x, h = torch.randn(32, generator=g), torch.randn(32, generator=g).bfloat16()
    outs = [torch.empty(32), torch.empty(32, dtype=torch.bfloat16), torch.empty(1), torch.empty(1, dtype=torch.int32)]
    for launch in _launches(lambda: scans[(1,)](x, h, *outs, BLOCK=32)):
        assert launch.llvm_cycles == launch.model_cycles
        assert all(
            torch.equal(_bits(a), _bits(b)) for a, b in zip(launch.model, launch.llvm) if isinstance(a, torch.Tensor)
        )


def test_a_scan_in_a_body_is_computed_once_per_command_bit_exact() -> None:
    """tt.scan of 2-D tiles (along either axis, reverse, a custom combine) inside engine bodies: each scan's
    Hillis-Steele steps run once per command, in loops before the loop nest over the output tile (not once per
    output element inside it), and the results are the model's bits."""
    import triton.language as tl

    @triton.jit
    def mul(a, b):
        return a * b

    @triton.jit
    def scans2d(x_ptr, a_ptr, b_ptr, c_ptr, R: tl.constexpr, C: tl.constexpr):
        offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
        x = tl.load(x_ptr + offs)
        tl.store(a_ptr + offs, tl.cumsum(x, 1) * 0.5)
        tl.store(b_ptr + offs, tl.cumsum(x * 2.0, 0, reverse=True) + 1.0)
        tl.store(c_ptr + offs, tl.associative_scan(x + 1.0, 1, mul) - 1.0)

    sig = {"x_ptr": "*fp32", "a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32"}
    llir = mtia_xdsl.compile(scans2d, sig, {"R": 8, "C": 16}).asm["llir"]
    commands = [c for c in llir.split('call ccc void @"mtia_cmd_begin"')[1:] if "scan.step" in c]
    assert len(commands) == 3
    for command in commands:
        labels = re.findall(r"^([a-z0-9.]+):$", command, re.MULTILINE)
        first_tile = next(i for i, label in enumerate(labels) if label.startswith("tile.d0"))  # `tile.d0.2`
        assert all(i < first_tile for i, label in enumerate(labels) if label.startswith("scan.")), labels
    g = torch.Generator().manual_seed(7)
    x = torch.randn(8, 16, generator=g)
    outs = [torch.empty(8, 16) for _ in range(3)]
    for launch in _launches(lambda: scans2d[(1,)](x, *outs, R=8, C=16)):
        assert launch.llvm_cycles == launch.model_cycles
        assert all(
            torch.equal(_bits(a), _bits(b)) for a, b in zip(launch.model, launch.llvm) if isinstance(a, torch.Tensor)
        )


def test_asm_llir_is_the_kernel_as_llvm_ir() -> None:
    """asm["llir"] is listed with the other IR texts and holds the kernel's entry and its metadata."""
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"}
    k = mtia_xdsl.compile(vector_add.add_kernel, sig, {"BLOCK_SIZE": 256})
    assert "llir" in list(k.asm)
    assert 'define void @"add_kernel"(ptr %"pe", ptr %"args")' in k.asm["llir"]
    assert '@"mtia_kernel_meta" = constant' in k.asm["llir"]


def test_run_llvm_runs_edited_ir() -> None:
    """run_llvm takes the IR text alone (an engineer may edit it): here the fadd becomes an fsub."""
    from mtia_xdsl.backend.llvm_jit import run_llvm

    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"}
    k = mtia_xdsl.compile(vector_add.add_kernel, sig, {"BLOCK_SIZE": 256})
    edited = k.asm["llir"].replace(" = fadd float ", " = fsub float ")
    assert edited != k.asm["llir"]
    x, y, out = torch.rand(600), torch.rand(600), torch.empty(600)
    result = run_llvm(edited, (3,), [x, y, out, 600])
    assert torch.equal(out, x - y)
    assert result.report.total_cycles > 0


def test_gather_scatter_atomics_and_join_split_bit_exact() -> None:
    """Scalar-core lanes (gather, scatter through the host runtime; an atomic add as a lane loop over global
    memory) and tt.join / tt.split in an engine body: the model's bits and cycles."""
    import triton.language as tl

    @triton.jit
    def lanes_kernel(x_ptr, idx_ptr, g_ptr, s_ptr, acc_ptr, j_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        idx = tl.load(idx_ptr + offs, mask=mask, other=0)
        x = tl.load(x_ptr + offs, mask=mask, other=0)
        tl.store(g_ptr + offs, tl.load(x_ptr + idx, mask=mask, other=0), mask=mask)
        tl.store(s_ptr + idx, x, mask=mask)
        tl.atomic_add(acc_ptr + offs % 4, x, mask=mask)
        lo, hi = tl.split(tl.join(x, x + 1) * 2)
        tl.store(j_ptr + offs, hi - lo, mask=mask)

    n = 100
    g = torch.Generator().manual_seed(5)
    x = torch.randint(-50, 50, (n,), generator=g, dtype=torch.int32)
    idx = torch.randperm(n, generator=g).to(torch.int32)
    outs = [torch.zeros(n, dtype=torch.int32) for _ in range(2)] + [torch.zeros(4, dtype=torch.int32)]
    j = torch.zeros(n, dtype=torch.int32)
    k = mtia_xdsl.compile(lanes_kernel, constexprs={"BLOCK": 32})
    for launch in _launches(lambda: k[(4,)](x, idx, *outs, j, n)):
        assert launch.llvm_cycles == launch.model_cycles
        assert all(torch.equal(p, q) for p, q in zip(launch.model, launch.llvm) if isinstance(p, torch.Tensor))
    assert torch.equal(j, torch.full((n,), 2, dtype=torch.int32))
    for call in ('@"mtia_gather"', '@"mtia_scatter"', '@"mtia_global"', '@"mtia_lanes_end"'):
        assert call in k.asm["llir"]


def test_gather_index_outside_the_source_stops_at_the_kernel_line() -> None:
    """tt.gather with an index past the source is an error at the kernel line (the model raises one too), not a
    read outside the tile."""
    import triton.language as tl
    from xdsl.utils.exceptions import InterpretationError

    from mtia_xdsl.backend.llvm_jit import run_llvm

    @triton.jit
    def gather_kernel(x_ptr, i_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.gather(tl.load(x_ptr + offs), tl.load(i_ptr + offs), 0))

    k = mtia_xdsl.compile(gather_kernel, {"x_ptr": "*fp32", "i_ptr": "*i32", "y_ptr": "*fp32"}, {"BLOCK": 16})
    x, y = torch.rand(16), torch.zeros(16)
    run_llvm(k.asm["llir"], (1,), [x, torch.arange(15, -1, -1, dtype=torch.int32), y])
    assert torch.equal(y, x.flip(0))
    bad = torch.arange(16, dtype=torch.int32) * 2
    with pytest.raises(
        InterpretationError, match=r"test_llvm\.py:\d+:\d+: error: .*tt\.gather index outside \[0, 16\)"
    ):
        run_llvm(k.asm["llir"], (1,), [x, bad, y])


def test_noinline_helper_returning_a_scalar_is_a_function_call() -> None:
    """A noinline function (tt.call) becomes an LLVM function taking the PE and its scalars and returning its
    result; its ops count as the model counts them (the same cycles) and the results are the model's."""
    import triton.language as tl

    @triton.jit(noinline=True)
    def scale_of(n, k):
        return n * k + 1

    @triton.jit
    def calls(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        s = scale_of(n, tl.program_id(0) + 2)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s, mask=mask)

    k = mtia_xdsl.compile(calls, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}, {"BLOCK": 32})
    assert "tt.call" in k.asm["mtia"]
    llir = k.asm["llir"]
    assert re.search(r'define i32 @"[^"]*scale_of[^"]*"\(ptr %"pe", i32 %"[^"]*", i32 %"[^"]*"\)', llir)
    assert re.search(r'call ccc i32 @"[^"]*scale_of[^"]*"\(ptr %"pe", i32', llir)
    x, y = torch.rand(20), torch.zeros(20)
    for launch in _launches(lambda: calls[(1,)](x, y, 20, BLOCK=32)):
        assert launch.llvm_cycles == launch.model_cycles
        assert all(torch.equal(a, b) for a, b in zip(launch.model, launch.llvm) if isinstance(a, torch.Tensor))


def test_noinline_helper_returning_several_values_returns_a_struct() -> None:
    """A noinline function returning several scalars returns an LLVM literal struct of their registers, which
    the call site takes apart with extractvalue; the model's results and cycles."""
    k = mtia_xdsl.compile(calls_tuple_helper, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}, {"BLOCK": 64})
    llir = k.asm["llir"]
    assert re.search(r'define \{i32, i32, float\} @"[^"]*divmod_half[^"]*"\(ptr %"pe", i32 %"v"\)', llir)
    assert re.search(r"extractvalue \{i32, i32, float\} %.*, 2", llir)
    x, y = torch.rand(64), torch.zeros(64)
    for launch in _launches(lambda: calls_tuple_helper[(1,)](x, y, 41, BLOCK=64)):
        assert launch.llvm_cycles == launch.model_cycles
        assert all(torch.equal(a, b) for a, b in zip(launch.model, launch.llvm) if isinstance(a, torch.Tensor))
    assert torch.equal(y[:15], x[:15] * 20.5) and not y[15:].any()


def test_indexed_dma_rows_bit_exact_and_same_cycles() -> None:
    """mtia.dma_gather_rows (embedding rows, a ragged last block) through mtia_dma_gather_rows: the model's rows
    and cycles."""
    k = mtia_xdsl.compile(embedding_rows, {"ids_ptr": "*i64", "table_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                          {"R": 32, "XBLOCK": 8})  # fmt: skip
    assert "mtia.dma_gather_rows" in k.asm["mtia"] and '@"mtia_dma_gather_rows"' in k.asm["llir"]
    g = torch.Generator().manual_seed(0)
    ids, table = torch.randint(-100, 100, (13,), generator=g), torch.randn(100, 32, generator=g)
    out = torch.zeros(13, 32)
    for launch in _launches(lambda: k[(2,)](ids, table, out, 13)):
        assert launch.llvm_cycles == launch.model_cycles
        assert all(torch.equal(a, b) for a, b in zip(launch.model, launch.llvm) if isinstance(a, torch.Tensor))
    assert torch.equal(out, table[torch.where(ids < 0, ids + 100, ids)] * 2.0)


def test_box_of_rank_5_bit_exact_and_same_cycles() -> None:
    """A permuted prologue's rank-5 A box, moved in memory order as [2, 256] and permuted by the MLU
    (memory_access.py `fit_rank`): the LLVM IR emits it (it was `a DMA block of rank 5 (at most 4)`) and gives
    the model's bits and cycles."""
    k = mtia_xdsl.compile(permuted_prologue_5d, {"y_ptr": "*fp32", "w_ptr": "*fp32", "out_ptr": "*fp32"},
                          {"BLOCK_K": 32})  # fmt: skip
    g = torch.Generator().manual_seed(0)
    y, w, out = torch.randn(2, 4, 8, 4, 4, generator=g), torch.randn(64, 16, generator=g), torch.zeros(16, 16)
    for launch in _launches(lambda: k[(1,)](y, w, out)):
        assert launch.llvm_cycles == launch.model_cycles
        assert all(torch.equal(a, b) for a, b in zip(launch.model, launch.llvm) if isinstance(a, torch.Tensor))
    torch.testing.assert_close(out, y.permute(0, 2, 1, 4, 3).reshape(16, 64) @ w)

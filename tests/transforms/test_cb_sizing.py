"""Software pipelining and CB sizing: results unchanged, loads overlap compute, greedy within uniform's LS,
and the per-CB report (mtia-software-pipeline, mtia-cb-sizing, machine/report.py cb_report)."""

import re

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl
from examples.layer_norm import _layer_norm_fwd_fused
from examples.matmul import matmul_kernel
from examples.softmax import softmax_kernel
from mtia_xdsl.machine.report import cb_report
from mtia_xdsl.transforms.analysis import cb_cost

MATMUL_BLOCKS = {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}
SETTINGS = (
    {"num_stages": 1},
    {"num_stages": 3, "cb_sizing": "greedy"},
    {"num_stages": 3, "cb_sizing": "uniform"},
)


def _matmul(options, m=70, n=40, k=150):
    torch.manual_seed(0)
    a, b = torch.randn(m, k, dtype=torch.float16), torch.randn(k, n, dtype=torch.float16)
    c = torch.empty(m, n, dtype=torch.float16)
    kernel = mtia_xdsl.compile(matmul_kernel, constexprs=MATMUL_BLOCKS, options=options)
    grid = ((m + 31) // 32 * ((n + 31) // 32),)
    result = kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), *c.stride())
    return c, result, kernel


def test_matmul_bit_exact_with_pipelining_on_and_off():
    outs = [_matmul(o)[0] for o in SETTINGS]
    for out in outs[1:]:
        assert torch.equal(out, outs[0])


def test_softmax_and_layer_norm_bit_exact_with_pipelining_on_and_off():
    torch.manual_seed(0)
    x = torch.randn(5, 300)
    w, b = torch.randn(300), torch.randn(300)
    results = []
    for options in SETTINGS:
        y = torch.empty_like(x)
        soft = mtia_xdsl.compile(softmax_kernel, constexprs={"BLOCK_SIZE": 512}, options=options)
        soft[(5,)](y, x, x.stride(0), y.stride(0), 300)
        ln_y, mean, rstd = torch.empty_like(x), torch.empty(5), torch.empty(5)
        ln = mtia_xdsl.compile(_layer_norm_fwd_fused, constexprs={"BLOCK_SIZE": 128}, options=options)
        ln[(5,)](x, ln_y, w, b, mean, rstd, x.stride(0), 300, 1e-5)
        results.append((y, ln_y, mean, rstd))
    assert torch.allclose(results[0][0], torch.softmax(x, dim=1), atol=1e-6)
    for other in results[1:]:
        for got, want in zip(other, results[0], strict=True):
            assert torch.equal(got, want)


def _spans(result, kind):
    """(start, end) of program 0's commands of `kind`, in issue order."""
    trace = result.traces[0]
    _, start, end = result.timeline.command_cycles[0]
    return [(start[i], end[i]) for i, c in enumerate(trace.commands) if c.kind == kind]


def test_loads_of_next_iterations_overlap_the_current_matmul():
    """With pipelining the K loop's loads for iteration i+1 start before iteration i's DPE command ends;
    without it (one slot per CB) every load waits for the previous iteration's DPE command."""
    for options, overlaps in (({"num_stages": 3}, True), ({"num_stages": 1}, False)):
        _, result, _ = _matmul(options, m=32, n=32, k=320)
        loads, dots = _spans(result, "dma_load"), _spans(result, "dpe_matmul")
        assert len(dots) == 10 and len(loads) == 20
        early = [i for i in range(len(dots) - 1) if loads[2 * (i + 1)][0] < dots[i][1]]
        assert bool(early) == overlaps, (options, early)


def test_pipelining_makes_the_matmul_faster_and_greedy_uses_no_more_ls_than_uniform():
    cycles, ls = {}, {}
    for options in SETTINGS:
        _, result, kernel = _matmul(options, m=64, n=64, k=640)
        key = (options["num_stages"], options.get("cb_sizing"))
        cycles[key] = result.report.total_cycles
        ls[key] = sum(c.bytes for c in cb_report(kernel._last.program))
    assert cycles[(3, "greedy")] < cycles[(1, None)]
    assert ls[(3, "greedy")] <= ls[(3, "uniform")]
    assert ls[(1, None)] <= ls[(3, "greedy")]


def test_report_lists_every_cb_with_depth_bytes_and_reason():
    _, result, kernel = _matmul({"num_stages": 3})
    program = kernel.asm["mtia"]
    cbs = result.report.cbs
    assert len(cbs) == program.count("mtia.cb_alloc") > 0
    assert [c.index for c in cbs] == list(range(len(cbs)))
    streamed = [c for c in cbs if c.reason.startswith("streamed by DMA")]
    assert len(streamed) == 2 and all(f"-> {c.depth} slots" in c.reason and c.depth >= 2 for c in streamed)
    assert all(c.bytes == c.depth * c.tile_bytes and c.reason for c in cbs)
    text = result.report.format()
    assert "streamed by DMA in the loop at matmul.py:" in text
    assert all(c.cb_id is not None and c.ls_offset is not None for c in cbs)  # mtia-cb-allocate placed each
    ids = len({c.cb_id for c in cbs})
    top = max(c.ls_offset + c.bytes for c in cbs)
    assert ids < len(cbs)  # the output tile reuses the ID (and bytes) of an operand stream of the K loop
    assert f"{len(cbs)} CBs use {ids} CB IDs at the peak (of 14)" in text
    assert f"LS high-water mark of the allocation {top / 1024:.2f} KiB" in text


def test_depth_model():
    assert cb_cost.depth_to_hide(100.0, 1000.0) == 1  # read and refilled within one iteration: no stall
    assert cb_cost.depth_to_hide(1001.0, 1000.0) == 2
    assert cb_cost.depth_to_hide(100.0, 1000.0, least=2) == 2  # a DMA load's floor (DMA_LEAST_DEPTH)
    assert cb_cost.stall_cycles(1001.0, 1000.0, 1) == 1.0
    assert cb_cost.depth_to_hide(2001.0, 1000.0) == 3
    assert cb_cost.stall_cycles(2500.0, 1000.0, 2) == 500.0
    assert cb_cost.stall_cycles(2500.0, 1000.0, 3) == 0.0


@triton.jit
def _big_dot(x_ptr, y_ptr, out_ptr, n, B: tl.constexpr):
    acc = tl.zeros([B], dtype=tl.float32)
    for i in range(0, n, B):
        o = i + tl.arange(0, B)
        acc += tl.load(x_ptr + o, mask=o < n, other=0.0) * tl.load(y_ptr + o, mask=o < n, other=0.0)
    tl.store(out_ptr + tl.arange(0, B), acc)


def test_uniform_sizing_gives_back_the_in_place_accumulators_slots_first() -> None:
    """Three 64 KiB CBs at 3 slots overflow LS: the accumulator, updated in place, saves nothing with
    more slots, so it loses them before any streamed load does."""
    n, block = 1 << 16, 16384
    x, y = torch.rand(n), torch.rand(n)
    cycles = {}
    for sizing in ("greedy", "uniform"):
        out = torch.zeros(block)
        _big_dot[(1,)](x, y, out, n, B=block, num_stages=3, cb_sizing=sizing)
        report = mtia_xdsl.last_report()
        assert report is not None
        assert sum(c.bytes for c in report.cbs) <= 384 * 1024
        cycles[sizing] = report.total_cycles
    # greedy streams both loads through 2+ slots; uniform, cut to fit, must keep them too (it gave the
    # streamed loads' slots away and kept 3 useless accumulator slots: 11,795 vs 10,874 cycles)
    assert cycles["uniform"] <= cycles["greedy"]


@triton.jit
def _invariant_operand(q_ptr, x_ptr, out_ptr, n, B: tl.constexpr):
    q = tl.load(q_ptr + tl.arange(0, B))
    acc = tl.zeros([B], dtype=tl.float32)
    for i in range(0, n):
        acc += q * tl.load(x_ptr + i * B + tl.arange(0, B))
    tl.store(out_ptr + tl.arange(0, B), acc)


def test_reasons_tell_a_loop_invariant_tile_from_an_in_place_accumulator() -> None:
    q, x = torch.rand(256), torch.rand(8 * 256)
    out = torch.zeros(256)
    _invariant_operand[(1,)](q, x, out, 8, B=256)
    torch.testing.assert_close(out, (q[None, :] * x.view(8, 256)).sum(0))
    report = mtia_xdsl.last_report()
    assert report is not None
    reasons = sorted(c.reason.split(" at ")[0] for c in report.cbs)
    assert reasons == [
        "loop-invariant value read in the loop",
        "streamed by DMA in the loop",
        "value carried around the loop",
    ]


@triton.jit
def _chain(x_ptr, out_ptr, B: tl.constexpr, STEPS: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, B))
    for _ in tl.static_range(STEPS):
        x = tl.exp(x) * 0.5
    tl.store(out_ptr + tl.arange(0, B), x)


def test_a_chain_of_more_cbs_than_cb_ids_shares_them() -> None:
    """Without vector codegen the 20-step chain has over 40 CBs, more than the 14 CB IDs, but at most three
    are alive at once: mtia-cb-allocate shares IDs and LS bytes, the kernel runs correctly."""
    from mtia_xdsl.machine.report import cb_summary

    x = torch.rand(64)
    out = torch.zeros(64)
    _chain[(1,)](x, out, B=64, STEPS=20, vector_codegen=False)
    report = mtia_xdsl.last_report()
    assert report is not None
    summary = cb_summary(report.cbs)
    assert summary.count > 14 >= summary.ids_in_use
    assert summary.ls_high_water_bytes < summary.total_bytes
    want = x
    for _ in range(20):
        want = torch.exp(want) * 0.5
    torch.testing.assert_close(out, want)


def test_more_cbs_alive_than_cb_ids_is_out_of_resources_naming_the_lines() -> None:
    """With one CB ID (machine override) the chain, which holds two values at once, is refused at compile
    time with Triton's OutOfResources, naming the kernel lines of the values alive at the peak."""
    from triton.runtime.errors import OutOfResources

    x, out = torch.rand(64), torch.zeros(64)
    with pytest.raises(OutOfResources) as info:
        _chain[(1,)](x, out, B=64, STEPS=2, vector_codegen=False, machine_overrides={"cb_ids": 1})
    text = str(info.value)
    assert "2 circular buffers are alive at once" in text and "tracks 1 CB IDs (MachineConfig.cb_ids)" in text
    lines = open(__file__).read().splitlines()
    exp_line = lines.index("        x = tl.exp(x) * 0.5") + 1
    assert re.search(rf"for the value made at .*test_cb_sizing.py:{exp_line}:", text), text
    assert torch.equal(out, torch.zeros(64))


def test_ls_bytes_override_reaches_the_compiler() -> None:
    """CB sizing and the LS check use the overridden LS: 300 KiB gets shallower CBs (it used to fail at
    run time), 100 KiB is Triton's OutOfResources at compile time, naming the new limit."""
    from triton.runtime.errors import OutOfResources

    n, block = 1 << 16, 16384
    x, y = torch.rand(n), torch.rand(n)
    out = torch.zeros(block)
    _big_dot[(1,)](x, y, out, n, B=block, machine_overrides={"ls_bytes": 300 * 1024})
    torch.testing.assert_close(out, (x * y).view(-1, block).sum(0))
    report = mtia_xdsl.last_report()
    assert report is not None and sum(c.bytes for c in report.cbs) <= 300 * 1024
    assert any("to fit 307200 bytes of LS" in c.reason for c in report.cbs)
    out = torch.zeros(block)
    with pytest.raises(OutOfResources, match="a PE has 102400"):
        _big_dot[(1,)](x, y, out, n, B=block, machine_overrides={"ls_bytes": 100 * 1024})
    assert torch.equal(out, torch.zeros(block))

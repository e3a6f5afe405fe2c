"""re_reduce: participants are the programs of one round on a PE row (column); each sees the reduction;
a participant that never arrives is an error at the call's line."""

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl
import mtia_xdsl.language as mtl
from examples.row_sums import row_sums
from mtia_xdsl.frontend.build import build_tt_module
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.reference import run_tt
from mtia_xdsl.options import MtiaOptions

MTIA2I = MachineConfig.preset("mtia2i")


def line_of(fn, text: str) -> int:
    """Line number of the first source line of kernel `fn` (jit or plain) containing `text`."""
    import inspect

    lines, start = inspect.getsourcelines(getattr(fn, "fn", fn))
    return start + next(i for i, line in enumerate(lines) if text in line)


@triton.jit
def contributions(out_ptr, AXIS: tl.constexpr):
    pid = tl.program_id(0)
    me = pid * 10 + tl.arange(0, 4)  # program-dependent contribution
    tl.store(out_ptr + pid * 12 + tl.arange(0, 4), mtl.re_reduce(me, AXIS, "sum"))
    tl.store(out_ptr + pid * 12 + 4 + tl.arange(0, 4), mtl.re_reduce(me.to(tl.float32), AXIS, "max").to(tl.int32))
    tl.store(out_ptr + pid * 12 + 8 + tl.arange(0, 4), mtl.re_reduce(me, AXIS, "min"))


def _expected(n_programs: int, subgrid: tuple[int, int, int], mapping: str, axis: int) -> torch.Tensor:
    """What each program must see, from the PE each program ran on and its round (derived, not hard-coded)."""
    base, width, _ = subgrid
    pes = mtia_xdsl.last_run().timeline.pe_of_program
    local = [(p // MTIA2I.pe_cols - base // MTIA2I.pe_cols, p % MTIA2I.pe_cols - base % MTIA2I.pe_cols) for p in pes]
    seen: dict[int, int] = {}
    rounds = []
    for row_col in [r * width + c for r, c in local]:
        rounds.append(seen.get(row_col, 0))
        seen[row_col] = rounds[-1] + 1
    rows = []
    for pid in range(n_programs):
        line = local[pid][0] if axis == 0 else local[pid][1]
        group = [q for q in range(n_programs) if rounds[q] == rounds[pid]
                 and (local[q][0] if axis == 0 else local[q][1]) == line]  # fmt: skip
        contrib = torch.stack([q * 10 + torch.arange(4) for q in group])
        rows.append(torch.cat([contrib.sum(0), contrib.max(0).values, contrib.min(0).values]))
    return torch.stack(rows).to(torch.int32)


@pytest.mark.parametrize(
    ("n", "subgrid", "mapping", "axis"),
    [(16, (0, 8, 2), "zigzag", 0), (24, (9, 4, 3), "linear", 1), (32, (0, 4, 2), "round_robin", 0)],
)
def test_each_participant_sees_the_reduction_of_its_row_or_column(n, subgrid, mapping, axis):
    out = torch.full((n, 12), -1, dtype=torch.int32)
    contributions[(n,)](out, AXIS=axis, pe_subgrid=subgrid, pe_mapping=mapping)
    assert torch.equal(out, _expected(n, subgrid, mapping, axis))
    link = [c for c in mtia_xdsl.last_run().traces[0].commands if c.kind == "re_link"]
    size = subgrid[1] if axis == 0 else subgrid[2]
    assert len(link) == 3 and all(c.re_hops == 2 * (size - 1) and c.scalar_blocking for c in link)


def test_tt_reference_agrees_with_the_machine():
    module = build_tt_module(contributions, {"out_ptr": "*i32"}, {"AXIS": 0})
    ref = torch.zeros(16, 12, dtype=torch.int32)
    run_tt(module, (16, 1, 1), [ref], options=MtiaOptions(pe_subgrid=(0, 8, 2)))
    machine = torch.zeros(16, 12, dtype=torch.int32)
    contributions[(16,)](machine, AXIS=0, pe_subgrid=(0, 8, 2))
    assert torch.equal(ref, machine)


@pytest.mark.parametrize("reduce", ["re", "atomic"])
def test_row_sums_example(reduce):
    x = torch.randn(300, 1000, generator=torch.Generator().manual_seed(4))
    torch.testing.assert_close(row_sums(x, reduce, BLOCK_M=16, BLOCK_N=64), x.sum(1), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(row_sums(x, reduce, (27, 2, 3), BLOCK_M=16, BLOCK_N=64), x.sum(1), rtol=1e-5, atol=1e-4)


@triton.jit
def _partial_row(out_ptr):
    tl.store(out_ptr + tl.program_id(0), mtl.re_reduce(tl.program_id(0), 0, "sum"))


def test_a_pe_without_a_program_in_the_round_is_named():
    out = torch.zeros(12, dtype=torch.int32)
    with pytest.raises(
        Exception,
        match=rf"test_language_re_reduce.py:{line_of(_partial_row, 're_reduce')}"
        r":\d+: error: re_reduce: program \(8, 0, 0\) on "
        r"PE \(x=0, y=1\).* waits for the other PEs of its PE row, which run no program in that round "
        r"\(12 programs on 64 PEs\)",
    ):
        _partial_row[(12,)](out)
    assert out.eq(0).all()


@triton.jit
def _branchy(out_ptr):
    pid = tl.program_id(0)
    v = pid
    if pid % 8 < 3:
        v = mtl.re_reduce(pid, 0, "sum")
    tl.store(out_ptr + pid, v)


def test_a_participant_that_never_arrives_is_an_error_not_a_hang():
    out = torch.zeros(8, dtype=torch.int32)
    with pytest.raises(
        Exception,
        match=rf"test_language_re_reduce.py:{line_of(_branchy, 're_reduce')}"
        r":\d+: error: re_reduce: participant program "
        r"\(3, 0, 0\) on PE \(x=3, y=0\).* never arrives: the programs of a PE row must reach re_reduce",
    ):
        _branchy[(8,)](out, pe_subgrid=(0, 8, 1))


@triton.jit
def _uneven_loop(out_ptr):
    pid = tl.program_id(0)
    acc = 0
    for i in range(0, pid % 2 + 1):  # some programs reduce twice, the others once
        acc += mtl.re_reduce(pid + i, 0, "sum")
    tl.store(out_ptr + pid, acc)


def test_programs_reducing_a_different_number_of_times_are_an_error():
    with pytest.raises(
        Exception,
        match=rf"test_language_re_reduce.py:{line_of(_uneven_loop, 're_reduce')}"
        r":\d+: error: re_reduce: participant .* never "
        r"arrives",
    ):
        _uneven_loop[(8,)](torch.zeros(8, dtype=torch.int32), pe_subgrid=(0, 8, 1))


@triton.jit
def _reduce_after_divergent_loop(out_ptr):
    pid = tl.program_id(0)
    acc = 0
    for i in range(0, pid + 1):  # program-dependent trip count, then one reduction each
        acc += i
    tl.store(out_ptr + pid, mtl.re_reduce(acc, 0, "sum"))


def test_divergence_before_the_reduction_still_meets():
    out = torch.zeros(8, dtype=torch.int32)
    _reduce_after_divergent_loop[(8,)](out, pe_subgrid=(0, 8, 1))
    assert out.tolist() == [sum(p * (p + 1) // 2 for p in range(8))] * 8


@pytest.mark.parametrize(("args", "message"), [((0, "prod"), "op must be one of 'sum', 'max', 'min'"),
                                               ((2, "sum"), "axis must be 0")])  # fmt: skip
def test_bad_arguments_are_refused_at_the_kernel_line(args, message):
    def bad(out_ptr):
        tl.store(out_ptr, mtl.re_reduce(tl.program_id(0), AXIS_OP[0], AXIS_OP[1]))  # noqa: F821

    bad.__globals__["AXIS_OP"] = tl.constexpr(args)
    with pytest.raises(Exception, match=r"test_language_re_reduce.py:\d+:\d+: error: re_reduce: " + message):
        build_tt_module(triton.jit(bad), {"out_ptr": "*i32"})


@triton.jit
def _one_slow(x_ptr, out_ptr, SLOW: tl.constexpr, TRIPS: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([64], dtype=tl.float32)
    for i in range(0, 1 + (pid == SLOW).to(tl.int32) * (TRIPS - 1)):  # one program loads TRIPS tiles, the others one
        acc += tl.load(x_ptr + i * 64 + tl.arange(0, 64))
    tl.store(out_ptr + pid * 64 + tl.arange(0, 64), mtl.re_reduce(acc, 0, "sum"))


def test_every_participant_waits_for_the_slowest_one():
    slow, trips = 3, 64
    x = torch.randn(trips * 64, generator=torch.Generator().manual_seed(5))
    out = torch.zeros(8, 64)
    _one_slow[(8,)](x, out, SLOW=slow, TRIPS=trips, pe_subgrid=(0, 8, 1))
    expected = x.view(trips, 64).sum(0) + 7 * x[:64]
    torch.testing.assert_close(out, expected.expand(8, 64), rtol=1e-5, atol=1e-4)
    run = mtia_xdsl.last_run()
    link = [next(i for i, c in enumerate(t.commands) if c.kind == "re_link") for t in run.traces]
    issue, start, end = zip(*[(cycles[0][k], cycles[1][k], cycles[2][k])
                              for cycles, k in zip(run.timeline.command_cycles, link)])  # fmt: skip
    assert max(issue) == issue[slow] > 2 * max(issue[p] for p in range(8) if p != slow)  # much later than the others
    assert set(start) == {issue[slow]} and len(set(end)) == 1  # all transfer once the slow one arrived, together
    assert all(run.timeline.program_cycles[p][1] > issue[slow] for p in range(8))

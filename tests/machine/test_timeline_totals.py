"""Totals-only timelines (`timeline="totals"`): the same cycles and report as a full timeline, no commands kept."""

import dataclasses
import math
import re

import numpy as np
import pytest
import torch

import mtia_xdsl
from examples.vector_add import add_kernel
from mtia_xdsl.machine.commands import Command, Engine, ProgramTrace, SlotRef
from mtia_xdsl.machine.config import MTIA2I, PeSubgrid
from mtia_xdsl.machine.timeline import pairwise_sum
from mtia_xdsl.machine.timing import TimingError, TraceSource, simulate

DRAM = MTIA2I.replace(global_placement="dram")


def _program(pid: int, n: int = 6) -> ProgramTrace:
    """n loads into a 2-slot CB, each read by an SE command, then a store of the last result."""
    base = pid << 20
    cmds = []
    for k in range(n):
        load = Command(
            Engine.DMA, "dma_load", "k.py:3:8", (), (SlotRef(0, k),), global_read_bytes=4096,
            global_ranges=((base + 4096 * k, 4096),),
        )  # fmt: skip
        cmds.append(load)
        cmds.append(Command(Engine.SE, "se_compute", "k.py:4:8", (SlotRef(0, k),), (SlotRef(1, k),), elems=1024))
    store = Command(
        Engine.DMA, "dma_store", "k.py:5:4", (SlotRef(1, n - 1),), (), global_write_bytes=4096,
        global_ranges=((base + (1 << 19), 4096),),
    )  # fmt: skip
    cmds.append(store)
    return ProgramTrace((pid, 0, 0), cmds, cb_depth={0: 2, 1: 2}, cb_tile_bytes={0: 4096, 1: 4096})


class _Lazy(TraceSource):
    """Produces each trace when first asked for and counts how many are alive at once."""

    def __init__(self, n: int) -> None:
        super().__init__([None] * n, [(p, 0, 0) for p in range(n)])
        self.most_alive = 0

    def get(self, i: int) -> ProgramTrace:
        self.traces[i] = _program(i)
        self.most_alive = max(self.most_alive, sum(t is not None for t in self.traces))
        return self.traces[i]


def _same_totals(full, totals) -> None:
    assert totals.totals_only and not full.totals_only
    for name in ("total_cycles", "program_cycles", "engine_busy_cycles", "traffic", "work", "dma_bound_cycles",
                 "scalar_issue_cycles", "ls_high_water_bytes", "pe_of_program"):  # fmt: skip
        assert getattr(totals, name) == getattr(full, name), name
    assert totals.command_count == full.command_count
    lines, expected = totals.line_costs(), full.line_costs()
    assert [(x.loc, x.commands, x.global_bytes, x.ls_bytes, x.engines) for x in lines] == [
        (x.loc, x.commands, x.global_bytes, x.ls_bytes, x.engines) for x in expected
    ]
    assert all(math.isclose(x.cycles, y.cycles, rel_tol=1e-12) for x, y in zip(lines, expected, strict=True))


def test_totals_only_simulation_keeps_every_total_and_releases_finished_traces():
    n = 256  # four programs per PE: traces of finished programs must go
    full = simulate([_program(p) for p in range(n)], DRAM, "round_robin", (n, 1, 1))
    lazy = _Lazy(n)
    totals = simulate(lazy, DRAM, "round_robin", (n, 1, 1), keep_commands=False)
    _same_totals(full, totals)
    assert lazy.most_alive <= 2 * MTIA2I.n_pes
    assert all(t is None for t in lazy.traces)
    assert totals.command_cycles == [] and totals.programs == []


def test_totals_only_timeline_refuses_spans():
    timeline = simulate([_program(0)], DRAM, keep_commands=False)
    with pytest.raises(ValueError, match=r'kept totals only .*timeline="full"'):
        _ = timeline.spans


def _launch(timeline: str) -> tuple[torch.Tensor, object]:
    g = torch.Generator().manual_seed(0)
    x, y = torch.rand(70_000, generator=g), torch.rand(70_000, generator=g)
    out = torch.empty_like(x)
    add_kernel[(69,)](x, y, out, x.numel(), BLOCK_SIZE=1024, timeline=timeline)
    return out, mtia_xdsl.last_run()


def test_totals_launch_gives_the_full_launch_results_and_report():
    out_full, full = _launch("full")
    out_totals, totals = _launch("totals")
    assert torch.equal(out_full, out_totals)
    assert totals.traces == [] and totals.timeline.totals_only
    _same_totals(full.timeline, totals.timeline)
    a, b = dataclasses.asdict(full.report), dataclasses.asdict(totals.report)
    a.pop("hot_lines"), b.pop("hot_lines")
    assert a == b


def test_unknown_timeline_option_is_refused():
    with pytest.raises(ValueError, match="timeline must be one of 'full', 'totals', got 'some'"):
        _launch("some")


def test_totals_launch_reports_a_later_programs_error_as_the_full_launch_does():
    x = torch.rand(70_000)
    messages = []
    for timeline in ("full", "totals"):
        out = torch.zeros_like(x)
        with pytest.raises(mtia_xdsl.KernelRuntimeError) as info:
            add_kernel[(69,)](x, x, out, 80_000, BLOCK_SIZE=1024, timeline=timeline)  # programs 68+ read past x
        assert torch.count_nonzero(out) == 0  # no tensor written
        # the address and lane count depend on where torch placed the tensors
        messages.append(re.sub(r"address 0x[0-9a-f]+ \(and \d+ more lanes\)", "ADDRESS", str(info.value)))
    assert messages[0] == messages[1]
    assert "ADDRESS" in messages[1] and "(program id (68, 0, 0)); no tensor was written" in messages[1]


class _ReusingIds(TraceSource):
    """Programs on one PE, each a load and an SE command; programs 0 to 2 hold one 64-byte slot of LS, every
    later one a slot larger than LS, in CB dicts that take the ids of program 0's (released) dicts when
    CPython gives their memory to the next new dicts."""

    def __init__(self, n: int) -> None:
        super().__init__([None] * n, [(p, 0, 0) for p in range(n)])
        self.first_ids: tuple[int, int] = (0, 0)
        self.kept: list[dict[int, int]] = []

    def get(self, i: int) -> ProgramTrace:
        if i < 3:
            depth, tile_bytes = {0: 1}, {0: 64}
            if i == 0:
                self.first_ids = (id(depth), id(tile_bytes))
        else:
            depth, tile_bytes = self._dicts()
            depth[0], tile_bytes[0] = 1, 2 * MTIA2I.ls_bytes
        cmds = [
            Command(Engine.DMA, "dma_load", "k.py:3:8", (), (SlotRef(0, 0),), global_read_bytes=64,
                    global_ranges=((i << 20, 64),)),
            Command(Engine.SE, "se_compute", "k.py:4:8", (SlotRef(0, 0),), (), elems=16),
        ]  # fmt: skip
        self.traces[i] = ProgramTrace((i, 0, 0), cmds, depth, tile_bytes, structure=self)  # one shape: no new dicts
        return self.traces[i]

    def _dicts(self) -> tuple[dict[int, int], dict[int, int]]:
        """Two new empty dicts: at program 0's dicts' ids if CPython reuses their memory within 1000 dicts."""
        made: list[dict[int, int]] = []  # a list: a dict would take a freed dict's memory itself
        for _ in range(1000):
            made.append({})
            found = [d for d in made if id(d) in self.first_ids]
            if len(found) == 2:
                return (found[0], found[1]) if id(found[0]) == self.first_ids[0] else (found[1], found[0])
        self.kept.extend(made)
        return {}, {}


def test_a_program_reusing_a_released_programs_dict_ids_gets_its_own_ls_footprint():
    """The timing model remembers LS footprints by the ids of a program's CB dicts; a totals-only run releases a
    finished program's trace, so a later program's new dicts may take those ids: its footprint must be its own."""
    source = _ReusingIds(5)
    with pytest.raises(TimingError, match=r"local storage overflow: program \(3, 0, 0\)"):
        simulate(source, DRAM, "linear", (5, 1, 1), subgrid=PeSubgrid(0, 1, 1), keep_commands=False)


def test_pairwise_sum_is_numpys_float_sum():
    """busy_cycles sums segment lengths with `pairwise_sum` instead of a numpy call per (PE, engine): the same
    floats, including past 8 values (running sums) and 128 (halves)."""
    rng = np.random.default_rng(0)
    for n in [*range(1, 40), 127, 128, 129, 300, 1000, 4097]:
        values = (rng.random(n) * 10.0 ** rng.integers(-3, 8, n)).tolist()
        assert 0.0 + pairwise_sum(values, 0, n) == float(np.sum(np.asarray(values))), n
        assert 0.0 + pairwise_sum([1.0, *values], 1, n) == float(np.sum(np.asarray(values))), n


def test_line_sums_of_programs_sharing_a_structure_equal_add_line_costs():
    from mtia_xdsl.machine.timeline import STRUCTURES_KEPT, LineSums, add_line_costs

    shared = [object() for _ in range(STRUCTURES_KEPT + 3)]  # more than it keeps: it starts afresh
    programs = [_program(p, n=2 + p % len(shared) % 3) for p in range(3 * len(shared))]
    for p, prog in enumerate(programs):
        prog.structure = shared[p % len(shared)] if p % 7 else None
        for k, c in enumerate(prog.commands):  # bytes differ between programs of one structure
            c.global_read_bytes = c.global_read_bytes and 4096 + 32 * ((p + k) % 5)
    rng = np.random.default_rng(0)
    cycles = [np.cumsum(rng.random(2 * len(prog.commands))).reshape(2, -1).tolist() for prog in programs]
    sums, expected = LineSums(), {}
    for prog, (start, end) in zip(programs, cycles, strict=True):
        sums.add(prog.structure, prog.commands, start, end)
        add_line_costs(expected, prog.commands, start, end)
    assert sums.acc == expected and list(sums.acc) == list(expected)
    assert [list(a[4]) for a in sums.acc.values()] == [list(a[4]) for a in expected.values()]


def test_line_sums_equal_add_line_costs_of_every_program_in_order():
    from mtia_xdsl.machine.timeline import add_line_costs, line_sums

    shared = [object(), object()]
    programs = []
    for p in range(12):
        prog = _program(p, n=3)
        if p % 3 == 1:
            prog.commands[1].loc = "k.py:3:8"  # an SE command on the loads' line: its engines are dma, se
        if p % 3 == 2:
            prog.commands[-1].loc = "k.py:4:8"  # the store on the SE line, in programs of no structure
        prog.structure = shared[p % 3] if p % 3 < 2 else None
        programs.append(prog)
    timeline = simulate(programs, DRAM)
    expected: dict = {}
    for prog, (_, start, end) in zip(timeline.programs, timeline.command_cycles, strict=True):
        add_line_costs(expected, prog.commands, start, end)
    sums = line_sums(timeline.programs, timeline.cycles)
    assert sums == expected and list(sums) == list(expected)
    assert [list(a[4]) for a in sums.values()] == [list(a[4]) for a in expected.values()]
    assert [list(a[4]) for a in sums.values()] == [[Engine.DMA, Engine.SE], [Engine.SE, Engine.DMA], [Engine.DMA]]

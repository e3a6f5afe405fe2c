"""The re_reduce barrier of the timing model: a group's `re_link` commands (mtia.re_allreduce) all end at the
last participant's arrival plus the network's transfer and hop latency, per round and PE row or column."""

import pytest

from mtia_xdsl.machine.commands import Command, Engine, ProgramTrace, SlotRef
from mtia_xdsl.machine.config import MTIA2I, PeSubgrid
from mtia_xdsl.machine.program_shape import re_link_cycles
from mtia_xdsl.machine.timing import TimingError, simulate

LIGHT, HEAVY = 64 * 64 * 64, 400 * 64 * 64 * 64
"""DPE MACs before the reduction of a light and of a heavy participant."""


def link(size: int, axis: int = 0, group: bool = True) -> Command:
    """The RE command of one participant of a re_reduce of 256 fp32 over `size` PEs (as mtia_renet records it)."""
    return Command(
        Engine.RE, "re_link", "k.py:8:2", (), (), elems=2 * 256, re_hops=2 * (size - 1), scalar_blocking=True,
        re_axis=axis, re_group_size=size if group else 0,
    )  # fmt: skip


def program(pid: int, macs: int, size: int, axis: int = 0, group: bool = True) -> ProgramTrace:
    """DPE work, the scalar core reading its result (blocking), the reduction, then a little more work."""
    cmds = [
        Command(Engine.DPE, "dpe_matmul", "k.py:5:2", (), (SlotRef(0, 0),), macs=macs, dtype="bf16"),
        Command(Engine.SCALAR, "cb_read", "k.py:6:2", (SlotRef(0, 0),), (), elems=1, scalar_blocking=True),
        link(size, axis, group),
        Command(Engine.VEC, "vec_compute", "k.py:9:2", (), (SlotRef(1, 0),), elems=256),
    ]
    return ProgramTrace((pid, 0, 0), cmds, cb_depth={0: 1, 1: 1}, cb_tile_bytes={0: 4096, 1: 1024})


def link_cycles(timeline, p: int) -> tuple[float, float, float]:
    """(issue, start, end) cycle of program p's re_link command."""
    issue, start, end = timeline.command_cycles[p]
    return issue[2], start[2], end[2]


def test_every_participant_waits_for_the_slowest_then_pays_the_network():
    heavy = 3
    progs = [program(p, HEAVY if p == heavy else LIGHT, 8) for p in range(8)]
    timeline = simulate(progs, MTIA2I, "linear", subgrid=PeSubgrid(0, 8, 1))
    assert timeline.pe_of_program == list(range(8))  # one PE row
    occupancy, hops = re_link_cycles(progs[0].commands[2], MTIA2I)
    last_arrival = max(link_cycles(timeline, p)[0] for p in range(8))
    assert last_arrival == link_cycles(timeline, heavy)[0]
    for p in range(8):
        _, start, end = link_cycles(timeline, p)
        assert start == last_arrival
        assert end == last_arrival + occupancy + hops
        assert timeline.program_cycles[p][1] > end  # the work after it waits too (scalar-blocking)
    # without the group every light participant would have finished long before the heavy one arrived
    alone = simulate([program(p, HEAVY if p == heavy else LIGHT, 8, group=False) for p in range(8)], MTIA2I, "linear",
                     subgrid=PeSubgrid(0, 8, 1))  # fmt: skip
    for p in range(8):
        if p != heavy:
            assert alone.program_cycles[p][1] < last_arrival < timeline.program_cycles[p][1]
    assert alone.program_cycles[heavy][1] == timeline.program_cycles[heavy][1]  # the last to arrive loses nothing


def test_groups_are_the_pe_rows_or_columns_of_a_round():
    # 2 x 2 PEs, 8 programs (linear mapping: PE k runs programs 2k, 2k + 1, in rounds 0 and 1)
    sub = PeSubgrid(0, 2, 2)
    for axis, partner in ((0, 2), (1, 4)):  # program 0 (PE (0, 0), round 0) meets program 2 in its row, 4 in its column
        progs = [program(p, HEAVY if p == partner else LIGHT, 2, axis) for p in range(8)]
        timeline = simulate(progs, MTIA2I, "linear", subgrid=sub)
        assert timeline.pe_of_program == [0, 0, 1, 1, 8, 8, 9, 9]
        heavy_arrival = link_cycles(timeline, partner)[0]
        assert link_cycles(timeline, 0)[1] == heavy_arrival
        others = [p for p in range(0, 8, 2) if p not in (0, partner)]  # round 0, the other row (column)
        assert all(link_cycles(timeline, p)[2] < heavy_arrival for p in others)
        # round 1 meets again after round 0: program 1 (PE 0, round 1) starts after program 0 is done
        assert link_cycles(timeline, 1)[1] >= link_cycles(timeline, partner + 1)[0]


def test_a_group_that_never_completes_is_an_error_naming_the_line():
    progs = [program(p, LIGHT, 8) for p in range(7)]  # one PE of the row has no program
    with pytest.raises(TimingError, match=r"k.py:8:2: re_reduce: program \(0, 0, 0\) on PE 0 waits for 1 other "):
        simulate(progs, MTIA2I, "linear", subgrid=PeSubgrid(0, 8, 1))

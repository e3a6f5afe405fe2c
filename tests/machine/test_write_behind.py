"""LLC write-behind (MachineConfig.llc_write_behind): a store ends in the SRAM LLC, which writes it on to
DRAM with the bandwidth the reads leave; the kernel ends when the last write reached DRAM."""

import pytest

from mtia_xdsl.machine.commands import Command, Engine, ProgramTrace, SlotRef
from mtia_xdsl.machine.config import MTIA2I
from mtia_xdsl.machine.timing import simulate

TILE = 16 * 1024
LOADS = 8
OUT = 1 << 32


def _store_then_stream(pid: int) -> ProgramTrace:
    """Store one tile, then stream LOADS fresh tiles from DRAM (its own addresses): the store's DRAM write
    and the reads compete for DRAM."""
    cmds = [
        Command(Engine.SE, "se_fill", "k.py:2:4", (), (SlotRef(1, 0),), elems=32, dtype="f32"),
        Command(Engine.DMA, "dma_store", "k.py:3:4", (SlotRef(1, 0),), (), global_write_bytes=TILE,
                global_ranges=((OUT + pid * TILE, TILE),)),
    ]  # fmt: skip
    base = pid * LOADS * TILE
    cmds += [
        Command(Engine.DMA, "dma_load", "k.py:4:8", (), (SlotRef(0, k),), global_read_bytes=TILE,
                global_ranges=((base + k * TILE, TILE),))
        for k in range(LOADS)
    ]  # fmt: skip
    return ProgramTrace((pid, 0, 0), cmds, cb_depth={0: LOADS, 1: 1}, cb_tile_bytes={0: TILE, 1: TILE})


def _run(config):
    programs = [_store_then_stream(p) for p in range(64)]
    timeline = simulate(programs, config, grid=(64, 1, 1))
    ends = {"dma_store": 0.0, "dma_load": 0.0}
    for s in timeline.spans:
        if s.kind in ends:
            ends[s.kind] = max(ends[s.kind], s.end_cycle)
    return timeline, ends


def test_a_store_ends_in_the_llc_and_reaches_dram_behind_the_reads():
    behind, b = _run(MTIA2I)
    through, t = _run(MTIA2I.replace(llc_write_behind=0))
    dram_bytes = 64 * TILE * (LOADS + 1)
    for timeline in (behind, through):  # the same DRAM bytes, never faster than DRAM
        assert timeline.traffic.dram_write_bytes == 64 * TILE
        assert timeline.traffic.dma_dram_bytes == dram_bytes
        assert timeline.total_cycles >= dram_bytes / MTIA2I.dram_bytes_per_cycle
    # Write-through: the 64 stores share DRAM, so the last ends after all their bytes crossed it.
    assert t["dma_store"] >= 64 * TILE / MTIA2I.dram_bytes_per_cycle
    # Write-behind: each store moves into SRAM at its PE's write port; its DRAM write comes later.
    assert b["dma_store"] < 64 * TILE / MTIA2I.dram_bytes_per_cycle / 4
    assert behind.traffic.sram_write_bytes == 64 * TILE
    # Reads go first: the loads end before those behind write-through stores; both keep DRAM busy, so the
    # kernels end together (within 0.2 %: when the first bytes reach DRAM differs).
    assert b["dma_load"] < t["dma_load"]
    assert behind.total_cycles <= 1.002 * through.total_cycles
    # The kernel ends when the writes reached DRAM, after the last load.
    assert behind.total_cycles > b["dma_load"]


def test_write_behind_needs_the_llc():
    sram = MTIA2I.replace(global_placement="dram")
    assert _run(sram)[0].total_cycles == _run(sram.replace(llc_write_behind=0))[0].total_cycles
    with pytest.raises(ValueError, match="llc_write_behind' must be 0 or 1, got 2"):
        MTIA2I.replace(llc_write_behind=2)

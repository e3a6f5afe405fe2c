"""DRAM start-up and drain are in the timing model (docs/machine.md, "Start-up and drain"): a stream from DRAM
pays the memory latency once, at its start, and the store at its end drains through DRAM."""

from mtia_xdsl.machine.commands import Command, Engine, ProgramTrace, SlotRef
from mtia_xdsl.machine.config import MTIA2I
from mtia_xdsl.machine.timing import simulate

TILE = 16 * 1024
DRAM = MTIA2I.replace(global_placement="dram")
EXTRA = 1000


def _stream(pid: int, n: int = 16) -> ProgramTrace:
    """n loads from DRAM into a 4-slot CB (each freed by the next command's read), then one store."""
    base = pid * (n + 1) * TILE
    cmds = []
    for k in range(n):
        cmds.append(Command(Engine.DMA, "dma_load", "k.py:3:8", (), (SlotRef(0, k),), global_read_bytes=TILE,
                            global_ranges=((base + k * TILE, TILE),)))  # fmt: skip
    cmds.append(Command(Engine.DMA, "dma_store", "k.py:4:4", (SlotRef(0, n - 1),), (), global_write_bytes=TILE,
                        global_ranges=((base + n * TILE, TILE),)))  # fmt: skip
    return ProgramTrace((pid, 0, 0), cmds, cb_depth={0: n}, cb_tile_bytes={0: TILE})


def test_dram_latency_is_paid_once_at_the_start_and_once_at_the_drain():
    programs = [_stream(p) for p in range(64)]
    base = simulate(programs, DRAM, grid=(64, 1, 1)).total_cycles
    slow = simulate(programs, DRAM.replace(dram_latency_cycles=DRAM.dram_latency_cycles + EXTRA), grid=(64, 1, 1))
    grown = slow.total_cycles - base
    # The first load's bytes arrive EXTRA cycles later and the store reaches DRAM EXTRA cycles later; the
    # 15 loads between are pipelined behind the first, so the latency is not paid per load.
    assert 2 * EXTRA <= grown < 3 * EXTRA

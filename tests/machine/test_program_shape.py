"""Program shapes: programs whose accesses are the same up to one shift of every address share the shape
(and the program order through memory) of the first; any other program gets its own hazards."""

from mtia_xdsl.machine.commands import Command, Engine, ProgramTrace, RunBlock, Runs, SlotRef
from mtia_xdsl.machine.config import MTIA2I
from mtia_xdsl.machine.memory import memory_hazards
from mtia_xdsl.machine.program_shape import (
    MEMORY_QUEUES,
    QUEUES,
    ProgramShape,
    accesses_up_to_shift,
    is_memory_queue,
    program_shape,
)
from mtia_xdsl.machine.timing import simulate

STRUCTURE = object()
BLOCK = RunBlock([0, 512], 256)


def _in_place(base: int, reload_at: int, runs: bool = False) -> ProgramTrace:
    """Load a block at `base`, store it back in place, then load the block at `reload_at`: the store
    follows the first load, the second load follows the store when they overlap."""
    ranges = (lambda a: Runs(BLOCK, a)) if runs else (lambda a: ((a, 768),))
    cmds = [
        Command(Engine.DMA, "dma_load", "k.py:3:8", (), (SlotRef(0, 0),), global_read_bytes=768,
                global_ranges=ranges(base)),
        Command(Engine.DMA, "dma_store", "k.py:4:4", (SlotRef(0, 0),), (), global_write_bytes=768,
                global_ranges=ranges(base)),
        Command(Engine.DMA, "dma_load", "k.py:5:8", (), (SlotRef(0, 1),), global_read_bytes=768,
                global_ranges=ranges(reload_at)),
        Command(Engine.SE, "se_compute", "k.py:6:8", (SlotRef(0, 1),), (), elems=256),
    ]  # fmt: skip
    return ProgramTrace((0, 0, 0), cmds, {0: 2}, {0: 768}, structure=STRUCTURE)


def test_programs_moved_by_one_shift_share_the_first_ones_hazards():
    for runs in (False, True):
        cache: dict = {}
        first = program_shape(_in_place(0, 512, runs), MTIA2I, cache)
        moved = _in_place(1 << 20, (1 << 20) + 512, runs)
        assert memory_hazards(moved.commands) == [[], [0], [1], []]
        assert accesses_up_to_shift(moved.commands, [0, 1, 2]) == accesses_up_to_shift(
            _in_place(0, 512, runs).commands, [0, 1, 2]
        )
        assert program_shape(moved, MTIA2I, cache) is first


def test_a_program_whose_accesses_move_apart_gets_its_own_hazards():
    for runs in (False, True):
        cache: dict = {}
        program_shape(_in_place(0, 512, runs), MTIA2I, cache)
        apart = _in_place(1 << 20, 1 << 21, runs)  # the reload no longer overlaps the store
        assert memory_hazards(apart.commands) == [[], [0], [], []]
        shape = program_shape(apart, MTIA2I, cache)
        assert shape.dependents == ProgramShape(apart, MTIA2I, memory_hazards(apart.commands)).dependents
        assert shape.deps_left[2] == 0


def launch(shared: bool) -> list[ProgramTrace]:
    """200 programs, each on its own blocks, some of them reloading what they stored; `shared`: all of one
    structure (their shapes shared), else none (each program's shape and hazards its own)."""
    progs = [_in_place(k << 20, (k << 20) + (512 if k % 3 else 4096), k % 2 == 1) for k in range(200)]
    for k, p in enumerate(progs):
        p.program_id = (k, 0, 0)
        if not shared:  # no structure object: the CB slot tuples are each program's own, so is its shape
            p.structure = None
    return progs


def test_shared_hazards_give_the_cycles_of_hazards_found_program_by_program():
    shared, alone = simulate(launch(True), MTIA2I), simulate(launch(False), MTIA2I)
    assert shared.program_cycles == alone.program_cycles
    assert [list(c) for cycles in shared.command_cycles for c in cycles] == [
        list(c) for cycles in alone.command_cycles for c in cycles
    ]


FILLS = [Command(Engine.SE, "se_compute", f"k.py:{3 + k}:8", (), (SlotRef(0, k),), elems=256) for k in (0, 1)]
"""Two SE commands filling slots 0 and 1 of cb 0."""


def _store_after(slot: int) -> ProgramTrace:
    """`FILLS`, then a store of slot `slot` of cb 0: the store depends on the command filling it. No
    `structure`: the shape is keyed by the identities of the CB slot tuples."""
    waits = tuple([SlotRef(0, slot)])  # a new tuple
    store = Command(Engine.DMA, "dma_store", "k.py:5:4", waits, (), global_write_bytes=64)
    return ProgramTrace((0, 0, 0), [*FILLS, store], {0: 2}, {0: 64})


def test_a_program_reusing_a_released_programs_object_ids_gets_its_own_shape():
    """A totals-only run releases traces as programs finish, so an object of a later program may take the id of
    a released program's object: the shape cache must not mistake the later program for the released one."""
    cache: dict = {}
    released = _store_after(0)
    program_shape(released, MTIA2I, cache)
    released_waits = id(released.commands[2].waits)
    del released  # its store's waits tuple is free (unless the cache keeps it)
    later, tried = _store_after(1), []
    for _ in range(10_000):  # CPython reuses a freed tuple's memory for the next tuple of its length
        if id(later.commands[2].waits) == released_waits:
            break
        tried.append(later)
        later = _store_after(1)
    assert program_shape(later, MTIA2I, cache).dependents == ProgramShape(later, MTIA2I, None).dependents


def test_is_memory_queue_is_membership_of_memory_queues() -> None:
    """`is_memory_queue` spells MEMORY_QUEUES out as comparisons for the compiled model: the two must agree."""
    assert [is_memory_queue(e) for e in range(QUEUES)] == [e in MEMORY_QUEUES for e in range(QUEUES)]
    assert any(is_memory_queue(e) for e in range(QUEUES)) and not all(is_memory_queue(e) for e in range(QUEUES))

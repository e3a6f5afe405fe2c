"""dma_trace.dma_commands builds its commands without Command's constructor: the same commands as the constructor."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from mtia_xdsl.machine.commands import Command, Engine, RunBlock, Runs, SlotRef
from mtia_xdsl.machine.interpret.dma_trace import dma_commands

SHIFTS = [0, 4096, 12288]


def _constructed(ranges: list[Any], extents: list[Any], load: bool) -> list[Command]:
    rb, wb = (4096, 0) if load else (0, 4096)
    return [
        Command(
            Engine.DMA,
            "dma_load" if load else "dma_store",
            "k.py:3:4",
            (SlotRef(2, 0),) if not load else (),
            (SlotRef(1, 5),) if load else (),
            dtype="f16",
            global_read_bytes=rb,
            global_write_bytes=wb,
            global_ranges=r,
            global_extent=e,
            ls_bytes=8192,
            descriptors=2,
        )
        for r, e in zip(ranges, extents, strict=True)
    ]


@pytest.mark.parametrize("load", [True, False])
@pytest.mark.parametrize("case", ["none", "empty", "single", "few", "block"])
def test_dma_commands_equal_constructed(case: str, load: bool) -> None:
    starts = {"none": [], "empty": [], "single": [64], "few": [0, 512, 2048], "block": [0, 256, 512, 768, 1024]}[case]
    extent = None if case == "none" else (0, 1280)
    ranges: tuple[Any, ...] = ()
    if case == "block":
        ranges = (RunBlock(starts, 256), 256)
    elif case in ("single", "few"):
        ranges = (starts if len(starts) < 3 else np.asarray(starts), 256)
    runs = (4096, 2, ranges, extent)
    waits, fills = ((), (SlotRef(1, 5),)) if load else ((SlotRef(2, 0),), ())
    kind = "dma_load" if load else "dma_store"
    got = dma_commands(kind, "k.py:3:4", waits, fills, load, runs, SHIFTS, 8192, True, "f16")
    if extent is None:
        want_ranges, extents = [()] * 3, [None] * 3
    else:
        want_ranges = [tuple((a + s, 256) for a in starts) for s in SHIFTS]
        extents = [(s, 1280 + s) for s in SHIFTS]
    want = _constructed(want_ranges, extents, load)
    assert [type(c) for c in got] == [Command] * 3
    for g, w in zip(got, want, strict=True):  # every field set (an unset slot raises AttributeError here)
        names = [f.name for f in dataclasses.fields(Command)]
        assert {n: getattr(g, n) for n in names} == {n: getattr(w, n) for n in names}
    if case == "block":
        assert all(type(c.global_ranges) is Runs for c in got)

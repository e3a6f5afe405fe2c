"""Keeping Python's cyclic garbage collector off the objects that existed before a compile or a launch.

A compile allocates tens of thousands of IR objects, and a launch on the machine model as many commands
and values, which triggers collections; a collection of the oldest generation walks every tracked object of
the process, and a process that imported torch has a few hundred thousand of them. Measured with
benchmarks/compile_time.py's process (torch imported), such collections were 15-25 % of a warm compile of
layer norm or attention; with benchmarks/sim_speed.py's, 0.16 s of a 0.57 s softmax 4096x781 launch.
"""

from __future__ import annotations

import gc
from collections.abc import Generator
from contextlib import contextmanager
from typing import Any

_frozen_here = False
"""An `old_objects_frozen` block froze the objects (so `tracked_objects` may unfreeze them for a moment)."""


@contextmanager
def old_objects_frozen() -> Generator[None]:
    """Within the block, collections skip the objects tracked when it was entered (`gc.freeze`); on exit
    they are back in the oldest generation (`gc.unfreeze`), so nothing stays uncollectable.

    Does nothing (collections run as usual) when the process froze objects itself (unfreezing would
    release its freeze too), when the collector is disabled, or when nested in another such block.
    """
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    global _frozen_here
    gc.freeze()
    _frozen_here = True
    try:
        yield
    finally:
        _frozen_here = False
        gc.unfreeze()


def tracked_objects() -> list[Any]:
    """Every object the collector tracks (`gc.get_objects`), including those an `old_objects_frozen` block
    froze, which `gc.get_objects` leaves out; inside such a block the objects tracked now stay frozen."""
    if not _frozen_here:
        return gc.get_objects()
    gc.unfreeze()
    try:
        return gc.get_objects()
    finally:
        gc.freeze()

"""Keeping Python's cyclic garbage collector off the objects that existed before a compile.

A compile allocates tens of thousands of IR objects, which triggers collections; a collection of the oldest
generation walks every tracked object of the process, and a process that imported torch has a few
hundred thousand of them. Measured with benchmarks/compile_time.py's process (torch imported), such
collections were 15-25 % of a warm compile of layer norm or attention.
"""

from __future__ import annotations

import gc
from collections.abc import Generator
from contextlib import contextmanager


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
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()

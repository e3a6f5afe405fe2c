"""Keeping Python's cyclic garbage collector off the objects that existed before a compile or a launch, and
glibc's malloc from returning the memory of a launch's large arrays to the OS between numpy ops.

A compile allocates tens of thousands of IR objects, and a launch on the machine model as many commands
and values, which triggers collections; a collection of the oldest generation walks every tracked object of
the process, and a process that imported torch has a few hundred thousand of them. Measured with
benchmarks/compile_time.py's process (torch imported), such collections were 15-25 % of a warm compile of
layer norm or attention; with benchmarks/sim_speed.py's, 0.16 s of a 0.57 s softmax 4096x781 launch.
"""

from __future__ import annotations

import ctypes
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


@contextmanager
def collections_paused() -> Generator[None]:
    """Within the block the cyclic collector does not run (`gc.disable`); on exit it runs as before.

    For a launch on the machine model: its objects (commands, traces, values) live until it ends, so a
    collection during it only walks them, again at each older generation; after it, the next launch's
    `old_objects_frozen` freezes them without a walk. The few cycles a launch leaves (CB queues, program
    shapes; no arrays) wait for the first collection after the block. Does nothing when the collector is
    disabled already.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@contextmanager
def survivors_promoted() -> Generator[None]:
    """Inside an `old_objects_frozen` block that froze, with the collector paused (`collections_paused`):
    on a normal exit, the objects the block made that are still alive are frozen too, so the outer block's
    unfreeze moves them into the oldest generation with the rest, and no young collection walks them first.

    For a launch on the machine model: its result (a full timeline's commands and traces, ~16,700 tracked
    objects for vector add 2^20, ~10^5 for layer norm 4096x1024) lives until the next launch, and the young
    collection at the block's end walked all of it to free the few cycles the launch left. Measured with
    /tmp-style loops of examples/vector_add.py (CPU time, loaded host): that collection took 2-6 ms of a
    30-57 ms launch; 19 ms of softmax 4096x781's 223 ms and 46 ms of layer norm 4096x1024's 443 ms.
    The block must leave no cyclic garbage: a cycle it leaves waits for the next full collection
    (tests/machine/test_launch_heap.py checks that launches leave none). On an exception, or when the outer
    block did not freeze (the process froze objects itself, or nested), nothing changes: the next
    collection walks them as usual.
    """
    yield
    if _frozen_here and not gc.isenabled():
        gc.freeze()  # also zeroes the young generation's count: gc.enable() starts no collection


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


MALLOC_HEAP_BLOCK_BYTES = 32 << 20
"""Blocks below this size come from malloc's heap (glibc's M_MMAP_THRESHOLD; its own adaptive threshold
stops growing at this value, 32 MiB on 64-bit)."""
MALLOC_KEPT_FREE_BYTES = 64 << 20
"""Freed memory at the top of malloc's heap kept for reuse up to this size (glibc's M_TRIM_THRESHOLD; twice
the block threshold, as glibc's adaptive setting pairs them)."""
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
"""glibc's mallopt parameter numbers (malloc.h)."""
_malloc_tuned = False


def keep_freed_arrays_for_reuse() -> None:
    """Once per process, with glibc: serve blocks below MALLOC_HEAP_BLOCK_BYTES from malloc's heap and keep
    up to MALLOC_KEPT_FREE_BYTES of freed heap memory instead of returning it to the OS. Elsewhere: nothing.

    A batch of programs holds its tiles in numpy arrays of 0.1-32 MiB that each op allocates and frees;
    with glibc's adaptive thresholds, freeing them trims the heap, so the next op's arrays start on fresh
    pages (a page fault and zeroing per 4 KiB). Measured in benchmarks/sim_speed.py's process: the float64
    dots of a matmul 512^3 launch (16 batches of 64 programs) took 31-41 ms of CPU, 15 ms with this setting.
    The cost: up to MALLOC_KEPT_FREE_BYTES of freed memory stays mapped for the process's next allocations.
    """
    global _malloc_tuned
    if _malloc_tuned:
        return
    _malloc_tuned = True
    try:
        libc = ctypes.CDLL(None)  # the process's own C library
        if not hasattr(libc, "gnu_get_libc_version"):  # these mallopt parameters are glibc's
            return
        libc.mallopt(_M_MMAP_THRESHOLD, MALLOC_HEAP_BLOCK_BYTES)
        libc.mallopt(_M_TRIM_THRESHOLD, MALLOC_KEPT_FREE_BYTES)
    except (OSError, AttributeError):
        return

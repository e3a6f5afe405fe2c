"""A launch on the machine model runs with the process's older objects frozen for the garbage collector
(`utils.heap.old_objects_frozen`), and leaves nothing frozen; `heap.tracked_objects` still sees them.
`heap.keep_freed_arrays_for_reuse` serves a batch's arrays from malloc's heap and keeps their memory when freed."""

import ctypes
import gc
import json
import subprocess
import sys

import pytest
import torch
import triton
import triton.language as tl
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.machine import run as machine_run
from mtia_xdsl.utils import heap
from mtia_xdsl.utils.heap import old_objects_frozen, tracked_objects


class _Marker:
    """A tracked object created before a frozen block."""


def test_tracked_objects_include_objects_frozen_by_the_block() -> None:
    marker = _Marker()
    with old_objects_frozen():
        assert gc.get_freeze_count() > 0
        assert not any(o is marker for o in gc.get_objects())  # what the collector's own list leaves out
        assert any(o is marker for o in tracked_objects())
        assert gc.get_freeze_count() > 0  # still frozen after the look-up
    assert gc.get_freeze_count() == 0


@triton.jit
def _double(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def test_a_launch_times_with_old_objects_frozen_and_unfreezes(monkeypatch) -> None:
    seen: list[int] = []
    simulate = machine_run.simulate

    def spy(*args, **kwargs):
        seen.append(gc.get_freeze_count())
        return simulate(*args, **kwargs)

    monkeypatch.setattr(machine_run, "simulate", spy)
    x = torch.arange(40.0)
    _double[(3,)](x, 40, BLOCK=16)
    assert torch.equal(x, torch.arange(40.0) * 2)
    assert seen and seen[0] > 0
    assert gc.get_freeze_count() == 0


def test_a_launch_runs_without_collections_and_enables_the_collector_again(monkeypatch) -> None:
    enabled: list[bool] = []
    simulate = machine_run.simulate

    def spy(*args, **kwargs):
        enabled.append(gc.isenabled())
        return simulate(*args, **kwargs)

    monkeypatch.setattr(machine_run, "simulate", spy)
    x = torch.arange(40.0)
    _double[(3,)](x, 40, BLOCK=16)
    assert enabled == [False]
    assert gc.isenabled()
    with pytest.raises(InterpretationError, match="out-of-bounds"):
        _double[(5,)](x, 80, BLOCK=16)  # a launch failing in the model enables it again too
    assert enabled == [False] and gc.isenabled()


class _Libc:
    """A C library recording `mallopt` calls; `glibc`: whether it has glibc's `gnu_get_libc_version`."""

    def __init__(self, glibc: bool) -> None:
        self.calls: list[tuple[int, int]] = []
        if glibc:
            self.gnu_get_libc_version = lambda: b"2.36"

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return 1


@pytest.mark.parametrize("glibc", [True, False])
def test_malloc_thresholds_are_set_once_and_only_with_glibc(monkeypatch, glibc: bool) -> None:
    libc = _Libc(glibc)
    monkeypatch.setattr(heap, "_malloc_tuned", False)
    monkeypatch.setattr(ctypes, "CDLL", lambda name: libc)
    heap.keep_freed_arrays_for_reuse()
    heap.keep_freed_arrays_for_reuse()
    expected = [(-3, heap.MALLOC_HEAP_BLOCK_BYTES), (-1, heap.MALLOC_KEPT_FREE_BYTES)]  # M_MMAP_, M_TRIM_THRESHOLD
    assert libc.calls == (expected if glibc else [])


_MALLOC_PROBE = """
import ctypes, json, sys
from mtia_xdsl.utils import heap

class MallInfo2(ctypes.Structure):
    _fields_ = [(f, ctypes.c_size_t) for f in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype, libc.malloc.restype, libc.free.argtypes = MallInfo2, ctypes.c_void_p, [ctypes.c_void_p]
if sys.argv[1] == "tuned":
    heap.keep_freed_arrays_for_reuse()
before = libc.mallinfo2().hblks
block = libc.malloc(16 << 20)
mapped = libc.mallinfo2().hblks - before
libc.free(block)
print(json.dumps({"mapped_blocks": mapped, "kept_free_bytes": libc.mallinfo2().fordblks}))
"""


def _malloc_probe(setting: str) -> dict[str, int]:
    """In a new process (malloc's thresholds untouched), malloc and free 16 MiB: the blocks it mapped
    separately and the free bytes its heap kept."""
    proc = subprocess.run([sys.executable, "-c", _MALLOC_PROBE, setting], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "mallinfo2"), reason="needs glibc 2.33+ (mallinfo2)")
def test_a_16_mib_array_comes_from_mallocs_heap_and_stays_there_when_freed() -> None:
    assert _malloc_probe("default")["mapped_blocks"] == 1  # glibc's default: mmapped, unmapped when freed
    tuned = _malloc_probe("tuned")
    assert tuned["mapped_blocks"] == 0
    assert tuned["kept_free_bytes"] >= 16 << 20

"""A launch on the machine model runs with the process's older objects frozen for the garbage collector
(`utils.heap.old_objects_frozen`), and leaves nothing frozen; `heap.tracked_objects` still sees them. What it
leaves joins the oldest generation unwalked (`heap.survivors_promoted`), and it leaves no cyclic garbage.
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


@triton.jit
def _ragged_rows(x_ptr, lens_ptr, out_ptr, BLOCK: tl.constexpr):
    """Sum the first lens[pid] blocks of row pid: a loop bound that differs between programs of a batch."""
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(0, tl.load(lens_ptr + pid)):
        acc += tl.load(x_ptr + pid * 4 * BLOCK + i * BLOCK + tl.arange(0, BLOCK))
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)


def _ragged_launch() -> None:
    x, lens, out = torch.rand(6, 4, 16), torch.tensor([1, 3, 0, 4, 2, 3], dtype=torch.int32), torch.empty(6, 16)
    _ragged_rows[(6,)](x, lens, out, BLOCK=16)
    expected = torch.stack([x[r, : int(lens[r])].sum(0) for r in range(6)])
    assert torch.allclose(out, expected)


def _attention_launch() -> None:
    from examples import attention

    q, k, v = (torch.randn(1, 2, 64, 64).half() for _ in range(3))
    out = attention.attention(q, k, v, causal=True, BLOCK_M=32, BLOCK_N=32)
    assert torch.allclose(out.float(), attention.reference(q, k, v, True).float(), atol=1e-2, rtol=1e-2)


def _double_launch() -> None:
    x = torch.arange(40.0)
    _double[(3,)](x, 40, BLOCK=16)
    assert torch.equal(x, torch.arange(40.0) * 2)


@pytest.mark.parametrize("launch", [_double_launch, _ragged_launch, _attention_launch], ids=lambda f: f.__name__)
def test_a_launch_leaves_no_cyclic_garbage(launch) -> None:
    """`heap.survivors_promoted` moves what a launch leaves into the oldest generation unwalked: a cycle the
    launch left (CBs referring to each other, a nested function calling itself) would wait for a full
    collection. Per batch CBs, a batch split by a loop bound that differs, compacted loops (causal attention)."""
    launch()  # compiled and warm: what the second launch leaves is the launch's own
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        launch()
        gc.collect()
        garbage = [type(o).__name__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert garbage == []


def test_what_a_launch_leaves_joins_the_oldest_generation_without_a_collection() -> None:
    _double_launch()
    collections: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        _double_launch()
        young = len(gc.get_objects(0))
    finally:
        gc.callbacks.remove(count)
    assert collections == []  # before: a young collection walked the launch's result when the collector resumed
    assert young < 50  # the launch's traces and timeline are not in the young generation
    assert gc.isenabled() and gc.get_freeze_count() == 0


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

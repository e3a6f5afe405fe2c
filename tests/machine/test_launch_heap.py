"""A launch on the machine model runs with cyclic collections paused (`utils.heap.collections_paused`) and
leaves the collector on and nothing frozen; a compile freezes the process's older objects
(`utils.heap.old_objects_frozen`), which `heap.tracked_objects` still sees."""

import gc

import torch
import triton
import triton.language as tl

from mtia_xdsl.machine import run as machine_run
from mtia_xdsl.utils.heap import collections_paused, old_objects_frozen, tracked_objects


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


def test_a_launch_runs_and_times_with_collections_paused_and_turns_them_back_on(monkeypatch) -> None:
    seen: list[bool] = []
    simulate = machine_run.simulate
    run_batch = machine_run._BatchRunner._run_batch

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return simulate(*args, **kwargs)

    def spy_batch(self, group):
        seen.append(gc.isenabled())
        return run_batch(self, group)

    monkeypatch.setattr(machine_run, "simulate", spy)
    monkeypatch.setattr(machine_run._BatchRunner, "_run_batch", spy_batch)
    assert gc.isenabled()
    x = torch.arange(40.0)
    _double[(3,)](x, 40, BLOCK=16)
    assert torch.equal(x, torch.arange(40.0) * 2)
    assert len(seen) >= 2 and not any(seen)
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_collections_paused_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with collections_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with collections_paused():
        assert not gc.isenabled()
    assert gc.isenabled()

"""A launch on the machine model runs with the process's older objects frozen for the garbage collector
(`utils.heap.old_objects_frozen`), and leaves nothing frozen; `heap.tracked_objects` still sees them."""

import gc

import torch
import triton
import triton.language as tl

from mtia_xdsl.machine import run as machine_run
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

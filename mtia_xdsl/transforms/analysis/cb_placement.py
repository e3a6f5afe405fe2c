"""Where circular buffers go: CB IDs and LS offsets for CBs whose live ranges (`cb_liveness`) are known,
shared between CBs never alive together. mtia-cb-allocate places a kernel's CBs with these; mtia-cb-sizing
measures the LS a choice of depths would take with them (see mtia_cb_allocate's docstring for the method).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mtia_xdsl.transforms.analysis.cb_liveness import CbLiveRange


def aligned(n: int, align: int) -> int:
    """`n` rounded up to a multiple of `align`."""
    return -(-n // align) * align


def assign_ids(ranges: Sequence[CbLiveRange]) -> dict[int, int]:
    """CB index -> CB ID: linear scan by range start, smallest free ID first (optimal for intervals)."""
    ids: dict[int, int] = {}
    active: list[CbLiveRange] = []
    for r in sorted(ranges, key=lambda r: (r.start, r.index)):
        active = [a for a in active if a.end >= r.start]
        taken = {ids[a.index] for a in active}
        ids[r.index] = next(i for i in range(len(taken) + 1) if i not in taken)
        active.append(r)
    return ids


def place_bytes(ranges: Sequence[CbLiveRange], order: Iterable[CbLiveRange], align: int) -> dict[int, int]:
    """CB index -> LS offset: each CB of `order` at the lowest aligned offset clear of the CBs placed before it
    that are alive with it."""
    offsets: dict[int, int] = {}
    placed: list[CbLiveRange] = []
    for r in order:
        size = aligned(r.size_bytes, align)
        busy = sorted(
            (offsets[p.index], offsets[p.index] + aligned(p.size_bytes, align)) for p in placed if p.overlaps(r)
        )
        at = 0
        for lo, hi in busy:
            if at + size <= lo:
                break
            at = max(at, aligned(hi, align))
        offsets[r.index] = at
        placed.append(r)
    return offsets


def place_best(ranges: Sequence[CbLiveRange], align: int) -> tuple[dict[int, int], int]:
    """CB index -> LS offset by the better of the two orders (see module docstring), and its LS high-water
    mark in bytes (0 without CBs)."""
    orders = (
        sorted(ranges, key=lambda r: (-aligned(r.size_bytes, align), r.start, r.index)),
        sorted(ranges, key=lambda r: (r.start, r.index)),
    )
    best: dict[int, int] = {}
    best_top = -1
    for order in orders:
        offsets = place_bytes(ranges, order, align)
        top = max((offsets[r.index] + aligned(r.size_bytes, align) for r in ranges), default=0)
        if best_top < 0 or top < best_top:
            best, best_top = offsets, top
    return best, best_top

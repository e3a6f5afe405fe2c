"""region_dce: xDSL's dead-code elimination of a region, with liveness found by one worklist pass.

xDSL's `region_dce` computes the live ops as a fixed point, sweeping the whole region at least twice and
asking every op not yet live, in every sweep, whether it would be dead without uses
(`would_be_trivially_dead`: trait and memory-effect lookups). The live set is the least fixed point of
"an op is live if it has effects beyond its results or a live op uses one of its results"; this version
reaches the same set from its roots (each op asked once, each operand followed once), then erases what
is not live with xDSL's own `LiveSet.delete_dead`, so what is erased, and in which order, is unchanged.
When every op is live and every block reached, none empty (most sweeps of a compile), that erasing sweep is
skipped: it would erase nothing. That is known from the liveness walk itself (no second count of the ops).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Generator, Iterator
from typing import cast

from xdsl.ir import Operation, Region
from xdsl.ir.post_order import PostOrderIterator
from xdsl.pattern_rewriter import PatternRewriterListener
from xdsl.traits import (
    MemoryAllocEffect,
    MemoryEffect,
    MemoryFreeEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    NoMemoryEffect,
    RecursiveMemoryEffect,
)
from xdsl.transforms.dead_code_elimination import LiveSet, would_be_trivially_dead

_FIXED_EFFECTS = tuple(
    t.get_effects.__func__  # type: ignore[attr-defined]
    for t in (
        NoMemoryEffect,
        MemoryReadEffect,
        MemoryWriteEffect,
        MemoryAllocEffect,
        MemoryFreeEffect,
        RecursiveMemoryEffect,  # nothing to recurse into without regions
    )
)
"""`get_effects` of the xDSL effect traits whose answer, for an op without regions, depends on its class only."""

_DEAD_WITHOUT_USES: dict[type[Operation], bool] = {}
"""Op class -> `would_be_trivially_dead` of its ops without regions, for classes whose effect traits are all
`_FIXED_EFFECTS` (terminator and symbol traits are per class too)."""


def dead_without_uses(op: Operation) -> bool:
    """`xdsl.transforms.dead_code_elimination.would_be_trivially_dead(op)`, answered once per op class for
    ops without regions whose effects depend on their class only (the trait and effect lookups were most of a
    dead-code sweep)."""
    if op.regions:
        return would_be_trivially_dead(op)
    cls = type(op)
    known = _DEAD_WITHOUT_USES.get(cls)
    if known is None:
        known = would_be_trivially_dead(op)
        effects = op.get_traits_of_type(MemoryEffect)
        if all(getattr(type(t).get_effects, "__func__", None) in _FIXED_EFFECTS for t in effects):
            _DEAD_WITHOUT_USES[cls] = known
    return known


def is_trivially_dead(op: Operation) -> bool:
    """`xdsl.transforms.dead_code_elimination.is_trivially_dead(op)`: no result is used and `dead_without_uses`."""
    return all(result.first_use is None for result in op.results) and dead_without_uses(op)


def _reachable_ops(region: Region, partial: list[bool]) -> Iterator[Operation]:
    """The ops xDSL's `LiveSet.propagate_region_liveness` visits: those of the blocks reachable from each
    region's entry block (a block no branch reaches is never live, so `delete_dead` erases it), nested
    regions included. Sets `partial[0]` if a region has a block not reached or an empty block other than
    its first (blocks `delete_dead` erases): otherwise the ops yielded are all the ops of `region`."""
    first = region.first_block
    if first is None:
        return
    reached = 0
    for block in PostOrderIterator(first):
        reached += 1
        if block.first_op is None and block is not first:
            partial[0] = True
        for op in block.ops:
            yield op
            for nested in op.regions:
                yield from _reachable_ops(nested, partial)
    if reached != len(region.blocks):
        partial[0] = True


def region_dce(region: Region, listener: PatternRewriterListener | None = None) -> bool:
    """Erase the ops of `region` whose results nothing live uses and that have no other effect (as
    `xdsl.transforms.dead_code_elimination.region_dce`, blocks no branch reaches included); return True if
    anything was erased."""
    live: set[Operation] = set()
    work: list[Operation] = []
    visited: set[Operation] = set()
    partial = [False]
    for op in _reachable_ops(region, partial):
        visited.add(op)
        if not dead_without_uses(op):
            live.add(op)
            work.append(op)
    while work:
        for operand in work.pop().operands:
            owner = operand.owner  # an op of the region (in `visited`) or a block
            if owner not in live and owner in visited:
                live.add(cast(Operation, owner))  # in `visited`: an op
                work.append(cast(Operation, owner))
    if not partial[0] and len(live) == len(visited):
        return False  # every op is live (and every block reached, none empty): `delete_dead` would erase nothing
    live_set = LiveSet(changed=False, _live_ops=live)
    live_set.delete_dead(region, listener)
    return live_set.changed


_SWAP_LOCK = threading.Lock()
_swap_depth = 0


@contextlib.contextmanager
def canonicalize_with_region_dce() -> Generator[None]:
    """Within the block, xDSL's `canonicalize` pass sweeps dead code with `region_dce` above (the same ops
    erased in the same order; xDSL's sweeps were half of a canonicalize, benchmarks/compile_time.py).

    The compile driver (pipeline.py) runs its passes inside it; outside, xDSL's canonicalize is untouched, so
    a program that embeds our dialects next to its own keeps xDSL's behaviour. Nested and concurrent blocks
    (threads compiling at once) share one swap, undone when the last one ends.
    """
    from xdsl.transforms import canonicalize

    global _swap_depth
    with _SWAP_LOCK:
        if _swap_depth == 0:
            _ORIGINAL.append(canonicalize.region_dce)  # pyright: ignore[reportPrivateImportUsage]
            canonicalize.region_dce = region_dce  # pyright: ignore[reportPrivateImportUsage]
        _swap_depth += 1
    try:
        yield
    finally:
        with _SWAP_LOCK:
            _swap_depth -= 1
            if _swap_depth == 0:
                canonicalize.region_dce = _ORIGINAL.pop()  # pyright: ignore[reportPrivateImportUsage]


_ORIGINAL: list[Callable[..., bool]] = []

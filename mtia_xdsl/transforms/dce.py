"""region_dce: xDSL's dead-code elimination of a region, with liveness found by one worklist pass.

xDSL's `region_dce` computes the live ops as a fixed point, sweeping the whole region at least twice and
asking every op not yet live, in every sweep, whether it would be dead without uses
(`would_be_trivially_dead`: trait and memory-effect lookups). The live set is the least fixed point of
"an op is live if it has effects beyond its results or a live op uses one of its results"; this version
reaches the same set from its roots (each op asked once, each operand followed once), then erases what
is not live with xDSL's own `LiveSet.delete_dead`, so what is erased, and in which order, is unchanged.
"""

from __future__ import annotations

from xdsl.ir import Operation, Region
from xdsl.pattern_rewriter import PatternRewriterListener
from xdsl.transforms.dead_code_elimination import LiveSet, would_be_trivially_dead


def region_dce(region: Region, listener: PatternRewriterListener | None = None) -> bool:
    """Erase the ops of `region` whose results nothing live uses and that have no other effect (as
    `xdsl.transforms.dead_code_elimination.region_dce`); return True if anything was erased."""
    live: set[Operation] = set()
    work: list[Operation] = []
    for op in region.walk():
        if not would_be_trivially_dead(op):
            live.add(op)
            work.append(op)
    while work:
        for operand in work.pop().operands:
            owner = operand.owner
            if isinstance(owner, Operation) and owner not in live:
                live.add(owner)
                work.append(owner)
    live_set = LiveSet(changed=False, _live_ops=live)
    live_set.delete_dead(region, listener)
    return live_set.changed

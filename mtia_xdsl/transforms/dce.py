"""region_dce: xDSL's dead-code elimination of a region, with each op's side-effect query asked once.

xDSL's `region_dce` propagates liveness to a fixed point (at least two sweeps over the region) and asks
every op not yet live, in every sweep, whether it would be dead without uses (`would_be_trivially_dead`:
trait and memory-effect lookups). The answer does not change while liveness propagates, so this version
keeps it per op; what is erased, and in which order, is xDSL's (`LiveSet.delete_dead`).
"""

from __future__ import annotations

from xdsl.ir import Operation, Region
from xdsl.pattern_rewriter import PatternRewriterListener
from xdsl.transforms.dead_code_elimination import LiveSet, would_be_trivially_dead


class _LiveSet(LiveSet):
    """xDSL's LiveSet with `would_be_trivially_dead` asked once per op."""

    def __init__(self) -> None:
        super().__init__()
        self._removable: dict[Operation, bool] = {}

    def propagate_op_liveness(self, op: Operation) -> None:
        for region in op.regions:
            self.propagate_region_liveness(region)
        if op in self._live_ops:
            return
        removable = self._removable.get(op)
        if removable is None:
            removable = self._removable[op] = would_be_trivially_dead(op)
        if not removable or any(use.operation in self._live_ops for result in op.results for use in result.uses):
            self.set_live(op)


def region_dce(region: Region, listener: PatternRewriterListener | None = None) -> bool:
    """Erase the ops of `region` whose results nothing live uses and that have no other effect (as
    `xdsl.transforms.dead_code_elimination.region_dce`); return True if anything was erased."""
    live_set = _LiveSet()
    while live_set.changed:
        live_set.changed = False
        live_set.propagate_region_liveness(region)
    live_set.delete_dead(region, listener)
    return live_set.changed

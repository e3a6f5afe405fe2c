"""mtia-cb-allocate: give every circular buffer (CB) a CB ID and an LS byte range, sharing both between CBs
whose live ranges do not overlap (register allocation for CBs).

The live ranges come from `transforms/analysis/cb_liveness.py`. Live ranges are intervals of program
points, so the CBs form an interval graph:

- CB IDs: linear scan in order of range start, each CB taking the smallest ID no CB alive with it holds.
  This colours an interval graph optimally: the kernel uses exactly as many IDs as CBs are alive at its peak.
- LS bytes: each CB takes depth x tile bytes rounded up to `MachineConfig.cb_align_bytes`, at the lowest
  offset (a multiple of that alignment) clear of the bytes of every CB alive with it already placed. Two
  orders are tried, largest CB first (TFLite's greedy-by-size arena planning) and by range start; the one
  with the lower LS high-water mark is kept (greedy-by-size on a tie). Deterministic: ties go by
  cb_alloc order.

The result is written on each `mtia.cb_alloc` as the properties `cb_id` and `ls_offset`. An allocation the
input already carries (hand-written, or from an earlier run) is checked first and refused if two CBs alive
at the same time share an ID or bytes (`cb_liveness.verify_cb_allocation`, as mtia-run checks its input);
the pass then places every CB anew and checks its own result the same way.

Requires: mtia-cb-bufferize (run after mtia-cb-sizing: the depths decide the bytes).
Raises: CbIdOverflow (a PassFailedException) when more CBs are alive at once than `MachineConfig.cb_ids`;
LocalStorageOverflow when the placed CBs need more than `MachineConfig.ls_bytes`. Both name the kernel
lines of the values alive at the peak.
Example: mtia-opt k.mlir -p mtia-cb-sizing,mtia-cb-allocate
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.transforms.analysis.cb_liveness import (
    CbLiveness,
    CbLiveRange,
    CbPeak,
    allocation_conflicts,
    analyze_cb_liveness,
    kernels,
    verify_cb_allocation,
)
from mtia_xdsl.transforms.analysis.cb_placement import aligned, assign_ids, place_best
from mtia_xdsl.transforms.errors import CbIdOverflow, LocalStorageOverflow
from mtia_xdsl.transforms.program_level import require_buffer_level
from mtia_xdsl.transforms.target import machine_config_for
from mtia_xdsl.utils.locations import location_str


@dataclass(frozen=True)
class CbPlacement:
    """Where one CB lives: its CB ID and its LS bytes [ls_offset, ls_offset + size_bytes)."""

    range: CbLiveRange
    cb_id: int
    ls_offset: int
    size_bytes: int
    """depth x tile bytes rounded up to MachineConfig.cb_align_bytes."""


@dataclass(frozen=True)
class CbAllocation:
    """The placement of every CB of one kernel (in cb_alloc order) and the liveness it rests on."""

    liveness: CbLiveness
    placements: tuple[CbPlacement, ...]

    @property
    def ids_used(self) -> int:
        """CB IDs the kernel uses (the most CBs alive at once)."""
        return max((p.cb_id for p in self.placements), default=-1) + 1

    @property
    def ls_high_water_bytes(self) -> int:
        """Bytes of LS from offset 0 to the end of the highest placed CB."""
        return max((p.ls_offset + p.size_bytes for p in self.placements), default=0)


def plan_allocation(func: Operation, config: MachineConfig) -> CbAllocation:
    """Decide the CB ID and LS offset of every CB of `func` (see module docstring); change nothing."""
    live = analyze_cb_liveness(func)
    ranges = live.ranges
    ids = assign_ids(ranges)
    best, _ = place_best(ranges, config.cb_align_bytes)
    align = config.cb_align_bytes
    placements = tuple(CbPlacement(r, ids[r.index], best[r.index], aligned(r.size_bytes, align)) for r in ranges)
    return CbAllocation(live, placements)


_LISTED = 16
"""How many of the CBs alive at the peak a refusal lists."""


def _peak_lines(peak: CbPeak) -> str:
    ranked = sorted(peak.ranges, key=lambda r: (-r.size_bytes, r.index))
    lines = [f"  {r.cb.type}: {r.size_bytes} bytes, for the value made at {r.value_loc}" for r in ranked[:_LISTED]]
    if len(ranked) > _LISTED:
        rest = ranked[_LISTED:]
        lines.append(f"  ... and {len(rest)} more CBs with {sum(r.size_bytes for r in rest)} bytes")
    return "\n".join(lines)


UNFUSE_ADVICE = (
    "; a command fused from an elementwise chain reads all of the chain's inputs at once (vector_codegen=False "
    "keeps the chain's commands apart)"
)
"""The CB-ID refusal's advice to keep fused chains apart; mtia_xdsl/fit.py drops it from a refusal once it
has tried that step."""


def check_fits(func: Operation, plan: CbAllocation, config: MachineConfig) -> None:
    """Refuse an allocation that needs more CB IDs or LS bytes than a PE has.

    Raises: CbIdOverflow (too many CBs alive at once) or LocalStorageOverflow (LS high-water mark above
    `config.ls_bytes`), each naming the kernel line of `func` and the values alive at the peak.
    """
    where = location_str(func.location)
    if plan.ids_used > config.cb_ids:
        peak = plan.liveness.peak()
        raise CbIdOverflow(
            f"{where}: error: {peak.count} circular buffers are alive at once at {peak.loc}, but the CP of a PE "
            f"tracks {config.cb_ids} CB IDs (MachineConfig.cb_ids); a CB ID is taken per tensor whatever its "
            "size, so compute with fewer tensors alive at once: use a loaded tile before loading the next, hold "
            f"fewer tensors across a loop{UNFUSE_ADVICE}. CBs alive there:\n"
            f"{_peak_lines(peak)}",
            peak.count,
            config.cb_ids,
        )
    top = plan.ls_high_water_bytes
    if top > config.ls_bytes:
        peak = plan.liveness.peak(by_bytes=True)
        raise LocalStorageOverflow(
            f"{where}: error: the kernel's circular buffers need {top} bytes of local storage but a PE has "
            f"{config.ls_bytes}; {peak.count} CBs with {peak.size_bytes} bytes are alive at once at {peak.loc}; "
            f"lower the block sizes (BLOCK_*) or num_stages. CBs alive there:\n{_peak_lines(peak)}",
            top,
            config.ls_bytes,
        )


def apply_allocation(plan: CbAllocation) -> None:
    """Write each placement on its cb_alloc (properties `cb_id` and `ls_offset`)."""
    for p in plan.placements:
        p.range.alloc.properties["cb_id"] = IntegerAttr(p.cb_id, i32)
        p.range.alloc.properties["ls_offset"] = IntegerAttr(p.ls_offset, i64)


@dataclass(frozen=True)
class MtiaCbAllocatePass(ModulePass):
    """Assign each CB a CB ID and an LS byte range, shared between CBs never alive together; see module doc.

    Requires: mtia-cb-bufferize (after mtia-cb-sizing). Raises: CbIdOverflow, LocalStorageOverflow.
    Example: mtia-opt k.mlir -p mtia-cb-allocate
    """

    name = "mtia-cb-allocate"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_buffer_level(op, self.name)
        verify_cb_allocation(op)
        config = machine_config_for(op, self.name)
        for func in kernels(op):
            plan = plan_allocation(func, config)
            check_fits(func, plan, config)
            apply_allocation(plan)
            conflicts = allocation_conflicts(func, plan.liveness)
            assert not conflicts, f"{self.name} placed CBs alive together on shared IDs or bytes: {conflicts[0]}"

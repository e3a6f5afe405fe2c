"""Prints, as JSON, every cycle figure of the timing model on a set of launches: run once with the compiled
timing model and once with the pure-Python one (MTIA_SIM_COMPILED=0), the two outputs must be equal.

The launches cover DMA contention (64 PEs streaming), each global placement, LLC write-behind on and off,
programs in flight (1 and 2), one and two DMA queues, re_reduce barriers, a totals-only timeline, programs
whose loads and stores must keep program order (memory hazards, shared by programs alike), and the
traces of two example kernels (vector add, matmul). Floats print by repr: equal text means equal values.

Usage: python tests/machine/timing_digest.py  (from the repo root; prints {"status": ..., "runs": {...}})
"""

import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch

import mtia_xdsl
from examples.matmul import matmul
from examples.vector_add import add_kernel
from mtia_xdsl.machine import compiled
from mtia_xdsl.machine.config import MTIA2I, PeSubgrid
from mtia_xdsl.machine.timing import simulate
from tests.machine.test_program_shape import launch as in_place_launch
from tests.machine.test_timeline_totals import _program as stream_program
from tests.machine.test_timing_re_barrier import HEAVY, LIGHT
from tests.machine.test_timing_re_barrier import program as re_program
from tests.machine.test_write_behind import _store_then_stream

CONFIGS = {
    "llc": MTIA2I,
    "llc-write-through": MTIA2I.replace(llc_write_behind=0),
    "dram": MTIA2I.replace(global_placement="dram"),
    "sram": MTIA2I.replace(global_placement="sram"),
    "one-in-flight-one-queue": MTIA2I.replace(pe_programs_in_flight=1, dma_queues=1),
}


def digest(timeline) -> dict:
    """Every figure of a timeline, floats by repr (command cycles only when it keeps them)."""
    out = {
        name: repr(getattr(timeline, name))
        for name in (
            "total_cycles", "program_cycles", "pe_of_program", "engine_busy_cycles", "traffic", "work",
            "ls_high_water_bytes", "scalar_issue_cycles", "dma_bound_cycles", "llc_resident_bytes",
            "llc_overflowed", "write_behind_end_cycle",
        )
    }  # fmt: skip
    out["line_costs"] = repr([dataclasses.astuple(x) for x in timeline.line_costs()])
    if not timeline.totals_only:
        out["command_cycles"] = repr([[list(c) for c in cycles] for cycles in timeline.command_cycles])
        out["end_order"] = repr(list(timeline.end_order))
    return out


def kernel_traces() -> dict[str, tuple[list, tuple[int, int, int]]]:
    """Traces (and grid) of two example launches on the machine model."""
    g = torch.Generator().manual_seed(0)
    x, y = torch.rand(70_000, generator=g), torch.rand(70_000, generator=g)
    add_kernel[(69,)](x, y, torch.empty_like(x), x.numel(), BLOCK_SIZE=1024)
    add = mtia_xdsl.last_run()
    a, b = torch.randn(256, 192, generator=g).half(), torch.randn(192, 320, generator=g).half()
    matmul(a, b)
    mm = mtia_xdsl.last_run()
    return {"vector_add": (add.traces, add.timeline.grid), "matmul": (mm.traces, mm.timeline.grid)}


def main() -> None:
    runs = {}
    for cname, config in CONFIGS.items():
        wb = [_store_then_stream(p) for p in range(64)]
        runs[f"store-then-stream/{cname}"] = digest(simulate(wb, config, grid=(64, 1, 1)))
        streams = [stream_program(p) for p in range(256)]
        runs[f"stream/{cname}"] = digest(simulate(streams, config, "round_robin", (256, 1, 1)))
        runs[f"stream-totals/{cname}"] = digest(
            simulate(streams, config, "round_robin", (256, 1, 1), keep_commands=False)
        )
    for size, axis, sub in ((8, 0, PeSubgrid(0, 8, 1)), (2, 0, PeSubgrid(0, 2, 2)), (2, 1, PeSubgrid(0, 2, 2))):
        progs = [re_program(p, HEAVY if p == 3 else LIGHT, size, axis) for p in range(8)]
        runs[f"re_reduce/{size}-{axis}"] = digest(simulate(progs, MTIA2I, "linear", subgrid=sub))
    for shared in (True, False):  # memory hazards shared by programs moved by one shift, and found one by one
        runs[f"in-place/{'shared' if shared else 'alone'}"] = digest(simulate(in_place_launch(shared), MTIA2I))
    for kname, (traces, grid) in kernel_traces().items():
        for cname, config in CONFIGS.items():
            runs[f"{kname}/{cname}"] = digest(simulate(traces, config, grid=grid))
    print(json.dumps({"status": compiled.status(), "runs": runs}))


if __name__ == "__main__":
    main()

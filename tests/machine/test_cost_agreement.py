"""CB sizing's cost model and the timing model agree: one cost model (machine/work.py, machine/cost.py).

For every example kernel, the engine work CB sizing estimates for each compute command
(`cb_cost.command_cost`, what `iteration_cost` sums per loop iteration) is compared per engine with the
busy cycles the timing model charges the commands the run issued (`program_shape.compute_cost`).

Tolerance: 1 cycle per command, per engine. (Commands are matched to ops by source line; where one line
stands for several ops, e.g. attention's inner loop inlined for its two stages, the estimate is the range
between its cheapest and its dearest op.) The timing model charges each command whole cycles (at least
1); sizing keeps the fraction. The sizes are multiples of the blocks, so no tile is masked and effective
shapes (which the run may skip and sizing does not know statically) do not shrink any command's work.

DMA is compared where sizing's assumption holds: sizing charges a DMA command its bytes at a PE's share
of the level's bandwidth when every PE streams (`cost.dma_estimate`), the timing model moves them through
the chip-wide pool at whatever share the transfers in flight leave (machine/memory.py). On a launch that
keeps every PE streaming (vector add, two programs per PE), each PE's simulated port busy cycles are within
10 % below the estimate (the first and last transfers share the pool with fewer PEs) and at most 1 % above.
The example launches above use 2 to 8 of the 64 PEs, so their transfers run up to 30x faster than the
full-chip share: there sizing's DMA estimate is only an upper bound, on purpose (a CB sized for the full
chip is deep enough for a smaller launch).
"""

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl
from examples import attention, layer_norm, matmul, softmax, vector_add
from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine import cost as machine_cost
from mtia_xdsl.machine.commands import RE_LINK_KIND, DmaPort, Engine
from mtia_xdsl.machine.config import MTIA2I
from mtia_xdsl.machine.program_shape import ENGINE_INDEX, compute_cost
from mtia_xdsl.machine.run import machine_config, run_kernel
from mtia_xdsl.machine.timeline import WorkTotals
from mtia_xdsl.runtime import toolchain
from mtia_xdsl.transforms.analysis.cb_cost import command_cost
from mtia_xdsl.utils.locations import location_str

_COMPUTE = (Engine.DPE, Engine.SE, Engine.VEC, Engine.RE, Engine.MLU)

_CASES: dict[str, Callable[[], Any]] = {
    "vector_add": lambda: vector_add.add(torch.rand(4096), torch.rand(4096)),
    "softmax": lambda: softmax.softmax(torch.randn(8, 256)),
    "matmul": lambda: matmul.matmul(torch.randn(128, 64).half(), torch.randn(64, 128).half()),
    "layer_norm": lambda: layer_norm.layer_norm(torch.randn(4, 2048), torch.rand(2048), torch.rand(2048)),
    "attention": lambda: attention.attention(*(torch.randn(1, 1, 128, 64).half() for _ in range(3))),
}


def _capture(monkeypatch: pytest.MonkeyPatch, run: Callable[[], Any]) -> tuple[Any, Any, Any]:
    """Run an example and return (buffer-level module, run options, RunResult) of its launch."""
    seen: list[tuple[Any, Any, Any]] = []
    real = toolchain.run_kernel

    def spy(module: Any, grid: Any, args: Any, options: Any) -> Any:
        result = real(module, grid, args, options)
        seen.append((module, options, result))
        return result

    monkeypatch.setattr(toolchain, "run_kernel", spy)
    run()
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize("name", list(_CASES))
def test_sizing_estimate_agrees_with_simulated_busy_cycles(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(0)
    module, options, result = _capture(monkeypatch, _CASES[name])
    config = machine_config(module, options)
    ops: dict[tuple[str, Engine], list[Any]] = defaultdict(list)
    for op in module.walk():
        cost = command_cost(op, config)
        if cost is not None and isinstance(cost.engine, Engine) and cost.engine in _COMPUTE:
            ops[(location_str(op.location), cost.engine)].append(cost.occupancy_cycles)
    simulated: dict[Engine, float] = defaultdict(float)
    low: dict[Engine, float] = defaultdict(float)
    high: dict[Engine, float] = defaultdict(float)
    commands: dict[Engine, int] = defaultdict(int)
    per_key: dict[tuple[str, Engine], int] = defaultdict(int)
    for trace in result.traces:
        for c in trace.commands:
            if c.engine in _COMPUTE and c.kind != RE_LINK_KIND:
                occupancy, _ = compute_cost(c, ENGINE_INDEX[c.engine], config, WorkTotals())
                simulated[c.engine] += occupancy
                commands[c.engine] += 1
                per_key[(c.loc, c.engine)] += 1
    for key, n in per_key.items():
        assert key in ops, f"{key}: the run issued a command no op of the program stands for"
        low[key[1]] += n * min(ops[key])  # ops of one source line (inlined twice) may run unequally often
        high[key[1]] += n * max(ops[key])
    assert simulated, "the example issued no compute command"
    for engine, busy in simulated.items():
        n = commands[engine]
        assert low[engine] - n <= busy <= high[engine] + n, (engine, busy, low[engine], high[engine], n)


def test_sizing_charges_the_se_lut_latency_the_simulator_charges(monkeypatch: pytest.MonkeyPatch) -> None:
    """softmax's division is a LUT op on the SE for both models (sizing had 4 cycles, the simulator 10)."""
    module, options, _ = _capture(monkeypatch, _CASES["softmax"])
    config = machine_config(module, options)
    divides = [
        op
        for op in module.walk()
        if isinstance(op, mtia.SeComputeOp) and op.outs and any(o.name == "arith.divf" for o in op.body.walk())
    ]
    assert divides
    for op in divides:
        cost = command_cost(op, config)
        assert cost is not None and cost.latency_cycles == config.se_lut_latency_cycles


def test_dma_estimate_agrees_with_simulated_port_busy_cycles_when_every_pe_streams(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    torch.manual_seed(0)
    n = 2 * 64 * 1024  # two programs of BLOCK_SIZE 1024 per PE
    x, y, out = torch.rand(n), torch.rand(n), torch.empty(n)
    # The estimate charges a store its DRAM bytes at the PE's share, as a write-through store holds its port;
    # with the LLC's write-behind (the default) the port holds it only while SRAM takes it.
    through = {"llc_write_behind": 0}
    launch = lambda: vector_add.add_kernel[(n // 1024,)](x, y, out, n, BLOCK_SIZE=1024, machine_overrides=through)  # noqa: E731
    module, options, result = _capture(monkeypatch, launch)
    config = machine_config(module, options)
    assert len(result.timeline.pes_used) == config.n_pes
    estimate_of: dict[str, float] = {}
    for op in module.walk():
        cost = command_cost(op, config)
        if cost is not None and isinstance(cost.engine, DmaPort):
            estimate_of[location_str(op.location)] = cost.occupancy_cycles
    estimate: dict[tuple[int, bool], float] = defaultdict(float)
    intervals: dict[tuple[int, bool], list[tuple[float, float]]] = defaultdict(list)
    timeline = result.timeline
    for trace, pe, (_, start, end) in zip(result.traces, timeline.pe_of_program, timeline.command_cycles, strict=True):
        for i, c in enumerate(trace.commands):
            if c.engine is Engine.DMA:
                write = c.global_write_bytes > 0
                estimate[(pe, write)] += estimate_of[c.loc]
                # the transfer waits for the issue and the first byte, then holds the PE's port until its end
                first_byte = machine_cost.dma_issue_cycles(c.descriptors, config) + machine_cost.global_latency_cycles(
                    "dram", config.noc_hops(pe), config
                )
                intervals[(pe, write)].append((start[i] + first_byte, end[i]))
    assert len(estimate) == 2 * config.n_pes
    # a PE's loads and stores overlap (separate DMA queues, two programs in flight) and share the level's
    # bandwidth, so the check is per PE over both ports: busy about as long as the estimates add up to
    for pe in range(config.n_pes):
        busy = _union_length(intervals[(pe, False)] + intervals[(pe, True)])
        expected = estimate[(pe, False)] + estimate[(pe, True)]
        assert 0.9 * expected <= busy <= 1.01 * expected, (pe, busy, expected)


def _union_length(spans: list[tuple[float, float]]) -> float:
    """Cycles covered by the union of [start, end) spans."""
    total, reach = 0.0, float("-inf")
    for lo, hi in sorted(spans):
        lo = max(lo, reach)
        if hi > lo:
            total += hi - lo
            reach = hi
    return total


@triton.jit
def _gather_kernel(x_ptr, idx_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + tl.load(idx_ptr + offs)))


def test_scalar_gather_estimate_is_the_simulated_mean_over_the_pes() -> None:
    """A gather's static cost pays the NoC hops the timing model charges (sizing once left them out), at
    the chip's mean: one gather per PE, the simulated cycles average to the estimate."""
    block = 64
    compiled = mtia_xdsl.compile(
        _gather_kernel, {"x_ptr": "*fp32", "idx_ptr": "*i32", "out_ptr": "*fp32"}, {"BLOCK": block}
    )
    module = compiled.fixed.program
    config = machine_config(module, None)
    n = config.n_pes * block
    idx = torch.randperm(n, dtype=torch.int32)
    result = run_kernel(module, (config.n_pes,), [torch.rand(n), idx, torch.empty(n)])
    (estimate,) = [
        c.occupancy_cycles for op in module.walk() if isinstance(op, mtia.GatherOp) if (c := command_cost(op, config))
    ]
    simulated = [
        end[i] - start[i]
        for trace, (_, start, end) in zip(result.traces, result.timeline.command_cycles, strict=True)
        for i, c in enumerate(trace.commands)
        if c.kind == "gather"
    ]
    assert len(simulated) == config.n_pes
    assert sum(simulated) / len(simulated) == pytest.approx(estimate, rel=1e-3)


@pytest.mark.parametrize("placement", ["llc", "sram"])
@pytest.mark.parametrize("elem_bytes", [1, 2, 4, 8])
def test_ls_gather_box_ratio_is_where_the_box_costs_the_dma_what_the_gather_costs_the_scalar_core(
    placement: str, elem_bytes: int
) -> None:
    """A box of `ls_gather_box_ratio` elements per gathered element takes the DMA (`dma_estimate`) as long as
    the scalar core takes for the elements past the first (`scalar_access_cycles` at the latency CB sizing
    charges a gather, cb_cost.py)."""
    config = MTIA2I.replace(global_placement=placement)
    ratio, n = machine_cost.ls_gather_box_ratio(elem_bytes, config), 256
    box = machine_cost.dma_estimate(ratio * n * elem_bytes, False, config)[0]
    level = machine_cost.streaming_level(config)
    latency = machine_cost.global_latency_cycles(level, machine_cost.mean_noc_hops(config), config)
    gather = machine_cost.scalar_access_cycles(n + 1, latency, config) - latency
    assert box == pytest.approx(gather)


def test_ls_gather_box_ratio_of_mtia2i_f32_is_17() -> None:
    """The figure machine/cost.py's docstring and the CHANGELOG give (tensors behind the LLC, costed at DRAM)."""
    assert machine_cost.ls_gather_box_ratio(4, MTIA2I) == pytest.approx(17.0)
    assert round(machine_cost.ls_gather_box_ratio(4, MTIA2I.replace(global_placement="sram"))) == 83

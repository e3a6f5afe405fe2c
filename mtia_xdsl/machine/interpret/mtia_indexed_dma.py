"""Functional semantics of `mtia.dma_gather_rows` (indexed DMA, batched convention), recorded for timing.

The DMA engine reads the index tile from LS and copies, for every valid position i of the block, the element
at `base + index[i] * row_stride + sum_d i_d * strides[d]`; positions past `bounds` get `other` and are not
read. This is MTIA's DMA indexed mode for embedding rows (S1 in MACHINE.md).

Timing: an `Engine.DMA` command of kind "dma_gather_rows", costed like a strided block by the DMA engine
model: one descriptor per contiguous run, i.e. one per gathered row when the last dimension is contiguous
(MachineConfig.dma_descriptor_cycles each, an ASSUMPTION; MTIA's indexed mode is public, its cost is not),
the bytes of the valid elements, with the runs' addresses for 32-byte granule rounding and the LLC.

Batched values: base, row_stride, strides and bounds are an int or one per program (B,); the index tile
may carry a leading batch dimension.

Register next to MtiaFunctions: `interpreter.register_implementations(MtiaIndexedDmaFunctions())`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.commands import Command, Engine, SlotRef, command_kind
from mtia_xdsl.machine.interpret.batching import batch_scalar
from mtia_xdsl.machine.interpret.dma_trace import active_lanes
from mtia_xdsl.machine.interpret.mtia import MtiaFunctions, get_pe_state
from mtia_xdsl.machine.interpret.tt import get_launch_state
from mtia_xdsl.machine.interpret.values import as_value, element_format, element_type_of, location_str

MAX_LISTED_RUNS = 4096
"""Runs listed one by one for the timing model's granule rounding and LLC; past this, the byte extent."""


@register_impls
class MtiaIndexedDmaFunctions(InterpreterFunctions):
    """Semantics of mtia.dma_gather_rows; see the module docstring."""

    @impl(mtia.DmaGatherRowsOp)
    def run_dma_gather_rows(
        self, interpreter: Interpreter, op: mtia.DmaGatherRowsOp, args: PythonValues
    ) -> PythonValues:
        t = op.block_type
        shape = tuple(t.get_shape())
        rank = len(shape)
        waits: list[SlotRef] = []
        base, index_arg, row_stride = args[0], args[1], args[2]
        index = np.asarray(MtiaFunctions._read(index_arg, op, waits), dtype=np.int64)
        strides = args[3 : 3 + rank]
        bounds = args[3 + rank : 3 + 2 * rank]
        rest = args[3 + 2 * rank :]
        elem = element_type_of(t)
        elem_bytes = element_format(elem).size_bytes

        def per_program(v: Any) -> Any:
            a = np.asarray(v, dtype=np.int64)
            return a.reshape(a.shape + (1,) * rank) if a.ndim else a

        offsets = index * per_program(row_stride)
        mask: Any = True
        for d in range(rank):
            lane = np.arange(shape[d], dtype=np.int64).reshape([shape[d] if k == d else 1 for k in range(rank)])
            offsets = offsets + per_program(strides[d]) * lane
            mask = mask & (lane < per_program(bounds[d]))
        addrs = per_program(base) + offsets * elem_bytes
        if op.other is not None:
            other = batch_scalar(rest[0], rank)
        else:
            other = 0 if op.out is None else np.nan if element_format(elem).compute.kind == "f" else 0
        where = location_str(op.location)
        memory = get_launch_state(interpreter).memory
        value = as_value(memory.gather(addrs, elem, mask, other, where), t)
        if op.out is None:
            return (value,)
        slot = args[-1].write(value, op)
        state = get_pe_state(interpreter)
        mask_full = np.broadcast_to(mask, np.broadcast_shapes(np.shape(addrs), np.shape(mask)))
        lanes = active_lanes(addrs, mask_full, rank, state.size, elem_bytes)
        addrs_b = np.broadcast_to(addrs, mask_full.shape).reshape(-1 if lanes.uniform else state.size, *shape)
        if lanes.uniform:
            addrs_b = addrs_b.reshape(1, *shape)
        mask_b = mask_full.reshape(addrs_b.shape)
        ls_bytes = mtia.tile_bytes(t) + mtia.tile_bytes(mtia.tile_type(op.index.type))

        def make(b: int) -> Command:
            runs = _runs(addrs_b[b], mask_b[b], elem_bytes)
            return gather_rows_command(
                where, tuple(waits), (slot,), runs, lanes.active[b], lanes.extent[b], elem_bytes, ls_bytes,
                element_format(elem).name,
            )  # fmt: skip

        state.issue_each(make, lanes.uniform)
        return ()


def gather_rows_command(
    where: str,
    waits: tuple[SlotRef, ...],
    fills: tuple[SlotRef, ...],
    runs: list[tuple[int, int]],
    active: int,
    extent: tuple[int, int] | None,
    elem_bytes: int,
    ls_bytes: int,
    dtype: str,
) -> Command:
    """The DMA command of one program's dma_gather_rows: `runs` the (address, bytes) contiguous runs it read
    (row-major), `active` its valid elements of `elem_bytes` bytes, `extent` their byte extent (None if
    none); see the module docstring."""
    listed = tuple(runs) if len(runs) <= MAX_LISTED_RUNS else ()
    return Command(
        Engine.DMA,
        command_kind(mtia.DmaGatherRowsOp.name),
        where,
        waits,
        fills,
        global_read_bytes=active * elem_bytes,
        global_ranges=listed,
        global_extent=None if listed else extent,
        ls_bytes=ls_bytes,
        descriptors=max(len(runs), 1),
        dtype=dtype,
    )


def _runs(addrs: np.ndarray, mask: np.ndarray, elem_bytes: int) -> list[tuple[int, int]]:
    """The (address, bytes) contiguous runs of the valid elements, in row-major order of the block."""
    flat = addrs.reshape(-1)[mask.reshape(-1)]
    if flat.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(flat) != elem_bytes) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [flat.size]))
    return [(int(flat[s]), int(e - s) * elem_bytes) for s, e in zip(starts, ends, strict=True)]

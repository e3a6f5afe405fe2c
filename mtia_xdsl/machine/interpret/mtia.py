"""Functional semantics of buffer-level `mtia` ops; every engine command is recorded for timing.

Commands take effect when the scalar core issues them (program order is a valid schedule of the
dataflow), so results are exact whatever the timing. Circular buffers are checked as the CP would:
reserving a full CB, waiting on an empty one, reading without a wait, pushing an unwritten slot, or
ending the program with tiles still in a CB are errors naming the kernel line. An `inplace` command
overwrites the front tile it read (it must have been waited for); its command waits on and fills that
same slot. Cycle accounting is
`machine/timing.py`'s job; here each command only records what it moved and computed.

A batch of programs runs at once (batched values, see `values.py`): control flow, and so the CB protocol,
is the same for every program of a batch, so one `SimCB` holds the batch's tiles; a command whose
addresses or sizes differ between programs is recorded once per program. A CB slot part of which no
engine wrote (a DMA or gather with masked-off lanes and no `other`) reads as NaN (floats), as
uninitialized local storage does in Pallas' interpret mode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    OpImplResult,
    PythonValues,
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.commands import Command, SlotRef, command_kind
from mtia_xdsl.machine.interpret.batching import batch_scalar, logical_rank
from mtia_xdsl.machine.interpret.cb import CbSpace, SimCB
from mtia_xdsl.machine.interpret.command_work import (
    ComputeInfo,
    cb_read_command,
    compute_command,
    compute_elems,
    dpe_command,
    dpe_ls_bytes,
    dpe_macs,
    dpe_passes,
    lanes_command,
    re_command,
    re_elems,
    re_ls_bytes,
    scalar_memory_command,
)
from mtia_xdsl.machine.interpret.dma_trace import ActiveLanes, DmaInfo, active_lanes, dma_block, record_dma_commands
from mtia_xdsl.machine.interpret.formats import dtype_name, element_format, element_type_of
from mtia_xdsl.machine.interpret.masks import (
    keep_valid,
    per_program,
    uninitialized,
    valid_lanes,
)
from mtia_xdsl.machine.interpret.pe_state import PeState, ScalarCoreCounter
from mtia_xdsl.machine.interpret.tt import get_launch_state
from mtia_xdsl.machine.interpret.values import as_value
from mtia_xdsl.machine.work import COMPUTE_ENGINES
from mtia_xdsl.semantics.dot import dot
from mtia_xdsl.semantics.reduce import REDUCE_IDENTITY, reduce
from mtia_xdsl.utils.locations import location_str

__all__ = [
    "ActiveLanes",
    "MtiaFunctions",
    "PeState",
    "ScalarCoreCounter",
    "SimCB",
    "active_lanes",
    "get_pe_state",
    "set_pe_state",
]
"""The state types live in cb.py, pe_state.py and dma_trace.py; they are re-exported here for callers that
import the PE's run-time state from the module that runs it."""


def set_pe_state(interpreter: Interpreter, state: PeState) -> None:
    """Make `state` the current program's PE state."""
    interpreter.set_data(MtiaFunctions, "pe", state)


def get_pe_state(interpreter: Interpreter) -> PeState:
    """Return the current program's PE state (set by the machine's run loop)."""

    def missing() -> PeState:
        raise InterpretationError("no PE state: mtia programs run through mtia_xdsl.machine.run_kernel")

    return interpreter.get_data(MtiaFunctions, "pe", missing)


_CB_METHODS: dict[type[Operation], Callable[[SimCB, int, Operation], None]] = {
    mtia.CbReserveOp: SimCB.reserve,
    mtia.CbPushOp: SimCB.push,
    mtia.CbWaitOp: SimCB.wait,
    mtia.CbPopOp: SimCB.pop,
}
_NO_RESULTS = OpImplResult((), None)


@register_impls
class MtiaFunctions(InterpreterFunctions):
    """Semantics of buffer-level mtia ops; see the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self._compute_info: dict[Operation, ComputeInfo] = {}
        """Per engine compute op run so far: its command's op-only fields."""
        self._dma_info: dict[Operation, DmaInfo] = {}
        """Per DMA op run so far: its block's type facts."""

    def prepare_op(self, op: Operation) -> Callable[..., OpImplResult] | None:
        """Return an implementation specialized to a CB op (slot count read once), an engine compute op,
        mtia.dpe_matmul or mtia.re_reduce (types and command fields read once), else None; see
        reference._Interpreter."""
        if isinstance(op, mtia.EngineComputeOp):
            return self._prepare_compute(op)
        if isinstance(op, mtia.DpeMatmulOp):
            return self._prepare_dpe_matmul(op)
        if isinstance(op, mtia.ReReduceOp):
            return self._prepare_re_reduce(op)
        method = _CB_METHODS.get(type(op))
        if method is None:
            return None
        count = op.count.value.data  # type: ignore[attr-defined]

        def run(ft: MtiaFunctions, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
            method(args[0], count, op)
            return _NO_RESULTS

        return run

    # -- CBs ---------------------------------------------------------------------------------
    @impl(mtia.CbAllocOp)
    def run_cb_alloc(self, interpreter: Interpreter, op: mtia.CbAllocOp, args: PythonValues) -> PythonValues:
        state = get_pe_state(interpreter)
        t = op.result.type
        cb = SimCB(len(state.cbs), t.depth.data, t.tile, location_str(op.location))
        if state.cb_space is None:
            state.cb_space = CbSpace(state.config.cb_ids)
        cb_id = op.cb_id.value.data if op.cb_id is not None else None
        offset = op.ls_offset.value.data if op.ls_offset is not None else None
        state.cb_space.add(cb, op, cb_id, offset)
        state.cbs.append(cb)
        return (cb,)

    @impl(mtia.CbReserveOp)
    def run_cb_reserve(self, interpreter: Interpreter, op: mtia.CbReserveOp, args: PythonValues) -> PythonValues:
        args[0].reserve(op.count.value.data, op)
        return ()

    @impl(mtia.CbPushOp)
    def run_cb_push(self, interpreter: Interpreter, op: mtia.CbPushOp, args: PythonValues) -> PythonValues:
        args[0].push(op.count.value.data, op)
        return ()

    @impl(mtia.CbWaitOp)
    def run_cb_wait(self, interpreter: Interpreter, op: mtia.CbWaitOp, args: PythonValues) -> PythonValues:
        args[0].wait(op.count.value.data, op)
        return ()

    @impl(mtia.CbPopOp)
    def run_cb_pop(self, interpreter: Interpreter, op: mtia.CbPopOp, args: PythonValues) -> PythonValues:
        args[0].pop(op.count.value.data, op)
        return ()

    @impl(mtia.CbReadOp)
    def run_cb_read(self, interpreter: Interpreter, op: mtia.CbReadOp, args: PythonValues) -> PythonValues:
        value, slot = args[0].front(op)
        get_pe_state(interpreter).issue(cb_read_command(location_str(op.location), slot))
        return (value,)

    # -- memory ------------------------------------------------------------------------------
    @impl(mtia.DmaLoadOp)
    def run_dma_load(self, interpreter: Interpreter, op: mtia.DmaLoadOp, args: PythonValues) -> PythonValues:
        info = self._dma_info.get(op)
        if info is None:
            info = self._dma_info[op] = DmaInfo.of(op, op.block_type, op.out is not None)
        t, shape = info.tile, info.shape
        block = dma_block(info, args)
        if info.has_other:
            other = batch_scalar(args[info.other_index], len(shape))
        else:
            other = info.uninitialized
        memory = get_launch_state(interpreter).memory
        value = memory.read_block(
            block.base, block.strides, shape, block.bounds, info.elem, other, info.where, block.starts
        )
        tile = as_value(value, t)
        if not info.to_cb:
            return (tile,)
        slot = args[-1].write(tile, op)
        record_dma_commands(get_pe_state(interpreter), info, (), (slot,), block, info.has_other)
        return ()

    @impl(mtia.StorageExtentOp)
    def run_storage_extent(
        self, interpreter: Interpreter, op: mtia.StorageExtentOp, args: PythonValues
    ) -> PythonValues:
        size = element_format(op.base.type.pointee_type).size_bytes  # type: ignore[attr-defined]
        memory = get_launch_state(interpreter).memory
        extent = memory.storage_extent(np.asarray(args[0], dtype=np.int64), size)
        return (extent if np.ndim(extent) else np.int64(extent),)

    @impl(mtia.DmaStoreOp)
    def run_dma_store(self, interpreter: Interpreter, op: mtia.DmaStoreOp, args: PythonValues) -> PythonValues:
        info = self._dma_info.get(op)
        if info is None:
            info = self._dma_info[op] = DmaInfo.of(op, mtia.tile_type(op.value.type), False)
        shape, elem, where = info.shape, info.elem, info.where
        block = dma_block(info, args)
        cb = args[-1]
        value, slot = cb.front(op) if isinstance(cb, SimCB) else (cb, None)
        memory = get_launch_state(interpreter).memory
        if not shape:
            addr = np.asarray(block.base, dtype=np.int64)[..., None]
            memory.scatter(addr, np.asarray(value)[..., None], elem, None, where)
        else:
            memory.write_block(block.base, block.strides, shape, block.bounds, value, elem, where, block.starts)
        if slot is not None:
            record_dma_commands(get_pe_state(interpreter), info, (slot,), (), block)
        return ()

    @impl(mtia.GatherOp)
    def run_gather(self, interpreter: Interpreter, op: mtia.GatherOp, args: PythonValues) -> PythonValues:
        it = iter(args)
        waits: list[SlotRef] = []
        ptrs = self._read(next(it), op, waits)
        mask = self._read(next(it), op, waits) if op.mask is not None else None
        t = op.out.type.tile if op.out is not None else op.result[0].type
        rank = logical_rank(t)
        if op.other is not None:
            other = next(it)
            other = batch_scalar(other, rank) if logical_rank(op.other.type) == 0 else other
        else:
            other = 0 if op.out is None else uninitialized(t)
        where = location_str(op.location)
        memory = get_launch_state(interpreter).memory
        value = as_value(memory.gather(np.asarray(ptrs, dtype=np.int64), element_type_of(t), mask, other, where), t)
        if op.out is None:
            return (value,)
        slot = next(it).write(value, op)
        state = get_pe_state(interpreter)
        elem_bytes = element_format(element_type_of(t)).size_bytes
        lanes = active_lanes(ptrs, mask, rank, state.size, elem_bytes)

        reads = tuple(waits)  # tuples shared by the batch: the timing model keys shapes by their identity
        writes = (slot,)

        kind, ls_bytes, dtype = command_kind(op.name), mtia.tile_bytes(t), dtype_name(t)

        def make(b: int) -> Command:
            return lanes_command(
                kind, where, reads, writes, lanes.active[b], lanes.extent[b], elem_bytes, True, False, ls_bytes, dtype
            )

        state.issue_each(make, lanes.uniform)
        return ()

    @impl(mtia.ScatterOp)
    def run_scatter(self, interpreter: Interpreter, op: mtia.ScatterOp, args: PythonValues) -> PythonValues:
        waits: list[SlotRef] = []
        ptrs = self._read(args[0], op, waits)
        value = self._read(args[1], op, waits)
        mask = self._read(args[2], op, waits) if op.mask is not None else None
        t = mtia.tile_type(op.value.type)
        elem = element_type_of(t)
        where = location_str(op.location)
        get_launch_state(interpreter).memory.scatter(np.asarray(ptrs, dtype=np.int64), value, elem, mask, where)
        state = get_pe_state(interpreter)
        elem_bytes = element_format(elem).size_bytes
        lanes = active_lanes(ptrs, mask, logical_rank(t), state.size, elem_bytes)

        reads = tuple(waits)  # tuples shared by the batch: the timing model keys shapes by their identity

        kind, dtype = command_kind(op.name), dtype_name(t)

        def make(b: int) -> Command:
            return lanes_command(
                kind, where, reads, (), lanes.active[b], lanes.extent[b], elem_bytes, False, True, 0, dtype
            )

        state.issue_each(make, lanes.uniform)
        return ()

    @impl(mtia.ScalarLoadOp)
    def run_scalar_load(self, interpreter: Interpreter, op: mtia.ScalarLoadOp, args: PythonValues) -> PythonValues:
        t = op.result.type
        where = location_str(op.location)
        memory = get_launch_state(interpreter).memory
        addr = np.asarray(args[0], dtype=np.int64)
        value = memory.gather(addr[..., None], t, None, 0, where)[..., 0]
        nbytes = element_format(t).size_bytes
        addrs = addr.reshape(-1)

        kind, dtype = command_kind(op.name), dtype_name(t)

        def make(b: int) -> Command:
            return scalar_memory_command(kind, where, int(addrs[b]), nbytes, dtype, False)

        get_pe_state(interpreter).issue_each(make, addr.ndim == 0)
        return (as_value(np.asarray(value), t),)

    @impl(mtia.ScalarStoreOp)
    def run_scalar_store(self, interpreter: Interpreter, op: mtia.ScalarStoreOp, args: PythonValues) -> PythonValues:
        t = op.value.type
        where = location_str(op.location)
        memory = get_launch_state(interpreter).memory
        addr = np.asarray(args[0], dtype=np.int64)
        memory.scatter(addr[..., None], np.asarray(args[1])[..., None], t, None, where)
        nbytes = element_format(t).size_bytes
        addrs = addr.reshape(-1)

        kind, dtype = command_kind(op.name), dtype_name(t)

        def make(b: int) -> Command:
            return scalar_memory_command(kind, where, int(addrs[b]), nbytes, dtype, True)

        get_pe_state(interpreter).issue_each(make, addr.ndim == 0)
        return ()

    # -- compute -----------------------------------------------------------------------------
    @staticmethod
    def _read(arg: Any, op: Operation, waits: list[SlotRef]) -> Any:
        if isinstance(arg, SimCB):
            value, slot = arg.front(op)
            if slot not in waits:
                waits.append(slot)
            return value
        return arg

    @impl(mtia.DpeMatmulOp)
    def run_dpe_matmul(self, interpreter: Interpreter, op: mtia.DpeMatmulOp, args: PythonValues) -> PythonValues:
        return self._prepare_dpe_matmul(op)(self, interpreter, op, args).values

    def _prepare_dpe_matmul(self, op: mtia.DpeMatmulOp) -> Callable[..., OpImplResult]:
        """`mtia.dpe_matmul` specialized to `op`: its types and command fields read once."""
        t_a = mtia.tile_type(op.a.type)
        n_valid = len(op.valid)
        *batch, m, k = t_a.get_shape()  # type: ignore[attr-defined]
        n = mtia.tile_type(op.b.type).get_shape()[-1]  # type: ignore[attr-defined]
        precision = op.input_precision.value.data
        to_cb, inplace = op.out is not None, op.inplace is not None
        out_t = op.out.type.tile if op.out is not None else op.result[0].type
        dtype = dtype_name(t_a)
        whole_macs = int(np.prod(batch, dtype=np.int64))
        ls_bytes = dpe_ls_bytes(op) if to_cb else 0
        where = location_str(op.location)
        read = self._read

        def run(ft: MtiaFunctions, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
            waits: list[SlotRef] = []
            a, b, c = (np.asarray(read(x, op, waits)) for x in args[:3])
            valid = args[len(args) - n_valid :] if n_valid else ()
            if valid and not (np.ndim(valid[2]) == 0 and int(valid[2]) >= k):
                # lanes past K count as 0 (the pass proved they hold 0); none when every K lane is valid
                k_in = np.arange(k) < batch_scalar(np.asarray(valid[2], dtype=np.int64), 1)
                a = np.where(k_in[..., None, :], a, np.zeros((), a.dtype))
                b = np.where(k_in[..., :, None], b, np.zeros((), b.dtype))
            acc = dot(a, b, c, precision)
            d = as_value(acc, out_t)
            if valid:  # rows past M and columns past N are not computed
                d = keep_valid(d, valid[:2], out_t, c if inplace else uninitialized(out_t))
            if not to_cb:
                return OpImplResult((d,), None)
            slot = args[3].update(d, op) if inplace else args[3].write(d, op)
            state = get_pe_state(interpreter)
            passes = dpe_passes(state.config, dtype, precision)
            macs = dpe_macs(valid, whole_macs, m, n, k)

            reads = tuple(waits)  # tuples shared by the batch: the timing model keys shapes by their identity
            writes = (slot,)

            def make(p: int) -> Command:
                return dpe_command(where, reads, writes, per_program(macs, p), dtype, passes, ls_bytes)

            state.issue_each(make, np.ndim(macs) == 0)
            return _NO_RESULTS

        return run

    @impl(mtia.ReReduceOp)
    def run_re_reduce(self, interpreter: Interpreter, op: mtia.ReReduceOp, args: PythonValues) -> PythonValues:
        return self._prepare_re_reduce(op)(self, interpreter, op, args).values

    def _prepare_re_reduce(self, op: mtia.ReReduceOp) -> Callable[..., OpImplResult]:
        """`mtia.re_reduce` specialized to `op`: its types and command fields read once."""
        t_in = mtia.tile_type(op.operands[0].type)
        in_shape = list(t_in.get_shape())  # type: ignore[attr-defined]
        axis = op.axis.value.data - logical_rank(t_in)
        kind = op.kind.data
        n_valid = len(op.valid)
        to_cb = op.out is not None
        out_t = op.out.type.tile if op.out is not None else op.result[0].type
        where, dtype = location_str(op.location), dtype_name(out_t)
        ls_bytes = re_ls_bytes(op) if to_cb else 0
        read = self._read

        def run(ft: MtiaFunctions, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
            waits: list[SlotRef] = []
            x = np.asarray(read(args[0], op, waits))
            valid = args[len(args) - n_valid :] if n_valid else ()
            if valid:  # lanes outside the effective shape are not read: they count as the identity
                x = np.where(valid_lanes(valid, in_shape), x, REDUCE_IDENTITY[kind](x.dtype))
            r = as_value(np.asarray(reduce(kind, x, axis)), out_t)
            if not to_cb:
                return OpImplResult((r,), None)
            slot = args[1].write(r, op)
            elems = re_elems(valid, in_shape)

            reads = tuple(waits)  # tuples shared by the batch: the timing model keys shapes by their identity
            writes = (slot,)

            def make(p: int) -> Command:
                return re_command(where, reads, writes, per_program(elems, p), dtype, ls_bytes)

            get_pe_state(interpreter).issue_each(make, np.ndim(elems) == 0)
            return _NO_RESULTS

        return run

    @impl(mtia.SeComputeOp)
    def run_se(self, interpreter: Interpreter, op: mtia.SeComputeOp, args: PythonValues) -> PythonValues:
        return self._compute(interpreter, op, args)

    @impl(mtia.VecComputeOp)
    def run_vec(self, interpreter: Interpreter, op: mtia.VecComputeOp, args: PythonValues) -> PythonValues:
        return self._compute(interpreter, op, args)

    @impl(mtia.MluComputeOp)
    def run_mlu(self, interpreter: Interpreter, op: mtia.MluComputeOp, args: PythonValues) -> PythonValues:
        return self._compute(interpreter, op, args)

    def _prepare_compute(self, op: mtia.EngineComputeOp) -> Callable[..., OpImplResult]:
        """`_compute` specialized to `op`: its command's fields and body read once."""
        engine, kind = COMPUTE_ENGINES[type(op)], command_kind(op.name)
        info = self._compute_info.get(op)
        if info is None:
            info = self._compute_info[op] = ComputeInfo.of(op)
        n_in, body, name, read = info.n_inputs, op.body, op.name, self._read
        n_io = n_in + len(op.outs)
        out_t = mtia.tile_type((op.outs[0] if op.outs else op.res[0]).type) if op.valid else None

        def run(ft: MtiaFunctions, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
            waits: list[SlotRef] = []
            inputs = tuple([read(a, op, waits) for a in args[:n_in]])
            state = get_pe_state(interpreter)
            state.engine_depth += 1
            try:
                results = interpreter.run_ssacfg_region(body, inputs, name)
            finally:
                state.engine_depth -= 1
            valid = args[n_io:]
            if valid:  # only the lanes inside the effective shape are computed
                results = [keep_valid(r, valid, out_t, uninitialized(out_t)) for r in results]
            if not info.has_outs:
                return OpImplResult(tuple(results), None)
            if info.inplace:
                fills = tuple([cb.update(v, op) for cb, v in zip(args[n_in:n_io], results, strict=True)])
            else:
                fills = tuple([cb.write(v, op) for cb, v in zip(args[n_in:n_io], results, strict=True)])
            elems: Any = compute_elems(info.elems, valid, list(out_t.get_shape()) if valid else [])

            reads = tuple(waits)  # tuples shared by the batch: the timing model keys shapes by their identity

            def make(p: int) -> Command:
                return compute_command(
                    engine, kind, info.where, reads, fills, per_program(elems, p), info.dtype, info.lut, info.ls_bytes
                )

            state.issue_each(make, np.ndim(elems) == 0)
            return _NO_RESULTS

        return run

    def _compute(
        self,
        interpreter: Interpreter,
        op: mtia.EngineComputeOp,
        args: PythonValues,
    ) -> PythonValues:
        return self._prepare_compute(op)(self, interpreter, op, args).values

    @impl_terminator(mtia.YieldOp)
    def run_yield(self, interpreter: Interpreter, op: mtia.YieldOp, args: PythonValues):
        return ReturnedValues(args), ()

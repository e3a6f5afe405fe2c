"""Reference semantics of tensor descriptors and Triton 3.9's atomic load/store/poll on numpy.

A `tt.make_tensor_descriptor` evaluates to a `TensorDescriptor` (base address, sizes, strides, padding).
`tt.descriptor_load` reads the block whose first element is at `indices`; every lane whose coordinate
lies outside `[0, size_d)` in some dimension reads the padding (0, or NaN for `padding = nan`) and is
never touched in memory, as a TMA load does. Stores, reductions and scatters skip such lanes. Reductions
apply lane by lane in row-major order, program after program (a lane whose address repeats waits for
the next round). `tt.atomic_poll` cannot wait in a model that runs programs one after another: without
a timeout a lane that does not match is an error, with one it reports false.

Batched values (see the machine interpreter's convention): every scalar (base, size, stride, index) may
be an array of shape (B,) and every tensor may carry leading batch dimensions; coordinates are built
from the end, so leading dimensions pass through. Memory effects of different programs apply in batch
order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerType, Signedness, TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects import tt
from mtia_xdsl.machine.interpret.tt import get_launch_state
from mtia_xdsl.machine.interpret.values import GlobalMemory, element_format, location_str


@dataclass(frozen=True)
class TensorDescriptor:
    """Runtime value of a `!tt.tensordesc`: where the tensor lives and how big it is.

    Units: `base` is a byte address; `sizes` and `strides` are in elements. Each field is a scalar or,
    for a batch of programs, an array of shape (B,).
    """

    base: Any
    sizes: tuple[Any, ...]
    strides: tuple[Any, ...]
    elem: Attribute
    """Signless element type stored in memory."""
    unsigned: bool
    padding_nan: bool

    def padding(self) -> Any:
        """Return the value out-of-bounds lanes read."""
        return np.nan if self.padding_nan else 0


def _signless(elem: Attribute) -> Attribute:
    return IntegerType(elem.width.data) if isinstance(elem, IntegerType) else elem


def _trailing(x: Any, rank: int) -> np.ndarray:
    """Return a scalar or (B,) batch value shaped to broadcast against a batch of rank-`rank` tensors."""
    a = np.asarray(x)
    return a.reshape(a.shape + (1,) * rank)


@dataclass(frozen=True)
class _Lanes:
    """Byte addresses and in-bounds mask of the lanes of one access (batch dims in front)."""

    addrs: np.ndarray
    inside: np.ndarray


def _lanes(desc: TensorDescriptor, coords: Sequence[np.ndarray], rank: int) -> _Lanes:
    """Addresses of the elements at `coords` (one int64 array per dimension, broadcastable together)."""
    offset: np.ndarray = np.zeros((), np.int64)
    inside: np.ndarray = np.ones((), bool)
    for c, size, stride in zip(coords, desc.sizes, desc.strides, strict=True):
        c64 = np.asarray(c, np.int64)
        offset = offset + c64 * _trailing(stride, rank).astype(np.int64)
        inside = inside & (c64 >= 0) & (c64 < _trailing(size, rank))
    size_bytes = element_format(desc.elem).size_bytes
    addrs = _trailing(desc.base, rank).astype(np.int64) + offset * np.int64(size_bytes)
    addrs, inside = np.broadcast_arrays(addrs, inside)
    return _Lanes(addrs, inside)


def _block_coords(indices: Sequence[Any], shape: Sequence[int]) -> list[np.ndarray]:
    rank = len(shape)
    out = []
    for d, (start, n) in enumerate(zip(indices, shape, strict=True)):
        r = np.arange(n, dtype=np.int64).reshape([n if k == d else 1 for k in range(rank)])
        out.append(_trailing(start, rank).astype(np.int64) + r)
    return out


def _gather_coords(x_offsets: Any, y_offset: Any, cols: int) -> list[np.ndarray]:
    rows = np.asarray(x_offsets, np.int64)[..., :, None]
    c = _trailing(y_offset, 2).astype(np.int64) + np.arange(cols, dtype=np.int64)[None, :]
    return [rows, c]


def _where(op: Operation) -> str:
    return location_str(op.location)


def _read(memory: GlobalMemory, desc: TensorDescriptor, lanes: _Lanes, op: Operation) -> np.ndarray:
    fmt = element_format(desc.elem)
    pad = desc.padding() if np.dtype(fmt.compute).kind == "f" else 0
    return memory.gather(lanes.addrs, desc.elem, lanes.inside, np.asarray(pad), _where(op))


Update = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _update_lanes(
    memory: GlobalMemory, lanes: _Lanes, values: Any, elem: Attribute, update: Update, where: str
) -> None:
    """Apply `update(old, value)` to every in-bounds lane in row-major (batch-first) order."""
    addrs = lanes.addrs.reshape(-1)
    vals = np.broadcast_to(np.asarray(values), lanes.addrs.shape).reshape(-1)
    pending = np.flatnonzero(lanes.inside.reshape(-1))
    while pending.size:
        _, first = np.unique(addrs[pending], return_index=True)
        now = pending[np.sort(first)]
        old = memory.gather(addrs[now], elem, where=where)
        with np.errstate(all="ignore"):
            memory.scatter(addrs[now], update(old, vals[now].astype(old.dtype)), elem, where=where)
        pending = np.setdiff1d(pending, now, assume_unique=True)


def _unsigned_view(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Update:
    def run(old: np.ndarray, val: np.ndarray) -> np.ndarray:
        u = np.dtype(f"u{old.dtype.itemsize}")
        return fn(old.view(u), val.view(u)).view(old.dtype)

    return run


def _reduce_update(kind: str, desc: TensorDescriptor, where: str) -> Update:
    ops: dict[str, Update] = {
        "add": lambda o, v: o + v,
        "min": np.minimum,
        "max": np.maximum,
        "and": np.bitwise_and,
        "or": np.bitwise_or,
        "xor": np.bitwise_xor,
        "inc": lambda o, v: np.where(o >= v, 0, o + 1).astype(o.dtype),
        "dec": lambda o, v: np.where((o == 0) | (o > v), v, o - 1).astype(o.dtype),
    }
    fn = ops.get(kind)
    if fn is None:
        raise InterpretationError(f"{where}: error: tt.descriptor_reduce kind {kind} has no reference semantics")
    unsigned = desc.unsigned or kind in ("inc", "dec")
    return _unsigned_view(fn) if unsigned and kind in ("min", "max", "inc", "dec") else fn


def _desc_arg(value: Any, op: Operation) -> TensorDescriptor:
    if not isinstance(value, TensorDescriptor):
        raise InterpretationError(f"{_where(op)}: error: {op.name} expects a tensor descriptor, got {type(value)}")
    return value


@register_impls
class DescriptorFunctions(InterpreterFunctions):
    """Functional semantics of tt tensor descriptor ops and tt.atomic_load/store/poll (module docstring)."""

    @impl(tt.MakeTensorDescOp)
    def run_make_tensor_descriptor(
        self, interpreter: Interpreter, op: tt.MakeTensorDescOp, args: PythonValues
    ) -> PythonValues:
        rank = len(op.shape)
        base, sizes, strides = args[0], tuple(args[1 : 1 + rank]), tuple(args[1 + rank :])
        elem = op.result.type.block_type.element_type
        unsigned = isinstance(elem, IntegerType) and elem.signedness.data == Signedness.UNSIGNED
        desc = TensorDescriptor(base, sizes, strides, _signless(elem), unsigned, op.padding_name == "nan")
        return (desc,)

    @impl(tt.DescriptorLoadOp)
    def run_descriptor_load(
        self, interpreter: Interpreter, op: tt.DescriptorLoadOp, args: PythonValues
    ) -> PythonValues:
        desc = _desc_arg(args[0], op)
        shape = op.result.type.get_shape()
        lanes = _lanes(desc, _block_coords(args[1:], shape), len(shape))
        return (_read(get_launch_state(interpreter).memory, desc, lanes, op),)

    @impl(tt.DescriptorStoreOp)
    def run_descriptor_store(
        self, interpreter: Interpreter, op: tt.DescriptorStoreOp, args: PythonValues
    ) -> PythonValues:
        desc = _desc_arg(args[0], op)
        shape = op.src.type.get_shape()
        lanes = _lanes(desc, _block_coords(args[2:], shape), len(shape))
        get_launch_state(interpreter).memory.scatter(lanes.addrs, args[1], desc.elem, lanes.inside, _where(op))
        return ()

    @impl(tt.DescriptorReduceOp)
    def run_descriptor_reduce(
        self, interpreter: Interpreter, op: tt.DescriptorReduceOp, args: PythonValues
    ) -> PythonValues:
        desc = _desc_arg(args[0], op)
        shape = op.src.type.get_shape()
        lanes = _lanes(desc, _block_coords(args[2:], shape), len(shape))
        update = _reduce_update(op.kind_name, desc, _where(op))
        _update_lanes(get_launch_state(interpreter).memory, lanes, args[1], desc.elem, update, _where(op))
        return ()

    @impl(tt.DescriptorGatherOp)
    def run_descriptor_gather(
        self, interpreter: Interpreter, op: tt.DescriptorGatherOp, args: PythonValues
    ) -> PythonValues:
        desc = _desc_arg(args[0], op)
        cols = op.result.type.get_shape()[1]
        lanes = _lanes(desc, _gather_coords(args[1], args[2], cols), 2)
        return (_read(get_launch_state(interpreter).memory, desc, lanes, op),)

    @impl(tt.DescriptorScatterOp)
    def run_descriptor_scatter(
        self, interpreter: Interpreter, op: tt.DescriptorScatterOp, args: PythonValues
    ) -> PythonValues:
        desc = _desc_arg(args[0], op)
        cols = op.src.type.get_shape()[1]
        lanes = _lanes(desc, _gather_coords(args[1], args[2], cols), 2)
        get_launch_state(interpreter).memory.scatter(lanes.addrs, args[3], desc.elem, lanes.inside, _where(op))
        return ()

    @impl(tt.AtomicLoadOp)
    def run_atomic_load(self, interpreter: Interpreter, op: tt.AtomicLoadOp, args: PythonValues) -> PythonValues:
        mask = args[1] if op.mask is not None else None
        elem = tt.element_type(op.result.type)
        value = get_launch_state(interpreter).memory.gather(args[0], elem, mask, None, _where(op))
        return (value if isinstance(op.result.type, TensorType) else value[()],)

    @impl(tt.AtomicStoreOp)
    def run_atomic_store(self, interpreter: Interpreter, op: tt.AtomicStoreOp, args: PythonValues) -> PythonValues:
        mask = args[2] if op.mask is not None else None
        elem = tt.element_type(op.val.type)
        get_launch_state(interpreter).memory.scatter(args[0], args[1], elem, mask, _where(op))
        return ()

    @impl(tt.AtomicPollOp)
    def run_atomic_poll(self, interpreter: Interpreter, op: tt.AtomicPollOp, args: PythonValues) -> PythonValues:
        elem = tt.element_type(op.expected.type)
        current = get_launch_state(interpreter).memory.gather(args[0], elem, None, None, _where(op))
        matched = current == np.asarray(args[1]).astype(current.dtype)
        if op.timeout is None and not np.all(matched):
            lane = int(np.flatnonzero(~np.asarray(matched).reshape(-1))[0])
            got = np.asarray(current).reshape(-1)[lane]
            want = np.broadcast_to(np.asarray(args[1]), np.shape(current)).reshape(-1)[lane]
            raise InterpretationError(
                f"{_where(op)}: error: tt.atomic_poll would wait forever: lane {lane} reads {got} but expects "
                f"{want}, and the programs of a launch run one after another in the machine model; pass timeout_ns"
            )
        return (matched if isinstance(op.result.type, TensorType) else matched[()],)


__all__ = ["DescriptorFunctions", "TensorDescriptor"]

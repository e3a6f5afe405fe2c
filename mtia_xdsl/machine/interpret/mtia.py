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

import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import builtin
from xdsl.dialects.builtin import TensorType
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
from xdsl.ir import Attribute, BlockArgument, Operation
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.commands import Command, Engine, ProgramTrace, SlotRef
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.interpret.tt import get_launch_state
from mtia_xdsl.machine.interpret.values import (
    ElementFormat,
    as_value,
    batch_scalar,
    element_format,
    element_type_of,
    location_str,
    logical_rank,
)

_LUT_OPS = (
    "math.exp",
    "math.exp2",
    "math.rsqrt",
    "math.sqrt",
    "math.tanh",
    "math.log",
    "math.log2",
    "math.erf",
    "arith.divf",
)


def _dtype_name(t: Attribute) -> str:
    return element_format(element_type_of(t)).name


def _elems(t: Attribute) -> int:
    n = 1
    if isinstance(t, TensorType):
        for d in t.get_shape():
            n *= d
    return n


@dataclass
class SimCB:
    """A circular buffer at run time: published tiles (FIFO), reserved slots, sequence counters."""

    cb_id: int
    depth: int
    tile: Attribute
    where: str
    visible: deque[Any] = field(default_factory=deque)
    reserved: list[Any] = field(default_factory=list)
    pushed: int = 0
    popped: int = 0
    waited: int = 0

    def _error(self, msg: str, op: Operation) -> InterpretationError:
        return InterpretationError(
            f"{location_str(op.location)}: error: {msg} "
            f"(CB #{self.cb_id} {mtia.CircularBufferType(self.depth, self.tile)}"
            f", allocated at {self.where})"
        )

    def reserve(self, n: int, op: Operation) -> None:
        if len(self.visible) + len(self.reserved) + n > self.depth:
            raise self._error(
                f"cb_reserve of {n} slot(s) would wait forever: {len(self.visible)} published and "
                f"{len(self.reserved)} reserved of {self.depth}; pop tiles first or deepen the CB",
                op,
            )
        self.reserved.extend([None] * n)

    def write(self, tile: Any, op: Operation) -> SlotRef:
        for i, slot in enumerate(self.reserved):
            if slot is None:
                self.reserved[i] = tile
                return SlotRef(self.cb_id, self.pushed + i)
        raise self._error("a command writes a CB slot that was not reserved (missing cb_reserve)", op)

    def push(self, n: int, op: Operation) -> None:
        if n > len(self.reserved) or any(s is None for s in self.reserved[:n]):
            raise self._error(f"cb_push of {n} slot(s) that no command wrote", op)
        self.visible.extend(self.reserved[:n])
        del self.reserved[:n]
        self.pushed += n

    def wait(self, n: int, op: Operation) -> None:
        if len(self.visible) < n:
            raise self._error(f"cb_wait for {n} tile(s) would wait forever: {len(self.visible)} published", op)
        self.waited = max(self.waited, n)

    def front(self, op: Operation) -> tuple[Any, SlotRef]:
        if self.waited < 1 or not self.visible:
            raise self._error("a command reads a CB without a cb_wait for its tile", op)
        return self.visible[0], SlotRef(self.cb_id, self.popped)

    def update(self, tile: Any, op: Operation) -> SlotRef:
        """Overwrite the front tile (an `inplace` command's accumulator); return its slot."""
        if self.waited < 1 or not self.visible:
            raise self._error("an inplace command updates a CB tile without a cb_wait for it", op)
        self.visible[0] = tile
        return SlotRef(self.cb_id, self.popped)

    def pop(self, n: int, op: Operation) -> None:
        if self.waited < n or len(self.visible) < n:
            raise self._error(f"cb_pop of {n} tile(s) but only {self.waited} were waited for", op)
        for _ in range(n):
            self.visible.popleft()
        self.popped += n
        self.waited -= n


@dataclass
class PeState:
    """What the run of a batch of programs accumulates: their CBs and the commands they issued."""

    program_ids: list[tuple[int, int, int]]
    """The programs of the batch, in batch order (one for a plain per-program run)."""
    config: MachineConfig
    """The chip the programs run on (for costs the functional run must record, e.g. DPE passes)."""
    cbs: list[SimCB] = field(default_factory=list)
    commands: list[Command | list[Command]] = field(default_factory=list)
    """Per command issued: one Command shared by every program, or one per program of the batch."""
    scalar_instrs: int = 0
    engine_depth: int = 0
    runs_cache: dict[tuple, tuple] = field(default_factory=dict)
    """Contiguous runs of the DMA blocks seen (in this batch, or launch when the runner shares it), by
    (strides, bounds, element bytes)."""

    @property
    def size(self) -> int:
        """Number of programs in the batch."""
        return len(self.program_ids)

    def issue(self, cmd: Command | list[Command]) -> None:
        """Record a command: the same for the whole batch, or a list with one per program."""
        for c in [cmd] if isinstance(cmd, Command) else cmd:
            c.scalar_instrs = self.scalar_instrs
        self.scalar_instrs = 0
        self.commands.append(cmd)

    def block_runs(self, strides: list[int], bounds: list[int], elem_bytes: int) -> tuple:
        """`_block_runs` of a block at address 0, remembered per batch (programs share block shapes)."""
        key = (tuple(strides), tuple(bounds), elem_bytes)
        runs = self.runs_cache.get(key)
        if runs is None:
            runs = self.runs_cache[key] = _block_runs(0, strides, bounds, elem_bytes)
        return runs

    def issue_each(self, make: Callable[[int], Command], uniform: bool) -> None:
        """Record one command per program (`make(b)` for batch entry b), or `make(0)` for all if uniform."""
        self.issue(make(0) if uniform else [make(b) for b in range(self.size)])

    def traces(self, end_op: Operation) -> list[ProgramTrace]:
        """Return every program's trace, in batch order.

        Raises: InterpretationError if a CB still holds tiles (unbalanced CB protocol).
        """
        for cb in self.cbs:
            if cb.visible or cb.reserved:
                raise cb._error(
                    f"the program ends with {len(cb.visible)} published and {len(cb.reserved)} reserved tile(s) "
                    "left in a CB (unbalanced CB protocol)",
                    end_op,
                )
        depth = {cb.cb_id: cb.depth for cb in self.cbs}
        tile_bytes = {cb.cb_id: mtia.tile_bytes(cb.tile) for cb in self.cbs}
        n = self.size
        columns = [itertools.repeat(c, n) if isinstance(c, Command) else c for c in self.commands]
        per_program = zip(*columns, strict=False) if columns else itertools.repeat((), n)
        return [
            ProgramTrace(
                program_id=pid,
                commands=list(commands),
                cb_depth=depth,
                cb_tile_bytes=tile_bytes,
                tail_scalar_instrs=self.scalar_instrs,
            )
            for pid, commands in zip(self.program_ids, per_program, strict=False)
        ]


def set_pe_state(interpreter: Interpreter, state: PeState) -> None:
    """Make `state` the current program's PE state."""
    interpreter.set_data(MtiaFunctions, "pe", state)


def get_pe_state(interpreter: Interpreter) -> PeState:
    """Return the current program's PE state (set by the machine's run loop)."""

    def missing() -> PeState:
        raise InterpretationError("no PE state: mtia programs run through mtia_xdsl.machine.run_kernel")

    return interpreter.get_data(MtiaFunctions, "pe", missing)


class ScalarCoreCounter:
    """Counts the scalar-core instructions a program executes (ops outside engine bodies).

    The machine's interpreter (`reference.OpCounter`) increments `state.scalar_instrs` for every op it
    starts outside an engine body, except the engine commands themselves; the run loop points `state`
    at the current batch's PeState.
    """

    def __init__(self) -> None:
        self.state: PeState | None = None

    def counts(self, op: Operation) -> bool:
        """Return whether `op` is a scalar-core instruction when it runs outside an engine body."""
        return type(op) not in _ENGINE_OP_TYPES


_ENGINE_OP_TYPES = frozenset(mtia.ENGINE_OPS)

_MAX_LISTED_RUNS = 4096
"""Blocks with more contiguous runs than this record only their extent (keeps traces small)."""


def _block_runs(
    base: int, strides: list[int], bounds: list[int], elem_bytes: int
) -> tuple[int, int, tuple, tuple[int, int] | None]:
    """Return (bytes, contiguous runs, ranges, [first, last) byte extent) of a strided block's valid part.

    `ranges` is () (too many runs to list) or (start addresses, bytes per run); the start addresses are
    a list when there are at most 4, else an int64 array.
    """
    valid = int(np.prod(bounds)) if bounds else 1
    if valid == 0:
        return 0, 0, (), None
    if not bounds:
        return elem_bytes, 1, ([base], elem_bytes), (base, base + elem_bytes)
    lo = sum(min(0, s * (b - 1)) for s, b in zip(strides, bounds, strict=True))
    hi = sum(max(0, s * (b - 1)) for s, b in zip(strides, bounds, strict=True))
    extent = (base + lo * elem_bytes, base + (hi + 1) * elem_bytes)
    inner_contig = strides[-1] == 1
    run_elems = bounds[-1] if inner_contig else 1
    runs = valid // run_elems
    ranges: tuple = ()
    if runs <= _MAX_LISTED_RUNS:
        outer = [range(b) for b in (bounds[:-1] if inner_contig else bounds)]
        outer_strides = strides[:-1] if inner_contig else strides
        idx = (
            np.stack(np.meshgrid(*[np.arange(len(r)) for r in outer], indexing="ij"), -1).reshape(-1, len(outer))
            if outer
            else np.zeros((1, 0), dtype=np.int64)
        )
        starts = base + (idx @ np.asarray(outer_strides, dtype=np.int64)) * elem_bytes if outer else np.asarray([base])
        starts = starts.astype(np.int64)
        ranges = (starts.tolist() if len(starts) <= 4 else starts), run_elems * elem_bytes
    return valid * elem_bytes, runs, ranges, extent


def _shifted_starts(runs_of: list[tuple], which: list[int], base: list[int]) -> list[list[int]] | None:
    """Start addresses of every program's runs (one numpy pass for the batch), when all programs share one
    block shape with more than 4 listed runs; else None (`_ranges` per program)."""
    if len(runs_of) != 1 or len(base) == 1:
        return None
    ranges = runs_of[0][2]
    if not ranges or len(ranges[0]) <= 4:
        return None
    return (np.asarray(base, dtype=np.int64)[:, None] + ranges[0][None, :]).tolist()


def _ranges(runs: Any, shift: int) -> tuple[tuple[int, int], ...]:
    """The (address, nbytes) ranges of `_block_runs`'s (starts, run bytes), moved by `shift` bytes."""
    if not runs:
        return ()
    starts, run_bytes = runs
    if len(starts) <= 4:
        return tuple((int(a) + shift, run_bytes) for a in starts)
    return tuple(zip((starts + shift).tolist(), itertools.repeat(run_bytes), strict=False))


@dataclass(frozen=True)
class ActiveLanes:
    """Per program of a batch: active lanes of a gather/scatter and their [first, last) byte extent."""

    active: list[int]
    extent: list[tuple[int, int] | None]
    uniform: bool
    """Every program has the same addresses and mask (one command serves the batch)."""


def active_lanes(addrs: Any, mask: Any, rank: int, size: int, elem_bytes: int) -> ActiveLanes:
    """Count the active lanes of each program and their byte extent (Shapes: batch dims in front)."""
    a = np.asarray(addrs, dtype=np.int64)
    m = np.ones((), bool) if mask is None else np.asarray(mask, dtype=bool)
    shape = np.broadcast_shapes(a.shape, m.shape)
    uniform = len(shape) <= rank
    n = 1 if uniform else size
    a2 = np.broadcast_to(a, shape).reshape(n, -1)
    m2 = np.broadcast_to(m, shape).reshape(n, -1)
    active = m2.sum(-1)
    lo = np.where(m2, a2, np.iinfo(np.int64).max).min(-1, initial=np.iinfo(np.int64).max)
    hi = np.where(m2, a2, np.iinfo(np.int64).min).max(-1, initial=np.iinfo(np.int64).min)
    extent = [(int(x), int(y) + elem_bytes) if k else None for x, y, k in zip(lo, hi, active, strict=True)]
    return ActiveLanes([int(k) for k in active], extent, uniform)


@dataclass(frozen=True)
class _Block:
    """A DMA command's block: base address, strides in elements, bounds clamped to the block shape.

    Each is a Python int (the same for every program of the batch) or an int64 array (B,).
    """

    base: Any
    strides: list[Any]
    bounds: list[Any]

    @property
    def uniform(self) -> bool:
        return all(np.ndim(v) == 0 for v in [self.base, *self.strides, *self.bounds])


def _dma_block(op: mtia.DmaLoadOp | mtia.DmaStoreOp, args: PythonValues, shape: list[int]) -> _Block:
    """The block of a DMA command's operands."""
    rank = len(op.strides)

    def ints(v: Any) -> Any:
        if np.ndim(v) == 0:
            return int(v)
        arr = np.asarray(v, dtype=np.int64)
        first = arr.reshape(-1)[0]
        return int(first) if (arr == first).all() else arr  # the same for every program: one int

    def bound(v: Any, size: int) -> Any:
        if np.ndim(v) == 0:
            return min(max(int(v), 0), size)
        return ints(np.clip(np.asarray(v, dtype=np.int64), 0, size))

    base = ints(args[0])
    strides = [ints(s) for s in args[1 : 1 + rank]]
    bounds = [bound(b, s) for b, s in zip(args[1 + rank : 1 + 2 * rank], shape, strict=True)]
    return _Block(base, strides, bounds)


def _dma_commands(
    state: PeState,
    op: Operation,
    kind: str,
    waits: tuple,
    fills: tuple,
    block: _Block,
    t: Attribute,
    whole_tile: bool = True,
) -> None:
    """Record the DMA command of a block transfer (bytes, contiguous runs, addresses) for each program.

    Programs whose strides and bounds agree share the runs of one block, shifted by their base address.
    A load with `whole_tile` (an `other` fill) writes every lane of its LS slot, else only the valid ones.
    """
    elem_bytes, ls_bytes, dtype = _tile_facts(t)
    n = 1 if block.uniform else state.size
    base = np.broadcast_to(np.asarray(block.base, dtype=np.int64), (n,)).tolist()
    rank = len(block.strides)
    if all(np.ndim(v) == 0 for v in [*block.strides, *block.bounds]):
        runs_of = [state.block_runs(block.strides, block.bounds, elem_bytes)]
        which: list[int] = [0] * n
    else:
        shape_key = np.zeros((n, 2 * rank), dtype=np.int64)
        for d, v in enumerate([*block.strides, *block.bounds]):
            shape_key[:, d] = v
        keys, inverse = np.unique(shape_key, axis=0, return_inverse=True)
        which = inverse.reshape(-1).tolist()
        runs_of = [state.block_runs([int(v) for v in k[:rank]], [int(v) for v in k[rank:]], elem_bytes) for k in keys]
    where = location_str(op.location)
    load = kind == "dma_load"
    starts_of = _shifted_starts(runs_of, which, base)
    commands = []
    for b in range(n):
        nbytes, runs, ranges, extent = runs_of[which[b]]
        shift = base[b]
        if starts_of is not None:
            global_ranges = tuple(zip(starts_of[b], itertools.repeat(ranges[1]), strict=False))
        elif ranges and len(ranges[0]) == 1:
            global_ranges = ((ranges[0][0] + shift, ranges[1]),)
        else:
            global_ranges = _ranges(ranges, shift)
        commands.append(
            Command(
                Engine.DMA,
                kind,
                where,
                waits,
                fills,
                global_read_bytes=nbytes if load else 0,
                global_write_bytes=0 if load else nbytes,
                global_ranges=global_ranges,
                global_extent=None if extent is None else (extent[0] + shift, extent[1] + shift),
                ls_bytes=ls_bytes if whole_tile or not load else nbytes,
                descriptors=max(runs, 1),
                dtype=dtype,
            )
        )
    state.issue(commands[0] if block.uniform else commands)


def _tile_facts(t: Attribute) -> tuple[int, int, str]:
    """(bytes per element, bytes per tile, element dtype name) of tile type `t`, remembered by identity."""
    facts = _TILE_FACTS.get(id(t))
    if facts is None or facts[0] is not t:
        if len(_TILE_FACTS) > 4096:
            _TILE_FACTS.clear()
        facts = _TILE_FACTS[id(t)] = (
            t,
            element_format(element_type_of(t)).size_bytes,
            mtia.tile_bytes(t),
            _dtype_name(t),
        )
    return facts[1], facts[2], facts[3]


_TILE_FACTS: dict[int, tuple[Attribute, int, int, str]] = {}
"""`_tile_facts` of the tile types seen, by identity (bounded; an entry holds its type, so its id is not reused)."""


def _uninitialized(t: Attribute) -> Any:
    """What an LS element no engine wrote reads as: NaN for floats, 0 for integers."""
    return np.nan if element_format(element_type_of(t)).compute.kind == "f" else 0


def _valid_lanes(valid: PythonValues, shape: list[int]) -> Any:
    """The lanes inside an effective shape (`valid` operands, one per dimension of `shape`), as a boolean
    array broadcasting against a (batched) tile; extents are clamped to the tile."""
    inside: Any = True
    for d, (v, size) in enumerate(zip(valid, shape, strict=True)):
        axis = np.arange(size).reshape((size,) + (1,) * (len(shape) - d - 1))
        inside = inside & (axis < batch_scalar(np.asarray(v, dtype=np.int64), len(shape)))
    return inside


def _valid_count(valid: PythonValues, shape: list[int]) -> Any:
    """Elements inside an effective shape: an int, or one per program of the batch (int64 array (B,))."""
    count: Any = 1
    for v, size in zip(valid, shape, strict=True):
        count = count * np.clip(np.asarray(v, dtype=np.int64), 0, size)
    return int(count) if np.ndim(count) == 0 else count


def _per_program(count: Any, b: int) -> int:
    """Entry `b` of a per-program quantity that is an int (the same for all) or an array (B,)."""
    return int(count) if np.ndim(count) == 0 else int(count[b])


def _keep_valid(tile: Any, valid: PythonValues, t: Attribute, outside: Any) -> Any:
    """`tile` with the lanes outside the effective shape `valid` replaced by `outside` (left unwritten)."""
    shape = list(t.get_shape()) if isinstance(t, TensorType) else []
    return as_value(np.where(_valid_lanes(valid, shape), tile, outside), t)


_REDUCE_IDENTITY: dict[str, Callable[[np.dtype], Any]] = {
    "addf": lambda dt: 0.0,
    "addi": lambda dt: 0,
    "maxnumf": lambda dt: -np.inf,
    "maximumf": lambda dt: -np.inf,
    "minnumf": lambda dt: np.inf,
    "minimumf": lambda dt: np.inf,
    "maxsi": lambda dt: np.iinfo(dt).min,
    "minsi": lambda dt: np.iinfo(dt).max,
    "maxui": lambda dt: 0,
    "minui": lambda dt: -1 if np.iinfo(dt).min < 0 else np.iinfo(dt).max,
}
"""What a lane outside a reduction's effective shape counts as: the combiner's identity (+0.0 for addf,
the value a zero-filled masked load holds)."""


@dataclass(frozen=True)
class _DmaInfo:
    """What a DMA op's run needs that depends on the op alone."""

    tile: Attribute
    """The block's tile type."""
    shape: list[int]
    elem: Attribute
    where: str
    to_cb: bool
    """A buffer-level load (into a CB) rather than a tensor-level one (a result)."""
    uninitialized: Any
    """What masked-off elements of the block read as when the op has no `other`."""

    @staticmethod
    def of(op: Operation, t: Attribute, to_cb: bool) -> _DmaInfo:
        shape = list(t.get_shape()) if isinstance(t, TensorType) else []
        return _DmaInfo(
            t, shape, element_type_of(t), location_str(op.location), to_cb, _uninitialized(t) if to_cb else 0
        )


@dataclass(frozen=True)
class _ComputeInfo:
    """What an engine compute op's command records that depends on the op alone."""

    n_inputs: int
    has_outs: bool
    where: str
    elems: int
    dtype: str
    lut: bool
    ls_bytes: int
    inplace: bool
    """The command overwrites the front tiles of its `outs` (see mtia.EngineComputeOp.inplace)."""

    @staticmethod
    def of(op: mtia.EngineComputeOp) -> _ComputeInfo:
        out_types = [mtia.tile_type(o.type) for o in op.outs]
        body_ops = [
            o
            for o in op.body.block.ops
            if not isinstance(o, mtia.YieldOp | builtin.UnrealizedConversionCastOp) and o.name != "arith.constant"
        ]
        in_bytes = sum(mtia.tile_bytes(mtia.tile_type(v.type)) for v in op.inputs if mtia.is_cb(v))
        out_elems = max([_elems(t) for t in out_types] + [1])
        return _ComputeInfo(
            n_inputs=len(op.inputs),
            has_outs=bool(out_types),
            where=location_str(op.location),
            elems=max(sum(_body_op_work(o, out_elems) for o in body_ops), out_elems),
            dtype=_widest_dtype(body_ops, element_format(element_type_of(out_types[0])) if out_types else None),
            lut=any(o.name in _LUT_OPS for o in body_ops),
            ls_bytes=in_bytes + sum(mtia.tile_bytes(t) for t in out_types),
            inplace=op.inplace is not None,
        )


_REDUCTION_OPS = ("tt.reduce", "tt.scan", "tt.histogram", "tt.gather")
"""Body ops whose work scales with their input, not their output (a reduced dimension)."""


_OPERAND_FORMS = ("tt.splat", "tt.expand_dims", "tt.broadcast")
"""Body ops that, applied to a body argument, only say how an instruction reads that operand."""


def _is_operand_form(op: Operation) -> bool:
    """Whether `op` splats or broadcasts a body argument (directly or through another such op): the
    instruction reading it takes a scalar operand (RVV `.vf`/`.vx`, the SE's scalar operand) or reuses
    a row/column register, so no elements are computed (mtia-vector-codegen builds these bodies)."""
    if op.name not in _OPERAND_FORMS:
        return False
    src = op.operands[0]
    return isinstance(src, BlockArgument) or (isinstance(src.owner, Operation) and _is_operand_form(src.owner))


def _body_op_work(op: Operation, out_elems: int) -> int:
    """Elements of work one op of an engine body does: a `tt.dot` M*N*K (times batch dims); a reduction,
    scan, histogram or gather its input elements times the ops of its combine region (at least 1); a
    splat or broadcast of a body argument nothing (an operand form; a command doing only that is still
    charged its output elements by `_ComputeInfo.of`); any other op the command's output elements."""
    if _is_operand_form(op):
        return 0
    if op.name == "tt.dot":
        *batch, m, k = op.operands[0].type.get_shape()  # type: ignore[attr-defined]
        n = op.operands[1].type.get_shape()[-1]  # type: ignore[attr-defined]
        return int(np.prod(batch, dtype=np.int64)) * m * n * k
    if op.name in _REDUCTION_OPS:
        combine = [o for r in op.regions for b in r.blocks for o in b.ops if not o.has_trait(IsTerminator)]
        return max(_elems(v.type) for v in op.operands) * max(len(combine), 1)
    return out_elems


def _widest_dtype(body_ops: list[Operation], out: ElementFormat | None) -> str:
    """The widest numeric element type any body op reads or writes (the output's `out` on ties; f32 if none)."""
    best, best_bytes = (out.name, out.size_bytes) if out is not None else ("f32", 0)
    for o in body_ops:
        for v in (*o.operands, *o.results):
            elem = element_type_of(v.type)
            if not isinstance(elem, builtin.IntegerType | builtin.AnyFloat):
                continue
            try:
                fmt = element_format(elem)
            except InterpretationError:
                continue  # no runtime representation (fp8 is emulated as i8 before this point)
            if fmt.size_bytes > best_bytes:
                best, best_bytes = fmt.name, fmt.size_bytes
    return best


_CB_METHODS: dict[type[Operation], Callable[[SimCB, int, Operation], None]] = {
    mtia.CbReserveOp: SimCB.reserve,
    mtia.CbPushOp: SimCB.push,
    mtia.CbWaitOp: SimCB.wait,
    mtia.CbPopOp: SimCB.pop,
}
_NO_RESULTS = OpImplResult((), None)
_COMPUTE_KINDS: dict[type[Operation], tuple[Engine, str]] = {
    mtia.SeComputeOp: (Engine.SE, "se_compute"),
    mtia.VecComputeOp: (Engine.VEC, "vec_compute"),
    mtia.MluComputeOp: (Engine.MLU, "mlu_compute"),
}


@register_impls
class MtiaFunctions(InterpreterFunctions):
    """Semantics of buffer-level mtia ops; see the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self._compute_info: dict[Operation, _ComputeInfo] = {}
        """Per engine compute op run so far: its command's op-only fields."""
        self._dma_info: dict[Operation, _DmaInfo] = {}
        """Per DMA op run so far: its block's type facts."""

    def prepare_op(self, op: Operation) -> Callable[..., OpImplResult] | None:
        """Return an implementation specialized to a CB op (slot count read once) or an engine compute op
        (command fields read once), else None; see reference._Interpreter."""
        engine_kind = _COMPUTE_KINDS.get(type(op))
        if engine_kind is not None:
            return self._prepare_compute(op, *engine_kind)  # type: ignore[arg-type]
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
        get_pe_state(interpreter).issue(
            Command(
                Engine.SCALAR,
                "cb_read",
                location_str(op.location),
                (slot,),
                (),
                elems=1,
                scalar_blocking=True,
            )
        )
        return (value,)

    # -- memory ------------------------------------------------------------------------------
    @impl(mtia.DmaLoadOp)
    def run_dma_load(self, interpreter: Interpreter, op: mtia.DmaLoadOp, args: PythonValues) -> PythonValues:
        info = self._dma_info.get(op)
        if info is None:
            info = self._dma_info[op] = _DmaInfo.of(op, op.block_type, op.out is not None)
        t, shape = info.tile, info.shape
        block = _dma_block(op, args, shape)
        if op.other is not None:
            other = batch_scalar(args[1 + 2 * len(block.strides)], len(shape))
        else:
            other = info.uninitialized
        memory = get_launch_state(interpreter).memory
        value = memory.read_block(block.base, block.strides, shape, block.bounds, info.elem, other, info.where)
        tile = as_value(value, t)
        if not info.to_cb:
            return (tile,)
        slot = args[-1].write(tile, op)
        _dma_commands(get_pe_state(interpreter), op, "dma_load", (), (slot,), block, t, op.other is not None)
        return ()

    @impl(mtia.DmaStoreOp)
    def run_dma_store(self, interpreter: Interpreter, op: mtia.DmaStoreOp, args: PythonValues) -> PythonValues:
        info = self._dma_info.get(op)
        if info is None:
            info = self._dma_info[op] = _DmaInfo.of(op, mtia.tile_type(op.value.type), False)
        t, shape, elem, where = info.tile, info.shape, info.elem, info.where
        block = _dma_block(op, args, shape)
        cb = args[-1]
        value, slot = cb.front(op) if isinstance(cb, SimCB) else (cb, None)
        memory = get_launch_state(interpreter).memory
        if not shape:
            addr = np.asarray(block.base, dtype=np.int64)[..., None]
            memory.scatter(addr, np.asarray(value)[..., None], elem, None, where)
        else:
            memory.write_block(block.base, block.strides, shape, block.bounds, value, elem, where)
        if slot is not None:
            _dma_commands(get_pe_state(interpreter), op, "dma_store", (slot,), (), block, t)
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
            other = 0 if op.out is None else _uninitialized(t)
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

        def make(b: int) -> Command:
            return Command(
                Engine.SCALAR,
                "gather",
                where,
                reads,
                writes,
                elems=lanes.active[b],
                global_read_bytes=lanes.active[b] * elem_bytes,
                global_extent=lanes.extent[b],
                descriptors=lanes.active[b],
                ls_bytes=mtia.tile_bytes(t),
                scalar_blocking=True,
                dtype=_dtype_name(t),
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

        def make(b: int) -> Command:
            return Command(
                Engine.SCALAR,
                "scatter",
                where,
                reads,
                (),
                elems=lanes.active[b],
                global_write_bytes=lanes.active[b] * elem_bytes,
                global_extent=lanes.extent[b],
                descriptors=lanes.active[b],
                scalar_blocking=True,
                dtype=_dtype_name(t),
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

        def make(b: int) -> Command:
            return Command(
                Engine.SCALAR,
                "scalar_load",
                where,
                (),
                (),
                elems=1,
                global_read_bytes=nbytes,
                global_ranges=((int(addrs[b]), nbytes),),
                scalar_blocking=True,
                dtype=_dtype_name(t),
            )

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

        def make(b: int) -> Command:
            return Command(
                Engine.SCALAR,
                "scalar_store",
                where,
                (),
                (),
                elems=1,
                global_write_bytes=nbytes,
                global_ranges=((int(addrs[b]), nbytes),),
                dtype=_dtype_name(t),
            )

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
        waits: list[SlotRef] = []
        a, b, c = (np.asarray(self._read(x, op, waits)) for x in args[:3])
        t_a = mtia.tile_type(op.a.type)
        valid = args[len(args) - len(op.valid) :] if op.valid else ()
        if valid:  # lanes past K count as 0 (the pass proved they hold 0)
            k_size = t_a.get_shape()[-1]  # type: ignore[attr-defined]
            k_in = np.arange(k_size) < batch_scalar(np.asarray(valid[2], dtype=np.int64), 1)
            a = np.where(k_in[..., None, :], a, np.zeros((), a.dtype))
            b = np.where(k_in[..., :, None], b, np.zeros((), b.dtype))
        precision = op.input_precision.value.data
        if a.dtype == np.float32 and precision == 0:
            from mtia_xdsl.machine.interpret.tt import _round_tf32

            a, b = _round_tf32(a), _round_tf32(b)
        if a.dtype.kind in "iub":
            acc = a.astype(np.int64) @ b.astype(np.int64) + c.astype(np.int64)
        else:
            acc = a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)
        out_t = op.out.type.tile if op.out is not None else op.result[0].type
        d = as_value(acc, out_t)
        if valid:  # rows past M and columns past N are not computed
            d = _keep_valid(d, valid[:2], out_t, c if op.inplace is not None else _uninitialized(out_t))
        if op.out is None:
            return (d,)
        slot = args[3].update(d, op) if op.inplace is not None else args[3].write(d, op)
        *batch, m, k = t_a.get_shape()  # type: ignore[attr-defined]
        n = mtia.tile_type(op.b.type).get_shape()[-1]  # type: ignore[attr-defined]
        dtype = _dtype_name(t_a)
        state = get_pe_state(interpreter)
        passes = state.config.dpe_fp32_ieee_passes if dtype == "f32" and precision == 2 else 1
        macs = _valid_count(valid, [m, n, k]) if valid else int(np.prod(batch, dtype=np.int64)) * m * n * k
        ls_bytes = mtia.tile_bytes(t_a) + mtia.tile_bytes(mtia.tile_type(op.b.type)) + 2 * mtia.tile_bytes(out_t)
        where = location_str(op.location)

        reads = tuple(waits)  # tuples shared by the batch: the timing model keys shapes by their identity
        writes = (slot,)

        def make(p: int) -> Command:
            return Command(
                Engine.DPE,
                "dpe_matmul",
                where,
                reads,
                writes,
                macs=_per_program(macs, p),
                dtype=dtype,
                dpe_passes=passes,
                ls_bytes=ls_bytes,
            )

        state.issue_each(make, np.ndim(macs) == 0)
        return ()

    @impl(mtia.ReReduceOp)
    def run_re_reduce(self, interpreter: Interpreter, op: mtia.ReReduceOp, args: PythonValues) -> PythonValues:
        waits: list[SlotRef] = []
        x = np.asarray(self._read(args[0], op, waits))
        t_in = mtia.tile_type(op.operands[0].type)
        axis = op.axis.value.data - logical_rank(t_in)
        kind = op.kind.data
        valid = args[len(args) - len(op.valid) :] if op.valid else ()
        if valid:  # lanes outside the effective shape are not read: they count as the identity
            x = np.where(_valid_lanes(valid, list(t_in.get_shape())), x, _REDUCE_IDENTITY[kind](x.dtype))  # type: ignore[attr-defined]
        fn = {
            "addf": np.add,
            "addi": np.add,
            "maxnumf": np.fmax,
            "minnumf": np.fmin,
            "maximumf": np.maximum,
            "minimumf": np.minimum,
            "maxsi": np.maximum,
            "minsi": np.minimum,
        }.get(kind)
        if fn is None:
            xu = x.astype(np.dtype(f"u{x.dtype.itemsize}"))
            r = (np.max if kind == "maxui" else np.min)(xu, axis=axis).astype(x.dtype)
        else:
            r = fn.reduce(x, axis=axis, dtype=x.dtype)
        out_t = op.out.type.tile if op.out is not None else op.result[0].type
        r = as_value(np.asarray(r), out_t)
        if op.out is None:
            return (r,)
        slot = args[1].write(r, op)
        elems = _valid_count(valid, list(t_in.get_shape())) if valid else _elems(t_in)  # type: ignore[attr-defined]
        where, dtype = location_str(op.location), _dtype_name(out_t)
        ls_bytes = mtia.tile_bytes(t_in) + mtia.tile_bytes(out_t)

        reads = tuple(waits)  # tuples shared by the batch: the timing model keys shapes by their identity
        writes = (slot,)

        def make(p: int) -> Command:
            return Command(
                Engine.RE, "re_reduce", where, reads, writes, elems=_per_program(elems, p), dtype=dtype,
                ls_bytes=ls_bytes,
            )  # fmt: skip

        get_pe_state(interpreter).issue_each(make, np.ndim(elems) == 0)
        return ()

    @impl(mtia.SeComputeOp)
    def run_se(self, interpreter: Interpreter, op: mtia.SeComputeOp, args: PythonValues) -> PythonValues:
        return self._compute(interpreter, op, args, Engine.SE, "se_compute")

    @impl(mtia.VecComputeOp)
    def run_vec(self, interpreter: Interpreter, op: mtia.VecComputeOp, args: PythonValues) -> PythonValues:
        return self._compute(interpreter, op, args, Engine.VEC, "vec_compute")

    @impl(mtia.MluComputeOp)
    def run_mlu(self, interpreter: Interpreter, op: mtia.MluComputeOp, args: PythonValues) -> PythonValues:
        return self._compute(interpreter, op, args, Engine.MLU, "mlu_compute")

    def _prepare_compute(self, op: mtia.EngineComputeOp, engine: Engine, kind: str) -> Callable[..., OpImplResult]:
        """`_compute` specialized to `op`: its command's fields and body read once."""
        info = self._compute_info.get(op)
        if info is None:
            info = self._compute_info[op] = _ComputeInfo.of(op)
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
                results = [_keep_valid(r, valid, out_t, _uninitialized(out_t)) for r in results]
            if not info.has_outs:
                return OpImplResult(tuple(results), None)
            if info.inplace:
                fills = tuple([cb.update(v, op) for cb, v in zip(args[n_in:n_io], results, strict=True)])
            else:
                fills = tuple([cb.write(v, op) for cb, v in zip(args[n_in:n_io], results, strict=True)])
            elems: Any = info.elems
            if valid:  # work scales with the lanes computed
                out_elems = max(_elems(out_t), 1)
                elems = -(-info.elems * np.asarray(_valid_count(valid, list(out_t.get_shape()))) // out_elems)

            reads = tuple(waits)  # tuples shared by the batch: the timing model keys shapes by their identity

            def make(p: int) -> Command:
                return Command(
                    engine,
                    kind,
                    info.where,
                    reads,
                    fills,
                    elems=_per_program(elems, p),
                    dtype=info.dtype,
                    lut=info.lut,
                    ls_bytes=info.ls_bytes,
                )

            state.issue_each(make, np.ndim(elems) == 0)
            return _NO_RESULTS

        return run

    def _compute(
        self,
        interpreter: Interpreter,
        op: mtia.EngineComputeOp,
        args: PythonValues,
        engine: Engine,
        kind: str,
    ) -> PythonValues:
        return self._prepare_compute(op, engine, kind)(self, interpreter, op, args).values

    @impl_terminator(mtia.YieldOp)
    def run_yield(self, interpreter: Interpreter, op: mtia.YieldOp, args: PythonValues):
        return ReturnedValues(args), ()

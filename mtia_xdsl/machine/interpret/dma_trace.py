"""DMA descriptors and their traces: the bytes, contiguous runs and addresses a block transfer, gather or
scatter moves, recorded as `Command`s for the timing model (which charges descriptors and keeps
overlapping byte ranges ordered).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.interpreter import PythonValues
from xdsl.ir import Attribute

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.commands import Command, Engine, RunBlock, Runs, SlotRef, command_kind
from mtia_xdsl.machine.interpret.formats import dtype_name, element_format, element_type_of
from mtia_xdsl.machine.interpret.masks import uninitialized
from mtia_xdsl.utils.locations import location_str

if TYPE_CHECKING:
    from mtia_xdsl.machine.interpret.pe_state import PeState

_MAX_LISTED_RUNS = 4096
"""Blocks with more contiguous runs than this record only their extent (keeps traces small)."""


def strided_block_runs(
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


def cached_block_runs(cache: dict[tuple, tuple], strides: list[int], bounds: list[int], elem_bytes: int) -> tuple:
    """`strided_block_runs` of a block at address 0, remembered in `cache` (a PeState's `runs_cache`: the
    programs of a batch, or of a launch, share block shapes). More than 4 runs come as a `RunBlock` (ranges
    (RunBlock, run bytes)) that the commands of every program share (`Runs`)."""
    key = (tuple(strides), tuple(bounds), elem_bytes)
    runs = cache.get(key)
    if runs is None:
        nbytes, count, ranges, extent = strided_block_runs(0, strides, bounds, elem_bytes)
        if ranges and len(ranges[0]) > 4:
            ranges = (RunBlock(ranges[0].tolist(), ranges[1]), ranges[1])
        runs = cache[key] = (nbytes, count, ranges, extent)
    return runs


def _ranges(runs: Any, shift: int) -> tuple[tuple[int, int], ...]:
    """The (address, nbytes) ranges of `strided_block_runs`'s (at most 4 starts, run bytes), moved by `shift`
    bytes."""
    if not runs:
        return ()
    starts, run_bytes = runs
    return tuple((int(a) + shift, run_bytes) for a in starts)


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
class DmaBlock:
    """A DMA command's block: base address, strides in elements, bounds clamped to the block shape.

    Each is a Python int (the same for every program of the batch) or an int64 array (B,). `starts`
    (empty, or one per dimension, clamped like the bounds) are the first valid lanes; the timing
    counts the block from lane 0, an over-estimate only for blocks that begin before their tensor.
    """

    base: Any
    strides: list[Any]
    bounds: list[Any]
    starts: list[Any] = field(default_factory=list)

    @property
    def uniform(self) -> bool:
        return all(np.ndim(v) == 0 for v in [self.base, *self.strides, *self.bounds])


def dma_block(info: DmaInfo, args: PythonValues) -> DmaBlock:
    """The block of the operands `args` of the DMA op `info` describes."""
    rank, shape = info.rank, info.shape

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
    starts = (
        [bound(b, s) for b, s in zip(args[1 + 2 * rank : 1 + 3 * rank], shape, strict=True)] if info.has_starts else []
    )
    return DmaBlock(base, strides, bounds, starts)


def record_dma_commands(
    state: PeState,
    info: DmaInfo,
    waits: tuple,
    fills: tuple,
    block: DmaBlock,
    whole_tile: bool = True,
) -> None:
    """Record the DMA command of a block transfer (bytes, contiguous runs, addresses) for each program.

    Programs whose strides and bounds agree share the runs of one block, shifted by their base address.
    A load with `whole_tile` (an `other` fill) writes every lane of its LS slot, else only the valid ones.
    """
    elem_bytes, ls_bytes, dtype = tile_facts(info.tile)
    n = 1 if block.uniform else state.size
    base = np.broadcast_to(np.asarray(block.base, dtype=np.int64), (n,)).tolist()
    rank = len(block.strides)
    if all(np.ndim(v) == 0 for v in [*block.strides, *block.bounds]):
        runs_of = [cached_block_runs(state.runs_cache, block.strides, block.bounds, elem_bytes)]
        which: list[int] = [0] * n
    else:
        shape_key = np.zeros((n, 2 * rank), dtype=np.int64)
        for d, v in enumerate([*block.strides, *block.bounds]):
            shape_key[:, d] = v
        keys, inverse = np.unique(shape_key, axis=0, return_inverse=True)
        which = inverse.reshape(-1).tolist()
        runs_of = [
            cached_block_runs(state.runs_cache, [int(v) for v in k[:rank]], [int(v) for v in k[rank:]], elem_bytes)
            for k in keys
        ]
    where, load, kind = info.where, info.load, info.kind
    if len(runs_of) == 1:
        commands = dma_commands(kind, where, waits, fills, load, runs_of[0], base, ls_bytes, whole_tile, dtype)
    else:
        commands = [
            dma_commands(kind, where, waits, fills, load, runs_of[which[b]], [base[b]], ls_bytes, whole_tile, dtype)[0]
            for b in range(n)
        ]
    state.issue(commands[0] if block.uniform else commands)


def dma_commands(
    kind: str,
    where: str,
    waits: tuple[SlotRef, ...],
    fills: tuple[SlotRef, ...],
    load: bool,
    runs: tuple[Any, ...],
    shifts: list[int],
    tile_ls_bytes: int,
    whole_tile: bool,
    dtype: str,
) -> list[Command]:
    """The commands of DMA block transfers of one shape, one per base address of `shifts`, in order: `runs` is
    `cached_block_runs` of the block's strides and bounds (the block at address 0); a load with `whole_tile` (an
    `other` fill) writes all `tile_ls_bytes` of its LS slot, else only the valid bytes."""
    nbytes, count, ranges, extent = runs
    read_bytes, write_bytes = (nbytes, 0) if load else (0, nbytes)
    ls_bytes = tile_ls_bytes if whole_tile or not load else nbytes
    fields = (kind, where, waits, fills, dtype, read_bytes, write_bytes, ls_bytes, max(count, 1))
    if extent is None:
        return placed_commands(fields, shifts, None, None)
    if ranges and type(ranges[0]) is not RunBlock and len(ranges[0]) != 1:
        return placed_commands(fields, shifts, extent, lambda s: _ranges(ranges, s))
    return placed_commands(fields, shifts, extent, ranges)


_new = object.__new__


def placed_commands(fields: tuple[Any, ...], shifts: list[int], extent: Any, ranges: Any) -> list[Command]:
    """DMA commands of one block shape, one per base address of `shifts`: `fields` (kind, loc, waits, fills,
    dtype, global read bytes, global write bytes, LS bytes, descriptors) shared, `extent` and `ranges` (of
    `cached_block_runs`, or a function of the shift) moved by each shift (no ranges and extent when `extent` is
    None); every other field as `Command`'s default.

    The same commands as `Command(Engine.DMA, kind, loc, waits, fills, dtype=..., ...)`, built without
    Command.__init__'s frame: a launch builds one per program and DMA (layer norm 4096x1024: 32768), and that
    frame was a sixth of each command's cost (tests/machine/test_dma_trace.py checks that every field is set as
    the constructor sets it).
    """
    kind, loc, waits, fills, dtype, read_bytes, write_bytes, ls_bytes, descriptors = fields
    dma = Engine.DMA
    lo, hi = extent if extent is not None else (0, 0)
    block = ranges[0] if ranges and type(ranges) is tuple and type(ranges[0]) is RunBlock else None
    single = ranges[0][0] if ranges and type(ranges) is tuple and block is None else None
    size = ranges[1] if single is not None else 0
    out = []
    append = out.append
    for s in shifts:
        c = _new(Command)
        c.engine = dma
        c.kind = kind
        c.loc = loc
        c.waits = waits
        c.fills = fills
        c.scalar_instrs = 0
        c.elems = 0
        c.macs = 0
        c.dtype = dtype
        c.dpe_passes = 1
        c.global_read_bytes = read_bytes
        c.global_write_bytes = write_bytes
        if extent is None:
            c.global_ranges = ()
            c.global_extent = None
        else:
            if single is not None:
                c.global_ranges = ((single + s, size),)
            elif block is not None:
                c.global_ranges = Runs(block, s)
            else:
                c.global_ranges = ranges(s) if ranges else ()
            c.global_extent = (lo + s, hi + s)
        c.ls_bytes = ls_bytes
        c.descriptors = descriptors
        c.scalar_blocking = False
        c.lut = False
        c.re_hops = 0
        c.re_group_size = 0
        c.re_axis = 0
        append(c)
    return out


def tile_facts(t: Attribute) -> tuple[int, int, str]:
    """(bytes per element, bytes per tile, element dtype name) of tile type `t`, remembered by identity."""
    facts = _TILE_FACTS.get(id(t))
    if facts is None or facts[0] is not t:
        if len(_TILE_FACTS) > 4096:
            _TILE_FACTS.clear()
        facts = _TILE_FACTS[id(t)] = (
            t,
            element_format(element_type_of(t)).size_bytes,
            mtia.tile_bytes(t),
            dtype_name(t),
        )
    return facts[1], facts[2], facts[3]


_TILE_FACTS: dict[int, tuple[Attribute, int, int, str]] = {}
"""`tile_facts` of the tile types seen, by identity (bounded; an entry holds its type, so its id is not reused)."""


@dataclass(frozen=True)
class DmaInfo:
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
    rank: int
    """Dimensions of the block (strides and bounds per program)."""
    has_starts: bool
    has_other: bool
    other_index: int
    """Position of the `other` operand among the op's operands (when `has_other`)."""
    load: bool
    kind: str
    """`command_kind` of the op."""

    @staticmethod
    def of(op: mtia.DmaLoadOp | mtia.DmaStoreOp, t: Attribute, to_cb: bool) -> DmaInfo:
        shape = list(t.get_shape()) if isinstance(t, TensorType) else []
        rank, n_starts = len(op.strides), len(op.starts)
        load = isinstance(op, mtia.DmaLoadOp)
        return DmaInfo(
            t,
            shape,
            element_type_of(t),
            location_str(op.location),
            to_cb,
            uninitialized(t) if to_cb else 0,
            rank,
            n_starts > 0,
            load and op.other is not None,
            1 + 2 * rank + n_starts,
            load,
            command_kind(op.name),
        )

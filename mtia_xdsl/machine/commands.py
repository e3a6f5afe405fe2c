"""Engine commands: what the functional run of a program records for the timing model.

The interpreter runs the buffer-level `mtia` program of each Triton program id and appends one `Command`
per engine command it issues; `machine/timing.py` schedules them. A command names the circular-buffer
(CB) slots it reads (`waits`) and writes (`fills`) so the timing model can rebuild the CP's
producer/consumer tracking without seeing cb_reserve/push/wait/pop.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any


class Engine(enum.Enum):
    """The unit of a PE that executes a command (see the glossary in machine/config.py)."""

    SCALAR = "scalar"
    DMA = "dma"
    DPE = "dpe"
    SE = "se"
    RE = "re"
    MLU = "mlu"
    VEC = "vec"


class DmaPort(enum.Enum):
    """A PE's DMA port: a DMA command's bytes cross one of them after the DMA engine (`Engine.DMA`) issued it."""

    READ = "dma_read"
    WRITE = "dma_write"


Unit = Engine | DmaPort
"""What a command keeps busy: an engine, or for a DMA's transfer a DMA port."""


def command_kind(op_name: str) -> str:
    """The kind of the command an op issues: the op's name without its dialect ("mtia.dma_load" ->
    "dma_load", "mtia.se_compute" -> "se_compute"); reports and traces print it."""
    return op_name.partition(".")[2]


RE_LINK_KIND = "re_link"
"""Kind of the RE commands carrying an `mtia.re_allreduce`'s cross-PE traffic on the RE's neighbour link
(`elems` of `dtype`, `re_hops`); no op of its own issues them."""


@dataclass(frozen=True, slots=True)
class SlotRef:
    """The `seq`-th tile ever pushed into circular buffer `cb` of this program (both 0-based)."""

    cb: int
    seq: int


def regular_stride(starts: Sequence[int]) -> int | None:
    """The spacing of `starts` when it is positive and the same between every two neighbours, else None."""
    if len(starts) < 2:
        return None
    a0 = starts[0]
    stride, k = starts[1] - a0, len(starts)
    if stride <= 0 or tuple(starts) != tuple(range(a0, a0 + k * stride, stride)):
        return None
    return stride


class RunBlock:
    """The contiguous runs of one block shape at address 0: their start offsets and common size, shared by
    every command moving a block of that shape (see `Runs`)."""

    __slots__ = ("nbytes", "span", "starts", "stride")

    def __init__(self, starts: Sequence[int], nbytes: int) -> None:
        self.starts = tuple(starts)
        """Start offset of each run, in bytes from the block's address."""
        self.nbytes = nbytes
        """Bytes of each run."""
        self.stride = regular_stride(self.starts)
        """The runs' spacing in bytes when they are equally spaced (rows of a 2-D block), else None."""
        self.span = (min(self.starts), max(self.starts) + nbytes) if self.starts else (0, 0)
        """[first, last) byte offset the runs cover."""

    def __getstate__(self) -> tuple[tuple[int, ...], int]:
        return self.starts, self.nbytes

    def __setstate__(self, state: tuple[tuple[int, ...], int]) -> None:
        self.__init__(*state)  # type: ignore[misc]


class Runs(Sequence[tuple[int, int]]):
    """A command's (address, nbytes) runs kept as a shared `RunBlock` moved to `shift`: one small object
    instead of a tuple per run, so traces of large launches stay small. Reads, iterates and compares like
    the tuple of its runs (`tuple(runs)`)."""

    __slots__ = ("block", "shift")

    def __init__(self, block: RunBlock, shift: int) -> None:
        self.block = block
        self.shift = shift

    def __len__(self) -> int:
        return len(self.block.starts)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return tuple(self)[k]
        return self.block.starts[k] + self.shift, self.block.nbytes

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return zip(map(self.shift.__add__, self.block.starts), repeat(self.block.nbytes))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Runs):
            if other.block is self.block:
                return other.shift == self.shift
            return tuple(self) == tuple(other)
        return isinstance(other, tuple) and tuple(self) == other

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __getstate__(self) -> tuple[RunBlock, int]:
        return self.block, self.shift

    def __setstate__(self, state: tuple[RunBlock, int]) -> None:
        self.block, self.shift = state


@dataclass(slots=True)
class Command:
    """One engine command issued by a PE's scalar core.

    Units: bytes, elements and MACs are per command; `scalar_instrs` counts instructions.
    """

    engine: Engine
    kind: str
    """`command_kind` of the issuing op ("dma_load", "gather", "dpe_matmul", "se_compute", ...) or `RE_LINK_KIND`."""
    loc: str
    """"file:line:col" of the kernel source."""
    waits: tuple[SlotRef, ...]
    """Tiles read: the command starts after the command that filled each one ended."""
    fills: tuple[SlotRef, ...]
    """Tiles written: the command starts after the slot's previous occupant (seq - depth of that cb) was
    released, i.e. its filler and all commands that read it ended."""
    scalar_instrs: int = 0
    """Scalar-core instructions executed before issuing this command."""
    elems: int = 0
    """Elements processed (SE / VEC / RE / MLU / scalar gathers and scatters)."""
    macs: int = 0
    """Multiply-accumulates (DPE), input dtype in `dtype`."""
    dtype: str = "f32"
    """"f16", "bf16", "f32", "i8", ...: DPE input dtype or SE/VEC element dtype."""
    dpe_passes: int = 1
    """3 for an fp32 "ieee" dot (three BF16 passes), else 1."""
    global_read_bytes: int = 0
    """Bytes read from global memory (DRAM/SRAM) by this command."""
    global_write_bytes: int = 0
    """Bytes written to global memory by this command."""
    global_ranges: tuple[tuple[int, int], ...] | Runs = ()
    """(address, nbytes) contiguous runs touched in global memory, for the LLC model and exact 32-byte
    granule rounding (one per descriptor when available); a block's many runs as `Runs`."""
    global_extent: tuple[int, int] | None = None
    """[first, last) byte address the command touches in global memory, when `global_ranges` is empty
    (too many runs to list); the timing model orders overlapping accesses by it."""
    ls_bytes: int = 0
    """Bytes read plus written in local storage."""
    descriptors: int = 1
    """DMA: number of contiguous runs (rows) in the block."""
    scalar_blocking: bool = False
    """The scalar core waits for this command to end before going on."""
    lut: bool = False
    """SE: the op is a lookup-table function (exp, rsqrt, recip, sigmoid, tanh): longer latency."""
    re_hops: int = 0
    """RE: PE hops the result travels on the reduction network (cross-PE reductions)."""
    re_group_size: int = 0
    """RE `re_link` of an `mtia.re_allreduce`: the programs of its group (a round's programs on one PE row or
    column), all of which must arrive before the transfer starts (machine/re_barrier.py); 0: no barrier."""
    re_axis: int = 0
    """RE `re_link` with a group: 0 if the group is a PE row, 1 if a PE column."""


@dataclass
class ProgramTrace:
    """Every command one Triton program issued, in program order, plus its CB layout."""

    program_id: tuple[int, int, int]
    commands: list[Command]
    cb_depth: dict[int, int]
    """cb id -> number of slots."""
    cb_tile_bytes: dict[int, int]
    """cb id -> bytes of one slot."""
    tail_scalar_instrs: int = 0
    """Scalar instructions after the last command."""
    extra_ls_bytes: int = field(default=0)
    """LS bytes held outside CBs for the whole program (scratch, spills); part of the LS high-water mark."""
    cb_ls_offset: dict[int, int] | None = None
    """cb id -> LS offset of its first slot (mtia-cb-allocate; CBs never alive together share bytes);
    None: every CB has bytes of its own."""
    structure: object = field(default=None, compare=False, repr=False)
    """An object shared by programs whose commands have the same structure (engines, CB slots read and
    filled, scalar instructions, blocking) and CB depths, as the programs of one functional batch; the
    timing model then builds their dependencies once (None: compared command by command)."""
    cb_hw_id: dict[int, int] | None = None
    """cb id -> the CB ID the CP tracks it by (mtia-cb-allocate; CBs never alive together share one);
    None: every CB has an ID of its own."""

    def cb_ids_in_use(self) -> int:
        """CB IDs this program's CBs take on the CP: the distinct `cb_hw_id`s (every CB one without them)."""
        if self.cb_hw_id is not None:
            return len(set(self.cb_hw_id.values()))
        return len(self.cb_depth)

    def ls_footprint_bytes(self) -> int:
        """Bytes of LS this program holds: the end of its highest CB (every CB's depth x tile bytes summed
        without `cb_ls_offset`) plus `extra_ls_bytes`."""
        if self.cb_ls_offset is not None:
            top = 0
            for cb, depth in self.cb_depth.items():
                top = max(top, self.cb_ls_offset.get(cb, 0) + depth * self.cb_tile_bytes.get(cb, 0))
            return top + self.extra_ls_bytes
        total = self.extra_ls_bytes
        for cb, depth in self.cb_depth.items():
            total += depth * self.cb_tile_bytes.get(cb, 0)
        return total


class TraceSource(Sequence[ProgramTrace]):
    """The traces of a launch's programs, by program index, for `timing.simulate`; a subclass may produce each
    when first asked for (`get`) and forget it once released (`release`), so a totals-only run holds only
    the traces of programs in flight. It lives here, not in machine/timing.py, because Python code cannot
    subclass a class of a module that machine/compiled.py compiles.

    `program_ids` gives each program's id without its trace (placement needs them all up front).
    """

    def __init__(self, traces: list[ProgramTrace | None], program_ids: Sequence[tuple[int, int, int]] | None = None):
        self.traces = traces
        self.program_ids = (
            list(program_ids) if program_ids is not None else [t.program_id for t in traces if t is not None]
        )

    def __len__(self) -> int:
        return len(self.traces)

    def __getitem__(self, i: int) -> ProgramTrace:  # type: ignore[override]
        trace = self.traces[i]
        if trace is None:
            trace = self.get(i)
        return trace

    def get(self, i: int) -> ProgramTrace:
        """Produce trace i (called when it is not there yet); the base class has every trace up front."""
        raise IndexError(f"the trace of program {i} was released")

    def release(self, i: int) -> None:
        """Forget trace i: its program is done and a totals-only run needs it no more."""
        self.traces[i] = None

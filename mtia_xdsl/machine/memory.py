"""Global memory of the timing model: placement, LLC coverage, shared bandwidth pools, traffic, hazards.

Model (numbers from `MachineConfig`; see docs/machine.md):

- Placement (`global_placement`): "dram" sends every access to LPDDR5 (no cache); "sram" places the
  kernel's tensors in SRAM scratch (no DRAM traffic); "llc" keeps them in DRAM behind the SRAM used as a
  last-level cache: the first touch of a byte comes from DRAM, later reads hit SRAM, stores write through
  to DRAM (no eviction; no allocation once `llc_bytes` are resident).
- Bandwidth: each level (DRAM at `dram_bytes_per_cycle`, SRAM at `sram_bytes_per_cycle`) is a chip-wide
  pool shared max-min fairly by every DMA transfer in flight on the grid, each capped by its PE's read or
  write port (`dma_read_bytes_per_cycle`, `dma_write_bytes_per_cycle`). All flows of one direction have
  the same cap, so they always get the same rate: a pool keeps one virtual clock per direction (bytes
  served to each flow so far) and a flow ends when that clock passes its start value plus its bytes, so
  an arrival or departure costs O(1) mostly instead of touching every flow (a processor-sharing queue).
- Write-behind (`llc_write_behind` 1, placement "llc"): a store moves its bytes into the SRAM LLC (SRAM
  pool, SRAM latency) and ends; the LLC then writes them to DRAM as a background flow of the DRAM pool,
  which gets only the bandwidth the DMA flows leave (reads first), so a DRAM idle between reads is filled
  by earlier stores' writes; the kernel ends when the last one reached DRAM. The DRAM bytes are the same.
- Latency: `level_latency_cycles` of the level plus `noc_hop_cycles` per mesh hop to the nearest memory
  edge; each contiguous run rounds out to whole `dma_granule_bytes` granules.
- Ordering: commands of one program touching the same global bytes keep program order (`memory_hazards`).
- LS: a program's circular buffers (depth x tile bytes each) plus its other LS bytes must fit the PE's
  `ls_bytes` for the whole program; the timing model raises otherwise (`ls_overflow_message`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import Final

from mtia_xdsl.machine.commands import Command, ProgramTrace, Runs
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.cost import dma_port_bytes_per_cycle, global_latency_cycles, scalar_access_cycles

DRAM: Final = 0
SRAM: Final = 1
WRITE_BEHIND: Final = 2
"""Pool indices of a DMA part; WRITE_BEHIND: the DRAM write of a store that the LLC makes behind the PE
(`llc_write_behind`), a background flow of the DRAM pool."""
BACKGROUND: Final = 2
"""Flow direction of the LLC's write-behind in a pool (0 read, 1 write): served from the bandwidth the
read and write flows leave."""

_nbytes = itemgetter(1)
"""The byte count of an (address, nbytes) run."""
_cap = attrgetter("cap")
_EPS: Final = 1e-9
_BYTE_TOLERANCE: Final = 1e-4


@dataclass
class MemoryTraffic:
    """Bytes moved per memory level over the whole kernel (chip). Units: bytes."""

    dram_read_bytes: float = 0.0
    dram_write_bytes: float = 0.0
    sram_read_bytes: float = 0.0
    sram_write_bytes: float = 0.0
    dram_transferred_bytes: float = 0.0
    """DRAM bytes moved by DMA including 32-byte granule rounding."""
    sram_transferred_bytes: float = 0.0
    """SRAM bytes moved by DMA including 32-byte granule rounding."""
    dma_dram_bytes: float = 0.0
    """Useful (unrounded) DRAM bytes moved by DMA; the roofline's bandwidth term uses these."""
    dma_sram_bytes: float = 0.0
    """Useful (unrounded) SRAM bytes moved by DMA."""
    scalar_access_bytes: float = 0.0
    """Bytes of scalar-core gathers/scatters (latency bound in the timing model)."""
    scalar_dram_bytes: float = 0.0
    """The part of `scalar_access_bytes` served by DRAM; with `dma_dram_bytes`, the roofline's DRAM term."""
    scalar_sram_bytes: float = 0.0
    """The part of `scalar_access_bytes` served by SRAM; with `dma_sram_bytes`, the roofline's SRAM term."""
    ls_bytes: float = 0.0


def bisect_left(a: list[int], x: int, lo: int = 0) -> int:
    """`bisect.bisect_left` on a list of ints, typed: compiled, it runs without a call into Python."""
    hi = len(a)
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def bisect_right(a: list[int], x: int, lo: int = 0) -> int:
    """`bisect.bisect_right` on a list of ints, typed (as `bisect_left`)."""
    hi = len(a)
    while lo < hi:
        mid = (lo + hi) >> 1
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


class LlcCoverage:
    """Set of byte addresses as sorted disjoint intervals [start, end)."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.total = 0
        self.resident_runs: dict[object, tuple[int, int]] = {}
        """Run lists `read_and_add` added completely -> (their bytes, their largest run): the set only grows,
        so they stay inside it (blocks that several programs load hit here)."""

    def contains(self, lo: int, hi: int) -> bool:
        """Whether every byte of [lo, hi) is in the set."""
        i = bisect_right(self.ends, lo)
        return i < len(self.starts) and self.starts[i] <= lo and hi <= self.ends[i]

    def covered(self, lo: int, hi: int) -> int:
        """Bytes of [lo, hi) already in the set."""
        ends, starts = self.ends, self.starts
        i = bisect_right(ends, lo)
        j = bisect_left(starts, hi, i)
        if i == j:
            return 0
        if j == i + 1:
            return max(0, min(ends[i], hi) - max(starts[i], lo))
        return sum(max(0, min(ends[k], hi) - max(starts[k], lo)) for k in range(i, j))

    def read_and_add(self, ranges: tuple[tuple[int, int], ...] | Runs, capacity: int) -> tuple[int, bool]:
        """Return (bytes of `ranges` already in the set, whether the set filled up); add the ranges in order
        while the set holds at most `capacity` bytes.

        Requires: ranges in ascending order and disjoint, so adding one never changes what the next finds:
        every lookup sees the set as it was, and the added ranges are merged in at the end.
        """
        if len(ranges) == 1:
            first = first_run(ranges)
            return self._read_and_add_one(first[0], first[1], capacity)
        key = _runs_key(ranges)
        known = self.resident_runs.get(key)
        if known is not None:
            return known[0], known[0] > 0 and self.total + known[1] > capacity
        starts, ends = self.starts, self.ends
        run_starts, run_bytes = _run_lists(ranges)
        useful, largest = _positive_sum_max(run_bytes)
        lo, hi = run_starts[0], run_starts[-1] + run_bytes[-1]
        i = bisect_right(ends, lo)
        if i < len(starts) and starts[i] <= lo and hi <= ends[i]:  # all inside one interval: nothing to add
            return useful, useful > 0 and self.total + largest > capacity
        i0, j0 = bisect_left(ends, lo), bisect_right(starts, hi)
        old_starts, old_ends = starts[i0:j0], ends[i0:j0]
        count, k = len(old_starts), 0
        cached, full, total = 0, False, self.total
        added_starts: list[int] = []
        added_ends: list[int] = []
        a: int  # typed: native integer arithmetic when compiled
        b: int
        n: int
        for r in range(len(run_starts)):
            a, n = run_starts[r], run_bytes[r]
            if n <= 0:
                continue
            b = a + n
            while k < count and old_ends[k] <= a:
                k += 1
            if k < count and old_starts[k] <= a and b <= old_ends[k]:
                covered = n
            else:
                covered, kk = 0, k
                while kk < count and old_starts[kk] < b:
                    end = old_ends[kk] if old_ends[kk] < b else b
                    covered += end - (old_starts[kk] if old_starts[kk] > a else a)
                    kk += 1
            cached += covered
            if not full:
                if total + n > capacity:
                    full = True
                elif covered < n:
                    added_starts.append(a)
                    added_ends.append(b)
                    total += n - covered
        if added_starts:
            merged_starts, merged_ends = _merge_sorted(old_starts, old_ends, added_starts, added_ends)
            starts[i0:j0] = merged_starts
            ends[i0:j0] = merged_ends
            self.total = total
        if not full and len(run_starts) > 1:
            self.resident_runs[key] = (useful, largest)
        return cached, full

    def _read_and_add_one(self, lo: int, n: int, capacity: int) -> tuple[int, bool]:
        """`read_and_add` of the single run [lo, lo + n)."""
        if n <= 0:
            return 0, False
        hi = lo + n
        starts, ends = self.starts, self.ends
        i = bisect_right(ends, lo)
        if i < len(starts) and starts[i] <= lo and hi <= ends[i]:
            return n, self.total + n > capacity
        cached = 0
        for k in range(i, bisect_left(starts, hi, i)):
            cached += max(0, min(ends[k], hi) - max(starts[k], lo))
        if self.total + n > capacity:
            return cached, True
        self.add(lo, hi)
        return cached, False

    def add(self, lo: int, hi: int) -> None:
        """Insert [lo, hi), merging overlapping and adjacent intervals."""
        starts, ends = self.starts, self.ends
        i = bisect_left(ends, lo)
        j = bisect_right(starts, hi, i)
        if i == j:
            starts.insert(i, lo)
            ends.insert(i, hi)
            self.total += hi - lo
            return
        new_lo, new_hi = min(lo, starts[i]), max(hi, ends[j - 1])
        removed = 0
        for k in range(i, j):
            removed += ends[k] - starts[k]
        if j == i + 1:  # the common case: grow one interval in place
            starts[i] = new_lo
            ends[i] = new_hi
        else:
            starts[i:j] = [new_lo]
            ends[i:j] = [new_hi]
        self.total += (new_hi - new_lo) - removed


def first_run(ranges: tuple[tuple[int, int], ...] | Runs) -> tuple[int, int]:
    """The first (address, nbytes) run of a non-empty run list (typed: native integers when compiled)."""
    if isinstance(ranges, tuple):
        return ranges[0]
    first: tuple[int, int] = ranges[0]
    return first


def _run_lists(ranges: tuple[tuple[int, int], ...] | Runs) -> tuple[list[int], list[int]]:
    """The start addresses and byte counts of a run list, as typed lists (no iteration of a `Runs` in Python)."""
    if isinstance(ranges, tuple):
        return [a for a, _ in ranges], [n for _, n in ranges]
    block = ranges.block
    shift: int = ranges.shift
    nbytes: int = block.nbytes
    starts: tuple[int, ...] = block.starts  # typed: the compiled model reads native integers
    run_starts = [start + shift for start in starts]
    return run_starts, [nbytes] * len(run_starts)


def _positive_sum_max(sizes: list[int]) -> tuple[int, int]:
    """(sum, largest) of the positive values of `sizes` ((0, 0) if none)."""
    total = 0
    largest = 0
    for n in sizes:
        if n > 0:
            total += n
            if n > largest:
                largest = n
    return total, largest


def _merge_sorted(
    a_starts: list[int], a_ends: list[int], b_starts: list[int], b_ends: list[int]
) -> tuple[list[int], list[int]]:
    """Union of two lists of [start, end) intervals, each sorted by start, merging overlapping and adjacent
    ones (without a tuple per interval or a sort)."""
    starts: list[int] = []
    ends: list[int] = []
    i = j = 0
    na, nb = len(a_starts), len(b_starts)
    lo: int
    hi: int
    last: int = 0
    """End of the interval being merged (the last of `starts`, whose end is not in `ends` yet)."""
    while i < na or j < nb:
        if j == nb or (i < na and a_starts[i] <= b_starts[j]):
            lo, hi = a_starts[i], a_ends[i]
            i += 1
        else:
            lo, hi = b_starts[j], b_ends[j]
            j += 1
        if starts and lo <= last:
            if hi > last:
                last = hi
        else:
            if starts:
                ends.append(last)
            starts.append(lo)
            last = hi
    if starts:
        ends.append(last)
    return starts, ends


def _regular_runs(ranges: tuple[tuple[int, int], ...] | Runs) -> tuple[int, int] | None:
    """(stride, bytes) if the (address, nbytes) runs all have the same size and are equally spaced (the
    rows of a block), else None."""
    if type(ranges) is Runs:
        block = ranges.block
        return None if block.stride is None else (block.stride, block.nbytes)
    (a0, n0), (a1, _) = ranges[0], ranges[1]
    stride, k = a1 - a0, len(ranges)
    if stride <= 0 or ranges != tuple(zip(range(a0, a0 + k * stride, stride), repeat(n0, k))):
        return None
    return stride, n0


def _runs_key(ranges: tuple[tuple[int, int], ...] | Runs) -> object:
    """A dict key of a run list; equal keys mean equal runs (a `Runs` keys by its shared block's identity and
    its shift: no hash of every run)."""
    return (ranges.block, ranges.shift) if type(ranges) is Runs else ranges


def _ascending_disjoint(ranges: tuple[tuple[int, int], ...] | Runs) -> bool:
    """Whether each (address, nbytes) run starts at or after the end of the one before."""
    end = None
    for a, n in ranges:
        if end is not None and a < end:
            return False
        end = a + n
    return True


class Flow:
    """A flow in a `FlowGroup`: it ends when the group's virtual clock reaches `end` (bytes). The timing model's
    DMA transfers are flows themselves (a subclass), one part after another: no object per part."""

    __slots__ = ("end", "seq")

    def __init__(self, end: float = 0.0, seq: int = 0) -> None:
        self.end = end
        self.seq = seq
        """Creation order: of two flows with the same `end`, the earlier one ends first."""


def _before(a: Flow, b: Flow) -> bool:
    return a.end < b.end or (a.end == b.end and a.seq < b.seq)


class FlowGroup:
    """Flows of one direction in one pool: equal rates, tracked by virtual service time (bytes).

    `flows[head:]` are the group's flows sorted by (end, seq); `flows[:head]`, flows already taken (dropped
    now and then). A flow's end is the clock when it starts plus its bytes and the clock only grows, so a new
    flow mostly goes last (always, when the flows have one size) and the first to end is at the front: both
    are O(1), where a heap sifts through log n levels each time."""

    __slots__ = ("cap", "flows", "head", "n", "rate", "served")

    def __init__(self, cap: float) -> None:
        self.cap = cap
        self.served = 0.0
        self.flows: list[Flow] = []
        self.head = 0
        self.n = 0
        """Flows in the group: len(flows) - head."""
        self.rate = 0.0

    def push(self, flow: Flow) -> None:
        flows = self.flows
        k = len(flows)
        if k == self.head or not _before(flow, flows[k - 1]):
            flows.append(flow)
            return
        lo, hi = self.head, k - 1  # it goes before flows[k - 1]: find the first flow it goes before
        while lo < hi:
            mid = (lo + hi) >> 1
            if _before(flow, flows[mid]):
                hi = mid
            else:
                lo = mid + 1
        flows.insert(lo, flow)

    def first(self) -> Flow:
        """The flow that ends first (the group is not empty)."""
        return self.flows[self.head]

    def pop(self) -> Flow:
        """Remove and return the flow that ends first (the group is not empty)."""
        flows = self.flows
        h = self.head
        first = flows[h]
        h += 1
        if h == len(flows):
            flows.clear()
            h = 0
        elif h >= 64 and 2 * h >= len(flows):
            del flows[:h]
            h = 0
        self.head = h
        return first


class BandwidthPool:
    """A chip-wide memory level whose bandwidth all flows in flight share max-min fairly."""

    def __init__(self, index: int, bytes_per_cycle: float, caps: tuple[float, float]) -> None:
        self.index = index
        self.bytes_per_cycle = bytes_per_cycle
        self.groups = (FlowGroup(caps[0]), FlowGroup(caps[1]), FlowGroup(bytes_per_cycle))
        """Read, write and background (write-behind) flows."""
        self.by_cap = tuple(sorted(self.groups[:2], key=_cap))
        """The groups, smaller cap first (max-min fairness serves that one first)."""
        self.now = 0.0
        self.version = 0

    def advance(self, now: float) -> None:
        """Move the virtual clocks to cycle `now` at the current rates."""
        dt = now - self.now
        if dt > 0:
            for g in self.groups:
                if g.n:
                    g.served += g.rate * dt
        self.now = now

    def add_flow(self, direction: int, nbytes: float, seq: int, flow: Flow | None = None) -> None:
        """Start a flow of `nbytes` in `direction` (0 read, 1 write, BACKGROUND) at the pool's current time: `flow`
        (its `end` and `seq` set here), or a new `Flow` if None."""
        g = self.groups[direction]
        if flow is None:
            flow = Flow(g.served + nbytes, seq)
        else:
            flow.end = g.served + nbytes
            flow.seq = seq
        g.push(flow)
        g.n += 1

    def reschedule(self) -> float | None:
        """Recompute the max-min fair rates of the read and write flows (the group with the smaller cap is
        served first), share what they leave among the background flows, and bump `version`; return the
        cycle at which the next flow ends at these rates, or None when none can end."""
        self.version += 1
        read, write, background = self.groups
        if read.n and write.n:
            remaining, flows = self.bytes_per_cycle, read.n + write.n
            for g in self.by_cap:
                share = remaining / flows
                g.rate = min(g.cap, share)
                remaining -= g.rate * g.n
                flows -= g.n
        elif read.n or write.n:
            g = read if read.n else write
            share = self.bytes_per_cycle / g.n
            g.rate = g.cap if g.cap < share else share
        if background.n:
            used = (read.rate * read.n if read.n else 0.0) + (write.rate * write.n if write.n else 0.0)
            background.rate = max(0.0, self.bytes_per_cycle - used) / background.n
        best = None
        for g in self.groups:
            if g.n and g.rate > _EPS:
                t = self.now + max(0.0, g.first().end - g.served) / g.rate
                best = t if best is None or t < best else best
        return best

    def pop_finished(self) -> list[Flow]:
        """Remove and return every flow that has been fully served."""
        done = []
        for g in self.groups:
            # tolerance in bytes: large enough that a remainder never rounds to a zero time step
            tolerance = max(_BYTE_TOLERANCE, _EPS * g.served)
            while g.n and g.first().end <= g.served + tolerance:
                done.append(g.pop())
                g.n -= 1
        return done


class MemorySystem:
    """Global memory state of one simulation: placement, LLC coverage, pools and traffic counters."""

    def __init__(self, config: MachineConfig) -> None:
        self.config = config
        caps = (dma_port_bytes_per_cycle(False, config), dma_port_bytes_per_cycle(True, config))
        self.pools = (
            BandwidthPool(DRAM, config.dram_bytes_per_cycle, caps),
            BandwidthPool(SRAM, config.sram_bytes_per_cycle, caps),
        )
        self.coverage = LlcCoverage()
        self.write_behind = config.llc_write_behind == 1 and config.global_placement == "llc"
        self.placement: str = config.global_placement
        self.granule: int = config.dma_granule_bytes
        self.llc_bytes: int = config.llc_bytes
        """`global_placement`, `dma_granule_bytes` and `llc_bytes` of `config`, read per command."""
        """Stores end in the LLC, which writes them on to DRAM (`llc_write_behind`)."""
        self.llc_overflowed = False
        self.traffic = MemoryTraffic()

    def access_latency_cycles(self, level: str, pe: int) -> float:
        """Cycles from a request to the first byte: level latency plus NoC hops to the memory edge."""
        return global_latency_cycles(level, self.config.noc_hops(pe), self.config)

    def dma_parts(self, c: Command, write: bool) -> tuple[list[tuple[int, float, float]], str]:
        """Split a DMA command into (pool, granule-rounded bytes, useful bytes) parts; also its level.

        Counts the command's read/write traffic (as `count_traffic`) and updates the LLC. A store's DRAM
        bytes under write-behind are two parts: (SRAM, ...) that the PE moves, then (WRITE_BEHIND, ...).
        """
        ranges = c.global_ranges  # each field read once: a Command is a Python object, its reads are slow
        written: int = c.global_write_bytes
        total: int = c.global_read_bytes + written
        regular = _regular_runs(ranges) if len(ranges) > 2 else None
        dram, sram = self._split(ranges, total, write, regular)
        raw = dram + sram
        behind = write and self.write_behind
        parts = []
        if raw > 0:
            t = self.traffic
            write_fraction = written / raw
            t.dram_write_bytes += dram * write_fraction
            t.dram_read_bytes += dram * (1.0 - write_fraction)
            t.sram_write_bytes += sram * write_fraction
            t.sram_read_bytes += sram * (1.0 - write_fraction)
            scale = self._granule_bytes(ranges, total, c.descriptors, raw, regular) / raw
            if dram > 0 and behind:  # into the LLC, then on to DRAM behind the PE
                t.sram_write_bytes += dram
                parts.append((SRAM, dram * scale, dram))
                parts.append((WRITE_BEHIND, dram * scale, dram))
            elif dram > 0:
                parts.append((DRAM, dram * scale, dram))
            if sram > 0:
                parts.append((SRAM, sram * scale, sram))
        to_dram = dram > 0 and not behind
        level = "dram" if to_dram or (raw == 0 and self.placement != "sram") else "sram"
        return parts, level

    def count_transfer(self, pool: int, nbytes: float, useful: float) -> None:
        """Count bytes a DMA part moves through `pool` (rounded and useful)."""
        t = self.traffic
        if pool != SRAM:  # DRAM or WRITE_BEHIND
            t.dram_transferred_bytes += nbytes
            t.dma_dram_bytes += useful
        else:
            t.sram_transferred_bytes += nbytes
            t.dma_sram_bytes += useful

    def scalar_access_cycles(self, c: Command, pe: int) -> float:
        """Cycles the scalar core spends on element accesses: global (gathers, scalar loads) or LS (cb_read).

        The first access pays the full latency; the rest overlap `scalar_outstanding_loads` at a time.
        """
        cfg = self.config
        nbytes = c.global_read_bytes + c.global_write_bytes
        if nbytes == 0:
            if c.elems == 0:
                return 0.0
            return cfg.scalar_ls_latency_cycles + (c.elems - 1) * cfg.scalar_cycles_per_instr
        dram, sram = self.split_levels(c, c.global_write_bytes > c.global_read_bytes)
        self.count_traffic(c, dram, sram)
        self.traffic.scalar_access_bytes += nbytes
        self.traffic.scalar_dram_bytes += dram
        self.traffic.scalar_sram_bytes += sram
        latency = self.access_latency_cycles("dram" if dram > 0 else "sram", pe)
        return scalar_access_cycles(max(c.elems, 1), latency, cfg)

    def granule_bytes(self, c: Command, raw: float, regular: tuple[int, int] | None = None) -> float:
        """Bytes moved once every contiguous run is rounded out to whole granules.

        `regular`: the command's runs as (stride, bytes) when `_regular_runs` found them equally spaced.
        """
        total: int = c.global_read_bytes + c.global_write_bytes
        return self._granule_bytes(c.global_ranges, total, c.descriptors, raw, regular)

    def _granule_bytes(
        self,
        ranges: tuple[tuple[int, int], ...] | Runs,
        total: int,
        descriptors: int,
        raw: float,
        regular: tuple[int, int] | None,
    ) -> float:
        """`granule_bytes` of a command's runs, global bytes (read + written) and descriptors."""
        g = self.granule
        a: int  # typed: native integer arithmetic when compiled
        n: int
        if regular is not None and regular[0] % g == 0 and len(ranges) * regular[1] == total and total > 0:
            a, n = first_run(ranges)
            return raw * (len(ranges) * (-(-(a + n) // g) - a // g) * g) / total
        if len(ranges) == 1:
            a, n = first_run(ranges)
            if n == total:
                return raw * ((-(-(a + n) // g) - a // g) * g) / total if n > 0 else 0.0
        elif ranges and sum(map(_nbytes, ranges)) == total:
            spans = sum([-(-(a + n) // g) - a // g for a, n in ranges if n > 0]) * g
            return raw * spans / total if total else 0.0
        runs = max(1, descriptors)
        per_run = total / runs
        return raw * (runs * math.ceil(per_run / g) * g) / total if total else 0.0

    def split_levels(self, c: Command, write: bool, regular: tuple[int, int] | None = None) -> tuple[float, float]:
        """Return (DRAM bytes, SRAM bytes) of a command under the config's placement.

        `regular`: the command's runs as (stride, bytes) when `_regular_runs` found them equally spaced.
        """
        return self._split(c.global_ranges, c.global_read_bytes + c.global_write_bytes, write, regular)

    def _split(
        self, ranges: tuple[tuple[int, int], ...] | Runs, total: int, write: bool, regular: tuple[int, int] | None
    ) -> tuple[float, float]:
        """`split_levels` of a command's runs and global bytes (read + written)."""
        placement = self.placement
        nbytes = float(total)
        if placement == "dram":
            return nbytes, 0.0
        if placement == "sram":
            return 0.0, nbytes
        if write:  # write-through
            if len(ranges) > 1 and (regular[0] >= regular[1] if regular is not None else _ascending_disjoint(ranges)):
                self.llc_overflowed |= self.coverage.read_and_add(ranges, self.llc_bytes)[1]  # adds them as below
            else:
                self._llc_allocate(ranges, ())
            return nbytes, 0.0
        if not ranges:
            return nbytes, 0.0  # no addresses: assume a miss
        touched: int
        if regular is not None:
            touched, ascending = len(ranges) * regular[1], regular[0] >= regular[1]
        else:
            touched = first_run(ranges)[1] if len(ranges) == 1 else sum(map(_nbytes, ranges))
            ascending = len(ranges) == 1 or _ascending_disjoint(ranges)
        if touched <= 0:
            return nbytes, 0.0
        cov = self.coverage
        if ascending:
            cached, overflowed = cov.read_and_add(ranges, self.llc_bytes)
            self.llc_overflowed |= overflowed
            hit_fraction = min(1.0, cached / touched)
            return nbytes * (1.0 - hit_fraction), nbytes * hit_fraction
        cached = 0
        resident = []
        for a, n in ranges:
            if cov.contains(a, a + n):
                cached += n
                resident.append(True)
            else:
                cached += cov.covered(a, a + n)
                resident.append(False)
        self._llc_allocate(ranges, resident)
        hit_fraction = min(1.0, cached / touched)
        return nbytes * (1.0 - hit_fraction), nbytes * hit_fraction

    def _llc_allocate(self, ranges: tuple[tuple[int, int], ...] | Runs, resident: Sequence[bool]) -> None:
        """Add `ranges` to the LLC in order until it is full; `resident[k]`: range k is already in it."""
        cov, capacity = self.coverage, self.llc_bytes
        if len(ranges) == 1:  # the common case, typed
            a, n = first_run(ranges)
            if n > 0:
                if cov.total + n > capacity:
                    self.llc_overflowed = True
                elif not (resident and resident[0]):
                    cov.add(a, a + n)
            return
        for k, (a, n) in enumerate(ranges):
            if n <= 0:
                continue
            if cov.total + n > capacity:
                self.llc_overflowed = True
                return
            if not (resident and resident[k]):
                cov.add(a, a + n)

    def count_traffic(self, c: Command, dram: float, sram: float) -> None:
        """Count a command's bytes as reads/writes of each level."""
        t = self.traffic
        total = dram + sram
        if total <= 0:
            return
        write_fraction = c.global_write_bytes / total
        t.dram_write_bytes += dram * write_fraction
        t.dram_read_bytes += dram * (1.0 - write_fraction)
        t.sram_write_bytes += sram * write_fraction
        t.sram_read_bytes += sram * (1.0 - write_fraction)


def ls_overflow_message(prog: ProgramTrace, config: MachineConfig, pe: int) -> str:
    """Explain why a program's LS footprint (every CB's depth x tile bytes plus other LS bytes) does not
    fit `config.ls_bytes`, listing each CB's bytes."""
    parts = [
        f"cb {cb}: {depth} x {prog.cb_tile_bytes.get(cb, 0)} B = {depth * prog.cb_tile_bytes.get(cb, 0)} B"
        for cb, depth in sorted(prog.cb_depth.items())
    ]
    if prog.extra_ls_bytes:
        parts.append(f"other LS: {prog.extra_ls_bytes} B")
    loc = prog.commands[0].loc + ": " if prog.commands else ""
    return (
        f"{loc}local storage overflow: program {prog.program_id} on PE {pe} holds {prog.ls_footprint_bytes()} "
        f"bytes of LS but a PE has {config.ls_bytes} ({'; '.join(parts)}); use smaller blocks or shallower CBs"
    )


# ---------------------------------------------------------------------------------------------------
# Program order through global memory
# ---------------------------------------------------------------------------------------------------


def _span(c: Command) -> tuple[int, int] | None:
    """[first, last) global byte address of a command's accesses, or None if it touches none."""
    if c.global_read_bytes == 0 and c.global_write_bytes == 0:
        return None
    ranges = c.global_ranges
    if type(ranges) is Runs:
        lo, hi = ranges.block.span
        return lo + ranges.shift, hi + ranges.shift
    if ranges:
        return min(ranges)[0], max(map(sum, ranges))
    return c.global_extent


def _ranges_overlap(a: tuple[tuple[int, int], ...] | Runs, b: tuple[tuple[int, int], ...] | Runs) -> bool:
    """Whether two lists of (address, nbytes) runs share a byte; unknown (empty) lists overlap."""
    if not a or not b:
        return True
    ia, ib = sorted(a), sorted(b)
    i = j = 0
    while i < len(ia) and j < len(ib):
        (sa, na), (sb, nb) = ia[i], ib[j]
        if sa < sb + nb and sb < sa + na:
            return True
        if sa + na <= sb + nb:
            i += 1
        else:
            j += 1
    return False


def _add_overlapping(
    out: list[int],
    cmds: Sequence[Command],
    ranges: tuple[tuple[int, int], ...] | Runs,
    lo_i: int,
    hi_i: int,
    seen_index: list[int],
    seen_lo: list[int],
    seen_hi: list[int],
) -> None:
    """Append to `out`, in order, each command of `seen_index` whose span [seen_lo, seen_hi) meets [lo_i, hi_i)
    and whose runs overlap `ranges` (`memory_hazards`)."""
    for k in range(len(seen_index)):
        if seen_lo[k] < hi_i and lo_i < seen_hi[k] and _ranges_overlap(ranges, cmds[seen_index[k]].global_ranges):
            out.append(seen_index[k])


def hazards_possible(cmds: Sequence[Command], indices: Sequence[int]) -> bool:
    """Whether `memory_hazards` may find a hazard among the commands `indices`: whether the span (first to
    last byte) of a command writing global memory meets the span of another; if not, it finds none. Each
    field of a command is read once (a `Command` is a Python object: its reads are slow)."""
    los: list[int] = []
    his: list[int] = []
    writes: list[bool] = []
    lo: int
    hi: int
    n: int
    for i in indices:
        c = cmds[i]
        written: int = c.global_write_bytes
        if not written and not c.global_read_bytes:
            continue
        ranges = c.global_ranges
        if len(ranges) == 1:
            lo, n = first_run(ranges)
            hi = lo + n
        elif type(ranges) is Runs:
            lo, hi = ranges.block.span
            lo += ranges.shift
            hi += ranges.shift
        elif ranges:
            lo, hi = min(ranges)[0], max(map(sum, ranges))
        else:
            extent = c.global_extent
            if extent is None:
                continue
            lo, hi = extent
        los.append(lo)
        his.append(hi)
        writes.append(written > 0)
    for j in range(len(los)):
        if writes[j]:
            lo, hi = los[j], his[j]
            for k in range(len(los)):
                if k != j and los[k] < hi and lo < his[k]:
                    return True
    return False


def memory_hazards(cmds: Sequence[Command], indices: Sequence[int] | None = None) -> list[list[int]]:
    """For each command, the earlier commands of the program it must follow through global memory.

    A command reading or writing bytes that an earlier command writes (or writing bytes an earlier
    command reads) starts after that command ended, as the DMA engine's ordering guarantees; loads and
    stores of one program to the same memory otherwise overlap in time. `indices`, if given, lists the
    only commands that may touch global memory.
    """
    hazards: list[list[int]] = [[] for _ in cmds]
    order: Sequence[int] = range(len(cmds)) if indices is None else indices
    for i in order:
        if cmds[i].global_write_bytes:
            break
    else:
        return hazards  # reads never order against reads
    # the commands seen so far that write / only read: index, first and last byte address (typed lists: the
    # compiled model compares native integers)
    write_index: list[int] = []
    write_lo: list[int] = []
    write_hi: list[int] = []
    read_index: list[int] = []
    read_lo: list[int] = []
    read_hi: list[int] = []
    lo_i: int
    hi_i: int
    for i in order:
        c = cmds[i]
        writes = c.global_write_bytes > 0
        if not writes and c.global_read_bytes == 0:
            continue
        ranges = c.global_ranges
        if len(ranges) == 1:
            lo_i, n = first_run(ranges)
            hi_i = lo_i + n
        else:
            span = _span(c)
            if span is None:
                continue
            lo_i, hi_i = span
        _add_overlapping(hazards[i], cmds, ranges, lo_i, hi_i, write_index, write_lo, write_hi)
        if writes:
            _add_overlapping(hazards[i], cmds, ranges, lo_i, hi_i, read_index, read_lo, read_hi)
            write_index.append(i)
            write_lo.append(lo_i)
            write_hi.append(hi_i)
        else:
            read_index.append(i)
            read_lo.append(lo_i)
            read_hi.append(hi_i)
    return hazards

"""Global memory of the machine model: byte-addressed working copies of the kernel's torch storages.

A storage is copied on its first write; until then reads see the caller's bytes, which nothing changes
during a run. `commit()` writes the written ones back, so a failed run leaves the caller's tensors
untouched. An undo log (`begin_undo`/`undo`) lets the machine's runner roll back the writes of a batch.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.machine.interpret.batching import batch_scalar, fill_outside_box
from mtia_xdsl.machine.interpret.formats import ElementFormat, element_format


@dataclass
class _Region:
    """One torch storage: its address range and the working copy of its bytes (made on the first write)."""

    base: int
    working: np.ndarray
    """uint8 bytes: a read-only view of the caller's storage until `owned`, then the working copy, written
    back by GlobalMemory.commit."""
    storage: Any
    """The caller's torch.UntypedStorage."""
    owned: bool = False
    """`working` is a private copy (some write happened)."""
    read_only_arg: str | None = None
    """The argument whose read-only numpy array this storage is (`mark_read_only`): a write is refused."""

    def own(self) -> None:
        """Make `working` a private, writable copy (before the first write).

        Raises: InterpretationError naming the argument if the storage is a read-only array's.
        """
        if self.read_only_arg is not None:
            raise InterpretationError(read_only_write_error(self.read_only_arg))
        if not self.owned:
            self.working = self.working.copy()
            self.owned = True

    @property
    def end(self) -> int:
        return self.base + self.working.size


_READ_ONLY = "_mtia_read_only"


def mark_read_only(tensor: Any) -> Any:
    """Mark `tensor` (made by `torch.from_numpy` of a read-only array) as one a kernel must not store into."""
    setattr(tensor, _READ_ONLY, True)
    return tensor


def is_read_only(tensor: Any) -> bool:
    """Whether `tensor` was marked by `mark_read_only`."""
    return bool(getattr(tensor, _READ_ONLY, False))


def read_only_write_error(name: str) -> str:
    """The message for a store into argument `name`, a read-only array: every executor's words."""
    return (
        f"argument '{name}' is a read-only numpy array (flags.writeable is False) and the kernel stores into it; "
        "pass a writable array (np.array(x) copies one)"
    )


@dataclass(frozen=True)
class _ArgInfo:
    """A tensor argument, for error messages: name, address range it views, element size."""

    name: str
    start: int
    end: int
    elem_bytes: int
    desc: str


@dataclass
class GlobalMemory:
    """Byte-addressed global memory backed by working copies of torch CPU storages.

    Build it with `from_tensors`; read and write it with `gather`/`scatter` (vectors of addresses) or
    `read_block`/`write_block` (strided blocks, as the DMA sees them); `commit()` copies the working
    copies into the caller's storages.
    """

    regions: list[_Region] = field(default_factory=list)
    args: list[_ArgInfo] = field(default_factory=list)
    undo_log: list[tuple[np.ndarray, Any, np.ndarray]] | None = None
    """While recording (`begin_undo`): (view of a working copy, indices, old values) of every write, oldest
    first."""
    watchers: int = 0
    """How many loops watch for progress; while positive, writes that change memory bump `version`."""
    version: int = 0
    """Counts writes that changed a byte, while `watchers` > 0."""
    adopt_live_tensors: bool = False
    """An access outside every region may reach any live torch CPU tensor (its whole storage becomes a
    region): set for kernels that turn integers into pointers (`tt.int_to_ptr`), as tutorial 08 loads
    `A.data_ptr()` values from an int64 tensor. Off for other kernels, so a stray access stays an error."""

    @staticmethod
    def from_tensors(tensors: Sequence[Any], names: Sequence[str] | None = None) -> GlobalMemory:
        """Make a memory holding every torch tensor in `tensors` (non-tensors are skipped).

        Views of one storage share a region. `names` (parallel to `tensors`) name arguments in errors.
        """
        import torch

        mem = GlobalMemory()
        by_base: dict[int, _Region] = {}
        for i, t in enumerate(tensors):
            if not isinstance(t, torch.Tensor):
                continue
            if t.device.type != "cpu":
                raise InterpretationError(f"tensor argument {i} is on {t.device}; the machine model needs CPU tensors")
            storage = t.untyped_storage()
            base = storage.data_ptr()
            if base not in by_base:
                raw = torch.empty(0, dtype=torch.uint8).set_(storage).detach().numpy()
                raw.flags.writeable = False  # a write goes to a private copy (`_Region.own`)
                by_base[base] = _Region(base, raw, storage)
            name = names[i] if names is not None and i < len(names) else f"#{i}"
            if is_read_only(t) and by_base[base].read_only_arg is None:
                by_base[base].read_only_arg = name
            mem.args.append(_arg_info(t, name))
        mem.regions = sorted(by_base.values(), key=lambda r: r.base)
        return mem

    def begin_undo(self) -> None:
        """Start recording writes so that `undo` can roll them back."""
        self.undo_log = []

    def end_undo(self) -> None:
        """Stop recording writes and forget the log."""
        self.undo_log = None

    def undo(self) -> None:
        """Roll back every write since `begin_undo` (newest first) and keep recording."""
        log = self.undo_log or []
        for view, pos, old in reversed(log):
            view[pos] = old
        self.undo_log = []

    def commit(self) -> None:
        """Copy every working copy back into the caller's storage (regions never written are unchanged)."""
        import torch

        for r in self.regions:
            if not r.owned:
                continue
            # numpy's copy: torch's copy_ of uint8 bytes costs ~10x more CPU (threads) on a loaded machine
            dst = torch.empty(0, dtype=torch.uint8).set_(r.storage).detach().numpy()
            np.copyto(dst, r.working)

    # -- element access -------------------------------------------------------------------------------

    def gather(
        self, addrs: Any, dtype: Any, mask: Any = None, other: Any = None, where: str = "<unknown location>"
    ) -> np.ndarray:
        """Load one element per address; masked-off lanes get `other` (0 if None) and are never read.

        Shapes: addrs, mask, other broadcast together; the result has the shape of addrs.
        Units: addrs are byte addresses; `dtype` is an xDSL element type, numpy dtype or name.
        Raises: InterpretationError for an unmasked address outside every region, or misaligned.
        """
        fmt = element_format(dtype)
        addrs = np.asarray(addrs, dtype=np.int64)
        shape = np.broadcast_shapes(addrs.shape, np.shape(mask), np.shape(other))
        addrs = np.broadcast_to(addrs, shape)
        fill = np.asarray(0 if other is None else other).astype(fmt.compute)
        if mask is None:
            return fmt.from_storage(self._read_raw(addrs.reshape(-1), fmt, where)).reshape(shape)
        active = self._active(addrs, mask)
        flat_active = active.reshape(-1)
        first = int(np.argmax(flat_active)) if flat_active.size else 0
        if flat_active.size == 0 or not flat_active[first]:
            return np.broadcast_to(fill, shape).copy()
        # masked-off lanes read a lane that is read anyway, then take `other`
        safe = np.where(active, addrs, addrs.reshape(-1)[first]).reshape(-1)
        values = fmt.from_storage(self._read_raw(safe, fmt, where)).reshape(shape)
        return np.where(active, values, fill)

    def scatter(self, addrs: Any, values: Any, dtype: Any, mask: Any = None, where: str = "<unknown location>") -> None:
        """Store one element per address; masked-off lanes are not written.

        Duplicate addresses: the lane last in row-major order wins.
        Raises: InterpretationError for an unmasked address outside every region, or misaligned.
        """
        fmt = element_format(dtype)
        addrs = np.asarray(addrs, dtype=np.int64)
        shape = np.broadcast_shapes(addrs.shape, np.shape(mask), np.shape(values))
        addrs = np.broadcast_to(addrs, shape)
        active = self._active(addrs, mask)
        vals = np.broadcast_to(fmt.to_storage(values), addrs.shape).reshape(-1)
        lanes = np.flatnonzero(active.reshape(-1))
        if lanes.size:
            self._write_raw(addrs.reshape(-1)[lanes], vals[lanes], fmt, where)

    def read_block(
        self,
        base_addr: Any,
        strides_elems: Sequence[Any],
        shape: Sequence[int],
        bounds: Sequence[Any],
        dtype: Any,
        other: Any = 0,
        where: str = "<unknown location>",
        starts: Sequence[Any] = (),
    ) -> np.ndarray:
        """Read a strided block; element idx lives at base_addr + sum(idx[d] * strides_elems[d]) * size.

        Shapes: result has `shape`; element idx is valid iff starts[d] <= idx[d] < bounds[d] for every d
        (no starts: 0), otherwise it is `other` and never read. Batched: base, strides, bounds and starts
        may be arrays of shape (B,), one entry per program; the result then has shape (B, *shape).
        """
        fmt = element_format(dtype)
        if _any_start(starts):
            addrs, mask = self._block_addrs(base_addr, strides_elems, shape, bounds, dtype, starts)
            return self.gather(addrs, dtype, mask, other, where)
        fast = self._block_view(base_addr, strides_elems, shape, bounds, fmt, write=False)
        if fast is not None:
            views, index, mask = fast
            values = fmt.from_storage(np.array(views[index]) if index is Ellipsis else views[index])
            if mask is None:
                return values
            fill = np.asarray(0 if other is None else other).astype(fmt.compute)
            if all(np.ndim(b) == 0 for b in bounds) and fill_outside_box(values, [int(b) for b in bounds], fill):
                return values  # a fresh array: the masked-off lanes take `other` in place
            return np.where(mask, values, fill)
        addrs, mask = self._block_addrs(base_addr, strides_elems, shape, bounds, dtype)
        return self.gather(addrs, dtype, mask, other, where)

    def write_block(
        self,
        base_addr: Any,
        strides_elems: Sequence[Any],
        shape: Sequence[int],
        bounds: Sequence[Any],
        values: Any,
        dtype: Any,
        where: str = "<unknown location>",
        starts: Sequence[Any] = (),
    ) -> None:
        """Write the valid part (starts[d] <= idx[d] < bounds[d]) of a strided block; see `read_block`."""
        if _any_start(starts):
            addrs, mask = self._block_addrs(base_addr, strides_elems, shape, bounds, dtype, starts)
            self.scatter(addrs, values, dtype, mask, where)
            return
        fmt = element_format(dtype)
        raw = None
        if (
            shape
            and all(np.ndim(b) == 0 for b in bounds)
            and any(int(b) < n for b, n in zip(bounds, shape, strict=True))
        ):
            # the same valid sub-block for every program: write just it (no mask; blocks of neighbouring
            # programs may overlap in their masked-off parts, e.g. rows padded to a power of two)
            valid = [max(0, min(int(b), n)) for b, n in zip(bounds, shape, strict=True)]
            if 0 in valid:
                return
            raw = fmt.to_storage(values)
            raw = np.broadcast_to(raw, raw.shape[: max(raw.ndim - len(shape), 0)] + tuple(shape))
            raw = raw[(Ellipsis, *(slice(0, v) for v in valid))]
        view_shape = shape if raw is None else valid
        fast = self._block_view(base_addr, strides_elems, view_shape, bounds if raw is None else valid, fmt, write=True)
        if fast is not None:
            views, index, mask = fast
            raw = fmt.to_storage(values) if raw is None else raw
            if raw.ndim <= len(shape) + (index is not Ellipsis):
                old = np.array(views[index]) if index is Ellipsis else views[index]
                if self.undo_log is not None:
                    self.undo_log.append((views, index, old))
                views[index] = raw if mask is None else np.where(mask, raw, old)
                return
        addrs, mask = self._block_addrs(base_addr, strides_elems, shape, bounds, dtype)
        self.scatter(addrs, values, dtype, mask, where)

    # -- internals ------------------------------------------------------------------------------------

    @staticmethod
    def _active(addrs: np.ndarray, mask: Any) -> np.ndarray:
        if mask is None:
            return np.ones(addrs.shape, dtype=bool)
        return np.broadcast_to(np.asarray(mask, dtype=bool), addrs.shape)

    def _block_view(
        self,
        base_addr: Any,
        strides: Sequence[Any],
        shape: Sequence[int],
        bounds: Sequence[Any],
        fmt: ElementFormat,
        write: bool,
    ) -> tuple[np.ndarray, Any, np.ndarray | None] | None:
        """Strided views of a whole block in the working memory: (views, index, mask of the valid part).

        `views[index]` is the block: `views` is the block itself and `index` Ellipsis for one program,
        else `views` holds every window of the block's layout over the region and `index` the element
        offset of each program's block (B,). Mask None: every element is valid. Only when exact: strides
        the same for every program and non-negative, every element of every program's block (masked-off
        ones too) inside one region and aligned, and for writes no two elements at one address.
        Otherwise None (the caller goes through `gather`/`scatter`, which check every lane).
        """
        size = fmt.size_bytes
        if not self.regions or not shape or any(np.ndim(s) for s in strides) or any(n <= 0 for n in shape):
            return None
        elem_strides = [int(s) for s in strides]
        if any(s < 0 for s in elem_strides) or any(np.ndim(b) > 1 for b in bounds):
            return None
        base = np.asarray(base_addr, dtype=np.int64)
        batch = max([base.size if base.ndim else 0] + [np.size(b) if np.ndim(b) else 0 for b in bounds])
        if base.ndim > 1 or (base.ndim and base.size == 0):
            return None
        lo, hi = (int(base.min()), int(base.max())) if base.ndim else (int(base), int(base))
        span = sum(s * (n - 1) for s, n in zip(elem_strides, shape, strict=True)) + 1
        i = bisect.bisect_right(self._bases(), lo) - 1
        if i < 0 or (base.ndim and (base % size).any()) or lo % size:
            return None
        typed = self._typed(i, fmt)
        region_base = self.regions[i].base
        if typed is None or hi + span * size > region_base + typed.size * size:
            return None
        byte_strides = tuple(s * size for s in elem_strides)
        offsets = (base - region_base) // size
        if write:
            if not _disjoint(shape, byte_strides, size):
                return None
            if batch and (base.ndim == 0 or (np.diff(np.sort(offsets)) < span).any()):
                return None
            self.regions[i].own()
            typed = self._typed(i, fmt)
            assert typed is not None
        if not batch:
            views = np.lib.stride_tricks.as_strided(typed[int(offsets) :], tuple(shape), byte_strides, writeable=write)
            index: Any = Ellipsis
        else:
            windows = typed.size - span + 1
            views = np.lib.stride_tricks.as_strided(typed, (windows, *shape), (size, *byte_strides), writeable=write)
            index = np.broadcast_to(offsets, (batch,))
        return views, index, _block_mask(shape, bounds)

    def _bases(self) -> list[int]:
        return [r.base for r in self.regions]

    @staticmethod
    def _block_addrs(
        base_addr: Any,
        strides: Sequence[Any],
        shape: Sequence[int],
        bounds: Sequence[Any],
        dtype: Any,
        starts: Sequence[Any] = (),
    ) -> tuple[np.ndarray, np.ndarray]:
        size = element_format(dtype).size_bytes
        rank = len(shape)
        shape = tuple(shape)
        offs: Any = np.int64(0)
        mask: Any = np.True_
        for d in range(rank):
            idx = np.arange(shape[d], dtype=np.int64).reshape((shape[d],) + (1,) * (rank - 1 - d))
            offs = offs + idx * batch_scalar(np.asarray(strides[d], dtype=np.int64), rank)
            mask = mask & (idx < batch_scalar(np.asarray(bounds[d], dtype=np.int64), rank))
            if starts:
                mask = mask & (idx >= batch_scalar(np.asarray(starts[d], dtype=np.int64), rank))
        addrs = batch_scalar(np.asarray(base_addr, dtype=np.int64), rank) + offs * size
        full = np.broadcast_shapes(np.shape(addrs), np.shape(mask), shape)
        return np.broadcast_to(addrs, full), np.broadcast_to(mask, full)

    def storage_extent(self, addrs: np.ndarray, size: int) -> np.ndarray:
        """Elements of `size` bytes from each address to the end of the storage holding it (0 when none does):
        `mtia.storage_extent`, the bound that clips a DMA box at the end of its tensor's storage."""
        if not self.regions:
            return np.zeros(addrs.shape, dtype=np.int64)
        bases = np.array([r.base for r in self.regions], dtype=np.int64)
        ends = np.array([r.end for r in self.regions], dtype=np.int64)
        ridx = np.searchsorted(bases, addrs, side="right") - 1
        safe = np.clip(ridx, 0, len(self.regions) - 1)
        inside = (ridx >= 0) & (addrs < ends[safe])
        return np.where(inside, (ends[safe] - addrs) // size, 0).astype(np.int64)

    def _locate(self, addrs: np.ndarray, fmt: ElementFormat, where: str) -> tuple[np.ndarray, np.ndarray]:
        """Return (region index, byte offset in region) per address; raise on a bad access.

        The region index is a 0-d array when every address lies in one region.
        """
        size = fmt.size_bytes
        if addrs.size and self.regions and size & (size - 1) == 0:
            lo, hi = int(addrs.min()), int(addrs.max())
            i = int(np.searchsorted([r.base for r in self.regions], lo, side="right")) - 1
            one = i >= 0 and hi + size <= self.regions[i].end
            if one and not (addrs & (size - 1)).any():
                return np.asarray(i), addrs - self.regions[i].base
        bases = np.array([r.base for r in self.regions], dtype=np.int64)
        ends = np.array([r.end for r in self.regions], dtype=np.int64)
        ridx = np.searchsorted(bases, addrs, side="right") - 1
        safe = np.clip(ridx, 0, max(len(self.regions) - 1, 0))
        inside = (ridx >= 0) & (addrs + size <= ends[safe]) if self.regions else np.zeros(addrs.shape, bool)
        bad = np.flatnonzero(~inside)
        if bad.size and self.adopt_live_tensors and self._adopt_storages(addrs[bad]):
            return self._locate(addrs, fmt, where)
        if bad.size:
            self._raise_out_of_bounds(int(addrs[bad[0]]), fmt, where, int(bad.size))
        misaligned = np.flatnonzero(addrs % size != 0)
        if misaligned.size:
            a = int(addrs[misaligned[0]])
            raise InterpretationError(
                f"{where}: error: misaligned {fmt.name} access at address {a:#x} "
                f"({a % size} bytes off a {size}-byte boundary{self._nearest_text(a, fmt)})"
            )
        return ridx, addrs - bases[ridx]

    def _typed(self, i: int, fmt: ElementFormat) -> np.ndarray | None:
        """Region `i` viewed as elements of `fmt` when its base is aligned to the element size, else None."""
        r = self.regions[i]
        size = fmt.size_bytes
        if r.base % size:
            return None
        n = r.working.size // size
        return r.working[: n * size].view(fmt.storage)

    def _by_region(self, ridx: np.ndarray) -> list[tuple[int, Any]]:
        """(region, lane selector) pairs covering every lane; one region needs no selection."""
        if ridx.ndim == 0:
            return [(int(ridx), slice(None))]
        if len(self.regions) == 1 or (ridx.size and (ridx == ridx[0]).all()):
            return [(int(ridx[0]) if ridx.size else 0, slice(None))]
        return [(int(i), ridx == i) for i in np.unique(ridx)]

    def _read_raw(self, addrs: np.ndarray, fmt: ElementFormat, where: str) -> np.ndarray:
        ridx, offs = self._locate(addrs, fmt, where)
        size = fmt.size_bytes
        out = np.empty(addrs.size, dtype=fmt.storage)
        byte_idx = np.arange(size, dtype=np.int64)
        for i, sel in self._by_region(ridx):
            typed = self._typed(i, fmt)
            if typed is not None:  # aligned: element offsets index the typed view (alignment was checked)
                out[sel] = typed[offs[sel] // size]
            else:
                raw = self.regions[i].working[offs[sel][:, None] + byte_idx]
                out[sel] = np.ascontiguousarray(raw).view(fmt.storage).reshape(-1)
        return out

    def _write_raw(self, addrs: np.ndarray, raw: np.ndarray, fmt: ElementFormat, where: str) -> None:
        ridx, offs = self._locate(addrs, fmt, where)
        size = fmt.size_bytes
        data = np.ascontiguousarray(raw.astype(fmt.storage)).view(np.uint8).reshape(addrs.size, size)
        byte_idx = np.arange(size, dtype=np.int64)
        for i, sel in self._by_region(ridx):
            self.regions[i].own()
            typed = self._typed(i, fmt)
            if typed is not None:
                pos, view, values = offs[sel] // size, typed, raw.astype(fmt.storage)[sel]
            else:
                pos, view, values = offs[sel][:, None] + byte_idx, self.regions[i].working, data[sel]
            if self.undo_log is not None:
                self.undo_log.append((view, pos, view[pos]))
            if self.watchers and not np.array_equal(view[pos], values):
                self.version += 1
            view[pos] = values

    def _adopt_storages(self, addrs: np.ndarray) -> bool:
        """Add the storage of every live torch CPU tensor holding one of `addrs` as a region.

        Returns whether any was added. A pointer a kernel loaded from memory is the `data_ptr()` of some
        tensor the caller keeps alive; the garbage collector's object list finds it (one scan per fault).
        """
        import torch

        from mtia_xdsl.utils.heap import tracked_objects

        wanted = np.unique(addrs)
        known = {r.base for r in self.regions}
        added: dict[int, _Region] = {}
        for obj in tracked_objects():
            # type(), not isinstance: isinstance reads `__class__`, which some lazy module proxies warn on
            if not issubclass(type(obj), torch.Tensor) or obj.device.type != "cpu" or obj.is_meta:
                continue
            try:
                storage = obj.untyped_storage()
                if storage.device.type != "cpu":  # a FakeTensor (torch.compile): its storage is on "meta"
                    continue
                base, nbytes = storage.data_ptr(), storage.nbytes()
            except RuntimeError:  # a FunctionalTensor left by torch.compile: no data behind it
                continue
            if base in known or base in added or nbytes == 0:
                continue
            pos = int(np.searchsorted(wanted, base))
            if pos < wanted.size and wanted[pos] < base + nbytes:
                raw = torch.empty(0, dtype=torch.uint8).set_(storage).detach().numpy()
                raw.flags.writeable = False
                added[base] = _Region(base, raw, storage)
        if not added:
            return False
        self.regions = sorted([*self.regions, *added.values()], key=lambda r: r.base)
        return True

    def _nearest_text(self, addr: int, fmt: ElementFormat) -> str:
        if not self.args:
            return ""

        def distance(a: _ArgInfo) -> int:
            return 0 if a.start <= addr < a.end else min(abs(addr - a.start), abs(addr - (a.end - 1)))

        arg = min(self.args, key=distance)
        size = fmt.size_bytes
        if addr < arg.start:
            pos = f"{(arg.start - addr + size - 1) // size} element(s) before the start of"
        elif addr >= arg.end:
            pos = f"{(addr - arg.end) // size + 1} element(s) past the end of"
        else:
            pos = f"element {(addr - arg.start) // size} of"
        return f"; nearest tensor argument: {pos} '{arg.name}' ({arg.desc})"

    def _raise_out_of_bounds(self, addr: int, fmt: ElementFormat, where: str, count: int) -> None:
        lanes = f" (and {count - 1} more lanes)" if count > 1 else ""
        raise InterpretationError(
            f"{where}: error: out-of-bounds {fmt.name} access at address {addr:#x}{lanes}, outside every "
            f"tensor argument{self._nearest_text(addr, fmt)}; mask the access or fix the offsets"
        )


def _any_start(starts: Sequence[Any]) -> bool:
    """Whether any start of a DMA block is past lane 0 (for any program)."""
    return any(np.any(np.asarray(s) > 0) for s in starts)


def _block_mask(shape: Sequence[int], bounds: Sequence[Any]) -> np.ndarray | None:
    """The valid elements (idx[d] < bounds[d]) of a block, batched like the bounds; None when all are."""
    mask: Any = None
    rank = len(shape)
    for d in range(rank):
        bound = bounds[d]
        if np.ndim(bound) == 0 and int(bound) >= shape[d]:
            continue
        idx = np.arange(shape[d], dtype=np.int64).reshape((shape[d],) + (1,) * (rank - 1 - d))
        dim_mask = idx < batch_scalar(np.asarray(bound, dtype=np.int64), rank)
        mask = dim_mask if mask is None else mask & dim_mask
    return mask


def _disjoint(shape: Sequence[int], strides_bytes: Sequence[int], size: int) -> bool:
    """Return whether a strided view (non-negative strides) maps distinct elements to distinct addresses."""
    reach = size
    for stride, n in sorted((st, n) for st, n in zip(strides_bytes, shape, strict=True) if n > 1):
        if stride < reach:
            return False
        reach += stride * (n - 1)
    return True


def _arg_info(t: Any, name: str) -> _ArgInfo:
    """Describe the byte range a torch tensor view covers inside its storage."""
    elem = t.element_size()
    start = t.data_ptr()
    if t.numel() == 0:
        extent = 0
    else:
        extent = sum((s - 1) * abs(st) for s, st in zip(t.shape, t.stride(), strict=True)) + 1
    dtype = str(t.dtype).removeprefix("torch.")
    shape = "x".join(str(s) for s in t.shape) or "scalar"
    return _ArgInfo(name, start, start + extent * elem, elem, f"{dtype}[{shape}]")

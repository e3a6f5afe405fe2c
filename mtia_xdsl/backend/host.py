"""Build, run and time an emitted C++ kernel on the host: the hand-tuning loop of backend/cpp.py's output.

`run_cpp(source, grid, args)` compiles the translation unit with the system C++ compiler together with the
host runtime (runtime/host_runtime.cpp), loads it with ctypes, runs every program id of the grid on working
copies of the caller's tensors (written back only when the whole launch succeeded, as machine/run.py does;
a program that reaches a cross-PE reduction before its group's result is known reruns, backend/collective.py),
turns each program's recorded command stream into `ProgramTrace`s with the functions the machine model's
interpreter uses (machine/interpret/command_work.py, dma_trace.py) and times them with
`machine.timing.simulate`, exactly as `machine.run.run_kernel` does. So the unmodified C++ of a kernel gives
the model's commands and cycles, and an edited one (a CB depth, the order of two DMAs) the new cycles.

Builds are cached by content hash under the user cache directory ($XDG_CACHE_HOME or ~/.cache, then
mtia_xdsl/cpp), so running a kernel twice compiles it once. `build_runtime_library()` builds the runtime
alone as a shared library (for the LLVM IR path, backend/llvm.py).

Raises: CompilerMissingError (one line with the apt-get command) when no C++ compiler is found;
CppBuildError with the compiler's messages when the source does not compile; InterpretationError naming the
kernel line and program id when a program fails (CB protocol, access outside every tensor).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.backend.collective import Collectives, Waiting
from mtia_xdsl.machine.commands import Command, Engine, ProgramTrace, SlotRef
from mtia_xdsl.machine.config import DEFAULT_PE_MAPPING, MachineConfig, PeSubgrid, derive_config
from mtia_xdsl.machine.interpret.command_work import (
    cb_read_command,
    compute_command,
    compute_elems,
    dpe_command,
    dpe_macs,
    dpe_passes,
    lanes_command,
    re_command,
    re_elems,
    scalar_memory_command,
)
from mtia_xdsl.machine.interpret.dma_trace import cached_block_runs, dma_commands  # pyright: ignore[reportUnknownVariableType]
from mtia_xdsl.machine.interpret.global_memory import is_read_only, read_only_write_error
from mtia_xdsl.machine.interpret.mtia_indexed_dma import gather_rows_command
from mtia_xdsl.machine.interpret.mtia_renet import re_link_command
from mtia_xdsl.machine.placement import Placement, by_round
from mtia_xdsl.machine.placement import launch_grid as program_counts
from mtia_xdsl.machine.report import build_report
from mtia_xdsl.machine.run import RunResult
from mtia_xdsl.machine.timing import TimingError, simulate
from mtia_xdsl.utils.locations import argument_count_error

RUNTIME_DIR = Path(__file__).parent / "runtime"
"""mtia_runtime.h and host_runtime.cpp."""

CXX_FLAGS = ("-std=c++17", "-fwrapv", "-fPIC", "-shared", "-Wl,-Bsymbolic", "-Wall", "-Wextra", "-Werror")
"""Flags of every build (Triton integers wrap: -fwrapv). -Bsymbolic: a kernel library calls its own runtime
copy even after the LLVM path loaded the runtime library globally into the process (RTLD_GLOBAL)."""

INSTALL_HINT = "no C++ compiler found (set CXX, or install one: apt-get install -y g++)"


class CompilerMissingError(RuntimeError):
    """No C++ compiler on this machine."""


class CppBuildError(RuntimeError):
    """The C++ source did not compile; the message holds the compiler's diagnostics."""


def find_compiler() -> str:
    """Return the C++ compiler to use: $CXX, else c++, g++ or clang++ on PATH.

    Raises: CompilerMissingError (with the apt-get install command) if there is none.
    """
    env = os.environ.get("CXX")
    for name in ([env] if env else []) + ["c++", "g++", "clang++"]:
        path = shutil.which(name)
        if path:
            return path
    raise CompilerMissingError(INSTALL_HINT)


def compiler_available() -> bool:
    """Whether `find_compiler` finds a C++ compiler."""
    try:
        find_compiler()
    except CompilerMissingError:
        return False
    return True


def cache_dir() -> Path:
    """Where builds are cached: $MTIA_CACHE_DIR, else $XDG_CACHE_HOME (or ~/.cache)/mtia_xdsl/cpp."""
    env = os.environ.get("MTIA_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mtia_xdsl" / "cpp"


def _build(
    sources: list[tuple[str, str]], opt_level: str, extra: tuple[str, ...] = (), shown: dict[str, str] | None = None
) -> Path:
    """Compile (name, text) sources with the runtime headers into a shared library, cached by content.

    `shown` maps a source name to the file name the compiler's messages should give (the user's file)."""
    cxx = find_compiler()
    flags = (*CXX_FLAGS, opt_level, *extra)
    h = hashlib.sha256()
    for part in [cxx, *flags, (RUNTIME_DIR / "mtia_runtime.h").read_text()]:
        h.update(part.encode() + b"\0")
    for name, text in sources:
        h.update(name.encode() + b"\0" + text.encode() + b"\0")
    key = h.hexdigest()[:24]
    out_dir = cache_dir()
    out = out_dir / f"{key}.so"
    if out.exists():
        return out
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        paths: list[str] = []
        for name, text in sources:
            p = Path(tmp) / name
            p.write_text(text)
            paths.append(str(p))
        tmp_out = Path(tmp) / "out.so"
        cmd = [cxx, *flags, f"-I{RUNTIME_DIR}", *paths, "-o", str(tmp_out)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            stderr = proc.stderr
            for name, path in zip((n for n, _ in sources), paths, strict=True):
                stderr = stderr.replace(path, (shown or {}).get(name, name))
            raise CppBuildError(f"the C++ source did not compile ({' '.join(cmd[:1] + list(flags))}):\n{stderr}")
        os.replace(tmp_out, out)  # atomic: concurrent builders agree
    return out


def _runtime_source() -> tuple[str, str]:
    return ("host_runtime.cpp", (RUNTIME_DIR / "host_runtime.cpp").read_text())


def build_kernel(source: str, opt_level: str = "-O1", filename: str = "kernel.cpp") -> Path:
    """Return a shared library of C++ kernel `source` linked with the host runtime (built once per content).

    `filename` is the name the compiler's messages give the source (the user's file).
    Raises: CompilerMissingError, CppBuildError.
    """
    return _build([("kernel.cpp", source), _runtime_source()], opt_level, shown={"kernel.cpp": filename})


def build_runtime_library(opt_level: str = "-O1") -> Path:
    """Return the host runtime alone as a shared library (for code that calls mtia_runtime.h from elsewhere,
    e.g. LLVM IR JIT-compiled by llvmlite: load it with ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)).

    Raises: CompilerMissingError, CppBuildError.
    """
    return _build([_runtime_source()], opt_level)


# -- running ----------------------------------------------------------------------------------------------

ENGINES = {0: Engine.SCALAR, 1: Engine.DMA, 2: Engine.DPE, 3: Engine.SE, 4: Engine.RE, 5: Engine.MLU, 6: Engine.VEC}
"""enum mtia_engine of mtia_runtime.h -> Engine."""

_REC_CB, _REC_CMD, _REC_END = 1, 2, 3
_OP_DMA, _OP_COMPUTE, _OP_DPE, _OP_RE, _OP_CB_READ, _OP_SCALAR_MEM, _OP_LANES = 1, 2, 3, 4, 5, 6, 7
_OP_RE_LINK, _OP_GATHER_ROWS = 8, 9
CALL_WAITING = 2
"""`mtia_host_call`'s status of a program stopped at a cross-PE reduction (backend/collective.py)."""


class HostRuntime:
    """A loaded shared library with the runtime's C functions (and a kernel's entry, if it has one)."""

    def __init__(self, path: Path) -> None:
        lib = ctypes.CDLL(str(path))
        self.lib = lib
        p, i32, i64 = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64
        i32p = ctypes.POINTER(i32)
        lib.mtia_host_pe_new.restype = p
        lib.mtia_host_pe_new.argtypes = [i64, i32]
        lib.mtia_host_pe_free.argtypes = [p]
        lib.mtia_host_map.argtypes = [ctypes.c_uint64, p, i64]
        lib.mtia_host_unmap_all.argtypes = []
        lib.mtia_host_set_program.argtypes = [p, i32p, i32p, i32p, i32p]
        lib.mtia_host_call.restype = i32
        lib.mtia_host_call.argtypes = [p, p, ctypes.POINTER(i64)]
        lib.mtia_host_error.restype = ctypes.c_char_p
        lib.mtia_host_error.argtypes = [p]
        lib.mtia_host_record.restype = ctypes.POINTER(i64)
        lib.mtia_host_record.argtypes = [p, ctypes.POINTER(i64)]
        lib.mtia_host_string.restype = ctypes.c_char_p
        lib.mtia_host_string.argtypes = [p, i64]
        lib.mtia_host_string_count.restype = i64
        lib.mtia_host_string_count.argtypes = [p]
        lib.mtia_host_set_collective.argtypes = [p, i64, ctypes.c_char_p, i64]
        lib.mtia_host_collective_wait.restype = p
        cpp = ctypes.POINTER(ctypes.c_char_p)
        lib.mtia_host_collective_wait.argtypes = [p, ctypes.POINTER(i64), ctypes.POINTER(i64), cpp, cpp, i32p, cpp]
        if hasattr(lib, "mtia_kernel_meta"):
            lib.mtia_kernel_meta.restype = ctypes.c_char_p

    def meta(self) -> dict[str, Any]:
        """The kernel's metadata (backend/cpp.py `_kernel_meta`)."""
        return json.loads(self.lib.mtia_kernel_meta().decode())

    def entry(self) -> int:
        """Address of the kernel's `mtia_kernel_entry`."""
        return ctypes.cast(self.lib.mtia_kernel_entry, ctypes.c_void_p).value or 0


@dataclass
class _Region:
    storage: Any
    working: np.ndarray
    read_only_arg: str | None = None
    """The argument whose read-only numpy array this storage is (`global_memory.mark_read_only`)."""


def commit(regions: list[_Region], finals: list[bytes | np.ndarray], where: str) -> None:
    """Copy each region's final bytes (uint8) into the caller's storage, once the whole launch succeeded.

    Raises: InterpretationError at `where`, writing no storage, if the kernel changed a read-only array's bytes
    (a store of the bytes already there is not seen: the array stays as it was).
    """
    import torch

    pairs = [
        (torch.empty(0, dtype=torch.uint8).set_(r.storage).numpy(), np.frombuffer(final, np.uint8), r.read_only_arg)
        for r, final in zip(regions, finals, strict=True)
    ]
    for dst, final, read_only_arg in pairs:
        if read_only_arg is not None and not np.array_equal(dst, final):
            raise InterpretationError(f"{where}: error: {read_only_write_error(read_only_arg)}; no tensor was written")
    for dst, final, read_only_arg in pairs:
        if read_only_arg is None:
            np.copyto(dst, final)


def arg_words(meta: dict[str, Any], args: list[Any]) -> tuple[list[int], list[_Region]]:  # noqa: C901
    """Kernel arguments as int64 words, and a working copy of each tensor's storage."""
    import torch

    params = meta["params"]
    where = meta["loc"]
    if len(args) != len(params):
        names = [p["name"] for p in params]
        raise InterpretationError(
            argument_count_error(where, meta["kernel"], names, len(args), kind="non-constexpr arguments")
        )
    words: list[int] = []
    regions: dict[int, _Region] = {}
    for p, a in zip(params, args, strict=True):
        spec = p["type"]
        if isinstance(a, torch.Tensor) and spec != "ptr":
            if a.numel() != 1:
                raise InterpretationError(
                    f"{where}: error: '{p['name']}' is a scalar of type {spec} but got a tensor of {a.numel()} elements"
                )
            a = a.item()
        if spec == "ptr":
            if a is None:
                words.append(0)
                continue
            if not isinstance(a, torch.Tensor):
                raise InterpretationError(f"{where}: error: '{p['name']}' is a pointer but got {type(a).__name__}")
            if a.device.type != "cpu":
                raise InterpretationError(
                    f"{where}: error: '{p['name']}' is on {a.device}; the host run needs CPU tensors"
                )
            storage = a.untyped_storage()
            base = storage.data_ptr()
            if base not in regions:
                raw = torch.empty(0, dtype=torch.uint8).set_(storage).numpy()
                regions[base] = _Region(storage, raw.copy())
            if is_read_only(a) and regions[base].read_only_arg is None:
                regions[base].read_only_arg = p["name"]
            words.append(a.data_ptr())
        elif spec == "f32":
            words.append(struct.unpack("<I", struct.pack("<f", float(a)))[0])
        elif spec == "f64":
            words.append(struct.unpack("<q", struct.pack("<d", float(a)))[0])
        elif spec in ("f16", "bf16"):
            t = torch.tensor(float(a), dtype=torch.float16 if spec == "f16" else torch.bfloat16)
            words.append(int(t.view(torch.int16).item()) & 0xFFFF)
        else:
            words.append(_int_word(a, spec, p["name"], where))
    return words, list(regions.values())


def _int_word(a: Any, spec: str, name: str, where: str) -> int:
    """Integer argument `a` of parameter `name` of type `spec` (i1..i64), checked as the model checks it
    (machine/reference.py `_to_value`): no float truncated, no value wrapped."""
    if not isinstance(a, bool | int | np.integer):
        raise InterpretationError(f"{where}: error: '{name}' is {spec} but got {type(a).__name__} {a!r}")
    value = int(cast(Any, a))
    width = int(spec[1:]) if spec[1:].isdigit() else 64
    if width > 1 and not -(1 << (width - 1)) <= value <= (1 << width) - 1:
        raise InterpretationError(f"{where}: error: '{name}' = {a} does not fit in {spec}")
    return value


def kernel_machine(meta: dict[str, Any], config: MachineConfig | None) -> MachineConfig:
    """`config`, else the chip and overrides the kernel was compiled for (its metadata)."""
    if config is not None:
        return config
    return derive_config(meta.get("chip") or "mtia2i", meta.get("machine_overrides") or {})


def program_ids(grid: tuple[int, int, int]) -> list[tuple[int, int, int]]:
    """Every program id of `grid`, axis 0 fastest (the order the model runs and records them)."""
    gx, gy, gz = grid
    return [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]


def launch_grid(grid: Any, where: str) -> tuple[int, int, int]:
    """`grid` as three program counts, by machine.placement.launch_grid's rule.

    Raises: InterpretationError at `where` for a grid that rule refuses.
    """
    try:
        return program_counts(grid)
    except ValueError as e:
        raise InterpretationError(f"{where}: error: {e}") from None


class RecordDecoder:
    """Turns one program's record into a ProgramTrace with the model's command builders."""

    def __init__(self, config: MachineConfig) -> None:
        self.config = config
        self.runs_cache: dict[tuple[Any, ...], tuple[Any, ...]] = {}

    def trace(self, words: list[int], strings: list[str], pid: tuple[int, int, int]) -> ProgramTrace:
        commands: list[Command] = []
        depth: dict[int, int] = {}
        tile_bytes: dict[int, int] = {}
        offsets: dict[int, int] = {}
        hw_ids: dict[int, int] = {}
        tail = 0
        k = 0
        n = len(words)
        while k < n:
            tag = words[k]
            if tag == _REC_CB:
                h, cb_id, d, nbytes, off = words[k + 1 : k + 6]
                depth[h], tile_bytes[h], offsets[h], hw_ids[h] = d, nbytes, off, cb_id
                k += 6
            elif tag == _REC_END:
                tail = words[k + 1]
                k += 2
            elif tag == _REC_CMD:
                opcode, engine, kind, loc, scalar = words[k + 1 : k + 6]
                k += 6
                nw = words[k]
                waits = tuple(SlotRef(words[k + 1 + 2 * j], words[k + 2 + 2 * j]) for j in range(nw))
                k += 1 + 2 * nw
                nf = words[k]
                fills = tuple(SlotRef(words[k + 1 + 2 * j], words[k + 2 + 2 * j]) for j in range(nf))
                k += 1 + 2 * nf
                npay = words[k]
                payload = words[k + 1 : k + 1 + npay]
                k += 1 + npay
                cmd = self.command(opcode, ENGINES[engine], strings[kind], strings[loc], waits, fills, payload, strings)
                cmd.scalar_instrs = scalar
                commands.append(cmd)
            else:
                raise RuntimeError(f"corrupt runtime record: tag {tag} at word {k}")
        return ProgramTrace(pid, commands, depth, tile_bytes, tail_scalar_instrs=tail, cb_ls_offset=offsets,
                            cb_hw_id=hw_ids)  # fmt: skip

    def command(
        self,
        opcode: int,
        engine: Engine,
        kind: str,
        where: str,
        waits: tuple[SlotRef, ...],
        fills: tuple[SlotRef, ...],
        p: list[int],
        s: list[str],
    ) -> Command:
        if opcode == _OP_DMA:
            load, base, rank, elem_bytes, dtype, whole_tile, slot_bytes = p[:7]
            strides, bounds = p[7 : 7 + rank], p[7 + rank : 7 + 2 * rank]
            runs: tuple[Any, ...] = cached_block_runs(self.runs_cache, strides, bounds, elem_bytes)  # pyright: ignore[reportUnknownVariableType]
            return dma_commands(
                kind, where, waits, fills, bool(load), runs, [base], slot_bytes, bool(whole_tile), s[dtype]
            )[0]
        if opcode == _OP_COMPUTE:
            elems, dtype, lut, ls_bytes, out_rank = p[:5]
            out_shape = p[5 : 5 + out_rank]
            nvalid = p[5 + out_rank]
            valid = p[6 + out_rank : 6 + out_rank + nvalid]
            work = int(compute_elems(elems, valid, out_shape))
            return compute_command(engine, kind, where, waits, fills, work, s[dtype], bool(lut), ls_bytes)
        if opcode == _OP_DPE:
            batch, m, n, k, dtype, precision, ls_bytes, nvalid = p[:8]
            valid = p[8 : 8 + nvalid]
            macs = int(dpe_macs(valid, batch, m, n, k))
            return dpe_command(
                where, waits, fills, macs, s[dtype], dpe_passes(self.config, s[dtype], precision), ls_bytes
            )
        if opcode == _OP_RE:
            dtype, ls_bytes, rank = p[:3]
            in_shape = p[3 : 3 + rank]
            nvalid = p[3 + rank]
            valid = p[4 + rank : 4 + rank + nvalid]
            return re_command(where, waits, fills, int(re_elems(valid, in_shape)), s[dtype], ls_bytes)
        if opcode == _OP_CB_READ:
            return cb_read_command(where, waits[0])
        if opcode == _OP_SCALAR_MEM:
            store, addr, nbytes, dtype = p
            return scalar_memory_command(kind, where, addr, nbytes, s[dtype], bool(store))
        if opcode == _OP_LANES:
            active, lo, hi, read, write, ls_bytes, dtype, elem_bytes = p
            extent = (lo, hi) if active else None
            return lanes_command(
                kind, where, waits, fills, active, extent, elem_bytes, bool(read), bool(write), ls_bytes, s[dtype]
            )
        if opcode == _OP_RE_LINK:
            elems, dtype, axis, group_size = p
            return re_link_command(where, elems, s[dtype], group_size, axis)
        if opcode == _OP_GATHER_ROWS:
            active, ls_bytes, dtype, elem_bytes, nruns = p[:5]
            read = [(p[5 + 2 * j], p[6 + 2 * j]) for j in range(nruns)]
            extent = (min(a for a, _ in read), max(a + b for a, b in read)) if read else None
            return gather_rows_command(where, waits, fills, read, active, extent, elem_bytes, ls_bytes, s[dtype])
        raise RuntimeError(f"corrupt runtime record: opcode {opcode}")


def run_cpp(
    source: str,
    grid: Any,
    args: list[Any],
    *,
    config: MachineConfig | None = None,
    mapping: str | None = None,
    subgrid: Any = None,
    opt_level: str = "-O1",
    filename: str = "kernel.cpp",
) -> RunResult:
    """Compile C++ kernel `source` (backend/cpp.py's output, edited or not), run every program id of `grid`
    on copies of `args` (torch CPU tensors for pointers, Python numbers for scalars) and time the recorded
    commands with the machine model's timing. Results are written into the tensors only when every program
    succeeded. `config` (default: the chip and overrides the kernel was compiled for), `mapping` and
    `subgrid` override the placement as `mtia-run --mapping/--pe-subgrid` do. `filename` names the source in
    the compiler's messages.

    Returns: machine.run.RunResult (report, timeline, traces), as `run_kernel` returns.
    Raises: CompilerMissingError, CppBuildError; InterpretationError naming the kernel line and program id.
    """
    rt = HostRuntime(build_kernel(source, opt_level, filename))
    return run_loaded(rt, grid, args, config=config, mapping=mapping, subgrid=subgrid)


def run_loaded(
    rt: HostRuntime,
    grid: Any,
    args: list[Any],
    *,
    config: MachineConfig | None = None,
    mapping: str | None = None,
    subgrid: Any = None,
    entry: int | None = None,
    meta: dict[str, Any] | None = None,
) -> RunResult:
    """`run_cpp` on a loaded runtime `rt`: `entry` (an `mtia_entry` function address) and `meta` default to the
    kernel compiled into `rt` (backend/llvm.py passes its JIT-compiled entry and metadata)."""
    meta = meta if meta is not None else rt.meta()
    entry = entry if entry is not None else rt.entry()
    where = meta["loc"]
    grid3 = launch_grid(grid, where)
    machine = kernel_machine(meta, config)
    words, regions = arg_words(meta, args)
    sub = PeSubgrid.parse(
        tuple(subgrid) if subgrid else (tuple(meta["pe_subgrid"]) if meta.get("pe_subgrid") else None), machine
    )
    placement = Placement(mapping or meta.get("pe_mapping") or DEFAULT_PE_MAPPING, sub, grid3)
    pids = program_ids(grid3)
    if meta.get("reads_pe_id"):
        pids = by_round(pids, placement)
    lib = rt.lib
    pe = lib.mtia_host_pe_new(machine.ls_bytes, machine.cb_ids)
    decoder = RecordDecoder(machine)
    arg_array = (ctypes.c_int64 * max(len(words), 1))(*[w if w < (1 << 63) else w - (1 << 64) for w in words])
    i32x3 = ctypes.c_int32 * 3
    collectives = Collectives(placement) if meta.get("collective") else None
    done: dict[tuple[int, int, int], ProgramTrace] = {}
    try:
        lib.mtia_host_unmap_all()
        for r in regions:
            lib.mtia_host_map(r.storage.data_ptr(), r.working.ctypes.data, r.working.size)
        pending = pids
        while pending:  # one pass, or with cross-PE reductions passes until every program ends (collective.py)
            waiting: list[tuple[int, int, int]] = []
            progress = False
            for pid in pending:
                local = int(placement.local_pe(pid))
                row, col = divmod(local, sub.tile_width)
                lib.mtia_host_set_program(
                    pe, i32x3(*pid), i32x3(*grid3), (ctypes.c_int32 * 2)(col, row),
                    (ctypes.c_int32 * 2)(sub.tile_width, sub.tile_height),
                )  # fmt: skip
                rec = _call(lib, pe, entry, arg_array, pid, regions, collectives)
                if rec is None:  # stopped at a cross-PE reduction
                    assert collectives is not None
                    progress = collectives.arrive(pid, _waiting(lib, pe)) or progress
                    waiting.append(pid)
                else:
                    done[pid] = decoder.trace(rec, _strings(lib, pe), pid)
                    progress = True
            if waiting and not progress and collectives is not None:
                raise collectives.deadlock(waiting)
            pending = waiting
    finally:
        lib.mtia_host_unmap_all()
        lib.mtia_host_pe_free(pe)
    traces = [done[pid] for pid in pids]
    if meta.get("reads_pe_id"):
        gx, gy, _ = grid3
        traces.sort(key=lambda t: t.program_id[0] + gx * (t.program_id[1] + gy * t.program_id[2]))
    try:
        timeline = simulate(traces, machine, placement.mapping, grid3, subgrid=placement.subgrid)
    except TimingError as e:
        raise InterpretationError(f"{e}; no tensor was written") from None
    commit(regions, [r.working for r in regions], where)
    return RunResult(build_report(timeline, meta["kernel"]), timeline, traces)


def run_module(module: Any, grid: tuple[int, int, int], args: list[Any], options: Any = None) -> RunResult:
    """Run buffer-level `module` through its C++ (the executor "cpp", backend/executor.py): emit, build, run,
    time, on the machine the model would use (`machine.run.machine_config`)."""
    from mtia_xdsl.backend.cpp import emit_cpp
    from mtia_xdsl.machine.placement import machine_config

    mapping = getattr(options, "mapping_override", None)
    subgrid = getattr(options, "subgrid_override", None)
    return run_cpp(emit_cpp(module), grid, args, config=machine_config(module, options), mapping=mapping,
                   subgrid=subgrid)  # fmt: skip


def _call(
    lib: Any,
    pe: int,
    entry: int,
    arg_array: Any,
    pid: tuple[int, int, int],
    regions: list[_Region],
    collectives: Collectives | None,
) -> list[int] | None:
    """Run the program set on `pe`; return its record, or None if it stopped at a cross-PE reduction whose
    result is not known yet (its memory writes undone).

    Raises: InterpretationError with the runtime's message and the program id.
    """
    snapshot = [r.working.copy() for r in regions] if collectives is not None else []
    if collectives is not None:
        ncalls, results = collectives.known(pid)
        lib.mtia_host_set_collective(pe, ncalls, results, len(results))
    status = lib.mtia_host_call(pe, entry, arg_array)
    if status == CALL_WAITING and collectives is not None:
        for r, old in zip(regions, snapshot, strict=True):  # it reruns from the start
            r.working[...] = old
        return None
    if status != 0:
        text = lib.mtia_host_error(pe).decode()
        raise InterpretationError(f"{text} (program id {pid}); no tensor was written")
    n = ctypes.c_int64()
    ptr = lib.mtia_host_record(pe, ctypes.byref(n))
    return np.ctypeslib.as_array(ptr, shape=(n.value,)).tolist() if n.value else []


def _waiting(lib: Any, pe: int) -> Waiting:
    """Where the program that just returned CALL_WAITING stopped (mtia_host_collective_wait)."""
    nbytes, call, axis = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int32()
    kind, dtype, loc = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
    ptr = lib.mtia_host_collective_wait(
        pe, ctypes.byref(nbytes), ctypes.byref(call), ctypes.byref(kind), ctypes.byref(dtype), ctypes.byref(axis),
        ctypes.byref(loc),
    )  # fmt: skip
    data = ctypes.string_at(ptr, nbytes.value) if nbytes.value else b""
    text = [(v.value or b"").decode() for v in (kind, dtype, loc)]
    return Waiting(call.value, data, text[0], text[1], axis.value, text[2])


def _strings(lib: Any, pe: int) -> list[str]:
    """The PE's string table (kinds, locations, dtypes the record names by id)."""
    return [(lib.mtia_host_string(pe, k) or b"").decode() for k in range(lib.mtia_host_string_count(pe))]

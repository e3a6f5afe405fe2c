"""Cross-build C++ for a PE's RISC-V cores with the vector extension and run it under qemu-riscv64.

Toolchain (Debian packages clang-14, g++-riscv64-linux-gnu, libc6-dev-riscv64-cross, qemu-user; what
`scripts/setup.sh` installs): clang 14 compiles with `--target=riscv64-linux-gnu -march=rv64gcv_zfh` and finds the
riscv64 cross libstdc++ and glibc of the GNU cross toolchain by itself (no `--gcc-toolchain` or `--sysroot`);
it links with the GNU cross linker `riscv64-linux-gnu-ld` (lld 14 cannot link glibc's objects: it lacks
RISC-V linker relaxation) and statically, so qemu needs no `-L` sysroot. `-march=rv64gcv_zfh` defines
`__riscv_vector` (and `__riscv_zfh`), which select the RVV loops the C++ emitter writes (`backend/rvv.py`).

qemu-user runs the binary with the vector extension at `MachineConfig.vec_register_bits` (512 on MTIA-2i:
the vector RISC-V core's RVV registers, MACHINE.md S1): `-cpu rv64,v=true,vlen=512,elen=64,vext_spec=v1.0,Zfh=true`.

A missing tool is a `ToolchainMissing` error: one line naming the tool and the install command.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.backend import host
from mtia_xdsl.backend.collective import Collectives, Waiting
from mtia_xdsl.backend.host import CppBuildError
from mtia_xdsl.machine.config import DEFAULT_CHIP, DEFAULT_PE_MAPPING, MachineConfig, PeSubgrid
from mtia_xdsl.machine.placement import Placement, by_round
from mtia_xdsl.machine.report import build_report
from mtia_xdsl.machine.run import RunResult
from mtia_xdsl.machine.timing import TimingError, simulate

INSTALL_COMMAND = "sudo apt-get install clang-14 g++-riscv64-linux-gnu libc6-dev-riscv64-cross qemu-user"
"""What installs the toolchain on Debian/Ubuntu (scripts/setup.sh runs it when something is missing)."""

TARGET_FLAGS = ("--target=riscv64-linux-gnu", "-march=rv64gcv_zfh", "-static")
"""clang flags of the RISC-V build: riscv64 Linux, RV64GC with the vector extension V 1.0 and half-precision
floats (Zfh: clang 14's RVV f16 types, for the f16 conversions of backend/rvv.py), static."""

CXX_FLAGS = ("-std=c++17", "-fwrapv", "-Wall", "-Wextra", "-Werror")
"""Language and warning flags, as backend/host.py's host build (Triton integers wrap: -fwrapv); the emitted
prelude's helpers are `[[maybe_unused]]`, so clang does not warn about those a kernel does not call."""

CROSS_SYSROOT = Path("/usr/riscv64-linux-gnu")
"""Where Debian's riscv64 cross glibc lives (headers in include/)."""


class ToolchainMissing(RuntimeError):
    """The RISC-V cross compiler, its libraries or qemu-riscv64 is not installed."""


@dataclass(frozen=True)
class Toolchain:
    """The programs of a RISC-V build and run."""

    clang: str
    """clang++ (version 14, or newer with the same intrinsic names)."""
    qemu: str
    """qemu-riscv64 (user mode)."""


def find_toolchain() -> Toolchain:
    """Return the installed toolchain.

    Raises: ToolchainMissing (one line, with the install command) if clang++-14, the riscv64 cross
    libraries (`riscv64-linux-gnu-ld`, glibc headers) or qemu-riscv64 is missing.
    """
    missing: list[str] = []
    clang = shutil.which("clang++-14")
    if clang is None:
        missing.append("clang++-14")
    if shutil.which("riscv64-linux-gnu-ld") is None or not (CROSS_SYSROOT / "include" / "stdio.h").exists():
        missing.append("the riscv64 cross libraries")
    qemu = shutil.which("qemu-riscv64")
    if qemu is None:
        missing.append("qemu-riscv64")
    if missing or clang is None or qemu is None:
        raise ToolchainMissing(f"RISC-V build needs {', '.join(missing)}: install with `{INSTALL_COMMAND}`")
    return Toolchain(clang=clang, qemu=qemu)


def toolchain_available() -> bool:
    """Return True if `find_toolchain` would succeed."""
    try:
        find_toolchain()
    except ToolchainMissing:
        return False
    return True


def qemu_cpu(config: MachineConfig) -> str:
    """Return qemu's `-cpu` value: RV64 with V 1.0 at the vector core's register width (vec_register_bits), Zfh."""
    return f"rv64,v=true,vlen={config.vec_register_bits},elen=64,vext_spec=v1.0,Zfh=true"


@dataclass(frozen=True)
class BuildResult:
    """A cross-built executable and how long the compile took."""

    exe: Path
    compile_s: float


def cross_compile(
    sources: Sequence[Path],
    exe: Path,
    *,
    include_dirs: Sequence[Path] = (),
    defines: Sequence[str] = (),
    opt: str = "-O2",
    toolchain: Toolchain | None = None,
) -> BuildResult:
    """Compile and link C++ `sources` into the static riscv64 executable `exe` (`-Wall -Wextra -Werror`).

    Raises: ToolchainMissing; CppBuildError with the compiler's messages if the build fails.
    """
    tc = toolchain or find_toolchain()
    cmd = [
        tc.clang,
        *TARGET_FLAGS,
        opt,
        *CXX_FLAGS,
        *(f"-I{d}" for d in include_dirs),
        *(f"-D{d}" for d in defines),
        *map(str, sources),
        "-o",
        str(exe),
    ]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise CppBuildError(f"RISC-V build failed: {_first_error(done.stderr)}\n{done.stderr}")
    return BuildResult(exe=exe, compile_s=elapsed)


def run_qemu(
    exe: Path,
    args: Sequence[str] = (),
    *,
    config: MachineConfig | None = None,
    toolchain: Toolchain | None = None,
    timeout_s: float = 600.0,
) -> subprocess.CompletedProcess[str]:
    """Run the riscv64 executable `exe` under qemu-riscv64 with the vector core's VLEN; return the process.

    Raises: ToolchainMissing; RuntimeError with its output if it exits non-zero.
    """
    tc = toolchain or find_toolchain()
    cfg = config or MachineConfig.preset(DEFAULT_CHIP)
    cmd = [tc.qemu, "-cpu", qemu_cpu(cfg), str(exe), *args]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{' '.join(cmd)} ran longer than {timeout_s:.0f} s; stopped") from None
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {done.returncode}:\n{done.stdout}{done.stderr}")
    return done


# ---- running an emitted kernel's programs in one qemu process ------------------------------------------

RUNTIME_DIR = host.RUNTIME_DIR
"""mtia_runtime.h, host_runtime.cpp and riscv_main.cpp (the process that runs programs from a launch file)."""

_MAGIC = 0x323056524149544D  # "MTIARV02" little-endian, as riscv_main.cpp checks


@dataclass(frozen=True)
class Region:
    """A range of global memory the kernel may address: `data` at device address `base`."""

    base: int
    data: bytes


@dataclass(frozen=True)
class Launch:
    """What one run of riscv_main needs: memory, the entry's argument words, the grid and the programs.

    `programs` are (program id (x, y, z), PE (x, y)) in the order they run; `collectives`, if given, the
    results of each program's first cross-PE reductions (backend/collective.py `Collectives.known`).
    """

    ls_bytes: int
    cb_ids: int
    """MachineConfig.cb_ids: the runtime checks the kernel's CB IDs against it."""
    regions: Sequence[Region]
    args: Sequence[int]
    grid: tuple[int, int, int]
    num_pes: tuple[int, int]
    programs: Sequence[tuple[tuple[int, int, int], tuple[int, int]]]
    collectives: Sequence[tuple[int, bytes]] | None = None


@dataclass(frozen=True)
class ProgramRecord:
    """The record of one program (host_runtime.cpp's int64 words) and its string table."""

    words: list[int]
    strings: list[str]


@dataclass(frozen=True)
class LaunchResult:
    """Per program that ran, its record or where it stopped at a cross-PE reduction (its writes undone); the
    first error (None if all ran) and the regions' final bytes."""

    records: list[ProgramRecord | Waiting]
    error: str | None
    regions: list[bytes]
    run_s: float


def _words_of_bytes(data: bytes) -> list[int]:
    padded = data + b"\0" * (-len(data) % 8)
    return list(struct.unpack(f"<{len(padded) // 8}q", padded))


def encode_launch(launch: Launch) -> bytes:
    """Return the launch file riscv_main.cpp reads (int64 little-endian words)."""
    words = [_MAGIC, launch.ls_bytes, launch.cb_ids, int(launch.collectives is not None), len(launch.regions)]
    for r in launch.regions:
        words += [r.base, len(r.data), *_words_of_bytes(r.data)]
    words += [len(launch.args), *launch.args, *launch.grid, *launch.num_pes, len(launch.programs)]
    known = launch.collectives or [(0, b"")] * len(launch.programs)
    for (pid, pe), (ncalls, results) in zip(launch.programs, known, strict=True):
        words += [*pid, *pe, ncalls, len(results), *_words_of_bytes(results)]
    return struct.pack(f"<{len(words)}q", *[w if w < 1 << 63 else w - (1 << 64) for w in words])


class _Words:
    def __init__(self, data: bytes) -> None:
        self.w = struct.unpack(f"<{len(data) // 8}q", data)
        self.at = 0

    def next(self) -> int:
        self.at += 1
        return self.w[self.at - 1]

    def take(self, n: int) -> list[int]:
        self.at += n
        return list(self.w[self.at - n : self.at])

    def blob(self) -> bytes:
        n = self.next()
        raw = struct.pack(f"<{(n + 7) // 8}q", *self.take((n + 7) // 8))
        return raw[:n]


def decode_result(data: bytes, launch: Launch, run_s: float = 0.0) -> LaunchResult:
    """Read riscv_main.cpp's result file for `launch`."""
    w = _Words(data)
    records: list[ProgramRecord | Waiting] = []
    for _ in launch.programs:
        status = w.next()
        if status == host.CALL_WAITING:
            call, axis = w.next(), w.next()
            kind, dtype, loc = (w.blob().decode() for _ in range(3))
            records.append(Waiting(call, w.blob(), kind, dtype, axis, loc))
            continue
        if status != 0:
            return LaunchResult(records, w.blob().decode(errors="replace"), [], run_s)
        words = w.take(w.next())
        strings = [w.blob().decode() for _ in range(w.next())]
        records.append(ProgramRecord(words, strings))
    return LaunchResult(records, None, [w.blob() for _ in launch.regions], run_s)


def _runtime_objects(tc: Toolchain, opt: str, cache_dir: Path) -> list[Path]:
    """Return host_runtime.cpp and riscv_main.cpp compiled for riscv64, each built once per content and flags."""
    header = (RUNTIME_DIR / "mtia_runtime.h").read_bytes()
    objs: list[Path] = []
    for name in ("host_runtime.cpp", "riscv_main.cpp"):
        text = (RUNTIME_DIR / name).read_bytes()
        key = hashlib.sha256(b"\0".join([text, header, tc.clang.encode(), opt.encode()])).hexdigest()[:16]
        obj = cache_dir / f"{Path(name).stem}-{key}.o"
        if not obj.exists():
            cache_dir.mkdir(parents=True, exist_ok=True)
            tmp = obj.with_suffix(f".{os.getpid()}.tmp")
            cmd = [tc.clang, *TARGET_FLAGS, opt, *CXX_FLAGS, "-c", str(RUNTIME_DIR / name), "-o", str(tmp)]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise CppBuildError(f"RISC-V build of {name} failed: {_first_error(done.stderr)}\n{done.stderr}")
            tmp.replace(obj)  # atomic: concurrent builders agree
        objs.append(obj)
    return objs


def _first_error(stderr: str) -> str:
    """Return the compiler's first error line (or its first line)."""
    lines = stderr.splitlines() or [""]
    return next((ln for ln in lines if "error:" in ln), lines[0]).strip()


def build_runtime_objects(
    *, opt: str = "-O2", toolchain: Toolchain | None = None, cache_dir: Path | None = None
) -> list[Path]:
    """Build (once per content) the riscv64 objects of the host runtime and riscv_main.cpp; return them.

    Raises: ToolchainMissing; CppBuildError with the compiler's messages.
    """
    return _runtime_objects(toolchain or find_toolchain(), opt, cache_dir or default_cache_dir())


def default_cache_dir() -> Path:
    """Return where riscv64 builds are cached: `riscv/` under backend/host.py's build cache."""
    from mtia_xdsl.backend.host import cache_dir

    return cache_dir() / "riscv"


def build_kernel(
    source: str,
    *,
    opt: str = "-O2",
    toolchain: Toolchain | None = None,
    cache_dir: Path | None = None,
) -> BuildResult:
    """Cross-build the kernel translation unit `source` (backend/cpp.py's C++, defining `mtia_kernel_entry`)
    with the host runtime and riscv_main.cpp into a riscv64 executable, cached by content in `cache_dir`.

    compile_s is the time of this call (0 when cached; the runtime objects are built once per content).
    Raises: ToolchainMissing; CppBuildError with the compiler's messages.
    """
    tc = toolchain or find_toolchain()
    start = time.perf_counter()
    cache = cache_dir or default_cache_dir()
    objs = _runtime_objects(tc, opt, cache)
    key = hashlib.sha256(b"\0".join([source.encode(), opt.encode(), *(o.name.encode() for o in objs)])).hexdigest()
    exe = cache / f"kernel-{key[:24]}"
    if exe.exists():
        return BuildResult(exe=exe, compile_s=0.0)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        src = Path(tmp) / "kernel.cpp"
        src.write_text(source)
        cmd = [tc.clang, *TARGET_FLAGS, opt, *CXX_FLAGS, f"-I{RUNTIME_DIR}", str(src), *map(str, objs)]
        done = subprocess.run([*cmd, "-o", str(Path(tmp) / "kernel")], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise CppBuildError(f"RISC-V build of the kernel failed: {_first_error(done.stderr)}\n{done.stderr}")
        (Path(tmp) / "kernel").replace(exe)
    return BuildResult(exe=exe, compile_s=time.perf_counter() - start)


def run_launch(
    exe: Path,
    launch: Launch,
    workdir: Path,
    *,
    config: MachineConfig | None = None,
    toolchain: Toolchain | None = None,
) -> LaunchResult:
    """Run `launch` with the kernel executable `exe` under qemu-riscv64; return the records and memory."""
    (workdir / "launch.bin").write_bytes(encode_launch(launch))
    start = time.perf_counter()
    run_qemu(exe, [str(workdir / "launch.bin"), str(workdir / "result.bin")], config=config, toolchain=toolchain)
    elapsed = time.perf_counter() - start
    return decode_result((workdir / "result.bin").read_bytes(), launch, elapsed)


# ---- run_riscv: the emitted C++ on RISC-V, timed by the model ----------------------------------------------


def kernel_meta(source: str) -> dict[str, Any]:
    """Return the metadata backend/cpp.py writes into the translation unit (`mtia_kernel_meta`).

    Raises: ValueError if `source` has none (not the C++ emitter's output).
    """
    m = re.search(r'R"json\((.*?)\)json"', source, re.S)
    if m is None:
        raise ValueError("the C++ source has no mtia_kernel_meta (emit it with `mtia-opt -t mtia-cpp`)")
    return json.loads(m.group(1))


def run_riscv(
    source: str,
    grid: Any,
    args: list[Any],
    *,
    config: MachineConfig | None = None,
    mapping: str | None = None,
    subgrid: Any = None,
    opt: str = "-O2",
    stats: dict[str, float] | None = None,
    cache_dir: Path | None = None,
) -> RunResult:
    """Cross-compile C++ kernel `source` (backend/cpp.py's output, edited or not) for rv64gcv, run every
    program id of `grid` in one qemu-riscv64 process (one more per round of cross-PE reductions,
    backend/collective.py; vector registers of `vec_register_bits`) on copies of
    `args` (torch CPU tensors for pointers, Python numbers for scalars), and time the recorded commands with
    the machine model's timing, as `backend.host.run_cpp` does on the host: same argument packing,
    placement, record decoding and timing, so cycles equal the model's. Results are written into the tensors
    only when every program succeeded. `stats`, if given, receives "compile_s" (0 when cached) and "run_s"
    (the qemu process, wall seconds). Builds are cached by content in `cache_dir` (default_cache_dir()).

    Returns: machine.run.RunResult (report, timeline, traces).
    Raises: ToolchainMissing; CppBuildError if the build fails; InterpretationError naming the kernel line and
    program id when a program fails.
    """
    toolchain = find_toolchain()
    meta = kernel_meta(source)
    where = meta["loc"]
    grid3 = host.launch_grid(grid, where)
    machine = host.kernel_machine(meta, config)
    words, regions = host.arg_words(meta, args)
    sub_spec = tuple(subgrid) if subgrid else (tuple(meta["pe_subgrid"]) if meta.get("pe_subgrid") else None)
    sub = PeSubgrid.parse(sub_spec, machine)
    placement = Placement(mapping or meta.get("pe_mapping") or DEFAULT_PE_MAPPING, sub, grid3)
    pids = host.program_ids(grid3)
    if meta.get("reads_pe_id"):
        pids = by_round(pids, placement)
    programs: list[_Program] = [(pid, _pe_xy(int(placement.local_pe(pid)), sub.tile_width)) for pid in pids]
    build = build_kernel(source, opt=opt, toolchain=toolchain, cache_dir=cache_dir)
    collectives = Collectives(placement) if meta.get("collective") else None
    base = _Base(
        machine.ls_bytes,
        machine.cb_ids,
        [r.storage.data_ptr() for r in regions],
        words,
        grid3,
        (sub.tile_width, sub.tile_height),
    )
    done, data, run_s = _run_programs(build.exe, base, [r.working.tobytes() for r in regions], programs, collectives,
                                      machine, toolchain)  # fmt: skip
    if stats is not None:
        stats.update(compile_s=build.compile_s, run_s=run_s)
    decoder = host.RecordDecoder(machine)
    traces = [decoder.trace(done[pid].words, done[pid].strings, pid) for pid, _ in programs]
    if meta.get("reads_pe_id"):
        gx, gy, _ = grid3
        traces.sort(key=lambda t: t.program_id[0] + gx * (t.program_id[1] + gy * t.program_id[2]))
    try:
        timeline = simulate(traces, machine, placement.mapping, grid3, subgrid=placement.subgrid)
    except TimingError as e:
        raise InterpretationError(f"{e}; no tensor was written") from None
    host.commit(regions, list(data), where)  # the whole launch succeeded
    return RunResult(build_report(timeline, meta["kernel"]), timeline, traces)


def _pe_xy(local: int, width: int) -> tuple[int, int]:
    row, col = divmod(local, width)
    return (col, row)


@dataclass(frozen=True)
class _Base:
    """The parts of a Launch every qemu run of one kernel launch shares."""

    ls_bytes: int
    cb_ids: int
    bases: list[int]
    args: list[int]
    grid: tuple[int, int, int]
    num_pes: tuple[int, int]


_Program = tuple[tuple[int, int, int], tuple[int, int]]


def _run_programs(
    exe: Path,
    base: _Base,
    data: list[bytes],
    programs: list[_Program],
    collectives: Collectives | None,
    machine: MachineConfig,
    toolchain: Toolchain,
) -> tuple[dict[tuple[int, int, int], ProgramRecord], list[bytes], float]:
    """Run `programs` on memory `data` under qemu: once, or with cross-PE reductions (`collectives`) until every
    program ends (backend/collective.py). Returns each program's record, the final memory and qemu's seconds.

    Raises: InterpretationError naming the program that failed, or the group that never completes.
    """
    done: dict[tuple[int, int, int], ProgramRecord] = {}
    pending, run_s = programs, 0.0
    while pending:
        launch = Launch(
            ls_bytes=base.ls_bytes,
            cb_ids=base.cb_ids,
            regions=[Region(b, d) for b, d in zip(base.bases, data, strict=True)],
            args=base.args,
            grid=base.grid,
            num_pes=base.num_pes,
            programs=pending,
            collectives=[collectives.known(pid) for pid, _ in pending] if collectives is not None else None,
        )
        with tempfile.TemporaryDirectory() as tmp:
            result = run_launch(exe, launch, Path(tmp), config=machine, toolchain=toolchain)
        run_s += result.run_s
        if result.error is not None:
            pid = pending[len(result.records)][0]
            raise InterpretationError(f"{result.error} (program id {pid}); no tensor was written")
        waiting: list[_Program] = []
        progress = False
        for (pid, pe), rec in zip(pending, result.records, strict=True):
            if isinstance(rec, Waiting):
                assert collectives is not None
                progress = collectives.arrive(pid, rec) or progress
                waiting.append((pid, pe))
            else:
                done[pid] = rec
                progress = True
        if waiting and not progress and collectives is not None:
            raise collectives.deadlock([pid for pid, _ in waiting])
        data, pending = result.regions, waiting
    return done, data, run_s


def run_module(module: Any, grid: tuple[int, int, int], args: list[Any], options: Any = None) -> RunResult:
    """Run buffer-level `module` through its C++ on RISC-V (the executor "riscv", backend/executor.py): emit,
    cross-build, run under qemu, time, on the machine the model would use (`machine.placement.machine_config`).

    Raises: as run_riscv.
    """
    from mtia_xdsl.backend.cpp import emit_cpp
    from mtia_xdsl.machine.placement import machine_config

    mapping = getattr(options, "mapping_override", None)
    subgrid = getattr(options, "subgrid_override", None)
    config = machine_config(module, options)
    return run_riscv(emit_cpp(module), grid, args, config=config, mapping=mapping, subgrid=subgrid)

"""Cross-build C++ for a PE's RISC-V cores with the vector extension and run it under qemu-riscv64.

Toolchain (Debian packages clang-14, g++-riscv64-linux-gnu, libc6-dev-riscv64-cross, qemu-user; what
`scripts/setup.sh` installs): clang 14 compiles with `--target=riscv64-linux-gnu -march=rv64gcv` and finds the
riscv64 cross libstdc++ and glibc of the GNU cross toolchain by itself (no `--gcc-toolchain` or `--sysroot`);
it links with the GNU cross linker `riscv64-linux-gnu-ld` (lld 14 cannot link glibc's objects: it lacks
RISC-V linker relaxation) and statically, so qemu needs no `-L` sysroot. `-march=rv64gcv` defines
`__riscv_vector`, which selects the RVV loops the C++ emitter writes (`backend/rvv.py`).

qemu-user runs the binary with the vector extension at `MachineConfig.vec_register_bits` (512 on MTIA-2i:
the vector RISC-V core's RVV registers, MACHINE.md S1): `-cpu rv64,v=true,vlen=512,elen=64,vext_spec=v1.0`.

A missing tool is a `ToolchainMissing` error: one line naming the tool and the install command.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mtia_xdsl.machine.config import DEFAULT_CHIP, MachineConfig

INSTALL_COMMAND = "sudo apt-get install clang-14 g++-riscv64-linux-gnu libc6-dev-riscv64-cross qemu-user"
"""What installs the toolchain on Debian/Ubuntu (scripts/setup.sh runs it when something is missing)."""

TARGET_FLAGS = ("--target=riscv64-linux-gnu", "-march=rv64gcv", "-static")
"""clang flags of the RISC-V build: riscv64 Linux, RV64GC with the vector extension V 1.0, static."""

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
    missing = []
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
    """Return qemu's `-cpu` value: RV64 with V 1.0 at the vector core's register width (vec_register_bits)."""
    return f"rv64,v=true,vlen={config.vec_register_bits},elen=64,vext_spec=v1.0"


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

    Raises: ToolchainMissing; RuntimeError with the compiler's messages if the build fails.
    """
    tc = toolchain or find_toolchain()
    cmd = [
        tc.clang,
        *TARGET_FLAGS,
        opt,
        "-std=c++17",
        "-Wall",
        "-Wextra",
        "-Werror",
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
        raise RuntimeError(f"RISC-V build failed ({' '.join(cmd)}):\n{done.stderr}")
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
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=timeout_s)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {done.returncode}:\n{done.stdout}{done.stderr}")
    return done


# ---- running an emitted kernel's programs in one qemu process ------------------------------------------

RUNTIME_DIR = Path(__file__).parent / "runtime"
"""mtia_runtime.h, host_runtime.cpp and riscv_main.cpp (the process that runs programs from a launch file)."""

_MAGIC = 0x313056524149544D  # "MTIARV01" little-endian, as riscv_main.cpp checks


@dataclass(frozen=True)
class Region:
    """A range of global memory the kernel may address: `data` at device address `base`."""

    base: int
    data: bytes


@dataclass(frozen=True)
class Launch:
    """What one run of riscv_main needs: memory, the entry's argument words, the grid and the programs.

    `programs` are (program id (x, y, z), PE (x, y)) in the order they run.
    """

    ls_bytes: int
    regions: Sequence[Region]
    args: Sequence[int]
    grid: tuple[int, int, int]
    num_pes: tuple[int, int]
    programs: Sequence[tuple[tuple[int, int, int], tuple[int, int]]]


@dataclass(frozen=True)
class ProgramRecord:
    """The record of one program (host_runtime.cpp's int64 words) and its string table."""

    words: list[int]
    strings: list[str]


@dataclass(frozen=True)
class LaunchResult:
    """Records of the programs that ran, the first error (None if all ran) and the regions' final bytes."""

    records: list[ProgramRecord]
    error: str | None
    regions: list[bytes]
    run_s: float


def _words_of_bytes(data: bytes) -> list[int]:
    padded = data + b"\0" * (-len(data) % 8)
    return list(struct.unpack(f"<{len(padded) // 8}q", padded))


def encode_launch(launch: Launch) -> bytes:
    """Return the launch file riscv_main.cpp reads (int64 little-endian words)."""
    words = [_MAGIC, launch.ls_bytes, len(launch.regions)]
    for r in launch.regions:
        words += [r.base, len(r.data), *_words_of_bytes(r.data)]
    words += [len(launch.args), *launch.args, *launch.grid, *launch.num_pes, len(launch.programs)]
    for pid, pe in launch.programs:
        words += [*pid, *pe]
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
    records: list[ProgramRecord] = []
    for _ in launch.programs:
        if w.next() != 0:
            return LaunchResult(records, w.blob().decode(errors="replace"), [], run_s)
        words = w.take(w.next())
        strings = [w.blob().decode() for _ in range(w.next())]
        records.append(ProgramRecord(words, strings))
    return LaunchResult(records, None, [w.blob() for _ in launch.regions], run_s)


def _driver_object(tc: Toolchain, opt: str, cache_dir: Path) -> Path:
    """Return riscv_main.cpp (with the host runtime) compiled for riscv64, built once per content and flags."""
    parts = [(RUNTIME_DIR / n).read_bytes() for n in ("riscv_main.cpp", "host_runtime.cpp", "mtia_runtime.h")]
    key = hashlib.sha256(b"\0".join([*parts, tc.clang.encode(), opt.encode()])).hexdigest()[:16]
    obj = cache_dir / f"riscv_main-{key}.o"
    if not obj.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = obj.with_suffix(f".{os.getpid()}.tmp")
        cmd = [tc.clang, *TARGET_FLAGS, opt, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-c"]
        done = subprocess.run(
            [*cmd, str(RUNTIME_DIR / "riscv_main.cpp"), "-o", str(tmp)], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"RISC-V build of the host runtime failed:\n{done.stderr}")
        tmp.replace(obj)
    return obj


def default_cache_dir() -> Path:
    """Return the directory holding the riscv64 build of the runtime (one object per content hash)."""
    return Path(tempfile.gettempdir()) / f"mtia_xdsl-riscv-{os.getuid()}"


def build_kernel(
    source: str,
    entry: str,
    workdir: Path,
    *,
    opt: str = "-O2",
    toolchain: Toolchain | None = None,
    cache_dir: Path | None = None,
) -> BuildResult:
    """Cross-build the kernel translation unit `source` (C++ against mtia_runtime.h, entry function `entry`)
    with the host runtime and riscv_main into `workdir`/kernel. compile_s counts the kernel's compile and link
    (the runtime object is built once per cache_dir).

    Raises: ToolchainMissing; RuntimeError with the compiler's messages.
    """
    tc = toolchain or find_toolchain()
    driver = _driver_object(tc, opt, cache_dir or default_cache_dir())
    src = workdir / "kernel.cpp"
    src.write_text(
        f"{source}\n// riscv_main.cpp runs the programs through this entry\n"
        f'extern "C" void mtia_riscv_entry(mtia_pe *pe, const int64_t *args) {{ {entry}(pe, args); }}\n'
    )
    start = time.perf_counter()
    cmd = [tc.clang, *TARGET_FLAGS, opt, "-std=c++17", "-Wall", "-Wextra", "-Werror", f"-I{RUNTIME_DIR}"]
    exe = workdir / "kernel"
    done = subprocess.run([*cmd, str(src), str(driver), "-o", str(exe)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"RISC-V build of {entry} failed:\n{done.stderr}")
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

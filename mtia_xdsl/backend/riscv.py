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

import shutil
import subprocess
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

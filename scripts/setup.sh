#!/usr/bin/env bash
# Installs everything mtia_xdsl needs on a fresh machine (idempotent).
# torch is installed first, pinned, so pip takes the CPU build that lies on the machine's disk
# instead of resolving a bare `torch` requirement to a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if ! "$PY" -c "import torch, sys; sys.exit(0 if torch.__version__.startswith('2.13.0') else 1)" 2>/dev/null; then
  "$PY" -m pip install -q torch==2.13.0
fi
"$PY" -m pip install -q -e '.[test,fast]'
# The timing model compiled with mypyc (mtia_xdsl/machine/compiled.py): built when missing or stale (a few CPU
# minutes); without it the pure-Python model runs, with the same cycles, slower. Whether the build is current is
# asked without MTIA_SIM_COMPILED (with it set to 0 the build was redone on every run).
if ! "$PY" -c "import sys; from mtia_xdsl.machine import compiled; sys.exit(compiled.plan(environ={})[0] != 'compiled')" 2>/dev/null; then
  "$PY" -m mtia_xdsl.tools.build_timing || echo "setup.sh: the compiled timing model could not be built; the pure-Python one runs" >&2
fi
# RISC-V vector builds (mtia_xdsl/backend/riscv.py): clang 14 with the riscv64 cross libraries, and qemu-user.
# Installed with apt-get only when one is missing (Debian/Ubuntu; elsewhere install them by hand).
if ! command -v clang++-14 >/dev/null || ! command -v riscv64-linux-gnu-g++ >/dev/null \
  || ! command -v qemu-riscv64 >/dev/null || [ ! -e /usr/riscv64-linux-gnu/include/stdio.h ]; then
  if command -v apt-get >/dev/null && { [ "$(id -u)" = 0 ] || command -v sudo >/dev/null; }; then
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    { $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
      clang-14 g++-riscv64-linux-gnu libc6-dev-riscv64-cross qemu-user; } \
      || echo "setup.sh: apt-get could not install the RISC-V toolchain; the riscv executor and its tests need it" >&2
  else
    echo "setup.sh: clang++-14, the riscv64 cross g++/libc or qemu-riscv64 missing and no apt-get; RISC-V tests need them" >&2
  fi
fi

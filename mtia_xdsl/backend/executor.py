"""The executor choice: how a launched buffer-level program runs (machine model, C++, LLVM IR or RISC-V).

Every executor runs the same buffer-level mtia program of a kernel and returns the same
`machine.run.RunResult`: the model interprets the program; the C++, LLVM IR and RISC-V paths run code
emitted from it against the host runtime (`backend/runtime/`), which records the engine commands in the form
the timing model takes. So every path reports cycles from the same timing model, and
`mtia_xdsl.last_report()` works whichever path ran.

The choice, strongest first: the compile/launch option `executor` (`mtia_xdsl.compile(...,
options={"executor": "cpp"})`, `kernel[grid](..., executor="cpp")`), then the environment variable
`MTIA_EXECUTOR` (read by the runtime at launch, like Triton's `TRITON_INTERPRET`), then "model". With
the variable set, any Triton test suite runs through a path unchanged: `MTIA_EXECUTOR=cpp pytest ...`.

Executors:
- "model": the xDSL machine model (`mtia_xdsl.machine.run_kernel`).
- "cpp": the kernel's C++ (`backend/cpp.py`) built with the system compiler and run (`backend/host.py`).
- "llvm": the kernel's LLVM IR (`backend/llvm.py`) JIT-compiled with llvmlite.
- "riscv": the kernel's C++ cross-built for riscv64 with RVV and run under qemu-riscv64 (`backend/riscv.py`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import ModuleOp

ENV_VAR = "MTIA_EXECUTOR"
"""Environment variable naming the executor of a plain launch (when the `executor` option is not given)."""

DEFAULT_EXECUTOR = "model"

EXECUTORS = ("model", "cpp", "llvm", "riscv")
"""Every executor name, in the order of the docs; the one home of this list."""


class ExecutorChoiceError(ValueError):
    """The `executor` option or `MTIA_EXECUTOR` names no executor."""


class ExecutorUnavailableError(RuntimeError):
    """The chosen executor cannot run here: its path is not in this build, or its toolchain is missing.

    The message is one line a user can act on (the install command, or the executor to use instead).
    """


def choose(option: str | None, environ: Mapping[str, str]) -> str:
    """Return the executor of a launch: the `executor` option if given, else `MTIA_EXECUTOR`, else "model".

    `environ` is the process environment as the runtime passes it at launch (`os.environ`).
    Raises: ExecutorChoiceError naming the source of the value and the choices for an unknown name.
    """
    if option is not None:
        return check_name(option, "the executor option")
    value = environ.get(ENV_VAR, "")
    return check_name(value, ENV_VAR) if value else DEFAULT_EXECUTOR


def check_name(name: object, source: str = "executor") -> str:
    """Return `name` if it is an executor name, exactly as `EXECUTORS` spells it (lower case, no spaces).

    The option and `MTIA_EXECUTOR` follow this one rule, so `MTIA_EXECUTOR=CPP` is refused as
    `executor="CPP"` is, not quietly read as "cpp".
    Raises: ExecutorChoiceError naming `source`, the value and the choices, and the name meant when the value
    differs from one only in case or surrounding spaces.
    """
    if isinstance(name, str) and name in EXECUTORS:
        return name
    meant = name.strip().lower() if isinstance(name, str) else ""
    hint = f"; did you mean {meant!r}?" if meant in EXECUTORS else ""
    raise ExecutorChoiceError(f"{source} must be one of {', '.join(map(repr, EXECUTORS))}, got {name!r}{hint}")


@dataclass(frozen=True)
class _Path:
    """Where one executor lives: the modules that must exist and the function that runs it."""

    modules: tuple[str, ...]
    """Modules of the path (all must be importable for the executor to be available)."""
    run: Callable[[ModuleOp, tuple[int, int, int], list[Any], Any], Any] | None
    """Runs a program on this path; None while the path is not connected to launches."""


def run(name: str, module: ModuleOp, grid: tuple[int, int, int], args: list[Any], options: Any = None) -> Any:
    """Run the buffer-level `module` with executor `name` on `args` and return its machine.run.RunResult.

    `args` are the model's arguments (flat CPU tensor views for pointers, Python scalars), results land in
    the tensors; `options` are the kernel's MtiaOptions (machine, overrides, PE mapping) or None.
    Raises: ExecutorChoiceError for an unknown name; ExecutorUnavailableError (one line) when the executor's
    path is not in this build or its toolchain is missing; whatever the path raises for a failing kernel.
    """
    path = _PATHS[check_name(name)]
    _require(name, path)
    assert path.run is not None  # _require refuses an unconnected path
    return path.run(module, grid, args, options)


def available(name: str) -> bool:
    """Return whether executor `name`'s path is in this build (its toolchain may still be missing)."""
    try:
        _require(name, _PATHS[check_name(name)])
    except ExecutorUnavailableError:
        return False
    return True


def _require(name: str, path: _Path) -> None:
    """Raise ExecutorUnavailableError (one line, chained to nothing) unless `path` can run here."""
    for module_name in path.modules:
        try:
            importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name != module_name:
                raise
            raise ExecutorUnavailableError(
                f"executor {name!r} is not available in this build ({module_name} is missing); use one of: {_usable()}"
            ) from None
    if path.run is None:
        raise ExecutorUnavailableError(
            f"executor {name!r} is not connected to launches in this build yet; use one of: {_usable()}"
        )


def _usable() -> str:
    return ", ".join(repr(n) for n in EXECUTORS if n == DEFAULT_EXECUTOR or _present(n))


def _present(name: str) -> bool:
    import importlib.util

    path = _PATHS[name]
    try:
        return path.run is not None and all(importlib.util.find_spec(m) is not None for m in path.modules)
    except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules (import blocked)
        return False


def _run_model(module: ModuleOp, grid: tuple[int, int, int], args: list[Any], options: Any) -> Any:
    from mtia_xdsl.machine import run_kernel

    return run_kernel(module, grid, args, options)


def _run_cpp(module: ModuleOp, grid: tuple[int, int, int], args: list[Any], options: Any) -> Any:
    """Run the program's C++ (backend/host.run_module: emit, build cached by content, run on the host runtime,
    time); a missing compiler is ExecutorUnavailableError, one line with the install command."""
    from mtia_xdsl.backend.host import CompilerMissingError, run_module

    try:
        return run_module(module, grid, args, options)
    except CompilerMissingError as e:
        raise ExecutorUnavailableError(f"executor 'cpp': {e}") from None


def _run_riscv(module: ModuleOp, grid: tuple[int, int, int], args: list[Any], options: Any) -> Any:
    from mtia_xdsl.backend.riscv import ToolchainMissing, run_module

    try:
        return run_module(module, grid, args, options)
    except ToolchainMissing as e:  # checked before any tensor is touched: the one-line install command
        raise ExecutorUnavailableError(str(e)) from None


def _run_llvm(module: ModuleOp, grid: tuple[int, int, int], args: list[Any], options: Any) -> Any:
    """Run the program's LLVM IR (backend/llvm_jit.run_program: emit, JIT with llvmlite against the host runtime
    library, time); a missing llvmlite or C++ compiler (the runtime library is built from C++) is
    ExecutorUnavailableError, one line with the install command."""
    from mtia_xdsl.backend.host import CompilerMissingError

    run_program: Any = importlib.import_module("mtia_xdsl.backend.llvm_jit").run_program
    try:
        return run_program(module, grid, args, options)
    except CompilerMissingError as e:
        raise ExecutorUnavailableError(f"executor 'llvm' builds the runtime library from C++: {e}") from None
    except ModuleNotFoundError as e:
        if e.name != "llvmlite" and not str(e.name).startswith("llvmlite."):
            raise
        raise ExecutorUnavailableError("executor 'llvm' needs llvmlite: pip install llvmlite") from None


_PATHS: dict[str, _Path] = {
    "model": _Path(("mtia_xdsl.machine",), _run_model),
    "cpp": _Path(("mtia_xdsl.backend.cpp", "mtia_xdsl.backend.host"), _run_cpp),
    "llvm": _Path(("mtia_xdsl.backend.llvm", "mtia_xdsl.backend.llvm_jit", "mtia_xdsl.backend.host"), _run_llvm),
    "riscv": _Path(("mtia_xdsl.backend.cpp", "mtia_xdsl.backend.riscv"), _run_riscv),
}

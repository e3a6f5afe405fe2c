"""The exceptions a caller of mtia_xdsl may catch, in one place.

Public API (`__all__`). Every message names the kernel's file and line (`file:line:col: error: ...`) where
there is one, and says how to fix the problem. Errors a Triton user catches keep upstream's types:

- `KernelError` (a `triton.CompilationError`; `UnsupportedConstruct` for what MTIA cannot run): the frontend
  could not build the kernel's tt module (`mtia_xdsl.compile`, `mtia_xdsl.frontend.build_tt_module`).
- `LocalStorageOutOfResources`, `CbIdsOutOfResources` (Triton's `OutOfResources`, which `@triton.autotune`
  skips): the kernel's CBs do not fit a PE's LS bytes or CB IDs, from `mtia_xdsl.compile` and launches.
  `LocalStorageOverflow`, `CbIdOverflow` (xDSL `PassFailedException`s) are the same refusals from the
  passes (`mtia_xdsl.passes`, `mtia-opt`).
- `KernelLaunchError` (a ValueError): missing, extra or wrong launch arguments, or a bad grid.
- `KernelRuntimeError` (Triton's `InterpreterError`, a RuntimeError and xDSL's `InterpretationError`): the
  model found an error while the kernel ran (out-of-bounds access, failed `device_assert`, deadlock);
  no tensor was written.
- `ExecutorChoiceError` (a ValueError), `ExecutorUnavailableError` (a RuntimeError): the `executor` option
  or `MTIA_EXECUTOR` names no executor, or the chosen one (C++, LLVM IR, RISC-V) cannot run here.
- `ExtensionError`: an `mtia_xdsl.language` extension called outside mtia_xdsl's compiler.
- `InductorHookError`: torch.compile's hooks miss a torch internal (another torch version than 2.13.0).
- xDSL's `PassFailedException` and `VerifyException` (both `DiagnosticException`s), `ParseError` and
  `InterpretationError`, raised by passes, verification, parsing and the model.

Importing this module imports Triton.
"""

from triton.compiler.errors import CompilationError  # pyright: ignore[reportMissingTypeStubs]
from triton.runtime.errors import OutOfResources  # pyright: ignore[reportMissingTypeStubs]
from xdsl.utils.exceptions import (
    DiagnosticException,
    InterpretationError,
    ParseError,
    PassFailedException,
    VerifyException,
)

from mtia_xdsl.backend.executor import ExecutorChoiceError, ExecutorUnavailableError
from mtia_xdsl.frontend.errors import KernelError, UnsupportedConstruct
from mtia_xdsl.runtime.errors import CbIdsOutOfResources, KernelRuntimeError, LocalStorageOutOfResources
from mtia_xdsl.runtime.inductor import InductorHookError
from mtia_xdsl.runtime.launch import KernelLaunchError
from mtia_xdsl.transforms.errors import CbIdOverflow, LocalStorageOverflow
from mtia_xdsl.utils.caller import ExtensionError

__all__ = [
    "CbIdOverflow",
    "CbIdsOutOfResources",
    "CompilationError",
    "DiagnosticException",
    "ExecutorChoiceError",
    "ExecutorUnavailableError",
    "ExtensionError",
    "InductorHookError",
    "InterpretationError",
    "KernelError",
    "KernelLaunchError",
    "KernelRuntimeError",
    "LocalStorageOutOfResources",
    "LocalStorageOverflow",
    "OutOfResources",
    "ParseError",
    "PassFailedException",
    "UnsupportedConstruct",
    "VerifyException",
]

"""Run the LLVM IR of a kernel (backend/llvm.py) with llvmlite against the host runtime built as a shared library.

`run_llvm` parses and verifies the IR text, JIT-compiles it with llvmlite's MCJIT at -O2 for the host CPU,
resolves the `mtia_*` functions it calls in the host runtime (`backend/runtime/host_runtime.cpp`, built as a
shared library by `backend/host.py build_runtime_library`), and launches it with the C++ path's own launcher
(`host.run_loaded`): every program id runs the JIT-compiled entry, the runtime executes and records its
commands, and the record is timed by the machine model's timing model. So results and cycles come from the
same runtime and timing as the C++ path, and equal the model's for the unmodified program.
"""

# llvmlite ships no type stubs: its values are untyped at this boundary (STYLE.md section 11).
# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false, reportUnknownVariableType=false
# pyright: reportUnknownArgumentType=false

from __future__ import annotations

import ctypes
import ctypes.util
import json
from collections.abc import Sequence
from typing import Any

from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.run import RunResult


def run_llvm(
    llir: str,
    grid: Sequence[int] | int,
    args: list[Any],
    *,
    config: MachineConfig | None = None,
    mapping: str | None = None,
    subgrid: Any = None,
) -> RunResult:
    """Run LLVM IR `llir` (backend/llvm.py's output, edited or not) for every program id of `grid` and time it.

    `args` are the non-constexpr kernel arguments in order (torch CPU tensors for pointers, Python numbers for
    scalars); results are written into the tensors only when every program succeeded. `config` (default: the
    chip and overrides the kernel was compiled for, from the IR's metadata), `mapping` and `subgrid` override
    the placement as for `host.run_cpp`.
    Returns: machine.run.RunResult (report, timeline, traces), as `machine.run.run_kernel` returns.
    Raises: RuntimeError if llvmlite rejects the IR; CompilerMissingError / CppBuildError (backend/host.py) if
    the runtime library cannot be built; InterpretationError naming the kernel line and program id when a
    program fails.
    """
    import llvmlite.binding as llvm

    from mtia_xdsl.backend import host
    from mtia_xdsl.backend.llvm import META_GLOBAL

    library = host.build_runtime_library()
    rt = host.HostRuntime(library)
    engine = _compile(llvm, llir, str(library))
    meta_addr = engine.get_global_value_address(META_GLOBAL)
    if not meta_addr:
        raise RuntimeError(f"the LLVM IR has no @{META_GLOBAL} (emit it with backend/llvm.py)")
    meta = json.loads(ctypes.string_at(meta_addr).decode())
    entry = engine.get_function_address(meta["kernel"])
    grid3 = tuple(grid) if isinstance(grid, Sequence) else (grid,)
    result = host.run_loaded(rt, grid3, args, config=config, mapping=mapping, subgrid=subgrid, entry=entry, meta=meta)
    del engine  # the JIT-compiled code lives as long as its engine: until here
    return result


def run_program(module: Any, grid: tuple[int, int, int], args: list[Any], options: Any = None) -> RunResult:
    """Emit the LLVM IR of buffer-level `module` and run it (`run_llvm`) with the machine of `options` (an
    MtiaOptions or None: the program's own), as `machine.run_kernel(module, grid, args, options)` runs it."""
    from mtia_xdsl.backend.llvm import emit_llvm_ir
    from mtia_xdsl.machine.placement import machine_config

    config = machine_config(module, options) if options is not None else None
    return run_llvm(emit_llvm_ir(module), grid, args, config=config)


def _compile(llvm: Any, llir: str, runtime_library: str) -> Any:
    """Parse, verify and JIT-compile `llir` at -O2 for the host; return the execution engine.

    The runtime library's symbols are made visible to the JIT (`load_library_permanently`).
    """
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.load_library_permanently(runtime_library)
    libgcc = ctypes.util.find_library("gcc_s")  # f16 <-> f32 helpers on hosts without F16C
    if libgcc:
        llvm.load_library_permanently(libgcc)
    try:
        mod = llvm.parse_assembly(llir)
        mod.verify()
    except RuntimeError as e:
        raise RuntimeError(f"llvmlite rejected the LLVM IR: {e}") from None
    target = llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=2
    )  # the host's own instructions (f16 conversions with F16C where the host has it)
    engine = llvm.create_mcjit_compiler(mod, target)
    engine.finalize_object()
    engine.run_static_constructors()
    return engine

"""Target registry: what `mtia-opt -t NAME` can emit, as lazy factories keyed by the target name.

A factory takes no arguments and returns an xDSL `Target` class (xDSL's own convention, see
`xdsl.universe`): `mtia-opt` builds it from the `-t` spec and calls `emit(ctx, module, output)`. A factory
imports its emitter only when called, so `mtia-opt` starts without loading every backend. Emitters (C++
for the PE's RISC-V cores, LLVM IR) register here; an emitter must translate every op of
`mtia.ENGINE_BODY_OPS` inside an engine command body, and the buffer-level ops around them.

Targets today:
- "mlir": the module as MLIR text (xDSL's MLIRTarget; the default of `mtia-opt`).
- "mtia-cpp": the buffer-level kernel as a C++ translation unit calling runtime/mtia_runtime.h (backend/cpp.py).
- "mtia-llvm": the buffer-level program as LLVM IR text (backend/llvm.py).
"""

from collections.abc import Callable

from xdsl.utils.target import Target


def _mlir() -> type[Target]:
    from xdsl.targets.mlir import MLIRTarget

    return MLIRTarget


def _cpp() -> type[Target]:
    from mtia_xdsl.backend.cpp import CppTarget

    return CppTarget


def _mtia_llvm() -> type[Target]:
    from mtia_xdsl.backend.llvm import MtiaLlvmTarget

    return MtiaLlvmTarget


def get_all_targets() -> dict[str, Callable[[], type[Target]]]:
    """Return every mtia_xdsl target by its `-t` name (lazy factories returning the Target class)."""
    return {"mlir": _mlir, "mtia-cpp": _cpp, "mtia-llvm": _mtia_llvm}

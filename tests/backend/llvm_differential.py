"""Run every launch of a block through the machine model and through its LLVM IR (llvmlite), and compare.

`differential()` patches the launcher's `toolchain.run_kernel`: each launch runs on the model with the caller's
tensors and as LLVM IR (`backend.llvm_jit.run_llvm`) on copies of them; the copies' final contents and the
cycles are recorded per launch for the test to compare.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from mtia_xdsl.runtime import toolchain


@dataclass
class Launch:
    """One launch: the model's tensors after it, the LLVM run's, and both cycle counts."""

    name: str
    model: list[Any]
    llvm: list[Any]
    model_cycles: int
    llvm_cycles: int


@dataclass
class Record:
    launches: list[Launch] = field(default_factory=list)


def _copy(args: list[Any]) -> list[Any]:
    """Copies of the tensor arguments that keep their aliasing (views of one storage stay views of one copy)."""
    copies: dict[int, torch.Tensor] = {}
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            key = a.untyped_storage().data_ptr()
            if key not in copies:
                storage = a.untyped_storage()
                copies[key] = torch.empty(0, dtype=torch.uint8).set_(storage).clone()
            base = copies[key]
            out.append(
                torch.empty(0, dtype=a.dtype).set_(base.untyped_storage(), a.storage_offset(), a.shape, a.stride())
            )
        else:
            out.append(a)
    return out


@contextlib.contextmanager
def differential() -> Iterator[Record]:
    """Within the block, every launch also runs as LLVM IR; yields the Record filled per launch."""
    from mtia_xdsl.backend.llvm_jit import run_program

    record = Record()
    original = toolchain.run_kernel

    def both(module: Any, grid: Any, args: list[Any], options: Any) -> Any:
        copies = _copy(args)
        result = original(module, grid, args, options)
        ours = run_program(module, grid, copies, options)
        name = next(iter(module.ops)).properties["sym_name"].data
        record.launches.append(
            Launch(name, [a.clone() if isinstance(a, torch.Tensor) else a for a in args], copies,
                   result.report.total_cycles, ours.report.total_cycles)
        )  # fmt: skip
        return result

    toolchain.run_kernel = both  # type: ignore[assignment]
    try:
        yield record
    finally:
        toolchain.run_kernel = original  # type: ignore[assignment]

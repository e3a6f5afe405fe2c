"""Host library calls of Inductor's output code: recording them, and what they cost MTIA.

Inductor leaves some ops to host libraries (`extern_kernels.mm(...)`, aten fallbacks such as
`torch.ops.aten.topk.default(...)`). MTIA-2i cannot run ATen, so each such call in the middle of a compiled
model moves its inputs to the host and its outputs back over the host link. `HostCalls` records the calls of
one run of the compiled code (op, bytes in, bytes out); `host_call_us` and `host_charge_us` charge them with
the host link of a MachineConfig (`host_link_latency_cycles`, `host_link_bytes_per_s`), the `charged`
columns of benchmarks/inductor.py.

Needs only torch (imported when a recording starts), so benchmarks/inductor.py can record with it while it
measures an older tree of the package (`--baseline-rev`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from mtia_xdsl.machine.config import MachineConfig


class HostCall(NamedTuple):
    """One host library call: the op as Inductor's output code spells it, the bytes it moves each way."""

    op: str
    in_bytes: int
    """Bytes of its tensor inputs whose storage is not one of the model's weights (those have a host copy)."""
    out_bytes: int
    """Bytes of its tensor outputs (an `out=` tensor is an output)."""


def host_call_us(machine: MachineConfig, in_bytes: int, out_bytes: int) -> float:
    """Microseconds one host library call costs MTIA: two transfers over the host link, its inputs to the host
    and its outputs back, each `machine.host_link_latency_cycles`, plus all its bytes at
    `machine.host_link_bytes_per_s` (docs/machine.md). A lower bound: the host's own compute is not charged.

    Units: bytes in, microseconds out. Source: MachineConfig's host link (PCIe Gen5 x8, S2; latency an ASSUMPTION).
    """
    transfers_us = machine.cycles_to_us(2 * machine.host_link_latency_cycles)
    return transfers_us + 1e6 * (in_bytes + out_bytes) / machine.host_link_bytes_per_s


def host_charge_us(machine: MachineConfig, calls: Iterable[Sequence[Any]]) -> float:
    """Microseconds the host library calls of one model call cost MTIA: `host_call_us` summed over `calls`,
    each `(op, in_bytes, out_bytes)` (a `HostCall`, or the list JSON makes of one)."""
    return sum(host_call_us(machine, int(in_bytes), int(out_bytes)) for _, in_bytes, out_bytes in calls)


def _nbytes(tensors: Iterable[Any]) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


class HostCalls:
    """While open, records every host library call the compiled code makes (`extern_kernels.mm(...)`,
    `torch.ops.aten.topk.default(...)`: the names in `ops`, as Inductor's output code spells them) as a
    `HostCall` in `calls`: its tensor inputs' bytes, leaving out those whose storage is one of `weights`
    (data pointers of the model's parameters and buffers), and its outputs' bytes. Wraps the `extern_kernels`
    functions and `OpOverload.__call__` (a dispatch mode would make torch.compile run the model eagerly), and
    restores them on exit.
    """

    def __init__(self, ops: set[str], weights: set[int]) -> None:
        self.ops, self.weights = ops, weights
        self.calls: list[HostCall] = []
        self.undo: list[Callable[[], None]] = []

    def record(self, name: str, args: Any, kwargs: dict[str, Any], result: Any) -> None:
        """Record a call of op `name` with `args` and `kwargs` that returned `result`."""
        import torch
        from torch.utils._pytree import tree_leaves

        out = kwargs.get("out")
        leaves = tree_leaves((args, {k: v for k, v in kwargs.items() if k != "out"}))
        tensors = [t for t in leaves if isinstance(t, torch.Tensor)]
        inputs = [t for t in tensors if t.untyped_storage().data_ptr() not in self.weights]
        outputs = [t for t in tree_leaves(result if result is not None else out) if isinstance(t, torch.Tensor)]
        self.calls.append(HostCall(name, _nbytes(inputs), _nbytes(outputs)))

    def __enter__(self) -> HostCalls:
        from torch._inductor.select_algorithm import extern_kernels

        for op in sorted(self.ops):
            attr = op.split(".", 1)[1] if op.startswith("extern_kernels.") else ""
            if attr and hasattr(extern_kernels, attr):
                fn = getattr(extern_kernels, attr)

                def wrapped(*args: Any, _fn: Any = fn, _op: str = op, **kwargs: Any) -> Any:
                    result = _fn(*args, **kwargs)
                    self.record(_op, args, kwargs, result)
                    return result

                setattr(extern_kernels, attr, wrapped)
                self.undo.append(lambda a=attr, f=fn: setattr(extern_kernels, a, f))
        aten_ops = {op.split("torch.ops.", 1)[-1] for op in self.ops if not op.startswith("extern_kernels.")}
        if aten_ops:
            self._wrap_op_overloads(aten_ops)
        return self

    def _wrap_op_overloads(self, names: set[str]) -> None:
        import torch

        call = torch._ops.OpOverload.__call__  # pyright: ignore[reportPrivateUsage]

        def op_call(op: Any, /, *args: Any, **kwargs: Any) -> Any:
            result = call(op, *args, **kwargs)
            if str(op) in names:
                self.record(str(op), args, kwargs, result)
            return result

        torch._ops.OpOverload.__call__ = op_call  # type: ignore[method-assign]  # pyright: ignore[reportPrivateUsage]
        self.undo.append(lambda: setattr(torch._ops.OpOverload, "__call__", call))  # pyright: ignore[reportPrivateUsage]

    def __exit__(self, *exc: object) -> None:
        for undo in reversed(self.undo):
            undo()
        self.undo.clear()

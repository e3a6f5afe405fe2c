"""The MTIA-2i machine model: configuration, functional interpretation, timing and reports."""

from typing import Any

from mtia_xdsl.machine.config import MachineConfig

__all__ = ["MachineConfig", "run_kernel"]


def run_kernel(*args: Any, **kwargs: Any) -> Any:
    """Run a buffer-level kernel on the machine model; see `mtia_xdsl.machine.run.run_kernel`."""
    from mtia_xdsl.machine.run import run_kernel as run

    return run(*args, **kwargs)

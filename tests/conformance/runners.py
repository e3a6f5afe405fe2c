"""The three executions a corpus case is checked with, and which compiler stage an error comes from.

- `run_oracle`: Triton 3.9's interpreter in process (`InterpretedFunction(kernel.fn)[grid]`), or the case's
  torch/numpy reference where Triton's interpreter is wrong.
- `run_reference_tt`: our frontend's tt module on the `tt` reference interpreter (`run_tt`).
- `run_machine`: a plain `kernel[grid](...)` on CPU tensors, i.e. our Triton backend: frontend, lowering,
  machine model.
Every run works on private copies of the launch's tensors (same storage layout, so strided views stay views).
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import torch
from spec import Case, Launch, signature_of

from mtia_xdsl.frontend import FrontendOptions, build_tt_module
from mtia_xdsl.machine.reference import run_tt

STAGES = ("frontend", "tt-interpreter", "lowering", "machine")


def clone_args(args: list[Any]) -> list[Any]:
    """Copy tensors with their whole storage, keeping offset, sizes and strides; scalars as they are."""
    out: list[Any] = []
    for a in args:
        if isinstance(a, torch.Tensor):
            copy = torch.empty(0, dtype=a.dtype)
            copy.set_(a.untyped_storage().clone(), a.storage_offset(), a.size(), a.stride())
            out.append(copy)
        else:
            out.append(a)
    return out


def grid3(grid: tuple[int, ...]) -> tuple[int, int, int]:
    g = (*grid, 1, 1, 1)
    return (g[0], g[1], g[2])


@contextmanager
def _jit_calls_interpreted() -> Iterator[None]:
    """Make calls of `@triton.jit` functions inside an interpreted kernel interpret them too.

    With TRITON_INTERPRET=1 set before import, `@triton.jit` itself returns interpreted functions, so helpers
    such as `tl.sum` or `tl.sigmoid` are callable. In process, they are `JITFunction`s, whose `__call__`
    refuses; for the duration of an oracle run it forwards to Triton's interpreter instead.
    """
    from triton.runtime.interpreter import InterpretedFunction, _patch_lang
    from triton.runtime.jit import JITFunction

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        # As InterpretedFunction.__call__, but undo the patching of triton.language afterwards
        scope = _patch_lang(self.fn)
        try:
            return InterpretedFunction(self.fn).rewrite()(*args, **kwargs)
        finally:
            scope.restore()

    saved = JITFunction.__call__
    JITFunction.__call__ = call  # type: ignore[method-assign]
    try:
        yield
    finally:
        JITFunction.__call__ = saved  # type: ignore[method-assign]


def run_oracle(case: Case, launch: Launch) -> list[Any]:
    """Return the arguments after the oracle ran on copies of them."""
    from triton.runtime.interpreter import InterpretedFunction

    args = clone_args(launch.args)
    if case.reference is not None:
        case.reference(args)
    else:
        with _jit_calls_interpreted():
            InterpretedFunction(case.kernel.fn)[launch.grid](*args, **case.constexprs)
    return args


@cache
def _tt_module(
    kernel: Any, signature: tuple[tuple[str, str], ...], constexprs: tuple[tuple[str, Any], ...], debug: bool
):
    return build_tt_module(kernel, dict(signature), dict(constexprs), options=FrontendOptions(debug=debug))


def build_for(case: Case, launch: Launch) -> Any:
    """Return our tt module for the launch's signature (cached per signature)."""
    sig = tuple(signature_of(case, launch).items())
    return _tt_module(case.kernel, sig, tuple(sorted(case.constexprs.items())), case.debug)


def run_reference_tt(case: Case, launch: Launch, module: Any) -> list[Any]:
    """Return the arguments after `module` ran on the tt reference interpreter."""
    args = clone_args(launch.args)
    run_tt(module, grid3(launch.grid), args)
    return args


def run_machine(case: Case, launch: Launch) -> list[Any]:
    """Return the arguments after `kernel[grid](...)` ran through our backend on the machine model."""
    args = clone_args(launch.args)
    options = {"debug": True} if case.debug else {}
    case.kernel[launch.grid](*args, **case.constexprs, **options)
    return args


def first_line(e: BaseException) -> str:
    """Return the first non-empty line of an error message (at most 200 characters)."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    text = lines[0] if lines else type(e).__name__
    return f"{type(e).__name__}: {text}"[:200]


def stage_of(e: BaseException) -> str:
    """Return the compiler stage an error of a machine run was raised in, from the deepest mtia_xdsl frame."""
    from xdsl.interpreter import InterpretationError
    from xdsl.utils.exceptions import PassFailedException

    from mtia_xdsl.frontend import KernelError

    by_type = ((KernelError, "frontend"), (PassFailedException, "lowering"), (InterpretationError, "machine"))
    err: BaseException | None = e
    while err is not None:
        for cls, stage in by_type:
            if isinstance(err, cls):
                return stage
        err = err.__cause__
    stage = "machine"
    seen: set[int] = set()
    err = e
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        for frame in traceback.extract_tb(err.__traceback__):
            path = frame.filename.replace("\\", "/")
            if "/mtia_xdsl/frontend/" in path:
                stage = "frontend"
            elif "/mtia_xdsl/transforms/" in path or "/mtia_xdsl/dialects/" in path or path.endswith("pipeline.py"):
                stage = "lowering"
            elif "/mtia_xdsl/machine/" in path:
                stage = "machine"
        err = err.__cause__ or err.__context__
    return stage

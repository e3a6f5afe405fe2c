"""Differential check of launched Triton kernels against Triton's interpreter (issue 18, item 2).

`interpreter_check()` is a context manager: while it is active, every kernel launched through mtia_xdsl's
driver (`MtiaLauncher`, so every kernel a `torch.compile`'d model runs with `cpu_backend="triton"`, and every
autotuning run of a choice) is also run by Triton's interpreter on copies of its arguments taken before the
launch, and the memory of every pointer argument must then agree with what the machine model left there
(`torch.testing.assert_close` with the dtype's default tolerances; NaN equal to NaN, so memory neither run
writes agrees whatever it holds).

The interpreter runs in-process, without `TRITON_INTERPRET=1` (which only takes effect for `@triton.jit`
decorations made after it is set): the kernel's Python function is rewritten by
`triton.runtime.interpreter.InterpretedFunction` (its own copy of the kernel module's globals, which the rewriter
would otherwise add names to), `tl`/`tl.core` are patched to the interpreter's semantics only for the run, and
`@triton.jit` helpers the kernel calls (`triton_helpers.maximum`, ...) run interpreted in place of
`JITFunction.__call__`'s refusal. Constexprs come as the launcher gets them: Inductor's pointwise and reduction
kernels take `XBLOCK` etc. as constexpr arguments, its templates define theirs in the body.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import types
from collections.abc import Iterator
from typing import Any


@dataclasses.dataclass
class CheckedLaunch:
    """One launch the check reran: the kernel's name, its grid and the pointer arguments whose memory either run
    changed (the buffers the kernel writes), by parameter name."""

    kernel: str
    grid: tuple[int, int, int]
    written: list[str]


class InterpreterMismatch(AssertionError):
    """The machine model and Triton's interpreter left different values in a kernel's output buffer."""


def interpreter_check() -> contextlib.AbstractContextManager[list[CheckedLaunch]]:
    """Check every launch through mtia_xdsl's driver against Triton's interpreter while the context is active.

    Yields the list of `CheckedLaunch`es, appended to as kernels run.
    Raises (from the launch): InterpreterMismatch naming the kernel, its file and the parameter whose memory
    differs, with assert_close's report of the elements; a launch whose arguments hold a pointer the check cannot
    copy (anything but tensors, `triton.reinterpret` wrappers and tuples of them) raises NotImplementedError.
    """
    return _check()


@contextlib.contextmanager
def _check() -> Iterator[list[CheckedLaunch]]:
    from mtia_xdsl.runtime.triton_backend.driver import MtiaLauncher

    checked: list[CheckedLaunch] = []
    launch = MtiaLauncher.__call__

    def checked_launch(self: MtiaLauncher, gx: int, gy: int, gz: int, *rest: Any) -> Any:
        args = rest[6:]  # after stream, function, packed/launch metadata and the enter/exit hooks
        if gx * gy * gz == 0 or not hasattr(self.fn, "fn"):
            return launch(self, gx, gy, gz, *rest)
        storages: dict[int, Any] = {}
        copies = [_copy(a, storages) for a in args]
        result = launch(self, gx, gy, gz, *rest)
        checked.append(_rerun(self.fn, (gx, gy, gz), list(args), copies, storages))
        return result

    MtiaLauncher.__call__ = checked_launch  # type: ignore[method-assign]
    try:
        yield checked
    finally:
        MtiaLauncher.__call__ = launch  # type: ignore[method-assign]


def _copy(arg: Any, storages: dict[int, Any]) -> Any:
    """`arg` with every tensor in it replaced by a view of the same shape, strides and offset into a copy of its
    storage (one copy per storage, so arguments that alias still alias)."""
    import torch
    from triton.runtime.jit import TensorWrapper

    if isinstance(arg, tuple):
        items = [_copy(a, storages) for a in arg]
        return type(arg)(*items) if hasattr(arg, "_fields") else tuple(items)
    if isinstance(arg, TensorWrapper):
        return TensorWrapper(_copy(arg.base, storages), arg.dtype)
    if isinstance(arg, torch.Tensor):
        storage = arg.untyped_storage()
        key = storage.data_ptr()
        if key not in storages:
            storages[key] = (storage, storage.clone())
        view = torch.empty(0, dtype=arg.dtype)
        return view.set_(storages[key][1], arg.storage_offset(), arg.size(), arg.stride())
    if hasattr(arg, "data_ptr"):
        raise NotImplementedError(f"interpreter_check cannot copy a pointer argument of type {type(arg).__name__}")
    return arg


def _rerun(jit_fn: Any, grid: tuple[int, int, int], args: list[Any], copies: list[Any], storages: Any) -> Any:
    """Run `jit_fn` under the interpreter on `copies`; compare each storage with the machine model's."""
    import torch

    before = {key: copy.clone() for key, (_, copy) in storages.items()}
    run_interpreted(jit_fn, grid, copies)
    written = []
    for name, arg in _tensor_args(jit_fn.arg_names, args):
        key = arg.untyped_storage().data_ptr()
        if key not in before:
            continue
        machine, interp = (_flat(s, arg.dtype) for s in (storages[key][0], storages.pop(key)[1]))
        old = _flat(before.pop(key), arg.dtype)
        if torch.equal(machine, old) and torch.equal(interp, old):
            continue
        written.append(name)
        try:
            torch.testing.assert_close(machine, interp, equal_nan=True)
        except AssertionError as e:
            raise InterpreterMismatch(
                f"{_where(jit_fn)}: kernel {jit_fn.__name__} grid {grid}: the machine model and Triton's "
                f"interpreter differ in '{name}' (machine model first):\n{e}"
            ) from None
    return CheckedLaunch(jit_fn.__name__, grid, written)


def _tensor_args(names: list[str], args: list[Any]) -> Iterator[tuple[str, Any]]:
    import torch
    from triton.runtime.jit import TensorWrapper

    for name, arg in zip(names, args, strict=True):
        leaves = list(arg) if isinstance(arg, tuple) else [arg]
        for i, leaf in enumerate(leaves):
            leaf = leaf.base if isinstance(leaf, TensorWrapper) else leaf
            if isinstance(leaf, torch.Tensor):
                yield (f"{name}[{i}]" if isinstance(arg, tuple) else name), leaf


def _flat(storage: Any, dtype: Any) -> Any:
    """All of `storage` as a 1-D tensor of `dtype` (its whole elements)."""
    import torch

    n = storage.nbytes() // torch.empty(0, dtype=dtype).element_size()
    return torch.empty(0, dtype=dtype).set_(storage, 0, (n,), (1,))


def _where(jit_fn: Any) -> str:
    from mtia_xdsl.runtime.launch import kernel_location

    return kernel_location(jit_fn)


_REWRITTEN: dict[Any, Any] = {}


def run_interpreted(jit_fn: Any, grid: tuple[int, int, int], args: list[Any]) -> None:
    """Run the `@triton.jit` function `jit_fn` under Triton's interpreter on `grid` with `args` (every parameter,
    constexprs included, as Triton's launcher passes them); tensors are read and written in place."""
    import triton.language as tl
    from triton import knobs
    from triton.runtime.interpreter import GridExecutor, _patch_lang
    from triton.runtime.jit import JITFunction

    fn = _interpretable(jit_fn.fn)
    refuse = JITFunction.__call__
    scope = _patch_lang(types.SimpleNamespace(__globals__={"tl": tl, "core": tl.core}))
    _patch_libdevice(scope)
    JITFunction.__call__ = _call_interpreted  # type: ignore[method-assign]
    try:
        with knobs.runtime.scope():
            knobs.runtime.interpret = True
            GridExecutor(fn, jit_fn.arg_names, grid)(*args)
    finally:
        JITFunction.__call__ = refuse  # type: ignore[method-assign]
        scope.restore()


_MATH = frozenset(("abs", "ceil", "cos", "div_rn", "erf", "exp", "exp2", "fdiv", "floor", "fma", "log", "log2",
                   "rsqrt", "sin", "sqrt", "sqrt_rn", "umulhi"))  # fmt: skip
"""libdevice functions that `tl.math` has too: the interpreter's own semantics of those."""

_NUMPY = {"nearbyint": "rint", "pow": "power", "atan2": "arctan2", "asin": "arcsin", "acos": "arccos",
          "atan": "arctan", "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "isinfd": "isinf",
          "isnand": "isnan", "fmin": "fmin", "fmax": "fmax"}  # fmt: skip
"""libdevice functions that are numpy ufuncs of another name (the rest, if numpy has them, of the same name)."""


def _patch_libdevice(scope: Any) -> None:
    """Give `tl.extra.libdevice` (and CUDA's, which mtia_xdsl's compiler maps it to) interpreter semantics for the
    run: Triton's interpreter refuses `extern_elementwise`, which every libdevice function is. A function `tl.math`
    has is its interpreted `tl.math` function; another is the numpy ufunc of its name (`_NUMPY`), applied to the
    arguments' values after Triton's type promotion; one with neither stays as it is (and fails if called)."""
    import numpy as np
    from triton.language.extra import libdevice
    from triton.language.extra.cuda import libdevice as cuda_libdevice

    for module in (libdevice, cuda_libdevice):
        for name, member in vars(module).items():
            ufunc = getattr(np, _NUMPY.get(name, name), None)
            if name.startswith("_") or not callable(member):
                continue
            if name in _MATH:
                scope.set_attr(module, name, functools.partial(_math, name))
            elif isinstance(ufunc, np.ufunc) and ufunc.nin in (1, 2):
                scope.set_attr(module, name, functools.partial(_ufunc, ufunc))


def _math(name: str, *args: Any, _semantic: Any = None) -> Any:
    import triton.language as tl

    return getattr(tl.math, name)(*args)  # patched for the interpreter while it runs


def _ufunc(ufunc: Any, *args: Any, _semantic: Any = None) -> Any:
    """A numpy ufunc on interpreter tensors: operands promoted as Triton's binary ops do; a bool result (isnan,
    signbit) as int32, as libdevice's."""
    import numpy as np
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle, interpreter_semantic

    xs = [interpreter_semantic.to_tensor(a) for a in args]
    if len(xs) == 2:
        xs = list(interpreter_semantic.binary_op_type_checking_impl(xs[0], xs[1]))
    data = ufunc(*(x.handle.data for x in xs))
    dtype = xs[0].dtype
    if data.dtype == np.bool_:
        data, dtype = data.astype(np.int32), tl.int32
    else:
        data = data.astype(xs[0].handle.data.dtype)
    ty = xs[0].type.with_element_ty(dtype) if xs[0].type.is_block() else dtype
    return tl.tensor(TensorHandle(data, dtype), ty)


def _call_interpreted(self: Any, *args: Any, **kwargs: Any) -> Any:
    """A `@triton.jit` helper called from an interpreted kernel: run its rewritten Python function."""
    return _interpretable(self.fn)(*args, **kwargs)


def _interpretable(py_fn: Any) -> Any:
    """`py_fn` rewritten for the interpreter (cached), executed in a copy of its module's globals."""
    from triton.runtime.interpreter import FunctionRewriter

    if py_fn not in _REWRITTEN:
        own = types.FunctionType(py_fn.__code__, dict(py_fn.__globals__), py_fn.__name__, py_fn.__defaults__)
        own.__kwdefaults__ = py_fn.__kwdefaults__
        _REWRITTEN[py_fn] = FunctionRewriter(own).rewrite_ast()
    return _REWRITTEN[py_fn]

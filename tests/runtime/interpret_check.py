"""Differential check of launched Triton kernels against Triton's interpreter (issue 18, item 2).

`interpreter_check()` is a context manager: while it is active, every kernel launched through mtia_xdsl's
driver (`MtiaLauncher`, so every kernel a `torch.compile`'d model runs with `cpu_backend="triton"`, and every
autotuning run of a choice) is also run by Triton's interpreter on copies of its arguments taken before the
launch, and the memory of every pointer argument must then agree with what the machine model left there
(`torch.testing.assert_close`, by default with the dtype's tolerances; NaN equal to NaN, so memory neither run
writes agrees whatever it holds).

The interpreter runs in-process, without `TRITON_INTERPRET=1` (which only takes effect for `@triton.jit`
decorations made after it is set): the kernel's Python function is rewritten by
`triton.runtime.interpreter.InterpretedFunction` (its own copy of the kernel module's globals, which the rewriter
would otherwise add names to), `tl`/`tl.core` are patched to the interpreter's semantics only for the run, and
`@triton.jit` helpers the kernel calls (`triton_helpers.maximum`, ...) run interpreted in place of
`JITFunction.__call__`'s refusal. Constexprs come as the launcher gets them: Inductor's pointwise and reduction
kernels take `XBLOCK` etc. as constexpr arguments, its templates define theirs in the body.

Where Triton 3.9's interpreter is wrong, the check follows it: comparison results are retyped int1 for the run
(`_patch_comparisons`), libdevice runs as `tl.math` or numpy (`_patch_libdevice`); the interpreter's other known
errors (tests/conformance/kernels_*.py: fp32 -> bf16/fp8 casts truncate, bf16 arithmetic and tl.dot on raw bits,
argmin ties, all-NaN rows) are left, so a mismatch in a bf16 or fp8 kernel may be the interpreter's (bf16's
default tolerance covers one ulp). tests/conformance/runners.py runs the interpreter in-process the same way for
the language corpus (`_jit_calls_interpreted`).
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


class InterpreterCheckError(AssertionError):
    """The check could not rerun a launch under Triton's interpreter (the interpreter failed, or an argument holds a
    pointer the check cannot copy). An AssertionError, as `InterpreterMismatch`: Inductor's autotuning re-raises
    those where it drops a choice that raised another error."""


class InterpreterMismatch(InterpreterCheckError):
    """The machine model and Triton's interpreter left different values in a kernel's output buffer."""


def interpreter_check(
    rtol: float | None = None, atol: float | None = None
) -> contextlib.AbstractContextManager[list[CheckedLaunch]]:
    """Check every launch through mtia_xdsl's driver against Triton's interpreter while the context is active.

    Yields the list of `CheckedLaunch`es, appended to as kernels run. `rtol`, `atol`: as
    `torch.testing.assert_close`'s (None: the dtype's defaults).
    Raises: InterpreterMismatch naming the kernel, its file and the parameter whose memory differs, with
    assert_close's report of the elements; InterpreterCheckError when the interpreter fails or an argument holds a
    pointer the check cannot copy (anything but tensors, `triton.reinterpret` wrappers, host tensor descriptors and
    tuples of them: a ctypes.Structure, say). Each is
    raised from the launch and again when the context exits, in case the launch's caller swallowed it.
    """
    return _check(rtol, atol)


@contextlib.contextmanager
def _check(rtol: float | None, atol: float | None) -> Iterator[list[CheckedLaunch]]:
    from mtia_xdsl.runtime.triton_backend.driver import MtiaLauncher

    checked: list[CheckedLaunch] = []
    failures: list[InterpreterCheckError] = []
    launch = MtiaLauncher.__call__

    def checked_launch(self: MtiaLauncher, gx: int, gy: int, gz: int, *rest: Any) -> Any:
        if gx * gy * gz == 0 or not hasattr(self.fn, "arg_names"):
            return launch(self, gx, gy, gz, *rest)
        args = list(rest[6:])  # after stream, function, packed/launch metadata and the enter/exit hooks
        storages: dict[int, Any] = {}
        copies = _guarded(failures, self.fn, lambda: [_copy(a, storages) for a in args])
        result = launch(self, gx, gy, gz, *rest)
        grid = (gx, gy, gz)
        checked.append(_guarded(failures, self.fn, lambda: _rerun(self.fn, grid, args, copies, storages, rtol, atol)))
        return result

    MtiaLauncher.__call__ = checked_launch  # type: ignore[method-assign]
    try:
        yield checked
    finally:
        MtiaLauncher.__call__ = launch  # type: ignore[method-assign]
    if failures:
        raise failures[0]


def _guarded(failures: list[InterpreterCheckError], jit_fn: Any, step: Any) -> Any:
    """`step()`; an exception it raises becomes an InterpreterCheckError naming the kernel, recorded in `failures`."""
    try:
        return step()
    except InterpreterCheckError as e:
        failures.append(e)
        raise
    except Exception as e:
        error = InterpreterCheckError(f"{_where(jit_fn)}: kernel {jit_fn.__name__}: interpreter_check failed: {e!r}")
        failures.append(error)
        raise error from e


def _copy(arg: Any, storages: dict[int, Any]) -> Any:
    """`arg` with every tensor in it replaced by a view of the same shape, strides and offset into a copy of its
    storage (one copy per storage, so arguments that alias still alias)."""
    import torch
    from triton.runtime.jit import TensorWrapper
    from triton.tools.tensor_descriptor import TensorDescriptor

    from mtia_xdsl.utils.structs import is_struct

    if isinstance(arg, tuple):
        items = [_copy(a, storages) for a in arg]
        return type(arg)(*items) if hasattr(arg, "_fields") else tuple(items)
    if isinstance(arg, TensorWrapper):
        return TensorWrapper(_copy(arg.base, storages), arg.dtype)
    if isinstance(arg, TensorDescriptor):
        return dataclasses.replace(arg, base=_copy(arg.base, storages))
    if isinstance(arg, torch.Tensor):
        storage = arg.untyped_storage()
        key = storage.data_ptr()
        if key not in storages:
            storages[key] = (storage, storage.clone())
        view = torch.empty(0, dtype=arg.dtype)
        return view.set_(storages[key][1], arg.storage_offset(), arg.size(), arg.stride())
    if hasattr(arg, "data_ptr") or is_struct(arg):
        raise TypeError(f"cannot copy an argument of type {type(arg).__name__}, which holds pointers")
    return arg


def _rerun(
    jit_fn: Any, grid: tuple[int, int, int], args: list[Any], copies: list[Any], storages: Any, rtol: Any, atol: Any
) -> CheckedLaunch:
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
        if _same_bits(machine, old) and _same_bits(interp, old):
            continue
        written.append(name)
        try:
            torch.testing.assert_close(machine, interp, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as e:
            raise InterpreterMismatch(
                f"{_where(jit_fn)}: kernel {jit_fn.__name__} grid {grid}: the machine model and Triton's "
                f"interpreter differ in '{name}' (machine model first; indices are flat, into its storage):\n{e}"
            ) from None
    return CheckedLaunch(jit_fn.__name__, grid, written)


def _tensor_args(names: list[str], args: list[Any]) -> Iterator[tuple[str, Any]]:
    """(name, tensor) of each tensor in the arguments: `x`, `x[1]` in a tuple, `x.base` of a descriptor."""
    for name, arg in zip(names, args, strict=True):
        yield from _tensors(name, arg)


def _tensors(name: str, arg: Any) -> Iterator[tuple[str, Any]]:
    import torch
    from triton.runtime.jit import TensorWrapper
    from triton.tools.tensor_descriptor import TensorDescriptor

    if isinstance(arg, tuple):
        for i, item in enumerate(arg):
            yield from _tensors(f"{name}[{i}]", item)
    elif isinstance(arg, TensorWrapper | TensorDescriptor):
        yield from _tensors(f"{name}.base" if isinstance(arg, TensorDescriptor) else name, arg.base)
    elif isinstance(arg, torch.Tensor):
        yield name, arg


def _same_bits(a: Any, b: Any) -> bool:
    """Whether two tensors of one dtype and shape hold the same bytes (NaNs included)."""
    import torch

    return torch.equal(a.view(torch.uint8), b.view(torch.uint8))


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

    fn = _interpretable(_python_function(jit_fn))
    refuse = JITFunction.__call__
    scope = _patch_lang(types.SimpleNamespace(__globals__={"tl": tl, "core": tl.core}))
    _patch_libdevice(scope)
    _patch_comparisons(scope)
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


def _patch_comparisons(scope: Any) -> None:
    """Give a comparison's result handle the dtype int1 for the run. Triton 3.9's interpreter gives it its operands'
    (`InterpreterBuilder.binary_op`'s `lhs.dtype.scalar`), so a splat of a scalar condition (Inductor's bmm
    template: `(idx_m < M) & (idx_n < N) & (idx_q < BATCH)`) has the operands' numpy dtype, the `&` too, and the
    store refuses that mask ("mask has unsupported dtype")."""
    from triton.runtime.interpreter import InterpreterBuilder

    for name in dir(InterpreterBuilder):
        if name.startswith(("create_icmp", "create_fcmp")):
            scope.set_attr(InterpreterBuilder, name, _int1_result(getattr(InterpreterBuilder, name)))


def _int1_result(compare: Any) -> Any:
    """The builder method `compare` with its result's handle typed int1 (a function: bound as a method)."""
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    def run(builder: Any, lhs: Any, rhs: Any) -> Any:
        return TensorHandle(compare(builder, lhs, rhs).data, tl.int1)

    return run


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


def _python_function(jit_fn: Any) -> Any:
    """The Python function of `jit_fn`. Inductor drops it (`CachingAutotuner.prepare_for_pickle` sets `fn.fn` to
    None) from a kernel compiled in a worker process; then it is the same-named kernel's of the module at
    `jit_fn.file_name` (Inductor's generated file): one in sys.modules, else the file loaded again.
    Raises: LookupError when neither has it."""
    import sys

    if jit_fn.fn is not None:
        return jit_fn.fn
    key = (jit_fn.file_name, jit_fn.__name__)
    if key not in _RELOADED:
        loaded = [m for m in list(sys.modules.values()) if getattr(m, "__file__", None) == key[0]]
        for module in (*loaded, None):
            kernel = getattr(module or _load(*key), key[1], None)
            kernel = getattr(kernel, "fn", kernel)  # Inductor's CachingAutotuner holds the JITFunction
            if getattr(kernel, "fn", None) is not None:
                _RELOADED[key] = kernel.fn  # type: ignore[union-attr]
                break
        else:
            raise LookupError(f"no Python function of kernel {key[1]} in {key[0]}")
    return _RELOADED[key]


def _load(path: str, name: str) -> Any:
    """The module of the Python file at `path`, executed anew (not put in sys.modules)."""
    module = types.ModuleType(f"interpret_check.{name}")
    module.__file__ = path
    with open(path) as f:
        exec(compile(f.read(), path, "exec", dont_inherit=True), module.__dict__)
    return module


_RELOADED: dict[tuple[str, str], Any] = {}


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

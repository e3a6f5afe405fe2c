"""`mtia_xdsl.compile`: compile a `@triton.jit` kernel for MTIA-2i and launch it on the machine model.

Independent of Triton's driver selection and disk cache: the kernel is built, lowered and run in
process. Without a signature the kernel is specialised per launch, as Triton's JIT does.
"""

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from xdsl.dialects.builtin import ModuleOp

from mtia_xdsl.options import MtiaOptions
from mtia_xdsl.runtime import toolchain
from mtia_xdsl.runtime.launch import (
    KernelLaunchError,
    argument_type,
    kernel_location,
    normalize_grid,
    runtime_args,
)
from mtia_xdsl.runtime.result import KernelRun
from mtia_xdsl.utils.clone import clone_op
from mtia_xdsl.utils.locations import argument_count_error


class LazyAsm(Mapping[str, str]):
    """IR texts of a compiled kernel, printed on first access (printing costs as much as a pass).

    Keys: "ttir" (the tt module as the frontend built it), "mtia" (the buffer-level program), "cpp" (the
    buffer-level program as C++, `mtia_xdsl.backend.cpp.emit_cpp`, emitted on first access), "llir" (its
    LLVM IR, `mtia_xdsl.backend.llvm.emit_llvm_ir`, emitted on first access).
    """

    DERIVED: ClassVar[dict[str, tuple[str, str, str]]] = {
        "cpp": ("mtia", "mtia_xdsl.backend.cpp", "emit_cpp"),
        "llir": ("mtia", "mtia_xdsl.backend.llvm", "emit_llvm_ir"),
    }
    """Texts emitted from another key's module: key -> (module key, emitter module, emitter function)."""

    def __init__(self, modules: dict[str, ModuleOp]) -> None:
        self._modules = modules
        self._texts: dict[str, str] = {}

    def __getitem__(self, key: str) -> str:
        """Return the text of IR `key`, printing (or emitting) it once.

        Raises: KeyError for an unknown key; mtia_xdsl.backend.cpp.CppEmitError (naming the kernel line) for
        "cpp", and mtia_xdsl.backend.llvm_scalar.NotHandled for "llir", of a kernel with a construct the
        emitter does not handle.
        """
        text = self._texts.get(key)
        if text is None:
            derived = self.DERIVED.get(key)
            if derived is not None and derived[0] in self._modules:
                import importlib

                emit = getattr(importlib.import_module(derived[1]), derived[2])
                text = emit(self._modules[derived[0]])
            else:
                text = str(self._modules[key])
            self._texts[key] = text
        return text

    def __iter__(self) -> Iterator[str]:
        yield from self._modules
        yield from (k for k, v in self.DERIVED.items() if v[0] in self._modules)

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass
class Specialization:
    """One compiled variant of a kernel: its signature, constexpr values, IR texts and program."""

    signature: dict[str, str]
    constexprs: dict[str, Any]
    asm: Mapping[str, str]
    """"ttir": tt module text, "mtia": buffer-level program text (printed when first read)."""
    program: ModuleOp
    """Buffer-level mtia program the machine model runs."""


def compile(
    fn: Any,
    signature: dict[str, str] | None = None,
    constexprs: dict[str, Any] | None = None,
    options: MtiaOptions | dict[str, Any] | None = None,
) -> "CompiledKernel":
    """Compile `fn` (a `@triton.jit` function) for MTIA-2i.

    `signature` maps parameter names to Triton types ("*fp32", "i32", "constexpr"); parameters named in
    `constexprs` (by name or position) are compile-time constants. Without a signature, each launch specialises on its
    argument types. Example: `k = mtia_xdsl.compile(add, {"x": "*fp32", "n": "i32"}, {"BLOCK": 128})`
    then `k[(n // 128,)](x, n)`.
    Raises: TypeError if `fn` is not a `@triton.jit` function, `signature` or `constexprs` is not a dict,
    `signature` names unknown parameters or `options` has unknown keys; KernelError (naming the kernel line)
    for unknown type strings.
    """
    from mtia_xdsl.frontend.build import check_kernel_inputs

    check_kernel_inputs("mtia_xdsl.compile", fn, signature, constexprs)
    opts = options if isinstance(options, MtiaOptions) else MtiaOptions.from_dict(dict(options or {}), strict=True)
    consts = _named_constexprs(fn, constexprs or {}, signature or {})
    kernel = CompiledKernel(fn, consts, opts)
    if signature is not None:
        kernel.fixed = kernel.specialize(dict(signature))
    return kernel


def _named_constexprs(fn: Any, constexprs: Mapping[Any, Any], signature: Mapping[str, str]) -> dict[str, Any]:
    """`constexprs` keyed by parameter name (a position names the parameter there).

    Raises: TypeError naming a position past the parameters, a name that is no parameter, or a parameter the
    signature calls constexpr without a value.
    """
    names = list(fn.arg_names)
    where = f"{kernel_location(fn)}: kernel {fn.__name__}"
    consts: dict[str, Any] = {}
    for key, value in constexprs.items():
        if isinstance(key, int) and not 0 <= key < len(names):
            raise TypeError(
                f"{where}: constexprs position {key} is not a parameter; "
                f"{fn.__name__} has {len(names)} parameters {names}"
            )
        consts[names[key] if isinstance(key, int) else key] = value
    unknown = sorted(k for k in consts if k not in names)
    if unknown:
        raise TypeError(f"{where}: constexprs name unknown parameters {unknown}; it has {names}")
    valueless = [n for n, ty in signature.items() if ty == "constexpr" and n not in consts]
    if valueless:
        raise TypeError(
            f"{where}: {', '.join(repr(n) for n in valueless)} is constexpr in the signature but has no value; "
            "give it in constexprs, e.g. {" + ", ".join(f"{n!r}: 128" for n in valueless) + "}"
        )
    return consts


@dataclass
class CompiledKernel:
    """A kernel compiled for MTIA; `kernel[grid](*args)` runs it and returns the RunResult."""

    fn: Any
    constexprs: dict[str, Any]
    options: MtiaOptions
    fixed: Specialization | None = None
    """The variant of an explicit signature: launches must match it (no per-launch specialisation)."""
    last_report: Any = None
    """Report of the most recent launch (`.format()`, `.total_cycles`, `.time_us`)."""
    last_run: Any = None
    """KernelRun of the most recent launch (report, timeline, `.write_trace(path)`), or None."""
    _variants: dict[tuple[Any, ...], Specialization] = field(default_factory=dict)
    _last: Specialization | None = None

    @property
    def asm(self) -> Mapping[str, str]:
        """IR texts of the most recent specialisation: "ttir" and "mtia".

        Raises: RuntimeError before the kernel was compiled (no signature given and never launched).
        """
        if self._last is None:
            raise RuntimeError(
                f"{kernel_location(self.fn)}: kernel {self.fn.__name__} has no compiled "
                "variant yet: pass a signature to mtia_xdsl.compile or launch it once"
            )
        return self._last.asm

    def specialize(self, signature: dict[str, str], constexprs: dict[str, Any] | None = None) -> Specialization:
        """Compile (or reuse) the variant for `signature` and constexpr values; return it."""
        consts = {**self.constexprs, **(constexprs or {})}
        full = self._full_signature(signature, consts)
        key = (tuple(full.items()), tuple(sorted((k, repr(v)) for k, v in consts.items())))
        variant = self._variants.get(key)
        if variant is None:
            variant = self._build(full, consts)
            self._variants[key] = variant
        self._last = variant
        return variant

    def _full_signature(self, signature: dict[str, str], consts: dict[str, Any]) -> dict[str, str]:
        names = list(self.fn.arg_names)
        unknown = sorted(set(signature) - set(names))
        if unknown:
            raise TypeError(
                f"{kernel_location(self.fn)}: signature names unknown parameters {unknown}; "
                f"kernel {self.fn.__name__} has {names}"
            )
        missing = [n for n in names if n not in signature and n not in consts]
        if missing:
            raise TypeError(
                f"{kernel_location(self.fn)}: no type for parameters {missing} of kernel "
                f"{self.fn.__name__}; give them in the signature or as constexprs"
            )
        return {n: "constexpr" if n in consts else signature[n] for n in names}

    def _build(self, signature: dict[str, str], consts: dict[str, Any]) -> Specialization:
        names = list(self.fn.arg_names)
        paths = {(names.index(n),): v for n, v in consts.items()}
        module = toolchain.build_tt_module(self.fn, signature, paths, {}, self.options)
        ttir = clone_op(module)  # lowering rewrites `module` in place; a copy is cheaper than printing it now
        program = toolchain.lower(module, self.options, ttir)  # fitting starts again from the same clone
        return Specialization(signature, dict(consts), LazyAsm({"ttir": ttir, "mtia": program}), program)

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        """Return a launcher for `grid` (int, tuple, or callable of the bound arguments)."""
        return lambda *args, **kwargs: self.run(grid, *args, **kwargs)

    def run(self, grid: Any, *args: Any, **kwargs: Any) -> Any:
        """Bind arguments, specialise if needed, run on the machine model and return the RunResult.

        Raises: KernelLaunchError for missing, extra or wrong arguments and bad grids.
        """
        bound = self._bind(args, kwargs)
        consts = {n: v for n, v in bound.items() if n in self.constexprs or self._is_constexpr_param(n)}
        if self.fixed is not None:
            variant = self.fixed
            self._check_fixed(variant, bound)
        elif self._last is not None and self._matches(self._last, bound):
            variant = self._last
        else:
            where = kernel_location(self.fn)
            signature = {n: argument_type(where, n, v) for n, v in bound.items() if n not in consts}
            variant = self.specialize(signature, consts)
        ordered = [bound[n] for n in self.fn.arg_names]
        run_args = runtime_args(self.fn, variant.signature, ordered)
        dims = normalize_grid(self.fn, grid, bound)
        result = toolchain.run_kernel(variant.program, dims, run_args, self.options)
        self.last_report = getattr(result, "report", None)
        self.last_run = KernelRun.from_result(result) if hasattr(result, "timeline") else None
        return result

    def _check_fixed(self, variant: Specialization, bound: dict[str, Any]) -> None:
        for name, ty in variant.signature.items():
            value = bound[name]
            if isinstance(ty, str) and ty.startswith("*") and hasattr(value, "dtype") and hasattr(value, "data_ptr"):
                got = argument_type(kernel_location(self.fn), name, value)
                if got != ty:
                    raise KernelLaunchError(
                        f"{kernel_location(self.fn)}: error: argument '{name}' is a "
                        f"{got} tensor but the kernel was compiled for {ty}"
                    )

    def _is_constexpr_param(self, name: str) -> bool:
        return self.fn.params[self.fn.arg_names.index(name)].is_constexpr

    def _matches(self, variant: Specialization, bound: dict[str, Any]) -> bool:
        for name, ty in variant.signature.items():
            value = bound[name]
            if ty == "constexpr":
                if name not in variant.constexprs or variant.constexprs[name] != value:
                    return False
            elif argument_type(kernel_location(self.fn), name, value) != ty and not _compatible(ty, value):
                return False
        return True

    def _bind(self, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        names = list(self.fn.arg_names)
        where = kernel_location(self.fn)
        bound: dict[str, Any] = {}
        free = names if len(args) == len(names) else [n for n in names if n not in self.constexprs]
        if len(args) > len(free):
            raise KernelLaunchError(
                argument_count_error(where, self.fn.__name__, free, len(args), kind="positional arguments")
            )
        bound.update(zip(free, args))
        for name, value in kwargs.items():
            if name not in names:
                raise KernelLaunchError(f"{where}: error: kernel {self.fn.__name__} has no parameter '{name}'")
            if name in bound:
                raise KernelLaunchError(f"{where}: error: argument '{name}' given twice")
            bound[name] = value
        self._fill_constexprs(bound, where)
        missing = [n for n in names if n not in bound]
        if missing:
            raise KernelLaunchError(f"{where}: error: kernel {self.fn.__name__} is missing arguments {missing}")
        return {n: bound[n] for n in names}

    def _fill_constexprs(self, bound: dict[str, Any], where: str) -> None:
        for name, value in self.constexprs.items():
            if name in bound and bound[name] != value:
                raise KernelLaunchError(
                    f"{where}: error: constexpr '{name}' was compiled as {value!r} but launched with {bound[name]!r}"
                )
            bound[name] = value
        for param in self.fn.params:
            if param.name not in bound and param.has_default:
                bound[param.name] = param.default


def _compatible(ty: str, value: Any) -> bool:
    """Whether a launch value fits a compiled scalar type wider than the one it would pick itself."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if ty in ("i64", "u64"):
        return isinstance(value, int)
    return ty in ("fp16", "bf16", "fp32", "fp64") and isinstance(value, int | float)

"""The public API (README "Using mtia_xdsl as a library"): exercised through public names only.

`tests/public_api.txt` is the released surface: a name that disappears from a public module's `__all__`
fails here, and so does a new public name that is not recorded there and in CHANGELOG.md.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.xdsl_opt_main import xDSLOptMain

import mtia_xdsl
import mtia_xdsl.language as mtl
from mtia_xdsl import (
    CompiledKernel,
    KernelRun,
    KernelRuntimeError,
    MtiaOptions,
    last_report,
    last_run,
    run_module,
)
from mtia_xdsl.dialects import get_all_dialects, make_context, register_dialects
from mtia_xdsl.errors import (
    CbIdOverflow,
    CbIdsOutOfResources,
    CompilationError,
    DiagnosticException,
    ExecutorChoiceError,
    ExecutorUnavailableError,
    ExtensionError,
    InductorHookError,
    InterpretationError,
    KernelError,
    KernelLaunchError,
    LocalStorageOutOfResources,
    LocalStorageOverflow,
    OutOfResources,
    ParseError,
    PassFailedException,
    UnsupportedConstruct,
    VerifyException,
)
from mtia_xdsl.frontend import FrontendOptions, build_tt_module, inline_and_clean, parse_ttir
from mtia_xdsl.machine import (
    DEFAULT_CHIP,
    PE_MAPPINGS,
    MachineConfig,
    Report,
    RunResult,
    Timeline,
    derive_config,
    host_arguments,
    run_kernel,
    run_tt,
)
from mtia_xdsl.passes import (
    available_passes,
    default_pipeline,
    get_all_passes,
    lower,
    parse_pipeline,
    pipeline_for,
    pipeline_steps,
    register_passes,
    run_pipeline,
)

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "tests" / "public_api.txt"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}


def _snapshot() -> dict[str, set[str]]:
    names: dict[str, set[str]] = {}
    for line in SNAPSHOT.read_text().splitlines():
        if line and not line.startswith("#"):
            module, name = (part.strip() for part in line.split(":"))
            names.setdefault(module, set()).add(name)
    return names


def _current(modules: set[str]) -> dict[str, set[str]]:
    return {m: set(importlib.import_module(m).__all__) for m in modules}


# ---- the surface itself ----


def test_no_public_name_disappears() -> None:
    snapshot = _snapshot()
    current = _current(set(snapshot))
    gone = sorted(f"{m}: {n}" for m in snapshot for n in snapshot[m] - current[m])
    assert not gone, f"public names removed (bump the version, say so in CHANGELOG.md, update {SNAPSHOT.name}): {gone}"


def test_new_public_names_are_recorded() -> None:
    snapshot = _snapshot()
    current = _current(set(snapshot))
    new = sorted(f"{m}: {n}" for m in current for n in current[m] - snapshot[m])
    assert not new, f"new public names: add them to {SNAPSHOT.name} and to CHANGELOG.md's Unreleased section: {new}"


def _source_docstring(value: object) -> str | None:
    """The docstring of a class as its source has it: mypyc's native classes (the compiled timing model,
    machine/compiled.py) carry an empty __doc__, while the docs (mkdocs, read statically) show the source's."""
    module = importlib.import_module(getattr(value, "__module__", ""))
    path = ROOT / (module.__name__.replace(".", "/") + ".py")
    if not path.is_file():
        return None
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name == getattr(value, "__name__", None):
            return ast.get_docstring(node)
    return None


def test_every_public_name_resolves_is_documented_and_in_the_changelog() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text()
    for module, names in _snapshot().items():
        mod = importlib.import_module(module)
        assert mod.__doc__, module
        for name in names:
            value = getattr(mod, name)
            if callable(value) and getattr(value, "__module__", "").startswith("mtia_xdsl"):  # ours, not re-exports
                assert value.__doc__ or _source_docstring(value), f"{module}.{name} has no docstring"
            assert f"`{name}`" in changelog, f"CHANGELOG.md never mentions `{name}` ({module})"


def test_this_file_exercises_every_public_name() -> None:
    body = Path(__file__).read_text().split("\n# ---- mtia_xdsl ----\n")[-1]  # the tests below, not the imports
    for names in _snapshot().values():
        for name in names:
            if name != "__version__":
                assert re.search(rf"\b{re.escape(name)}\(|\b{re.escape(name)}\b[^:]", body), name
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", mtia_xdsl.__version__)


def test_the_version_is_written_in_one_place() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and 'attr = "mtia_xdsl.__version__"' in pyproject
    assert re.search(r'^version\s*=\s*"', pyproject, re.M) is None  # no literal version in [project]
    assert f"## [{mtia_xdsl.__version__}]" in (ROOT / "CHANGELOG.md").read_text()


# ---- mtia_xdsl ----


def test_compile_run_and_reports() -> None:
    kernel = mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 256}, options=MtiaOptions(num_stages=1))
    assert isinstance(kernel, CompiledKernel) and "tt.func" in kernel.asm["ttir"]
    x, out = torch.arange(1000.0), torch.zeros(1000)
    kernel[(4,)](x, x, out, 1000)
    assert torch.equal(out, 2 * x)
    assert isinstance(kernel.last_run, KernelRun) and kernel.last_run.report.total_cycles > 0
    with pytest.raises(KernelRuntimeError, match=r"test_public_api\.py:\d+:\d+: error: .*program id"):
        kernel[(8,)](x, x, out, 2000)  # reads past the tensors: located error, nothing written
    assert isinstance(KernelRuntimeError("x"), RuntimeError)


def test_plain_launch_through_the_triton_backend() -> None:
    x, out = torch.arange(300.0), torch.zeros(300)
    add_kernel[(2,)](x, x, out, 300, BLOCK=256)
    assert torch.equal(out, 2 * x)
    run = last_run()
    assert run is not None and last_report() is run.report and run.report.kernel == "add_kernel"


def test_run_module_takes_numpy_arrays_and_leaves_the_module_alone() -> None:
    module = build_tt_module(add_kernel, SIG, {"BLOCK": 256})
    text = str(module)
    x, out = np.arange(700, dtype=np.float32), np.zeros(700, np.float32)
    run = run_module(module, 3, [x, x, out, np.int32(700)], options={"num_stages": 2})
    assert np.array_equal(out, 2 * x) and str(module) == text
    assert isinstance(run.timeline, Timeline) and run.report.time_us > 0
    assert run.chrome_trace()["traceEvents"]


# ---- mtia_xdsl.dialects ----


def test_register_dialects_keeps_the_callers_own() -> None:
    from xdsl.dialects.arith import Arith as XdslArith

    ctx = Context()
    ctx.load_dialect(XdslArith)  # the caller's choice stays
    register_dialects(ctx)
    assert ctx.get_op("arith.cmpi").__module__ == "xdsl.dialects.arith"  # not our tensor-capable one
    assert ctx.get_op("mtia.cb_alloc").name == "mtia.cb_alloc"
    assert {"tt", "ttg", "mtia", "arith"} <= set(get_all_dialects())
    with pytest.raises(KeyError, match="no dialect named 'nope'"):
        register_dialects(Context(), ["tt", "nope"])
    assert make_context().get_op("tt.load").name == "tt.load"


# ---- mtia_xdsl.passes ----


def test_pass_registry_and_pipeline_text() -> None:
    ours = get_all_passes()
    assert "convert-tt-to-mtia" in ours and ours["mtia-cb-bufferize"]().name == "mtia-cb-bufferize"
    table = available_passes({"my-pass": ours["tt-inline"]})
    assert {"cse", "canonicalize", "my-pass", "mtia-cb-allocate"} <= set(table)
    steps = pipeline_steps({"pe_subgrid": (0, 4, 2), "num_stages": 2})
    assert ",".join(steps) == pipeline_for({"pe_subgrid": (0, 4, 2), "num_stages": 2})
    assert steps[-1] == "mtia-pe-mapping{strategy=zigzag subgrid=0,4,2}"
    assert default_pipeline("small_test").startswith("tt-inline") and "chip=small_test" in default_pipeline(
        "small_test"
    )
    assert len(parse_pipeline(",".join(steps)).passes) == len(steps)
    with pytest.raises(ValueError, match="Unrecognized passes"):
        parse_pipeline("no-such-pass")

    class Opt(xDSLOptMain):
        def register_all_passes(self) -> None:
            super().register_all_passes()
            register_passes(self)

    assert "mtia-cb-sizing" in Opt(args=[]).available_passes


def test_run_part_of_the_pipeline_then_lower() -> None:
    module = build_tt_module(add_kernel, SIG, {"BLOCK": 256})
    steps = pipeline_steps()
    cut = steps.index("convert-tt-to-mtia") + 1
    run_pipeline(module, ",".join(steps[:cut]))
    assert any(op.name.startswith("mtia.dma") for op in module.walk())
    run_pipeline(module, ",".join(steps[cut:]))
    assert any(op.name == "mtia.cb_alloc" for op in module.walk())
    fresh = lower(build_tt_module(add_kernel, SIG, {"BLOCK": 256}), {"num_stages": 1})
    assert isinstance(fresh, ModuleOp) and any(op.name == "mtia.cb_alloc" for op in fresh.walk())


def test_cb_refusals_from_the_passes_and_from_compile() -> None:
    module = build_tt_module(add_kernel, SIG, {"BLOCK": 256})
    with pytest.raises(LocalStorageOverflow) as e:
        lower(module, {"machine_overrides": {"ls_bytes": 512}, "make_fit": False})
    assert isinstance(e.value, PassFailedException) and isinstance(e.value, DiagnosticException)
    assert e.value.limit_bytes == 512
    with pytest.raises(CbIdOverflow):
        lower(build_tt_module(add_kernel, SIG, {"BLOCK": 256}), {"machine_overrides": {"cb_ids": 1}, "make_fit": False})
    with pytest.raises(LocalStorageOutOfResources) as oor:
        mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 256}, {"machine_overrides": {"ls_bytes": 512}, "make_fit": False})
    assert isinstance(oor.value, OutOfResources)
    with pytest.raises(CbIdsOutOfResources):
        mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 256}, {"machine_overrides": {"cb_ids": 1}, "make_fit": False})


# ---- mtia_xdsl.frontend ----


def test_frontend_builds_and_parses() -> None:
    module = inline_and_clean(build_tt_module(add_kernel, SIG, {"BLOCK": 64}, options=FrontendOptions(debug=False)))
    again = parse_ttir(str(module), name="add.mlir")
    assert str(again) == str(module)
    with pytest.raises(ParseError, match=r"bad\.mlir"):
        parse_ttir("builtin.module { %0 = }", name="bad.mlir")
    with pytest.raises(KernelError) as e:
        build_tt_module(add_kernel, {**SIG, "n": "int7"}, {"BLOCK": 64})
    assert isinstance(e.value, CompilationError) and "test_public_api.py" in str(e.value)
    assert issubclass(UnsupportedConstruct, KernelError)
    with pytest.raises(VerifyException, match=r"bad\.mlir:2: error: invalid tt\.splat"):
        parse_ttir('builtin.module {\n  %v = "tt.splat"() : () -> tensor<4xi32>\n}', name="bad.mlir")


# ---- mtia_xdsl.machine ----


def test_machine_config_presets_and_runs() -> None:
    config = MachineConfig.preset(DEFAULT_CHIP)
    assert config.n_pes == 64 and set(MachineConfig.PRESET_NAMES) >= {"mtia2i", "small_test"}
    assert derive_config("mtia2i", {"ls_bytes": "262_144"}).ls_bytes == 262_144
    assert "zigzag" in PE_MAPPINGS
    with pytest.raises(ValueError, match="did you mean 'ls_bytes'"):
        derive_config("mtia2i", {"ls_byte": 1})
    x = np.arange(300, dtype=np.float32)
    args = host_arguments([x, np.float32(2.5), 3])
    assert isinstance(args[0], torch.Tensor) and args[0].data_ptr() == x.ctypes.data and args[1:] == [2.5, 3]
    tt = build_tt_module(add_kernel, SIG, {"BLOCK": 128})
    out = np.zeros(300, np.float32)
    run_tt(tt, (3,), [x, x, out, 300])
    assert np.array_equal(out, 2 * x)
    program = lower(tt, {"machine": "small_test"})
    out[:] = 0
    result = run_kernel(program, [3], [x, x, out, 300])
    assert isinstance(result, RunResult) and isinstance(result.report, Report) and np.array_equal(out, 2 * x)
    assert result.report.chip == "small_test" and isinstance(result.timeline, Timeline)
    with pytest.raises(InterpretationError, match="takes 4 non-constexpr arguments"):
        run_kernel(program, [3], [x, x, out])


def test_compile_and_build_name_a_wrong_function_or_signature_type() -> None:
    """A list signature was "dictionary update sequence element #0 ..."; a plain function an AttributeError."""
    with pytest.raises(TypeError, match=r"signature must be a dict of parameter name -> Triton type .* got list"):
        mtia_xdsl.compile(add_kernel, ["*fp32", "*fp32", "*fp32", "i32"], {"BLOCK": 128})  # pyright: ignore[reportArgumentType]
    with pytest.raises(TypeError, match=r"constexprs must be a dict .* got tuple"):
        mtia_xdsl.compile(add_kernel, SIG, (128,))  # pyright: ignore[reportArgumentType]
    with pytest.raises(TypeError, match=r"build_tt_module expects a @triton\.jit function, got builtin_function"):
        build_tt_module(print, SIG, {"BLOCK": 128})
    with pytest.raises(TypeError, match=r"signature must be a dict .* got str"):
        build_tt_module(add_kernel, "*fp32", {"BLOCK": 128})  # pyright: ignore[reportArgumentType]


def test_machine_runs_take_an_int_grid_and_name_a_wrong_one() -> None:
    """`grid` is an int or 1 to 3 ints, as for `run_module` and `kernel[grid]`; anything else is a TypeError saying
    so (it was "'int' object is not iterable"), and a module that is not a ModuleOp is named too."""
    tt = build_tt_module(add_kernel, SIG, {"BLOCK": 128})
    x, out = np.arange(300, dtype=np.float32), np.zeros(300, np.float32)
    run_tt(tt, 3, [x, x, out, 300])
    assert np.array_equal(out, 2 * x)
    program = lower(tt, {"machine": "small_test"})
    out[:] = 0
    assert run_kernel(program, 3, [x, x, out, 300]).report.total_cycles > 0 and np.array_equal(out, 2 * x)
    out[:] = 0
    for bad in ("3", 3.0, [3, "1"]):
        with pytest.raises(TypeError, match=r"grid must be an int or 1 to 3 ints"):
            run_kernel(program, bad, [x, x, out, 300])  # pyright: ignore[reportArgumentType]
    with pytest.raises(TypeError, match=r"module must be an xdsl ModuleOp .* got str"):
        run_kernel("module", 3, [x, x, out, 300])  # pyright: ignore[reportArgumentType]
    assert not out.any()


# ---- mtia_xdsl.errors and mtia_xdsl.language ----


def test_error_types_keep_upstream_bases() -> None:
    assert issubclass(KernelLaunchError, ValueError) and issubclass(InductorHookError, RuntimeError)
    assert issubclass(KernelRuntimeError, InterpretationError) and issubclass(CbIdOverflow, PassFailedException)
    assert issubclass(ExecutorUnavailableError, RuntimeError)
    with pytest.raises(ExecutorChoiceError, match="'model'"):
        run_module(build_tt_module(add_kernel, SIG, {"BLOCK": 64}), 1, [], options={"executor": "gpu"})
    with pytest.raises(KernelLaunchError, match="missing arguments"):
        mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 64})[(1,)](torch.zeros(4))


@triton.jit
def pe_kernel(out_ptr):
    tl.store(out_ptr + tl.program_id(0), mtl.get_pe_id())


def test_language_extensions() -> None:
    out = torch.zeros(4, dtype=torch.int32)
    mtia_xdsl.compile(pe_kernel, {"out_ptr": "*i32"}, options={"pe_mapping": "linear"})[(4,)](out)
    assert out.tolist() == [0, 1, 2, 3]
    assert {"extract_slice", "re_reduce", "get_num_pes"} <= set(mtl.__all__)
    assert mtl.extract_slice and mtl.re_reduce and mtl.get_num_pes
    assert issubclass(mtl.ExtensionError, RuntimeError) and ExtensionError is mtl.ExtensionError


# ---- private names stay inside their part of the package ----


def test_no_private_name_is_imported_across_package_parts() -> None:
    import ast

    package = ROOT / "mtia_xdsl"
    crossings: list[str] = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("").parts
        part = rel[1] if len(rel) > 2 else rel[-1]  # mtia_xdsl/<part>/... or the module mtia_xdsl/<part>.py
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mtia_xdsl.")):
                continue
            target = node.module.split(".")[1]
            private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
            private += [p for p in node.module.split(".") if p.startswith("_")]
            if target != part and part != "__init__" and private:
                crossings.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.module} {private}")
    assert not crossings, f"private names imported from another part of the package: {crossings}"

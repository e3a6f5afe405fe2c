"""The timing model compiled to C extensions with mypyc: the same modules, faster, used only while current.

The timing model's modules (`MODULES`: the event core, memory, program shapes, timelines) are typed Python
and stay the reference. `python -m mtia_xdsl.tools.build_timing` (`build`; the `fast` extra, run by
scripts/setup.sh) compiles them unchanged with mypyc into `BUILD_DIR`, with a stamp holding a hash of their
sources and of the Python it was built for. When `mtia_xdsl.machine` is imported, `install` serves these
modules from the build if the stamp matches the sources as they are now; otherwise the pure-Python modules
load:

- no build, or `MTIA_SIM_COMPILED=0` in the environment: pure Python, silently;
- a build whose stamp does not match (a module edited since, another Python): pure Python, and one line on
  stderr naming the changed module and the command that rebuilds it;
- `MTIA_SIM_COMPILED` set to anything but "0" or "1" (say "no"): pure Python, and one line on stderr naming
  the value.

Both give exactly the same cycles (tests/machine/test_compiled_timing.py compares every figure of the two
on launches with DMA contention, each placement, LLC write-behind, programs in flight and re_reduce
barriers). A class of these modules cannot be subclassed by Python code (mypyc's native classes).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

MODULES = (
    "mtia_xdsl.machine.memory",
    "mtia_xdsl.machine.timeline",
    "mtia_xdsl.machine.program_shape",
    "mtia_xdsl.machine.timing",
)
"""The modules compiled together (one mypyc group: their classes are native to each other).

machine/commands.py stays pure Python: as a native class `Command` is read faster by these modules but built
slower by the interpreter, which builds every command. mypyc leaves a dataclass's generated `__init__`
interpreted (its stores then go through attribute descriptors, not slots), and even a compiled `__init__`
is reached from Python code through `tp_new` with keyword parsing; launches of benchmarks/sim_speed.py
(vector add, matmul, softmax) ran more instructions that way, not fewer. Its classes would also need their
own pickling (a native class's `__new__` runs `__init__` without arguments) and `TraceSource`, which Python
code subclasses, a module of its own."""
GROUP = "mtia_sim"
"""mypyc group name: the shared library is the top-level extension module `mtia_sim__mypyc`."""
BUILD_DIR = Path(__file__).resolve().parent / "_compiled"
"""Where the build lives (not in git): the extension modules and `stamp.json`."""
DOCSTRINGS = "docstrings.json"
"""File of the build holding its classes' docstrings (mypyc keeps none; `help()` and the public-API test read them)."""
ENV = "MTIA_SIM_COMPILED"
"""Environment variable: "0" runs the pure-Python timing model even when a current build exists; "1" (or unset)
uses a current build; any other value runs pure Python with a line on stderr."""

_NOT_FOLLOWED = ("torch", "triton", "xdsl", "llvmlite")
"""Packages mypyc does not analyse when it compiles the modules (their values are Python objects to it)."""
_PACKAGE_DIR = Path(__file__).resolve().parent
_state: dict[str, str] = {"status": "not installed"}


def _sources() -> list[Path]:
    return [_PACKAGE_DIR / (name.rsplit(".", 1)[1] + ".py") for name in MODULES]


def source_stamp() -> dict[str, str]:
    """The stamp a build of the current sources carries: sha256 of each module's source, and the Python
    (its extension-module suffix) the build is for."""
    stamp = {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in _sources()}
    stamp["python"] = importlib.machinery.EXTENSION_SUFFIXES[0]
    return stamp


def status() -> str:
    """How the timing model was loaded in this process: "compiled", "pure Python (...why...)"."""
    return _state["status"]


class _Finder(importlib.abc.MetaPathFinder):
    """Serves the compiled modules (and their shared library) from `BUILD_DIR`."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        file = self.files.get(fullname)
        if file is None:
            return None
        from importlib.util import spec_from_file_location

        loader = _Loader(fullname, str(file))
        return spec_from_file_location(fullname, file, loader=loader)


class _Loader(importlib.machinery.ExtensionFileLoader):
    """Loads a compiled module and gives its classes back the docstrings mypyc leaves out (`DOCSTRINGS`)."""

    def exec_module(self, module: ModuleType) -> None:
        super().exec_module(module)
        docs_file = Path(self.path).parent / DOCSTRINGS
        if docs_file.is_file():
            for name, doc in json.loads(docs_file.read_text()).get(self.name, {}).items():
                cls = getattr(module, name, None)
                if isinstance(cls, type) and not cls.__doc__:
                    cls.__doc__ = doc


def class_docstrings() -> dict[str, dict[str, str]]:
    """Module -> top-level class -> its docstring, from the sources of `MODULES`."""
    import ast

    out: dict[str, dict[str, str]] = {}
    for name, path in zip(MODULES, _sources(), strict=True):
        tree = ast.parse(path.read_text())
        out[name] = {
            node.name: doc
            for node in tree.body
            if isinstance(node, ast.ClassDef) and (doc := ast.get_docstring(node, clean=False))
        }
    return out


def plan(build_dir: Path = BUILD_DIR, environ: Mapping[str, str] = os.environ) -> tuple[str, dict[str, Path]]:
    """Decide how the timing model loads: (status, module name -> extension file to load it from).

    The files are empty unless the status is "compiled": no build, `MTIA_SIM_COMPILED=0` (or a value other
    than 0 and 1), a stamp that does not match the sources as they are now, or a missing file each give
    "pure Python (why)".
    """
    value = environ.get(ENV, "1")
    if value == "0":
        return f"pure Python ({ENV}=0)", {}
    if value != "1":
        return f"pure Python ({ENV}={value!r} is not 0 or 1)", {}
    stamp_file = build_dir / "stamp.json"
    if not stamp_file.is_file():
        return "pure Python (not built)", {}
    built = json.loads(stamp_file.read_text())
    now = source_stamp()
    changed = [key for key in now if built.get(key) != now[key]]
    if changed:
        what = "the Python version" if changed == ["python"] else ", ".join(k for k in changed if k != "python")
        return f"pure Python (stale build: {what} changed since it was built)", {}
    suffix = now["python"]
    files = {name: build_dir / (name.rsplit(".", 1)[1] + suffix) for name in MODULES}
    files[f"{GROUP}__mypyc"] = build_dir / f"{GROUP}__mypyc{suffix}"
    if not all(f.is_file() for f in files.values()):
        return "pure Python (incomplete build)", {}
    return "compiled", files


def install() -> None:
    """Serve `MODULES` from a current build (`plan`); call before any of them is imported.

    Prints one line on stderr when a build exists but is stale, or when `MTIA_SIM_COMPILED` is neither 0 nor
    1; never raises for a missing or stale build.
    """
    if any(isinstance(f, _Finder) for f in sys.meta_path):
        return
    status, files = plan()
    if files and (already := [name for name in MODULES if name in sys.modules]):
        status, files = f"pure Python ({already[0]} was imported first)", {}
    _state["status"] = status
    if files:
        sys.meta_path.insert(0, _Finder(files))
    elif "stale" in status:
        print(
            f"mtia_xdsl: using the pure-Python timing model ({status[13:-1]}); "
            f"rebuild the compiled one with `python -m mtia_xdsl.tools.build_timing` or set {ENV}=0",
            file=sys.stderr,
        )
    elif "is not 0 or 1" in status:
        print(f"mtia_xdsl: {status[13:-1]}, using the pure-Python timing model; set it to 0 or 1", file=sys.stderr)


def build(verbose: bool = False) -> Path:
    """Compile `MODULES` with mypyc into `BUILD_DIR` (replacing a previous build) and write its stamp.

    Needs mypy (the `fast` extra) and a C compiler. Units: takes about 1-3 CPU minutes.
    Raises: RuntimeError naming what failed (mypy missing, a type error mypyc rejects, the C compiler).
    """
    import shutil
    import subprocess
    import tempfile
    from importlib.util import find_spec

    if find_spec("mypyc") is None:
        raise RuntimeError("building the compiled timing model needs mypy: pip install -e '.[fast]'")
    stamp = source_stamp()
    root = _PACKAGE_DIR.parent.parent
    with tempfile.TemporaryDirectory(prefix="mtia_sim_build_") as tmp:
        setup = Path(tmp) / "setup.py"
        config = Path(tmp) / "mypy.ini"  # third-party packages are Any to mypyc: it type-checks only our modules
        sections = ",".join(f"{name}.*" for name in _NOT_FOLLOWED)
        config.write_text(f"[mypy]\n[mypy-{sections}]\nfollow_imports = skip\n")
        args = ["--ignore-missing-imports", "--follow-imports=silent", f"--config-file={config}"]
        args += [str(p) for p in _sources()]
        setup.write_text(
            "from setuptools import setup\n"
            "from mypyc.build import mypycify\n"
            f"modules = mypycify({args!r}, group_name={GROUP!r}, target_dir={str(Path(tmp) / 'c')!r}, "
            "debug_level='0')\n"
            f"setup(name={GROUP!r}, ext_modules=modules, script_args=['build_ext', '--build-lib', "
            f"{str(Path(tmp) / 'lib')!r}, '--build-temp', {str(Path(tmp) / 'tmp')!r}])\n"
        )
        proc = subprocess.run(
            [sys.executable, str(setup)], cwd=root, capture_output=not verbose, text=True, check=False
        )
        if proc.returncode != 0:
            raise RuntimeError(f"mypyc could not compile the timing model:\n{proc.stdout or ''}{proc.stderr or ''}")
        built = {p.name: p for p in (Path(tmp) / "lib").rglob("*" + stamp["python"])}
        if BUILD_DIR.exists():
            shutil.rmtree(BUILD_DIR)
        BUILD_DIR.mkdir()
        for name, path in built.items():
            shutil.copy2(path, BUILD_DIR / name)
    (BUILD_DIR / DOCSTRINGS).write_text(json.dumps(class_docstrings()))
    (BUILD_DIR / "stamp.json").write_text(json.dumps(stamp, indent=1) + "\n")
    return BUILD_DIR

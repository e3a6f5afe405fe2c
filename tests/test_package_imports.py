"""The package's import graph (read statically with `ast`): no cycles, and each layer imports only below it.

Package-wide, so it sits next to the per-area folders. Every `import` counts: module level, inside a
function (a lazy import still ties the two modules together) and under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mtia_xdsl"

LAYER_IMPORTS: dict[str, set[str]] = {
    "utils": set(),
    "semantics": set(),
    "dialects": {"utils"},
    "machine": {"dialects", "utils", "semantics"},
    "transforms": {"dialects", "utils", "semantics", "machine"},
    "backend": {"dialects", "utils", "semantics", "machine", "transforms"},  # emitters print the semantics tables
    "options": {"machine", "backend"},  # backend.executor is the home of the executor names options check
    "frontend": {"dialects", "utils", "machine", "transforms", "options"},
    "fit": {"dialects", "utils", "machine", "transforms", "options"},
    "pipeline": {"dialects", "utils", "machine", "transforms", "backend", "options", "fit"},
    "passes": {"dialects", "utils", "machine", "transforms", "backend", "options", "fit", "pipeline"},
    "runtime": {
        "dialects",
        "utils",
        "semantics",
        "machine",
        "transforms",
        "backend",
        "options",
        "frontend",
        "fit",
        "pipeline",
    },
}
"""Which top-level parts of `mtia_xdsl` each part may import (besides itself and the root package, whose
`__init__` every import runs anyway). `tools` may import anything; a part not listed here is not checked
for layering (only for cycles)."""

MACHINE_FACTS = {
    "mtia_xdsl.machine.config",
    "mtia_xdsl.machine.commands",
    "mtia_xdsl.machine.cost",
    "mtia_xdsl.machine.work",
}
"""The machine modules the passes and the frontend may read: the chip's facts and the cost model, never the
simulator."""


KNOWN_EDGES: dict[tuple[str, str], str] = {}
"""Imports the graph leaves out, each with why and what removes it (a list to shrink, not to grow)."""


def module_files() -> dict[str, Path]:
    """Map every module of the package (`mtia_xdsl.a.b`; a package by its `__init__.py`) to its file."""
    mods: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def imported_modules(name: str, path: Path, mods: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """Yield (package module imported, line) for every import statement of module `name`."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in mods:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in mods:
                    yield sub, node.lineno
                elif target in mods:
                    yield target, node.lineno


def import_graph() -> dict[str, dict[str, int]]:
    """Return, per module of the package, the package modules it imports and the line of each import."""
    mods = module_files()
    graph: dict[str, dict[str, int]] = {}
    for name, path in mods.items():
        edges = graph[name] = {}
        for target, line in imported_modules(name, path, mods):
            if target != name and (name, target) not in KNOWN_EDGES:
                edges.setdefault(target, line)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Return the strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = stack[stack.index(v) :]
            del stack[stack.index(v) :]
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_known_edge_is_still_there() -> None:
    mods = module_files()
    for source, target in KNOWN_EDGES:
        found = {t for t, _ in imported_modules(source, mods[source], mods)}
        assert target in found, f"{source} no longer imports {target}: drop it from KNOWN_EDGES"


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b": 1}, "b": {}}) == []


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 50  # the walk found the package
    found = cycles(graph)
    described = [
        ", ".join(f"{a} imports {b} (line {graph[a][b]})" for a in comp for b in comp if b in graph[a])
        for comp in found
    ]
    assert not found, "import cycles: " + "; ".join(described)


def defines_a_pass(path: Path) -> bool:
    """Whether the module at `path` defines a class deriving from xDSL's `ModulePass`."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                if (isinstance(base, ast.Name) and base.id == "ModulePass") or (
                    isinstance(base, ast.Attribute) and base.attr == "ModulePass"
                ):
                    return True
    return False


def pass_modules() -> set[str]:
    """The pass modules: the modules directly under `mtia_xdsl/transforms/` that define a ModulePass.

    `transforms/analysis/` (analyses, each with the `test-` pass that prints it) and
    `transforms/canonicalization/` (patterns attached to ops) are what passes build on, not passes.
    """
    return {
        name
        for name, path in module_files().items()
        if name.count(".") == 2 and name.startswith("mtia_xdsl.transforms.") and defines_a_pass(path)
    }


def test_every_registered_pass_lives_in_a_pass_module() -> None:
    from mtia_xdsl.transforms import get_all_passes

    found = pass_modules()
    assert "mtia_xdsl.transforms.mtia_cb_allocate" in found and "mtia_xdsl.transforms.target" not in found
    for name, factory in get_all_passes().items():
        module = factory().__module__
        assert module in found or module.startswith("mtia_xdsl.transforms.analysis."), (name, module)


def test_no_pass_module_imports_another() -> None:
    """Passes import dialects, analyses and utilities (transforms/target.py, errors.py, ...), never a pass
    module: what two passes share lives below both."""
    passes = pass_modules()
    graph = import_graph()
    wrong = [
        f"{module}:{line} imports the pass module {target}"
        for module in sorted(passes)
        for target, line in graph[module].items()
        if target in passes
    ]
    assert not wrong, "\n".join(wrong)


def test_each_part_imports_only_the_parts_below_it() -> None:
    wrong: list[str] = []
    for module, edges in import_graph().items():
        part = _part(module)
        allowed = LAYER_IMPORTS.get(part)
        if allowed is None:
            continue
        for target, line in edges.items():
            target_part = _part(target)
            if target_part in ("", part):
                continue
            if target_part not in allowed:
                wrong.append(f"{module}:{line} imports {target}")
            elif part in ("transforms", "frontend") and target_part == "machine" and target not in MACHINE_FACTS:
                wrong.append(f"{module}:{line} imports {target} (it may read only {sorted(MACHINE_FACTS)})")
    assert not wrong, "\n".join(wrong)

"""The paper's spellings: `tl.mtia.<extension>` and `tl.extract_slice` on `triton.language`, and
ctypes.Structure kernel arguments in Triton's launch binder.

`install_when_imported()` (called by `import mtia_xdsl`) adds them to `triton.language` now if it is
imported, else right after it is first imported (a one-shot import hook), so importing mtia_xdsl does not
import Triton (the command-line tools on .mlir files never need it).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any

_TL = "triton.language"


def install(tl: ModuleType) -> None:
    """Set `tl.mtia` to mtia_xdsl.language and `tl.extract_slice` to ours unless Triton defines its own, and
    let Triton's launch binder take ctypes.Structure arguments (`mtia_xdsl.utils.structs.install`)."""
    import triton.runtime.jit as jit

    import mtia_xdsl.language as mtl
    from mtia_xdsl.runtime.launch import install_binder_check
    from mtia_xdsl.utils.structs import install as install_structs

    install_structs(jit)
    install_binder_check(jit)  # a complex tensor: a TypeError naming it, not Triton's KeyError
    tl.mtia = mtl  # type: ignore[attr-defined]
    extract = getattr(mtl, "extract_slice", None)
    if extract is not None and getattr(tl, "extract_slice", extract) is extract:
        tl.extract_slice = extract  # type: ignore[attr-defined]


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds `triton.language` through the other finders and installs the spellings after it executes."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name != _TL:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_then_install(module: ModuleType) -> None:
            exec_module(module)
            install(module)

        loader.exec_module = exec_then_install  # type: ignore[method-assign]
        return spec


def install_when_imported() -> None:
    """Install the spellings on triton.language now, or once it is imported."""
    tl = sys.modules.get(_TL)
    if tl is not None and hasattr(tl, "jit"):
        install(tl)
    elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())

"""The pieces of mtia_xdsl's Inductor hooks that the modules they install read too: which torch they were written
for, how a missing torch internal is reported, and whether mtia_xdsl's backend is active.

`mtia_xdsl.runtime.inductor` installs decompositions and passes from modules (inductor_norms, ...) that need these
at compile time; they live here, in a module importing neither, so those modules do not import
`mtia_xdsl.runtime.inductor` back (tests/test_package_imports.py refuses import cycles).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

PINNED_TORCH = "2.13.0"
"""The torch release the hooks were written and tested against."""


class InductorHookError(RuntimeError):
    """A torch internal that mtia_xdsl's Inductor hooks need is missing (torch changed)."""


def require(owner: Any, attr: str, where: str) -> Any:
    """Return `owner.attr`; raise InductorHookError naming torch's version and `where.attr` if missing."""
    if not hasattr(owner, attr):
        import torch

        raise InductorHookError(
            f"mtia_xdsl's Inductor hooks need `{where}.{attr}`, which torch {torch.__version__} does not have "
            f"(they are tested with torch {PINNED_TORCH}); install torch=={PINNED_TORCH} or update "
            "mtia_xdsl/runtime/inductor.py"
        )
    return getattr(owner, attr)


def torch_internal(path: str) -> Any:
    """Return the torch internal a dotted `path` names (a module, then attributes: "torch.a.b.Class.attr").

    Raises: InductorHookError naming the first missing piece (see `require`).
    """
    parts = path.split(".")
    for split in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for i in range(split, len(parts)):
            value = require(value, parts[i], ".".join(parts[:i]))
        return value
    raise InductorHookError(f"mtia_xdsl's Inductor hooks need `{path}`, which is not importable")


def mtia_active() -> bool:
    """True when Inductor's CPU path generates Triton and mtia_xdsl's driver is Triton's active driver."""
    inductor_config = sys.modules.get("torch._inductor.config")
    if inductor_config is None or getattr(inductor_config, "cpu_backend", None) != "triton":
        return False
    from triton.runtime import driver  # pyright: ignore[reportMissingTypeStubs]

    from mtia_xdsl.runtime.triton_backend.driver import MtiaDriver

    return isinstance(driver.active, MtiaDriver)


def device_machine_config() -> Any:
    """The MachineConfig Inductor's device properties describe: the driver's target preset (as Triton's
    `get_device_properties` of the driver reports it)."""
    from mtia_xdsl.runtime.triton_backend.driver import target_machine_config

    return target_machine_config()

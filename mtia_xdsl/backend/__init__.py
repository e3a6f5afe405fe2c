"""Target registry: lazy factories keyed by the `-t` name (C++ and LLVM IR emitters land later)."""

from collections.abc import Callable
from typing import Any


def get_all_targets() -> dict[str, Callable[[], Any]]:
    """Return every mtia_xdsl emitter target by its `-t` name."""
    return {}

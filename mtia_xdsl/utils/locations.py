"""Kernel source locations as the diagnostics print them ("file:line:col")."""

from typing import Any

from xdsl.dialects import builtin
from xdsl.ir import Attribute


def location_str(loc: Any) -> str:
    """Format an op location as "file:line:col" (best effort for other location kinds)."""
    if isinstance(loc, builtin.FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    for attr in ("location", "callee", "locations"):  # NameLoc, CallSiteLoc, FusedLoc
        inner = getattr(loc, attr, None)
        if isinstance(inner, builtin.ArrayAttr) and inner.data:
            return location_str(inner.data[0])
        if isinstance(inner, Attribute):
            return location_str(inner)
        if isinstance(inner, tuple | list) and inner:
            return location_str(inner[0])
    return "<unknown location>" if loc is None else str(loc)

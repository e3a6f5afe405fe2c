"""Kernel source locations as the diagnostics print them ("file:line:col")."""

from typing import Any, TypeVar

from xdsl.dialects import builtin
from xdsl.ir import Attribute, Operation

from mtia_xdsl.utils.isa import isa
from mtia_xdsl.utils.walk import ops_of


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


OpT = TypeVar("OpT", bound=Operation)


def with_loc(new: OpT, source: Operation) -> OpT:
    """Give `new`, and every op nested in it that has no location yet, the location of `source`.

    Passes call this on each op they create, so a later diagnostic still names the kernel line.
    """
    loc = source.location
    for op in new.walk():
        if isinstance(op.location, builtin.UnknownLoc):
            op.location = loc
    return new


def fill_unknown_locations(root: Operation) -> None:
    """Give ops without a location that of their first user, else of their enclosing op.

    xDSL 0.74's `canonicalize` builds folded ops (e.g. reassociated constant multiplies) without a
    location; the pipeline runs this after it so every op still names a kernel line.
    """
    for op in reversed(ops_of(root)):
        if not isa(op.location, builtin.UnknownLoc):
            continue
        users = [use.operation for r in op.results for use in r.uses]
        known = [u.location for u in users if not isinstance(u.location, builtin.UnknownLoc)]
        parent = op.parent_op()
        if known:
            op.location = known[0]
        elif parent is not None and not isinstance(parent.location, builtin.UnknownLoc):
            op.location = parent.location


def argument_count_error(where: str, kernel: str, names: list[str], given: int, *, kind: str = "arguments") -> str:
    """The message for a launch with the wrong number of arguments, one wording for every launch path.

    `where` is the kernel's "file:line:col", `names` the parameters it takes (`kind` says which: "arguments",
    "non-constexpr arguments", "positional arguments"), `given` how many the caller passed.
    """
    takes = kind.removesuffix("s") if len(names) == 1 else kind
    took = "was" if given == 1 else "were"
    return f"{where}: error: kernel '{kernel}' takes {len(names)} {takes} ({', '.join(names)}) but {given} {took} given"

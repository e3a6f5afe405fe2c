"""Import upstream TTIR text (libtriton's printed modules, `.ttir` files) into the tt dialect.

libtriton prints location aliases (`#loc12 = loc(...)`) partly after the module that uses them, which
MLIR allows and xDSL's parser does not: the aliases are hoisted above the module before parsing.
Produce such files with Triton's own cache or dumps (`TRITON_KERNEL_DUMP=1` writes `*.ttir` under
`TRITON_DUMP_DIR`), or with `ASTSource(...).make_ir(...)` as tests/test_frontend_conformance.py does.
"""

from __future__ import annotations

import re

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

_ALIAS = re.compile(r"^#loc\w*\s*=\s*loc\(.*$")


def hoist_location_aliases(text: str) -> str:
    """Return `text` with every top-level `#locN = loc(...)` definition moved to the top, in order."""
    lines = text.split("\n")
    aliases = [line for line in lines if _ALIAS.match(line)]
    rest = [line for line in lines if not _ALIAS.match(line)]
    return "\n".join(aliases + rest)


def parse_ttir(text: str, ctx: Context, name: str = "<ttir>") -> ModuleOp:
    """Parse upstream TTIR text (custom or generic form, with or without debug locations).

    Raises: ParseError naming the position in the (hoisted) text.
    """
    return Parser(ctx, hoist_location_aliases(text), name).parse_module()

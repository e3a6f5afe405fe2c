"""Import upstream TTIR text (libtriton's printed modules, `.ttir` files) into the tt dialect.

libtriton prints location aliases (`#loc12 = loc(...)`) partly after the module that uses them, which
MLIR allows and xDSL's parser does not: the aliases are hoisted above the module before parsing.
Produce such files with Triton's own cache or dumps (`TRITON_KERNEL_DUMP=1` writes `*.ttir` under
`TRITON_DUMP_DIR`), or with `ASTSource(...).make_ir(...)` as tests/frontend/test_frontend_conformance.py does.
"""

from __future__ import annotations

import re

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

_ALIAS = re.compile(r"^#loc\w*\s*=\s*loc\(.*$")


def hoist_location_aliases(text: str) -> str:
    """Return `text` with every top-level `#locN = loc(...)` definition moved to the top, in order."""
    lines = text.split("\n")
    aliases = [line for line in lines if _ALIAS.match(line)]
    rest = [line for line in lines if not _ALIAS.match(line)]
    return "\n".join(aliases + rest)


def parse_ttir(text: str, ctx: Context, name: str = "<ttir>") -> ModuleOp:
    """Parse upstream TTIR text (custom or generic form, with or without debug locations).

    Raises: ParseError naming the position in the (hoisted) text; VerifyException with the position for
    an op whose definition refuses its operands, attributes or types while it is parsed.
    """
    try:
        return _LocatingParser(ctx, hoist_location_aliases(text), name).parse_module()
    except ParseError as e:
        if "{first_char}" in e.msg:  # xDSL's lexer leaves this placeholder of a #, !, ^ or % unfilled
            e.msg = e.msg.replace("{first_char}", repr(e.span.text[:1]))
        raise


class _LocatingParser(Parser):
    """xDSL's parser, with errors that an op's definition raises while it is built placed at the op."""

    def parse_operation(self) -> Operation:
        start = self.pos
        try:
            op = super().parse_operation()
        except VerifyException as e:
            try:
                self.raise_error(f"invalid operation: {e}", start, self.pos)
            except ParseError as located:  # keep the exception type (a diagnostic), add the position
                raise VerifyException(str(located)) from None
        if isinstance(op.location, UnknownLoc):  # no debug location in the text: name the op's line of the file
            source = self.lexer.input
            line = source.content.count("\n", 0, start) + 1
            column = start - source.content.rfind("\n", 0, start)
            op.location = FileLineColLoc(StringAttr(source.name), IntAttr(line), IntAttr(column))
        return op


def verify_parsed(module: ModuleOp, text: str, name: str) -> None:
    """Verify a parsed module; on failure name the file, the line of the first invalid op and the op.

    Raises: VerifyException("<name>:<line>: error: <reason> ...") when the module does not verify. The line
    is found from the op's first named result (`%v = ...`), since parsed ops carry no position.
    """
    try:
        module.verify()
    except VerifyException as e:
        op = _first_invalid_op(module)
        if op is None:
            raise
        where = name
        hint = next((r.name_hint for r in op.results if r.name_hint), None)
        if hint is not None:
            pattern = re.compile(rf"%{re.escape(hint)}\b[^=]*=")
            line = next((i for i, text_line in enumerate(text.split("\n"), 1) if pattern.search(text_line)), None)
            if line is not None:
                where = f"{name}:{line}"
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise VerifyException(f"{where}: error: invalid {op.name}: {reason}") from None


def _first_invalid_op(module: ModuleOp) -> Operation | None:
    for op in module.walk():
        if op is module:
            continue
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException:
            return op
    return None

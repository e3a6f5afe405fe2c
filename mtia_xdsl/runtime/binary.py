"""The kernel 'binary' of the Triton plugin: a JSON header line, then the buffer-level mtia program text.

Text keeps Triton's disk cache valid across processes: `load_binary` parses it back into xDSL IR.
"""

import json
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import ModuleOp

_MAGIC = "mtia-xdsl-binary"


@dataclass(frozen=True)
class LoadedKernel:
    """A kernel program ready for the machine model (what Triton calls the loaded 'function')."""

    name: str
    module: ModuleOp
    """Buffer-level mtia program."""
    num_warps: int = 1
    """The kernel's `num_warps` option (only read to report `n_regs`, see MtiaUtils.load_binary)."""


def encode(name: str, program_text: str, num_warps: int = 1) -> bytes:
    """Return the binary holding kernel `name`, its `num_warps` option and its buffer-level program text."""
    header = json.dumps({"format": _MAGIC, "name": name, "num_warps": num_warps})
    return (header + "\n" + program_text).encode("utf-8")


def decode(binary: bytes) -> tuple[dict[str, Any], str]:
    """Split a binary into its header and program text.

    Raises: ValueError if the bytes were not made by `encode`.
    """
    text = binary.decode("utf-8")
    first, _, rest = text.partition("\n")
    try:
        header = json.loads(first)
    except json.JSONDecodeError as e:
        raise ValueError("not an mtia_xdsl kernel binary (bad header)") from e
    if not isinstance(header, dict) or header.get("format") != _MAGIC:
        raise ValueError("not an mtia_xdsl kernel binary (bad header)")
    return header, rest


def load(binary: bytes) -> LoadedKernel:
    """Parse a binary into a LoadedKernel.

    Raises: ValueError if the header is wrong or the program text does not parse back.
    """
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import ParseError

    from mtia_xdsl.dialects import make_context

    header, text = decode(binary)
    name = str(header["name"])
    try:
        module = Parser(make_context(), text).parse_module()
    except ParseError as e:
        raise ValueError(
            f"kernel {name}: its printed mtia program does not parse back (a printer/parser mismatch in a dialect): {e}"
        ) from e
    return LoadedKernel(name, module, int(header.get("num_warps", 1)))

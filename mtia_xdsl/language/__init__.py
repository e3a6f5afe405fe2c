"""mtia_xdsl.language: the paper's language extensions for MTIA kernels (`import mtia_xdsl.language as mtl`).

Each is a Triton builtin, called inside `@triton.jit` kernels, that calls a builder method of mtia_xdsl's
frontend and emits `mtia` ops; under Triton's interpreter or another backend it raises `ExtensionError`
naming the kernel line. Once `mtia_xdsl` is imported, the paper's spellings work too: `tl.mtia.<name>`
for every function here, and `tl.extract_slice` (Triton 3.9 defines no `tl.extract_slice`).

- `get_pe_id(axis=None)`, `get_num_pes(axis=None)`: the PE running the program and the PE grid's shape.
- `extract_slice(x, offsets, sizes)`: a block of a tile already in LS, without another DMA.
- `re_reduce(x, axis, op)`: a reduction of a tile across the PEs of a row or column (RE network).
- ctypes.Structure kernel arguments (`mtia_xdsl.language.structs`): passed by field, read as attributes.

See README "Language extensions".
"""

from __future__ import annotations

from mtia_xdsl.language._extension import ExtensionError
from mtia_xdsl.language.pe import get_num_pes, get_pe_id
from mtia_xdsl.language.renet import re_reduce
from mtia_xdsl.language.slice import extract_slice

__all__ = ["ExtensionError", "extract_slice", "get_num_pes", "get_pe_id", "re_reduce"]

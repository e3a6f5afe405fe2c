"""Which level an mtia program is at, so that optimization passes refuse to run where they would do nothing.

Tensor level: engine ops produce SSA results (`%x = mtia.dma_load ...`). Buffer level: after
mtia-cb-bufferize, CBs exist (`mtia.cb_alloc`) and engine commands write into them.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.dialects import mtia
from mtia_xdsl.utils.isa import isa
from mtia_xdsl.utils.walk import ops_of

"""Attribute mtia-cb-sizing leaves on every cb_alloc (kept here so passes ordered before it can check)."""


def is_buffer_level(module: ModuleOp) -> bool:
    """Whether `module` has been bufferized (it allocates CBs)."""
    return any(isa(op, mtia.CbAllocOp) for op in ops_of(module))


def has_tensor_level_engine_ops(module: ModuleOp) -> bool:
    """Whether `module` has engine ops producing SSA values (not yet bufferized)."""
    return any(op.results and isa(op, mtia.ENGINE_OPS) for op in ops_of(module))


def require_tensor_level(module: ModuleOp, pass_name: str) -> None:
    """Raise PassFailedException if `module` is already bufferized: `pass_name` works on engine values."""
    if is_buffer_level(module):
        raise PassFailedException(
            f"{pass_name} works on the tensor-level mtia program: run it after convert-tt-to-mtia and before "
            "mtia-cb-bufferize (see mtia_xdsl.pipeline.pipeline_for)"
        )


def require_buffer_level(module: ModuleOp, pass_name: str, before_sizing: bool = False) -> None:
    """Raise PassFailedException if `module` still has tensor-level engine ops (run mtia-cb-bufferize
    first) or, with `before_sizing`, if mtia-cb-sizing already chose the CB depths."""
    if has_tensor_level_engine_ops(module):
        raise PassFailedException(
            f"{pass_name} works on the buffer-level mtia program: run mtia-cb-bufferize first "
            "(see mtia_xdsl.pipeline.pipeline_for)"
        )
    sized = (op for op in ops_of(module) if isinstance(op, mtia.CbAllocOp) and mtia.DEPTH_REASON_ATTR in op.attributes)
    if before_sizing and any(sized):
        raise PassFailedException(
            f"{pass_name} must run before mtia-cb-sizing, which sizes the CBs it marks as streamed"
        )

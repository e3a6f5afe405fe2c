"""llvm.intr.assume, which upstream's TTIR uses for `tl.assume` and xDSL's llvm dialect lacks.

Pinned: Triton 3.9.0 (its MLIR): `llvm.intr.assume %cond : i1`, generic form
`"llvm.intr.assume"(%c) <{op_bundle_sizes = array<i32>}> : (i1) -> ()`. Deviation: operand bundles are
not modelled (the op always has none, as Triton emits it). `LLVM` is xDSL's llvm dialect plus this op.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseArrayBase, i1, i32
from xdsl.dialects.llvm import LLVM as XDSL_LLVM
from xdsl.ir import Dialect, SSAValue
from xdsl.irdl import IRDLOperation, ParsePropInAttrDict, irdl_op_definition, operand_def, prop_def
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class AssumeOp(IRDLOperation):
    """Tell the optimizer `cond` holds; false is undefined behaviour (no check, as upstream)."""

    name = "llvm.intr.assume"
    cond = operand_def(i1)
    op_bundle_sizes = prop_def(DenseArrayBase, default_value=DenseArrayBase.from_list(i32, []))
    """Sizes of the operand bundles: always empty here."""

    assembly_format = "$cond attr-dict `:` type($cond)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, cond: SSAValue) -> None:
        super().__init__(operands=[cond], properties={"op_bundle_sizes": DenseArrayBase.from_list(i32, [])})

    def verify_(self) -> None:
        if tuple(self.op_bundle_sizes.get_values()):
            raise VerifyException("llvm.intr.assume with operand bundles is not supported")


LLVM = Dialect("llvm", [*XDSL_LLVM.operations, AssumeOp], list(XDSL_LLVM.attributes))

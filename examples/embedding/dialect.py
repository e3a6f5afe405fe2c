"""The `demo` dialect: the embedding compiler's own op, next to mtia_xdsl's `tt` and `mtia`.

`demo.square` squares a tensor elementwise; the compiler's own pass (`passes.py`) rewrites it into
`arith.mulf`, which mtia_xdsl lowers to the SE.
"""

from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import IRDLOperation, VarConstraint, base, irdl_op_definition, operand_def, result_def


@irdl_op_definition
class SquareOp(IRDLOperation):
    """x * x elementwise. Shapes: `tensor<N x f32>` in and out (any float tensor, same type)."""

    name = "demo.square"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)
    assembly_format = "$input attr-dict `:` type($input)"

    def __init__(self, value: SSAValue, result_type: Attribute) -> None:
        super().__init__(operands=[value], result_types=[result_type])


Demo = Dialect("demo", [SquareOp])

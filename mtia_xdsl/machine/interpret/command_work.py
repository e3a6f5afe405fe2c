"""Work counting of engine commands: the elements, widest dtype, LUT use and LS traffic an engine compute
command records for the timing model (what it costs is `machine/`'s cost model's job).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects import builtin
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, BlockArgument, Operation
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.interpret.formats import ElementFormat, element_format, element_type_of
from mtia_xdsl.utils.locations import location_str

LUT_OPS = (
    "math.exp",
    "math.exp2",
    "math.rsqrt",
    "math.sqrt",
    "math.tanh",
    "math.log",
    "math.log2",
    "math.erf",
    "arith.divf",
)


def elem_count(t: Attribute) -> int:
    """Return the number of elements of tensor type `t` (1 for a scalar type)."""
    n = 1
    if isinstance(t, TensorType):
        for d in t.get_shape():
            n *= d
    return n


@dataclass(frozen=True)
class ComputeInfo:
    """What an engine compute op's command records that depends on the op alone."""

    n_inputs: int
    has_outs: bool
    where: str
    elems: int
    dtype: str
    lut: bool
    ls_bytes: int
    inplace: bool
    """The command overwrites the front tiles of its `outs` (see mtia.EngineComputeOp.inplace)."""

    @staticmethod
    def of(op: mtia.EngineComputeOp) -> ComputeInfo:
        out_types = [mtia.tile_type(o.type) for o in op.outs]
        body_ops = [
            o
            for o in op.body.block.ops
            if not isinstance(o, mtia.YieldOp | builtin.UnrealizedConversionCastOp) and o.name != "arith.constant"
        ]
        in_bytes = sum(mtia.tile_bytes(mtia.tile_type(v.type)) for v in op.inputs if mtia.is_cb(v))
        out_elems = max([elem_count(t) for t in out_types] + [1])
        return ComputeInfo(
            n_inputs=len(op.inputs),
            has_outs=bool(out_types),
            where=location_str(op.location),
            elems=max(sum(_body_op_work(o, out_elems) for o in body_ops), out_elems),
            dtype=_widest_dtype(body_ops, element_format(element_type_of(out_types[0])) if out_types else None),
            lut=any(o.name in LUT_OPS for o in body_ops),
            ls_bytes=in_bytes + sum(mtia.tile_bytes(t) for t in out_types),
            inplace=op.inplace is not None,
        )


_REDUCTION_OPS = ("tt.reduce", "tt.scan", "tt.histogram", "tt.gather")
"""Body ops whose work scales with their input, not their output (a reduced dimension)."""


_OPERAND_FORMS = ("tt.splat", "tt.expand_dims", "tt.broadcast")
"""Body ops that, applied to a body argument, only say how an instruction reads that operand."""


def _is_operand_form(op: Operation) -> bool:
    """Whether `op` splats or broadcasts a body argument (directly or through another such op): the
    instruction reading it takes a scalar operand (RVV `.vf`/`.vx`, the SE's scalar operand) or reuses
    a row/column register, so no elements are computed (mtia-vector-codegen builds these bodies)."""
    if op.name not in _OPERAND_FORMS:
        return False
    src = op.operands[0]
    return isinstance(src, BlockArgument) or (isinstance(src.owner, Operation) and _is_operand_form(src.owner))


def _body_op_work(op: Operation, out_elems: int) -> int:
    """Elements of work one op of an engine body does: a `tt.dot` M*N*K (times batch dims); a reduction,
    scan, histogram or gather its input elements times the ops of its combine region (at least 1); a
    splat or broadcast of a body argument nothing (an operand form; a command doing only that is still
    charged its output elements by `ComputeInfo.of`); any other op the command's output elements."""
    if _is_operand_form(op):
        return 0
    if op.name == "tt.dot":
        *batch, m, k = op.operands[0].type.get_shape()  # type: ignore[attr-defined]
        n = op.operands[1].type.get_shape()[-1]  # type: ignore[attr-defined]
        return int(np.prod(batch, dtype=np.int64)) * m * n * k
    if op.name in _REDUCTION_OPS:
        combine = [o for r in op.regions for b in r.blocks for o in b.ops if not o.has_trait(IsTerminator)]
        return max(elem_count(v.type) for v in op.operands) * max(len(combine), 1)
    return out_elems


def _widest_dtype(body_ops: list[Operation], out: ElementFormat | None) -> str:
    """The widest numeric element type any body op reads or writes (the output's `out` on ties; f32 if none)."""
    best, best_bytes = (out.name, out.size_bytes) if out is not None else ("f32", 0)
    for o in body_ops:
        for v in (*o.operands, *o.results):
            elem = element_type_of(v.type)
            if not isinstance(elem, builtin.IntegerType | builtin.AnyFloat):
                continue
            try:
                fmt = element_format(elem)
            except InterpretationError:
                continue  # no runtime representation (fp8 is emulated as i8 before this point)
            if fmt.size_bytes > best_bytes:
                best, best_bytes = fmt.name, fmt.size_bytes
    return best

"""What an engine command computes, as the cost model counts it: the one mapping from an engine op to its
work, used by the timing model (through the functional run's commands) and by CB sizing.

Units: elements (SE, VEC, RE, MLU) or MACs (DPE). A body's work is the sum over its ops
(`body_op_work`: a `tt.dot` M*N*K, a reduction its input times its combine ops, an operand form nothing,
anything else the command's output elements), at least the output elements; its dtype is the widest
numeric element type it touches (`widest_dtype`); it uses the SE's LUT if any op is in `LUT_OPS`.
What the work costs on each engine is `machine/cost.py`'s job.
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
from mtia_xdsl.machine.commands import Engine
from mtia_xdsl.machine.interpret.formats import ElementFormat, dtype_name, element_format, element_type_of
from mtia_xdsl.utils.isa import isa

COMPUTE_ENGINES: dict[type[Operation], Engine] = {
    mtia.SeComputeOp: Engine.SE,
    mtia.VecComputeOp: Engine.VEC,
    mtia.MluComputeOp: Engine.MLU,
}
"""The engine each engine compute op (`mtia.EngineComputeOp`) runs on."""

LUT_OPS = frozenset(
    (
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
)


"""Ops an SE body evaluates through its lookup table (the SE's LUT latency, MachineConfig.se_lut_latency_cycles)."""


def elem_count(t: Attribute) -> int:
    """Return the number of elements of tensor type `t` (1 for a scalar type)."""
    n = 1
    if isinstance(t, TensorType):
        for d in t.get_shape():
            n *= d
    return n


@dataclass(frozen=True)
class BodyWork:
    """The work of an engine compute command's body, per run of the command."""

    elems: int
    """Elements of work (see the module docstring)."""
    dtype: str
    """MachineConfig dtype name the engine computes in (the widest the body touches)."""
    lut: bool
    """The body uses the SE's lookup table."""


def body_work(op: mtia.EngineComputeOp) -> BodyWork:
    """Return the work of one run of engine compute command `op` (its whole tiles, before effective shapes)."""
    out_types = [mtia.tile_type(o.type) for o in op.outs]
    body_ops = [
        o
        for o in op.body.block.ops
        if not isinstance(o, mtia.YieldOp | builtin.UnrealizedConversionCastOp) and o.name != "arith.constant"
    ]
    out_elems = max([elem_count(t) for t in out_types] + [1])
    return BodyWork(
        elems=max(sum(body_op_work(o, out_elems) for o in body_ops), out_elems),
        dtype=widest_dtype(body_ops, element_format(element_type_of(out_types[0])) if out_types else None),
        lut=any(o.name in LUT_OPS for o in body_ops),
    )


@dataclass(frozen=True)
class DpeWork:
    """The work of one `mtia.dpe_matmul`: MACs of its whole tiles, input dtype, input precision code."""

    macs: int
    dtype: str
    input_precision: int


def dpe_work(op: mtia.DpeMatmulOp) -> DpeWork:
    """Return the MACs ([B x] M x K x N), input dtype and precision of a DPE matmul's whole tiles."""
    t_a = mtia.tile_type(op.a.type)
    *batch, m, k = t_a.get_shape()  # type: ignore[attr-defined]
    n = mtia.tile_type(op.b.type).get_shape()[-1]  # type: ignore[attr-defined]
    return DpeWork(int(np.prod(batch, dtype=np.int64)) * m * n * k, dtype_name(t_a), op.input_precision.value.data)


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


def body_op_work(op: Operation, out_elems: int) -> int:
    """Elements of work one op of an engine body does: a `tt.dot` M*N*K (times batch dims); a reduction,
    scan, histogram or gather its input elements times the ops of its combine region (at least 1); a
    splat or broadcast of a body argument nothing (an operand form; a command doing only that is still
    charged its output elements by `body_work`); any other op the command's output elements."""
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


_NUMERIC = builtin.IntegerType | builtin.AnyFloat


def widest_dtype(body_ops: list[Operation], out: ElementFormat | None) -> str:
    """The widest numeric element type any body op reads or writes (the output's `out` on ties; f32 if none)."""
    best, best_bytes = (out.name, out.size_bytes) if out is not None else ("f32", 0)
    for o in body_ops:
        for v in (*o.operands, *o.results):
            elem = element_type_of(v.type)
            if not isa(elem, _NUMERIC):
                continue
            try:
                fmt = element_format(elem)
            except InterpretationError:
                continue  # no runtime representation (fp8 is emulated as i8 before this point)
            if fmt.size_bytes > best_bytes:
                best, best_bytes = fmt.name, fmt.size_bytes
    return best

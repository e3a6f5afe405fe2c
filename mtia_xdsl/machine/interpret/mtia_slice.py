"""Functional semantics of `mtia.extract_slice` (language extension extract_slice).

The result is the block of the source tile at the offsets, of the result type's shape. Runtime values
may carry leading batch dimensions (one per program of a batch) and size-1 dimensions standing for a
broadcast (`tt.broadcast` is free in the model); both are kept. A dynamic offset must be the same for
every program of a batch (else `Divergence` splits the batch) and must keep the slice inside the source
(else InterpretationError at the kernel line).

Registered by `machine.reference.make_tt_interpreter`; on the machine the op runs inside an MLU command.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.interpret.values import location_str, uniform


@register_impls
class MtiaSliceFunctions(InterpreterFunctions):
    """mtia.extract_slice."""

    @impl(mtia.ExtractSliceOp)
    def run_extract_slice(self, interpreter: Interpreter, op: mtia.ExtractSliceOp, args: PythonValues) -> PythonValues:
        src_type, res_type = op.source.type, op.result.type
        assert isinstance(src_type, TensorType) and isinstance(res_type, TensorType)
        shape, sizes = list(src_type.get_shape()), list(res_type.get_shape())
        dynamic = iter(args[1:])
        offsets: list[int] = []
        for dim, static in enumerate(op.static_offsets.get_values()):
            off = static if static != mtia.DYNAMIC_OFFSET else int(uniform(next(dynamic), op))
            if not 0 <= off <= shape[dim] - sizes[dim]:
                raise InterpretationError(
                    f"{location_str(op.location)}: error: extract_slice: offset {off} + size {sizes[dim]} leaves "
                    f"dimension {dim} of the tile (extent {shape[dim]}); keep 0 <= offset <= {shape[dim] - sizes[dim]}"
                )
            offsets.append(off)
        x = np.asarray(args[0])
        rank = len(shape)
        if x.ndim < rank:
            x = x.reshape((1,) * (rank - x.ndim) + x.shape)
        index = [slice(None)] * (x.ndim - rank)
        for off, size, have in zip(offsets, sizes, x.shape[x.ndim - rank :], strict=True):
            index.append(slice(None) if have == 1 else slice(off, off + size))
        return (x[tuple(index)],)

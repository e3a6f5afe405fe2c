"""Reference semantics of `tt.map_elementwise` (`tl.map_elementwise`): a scalar region applied lane by lane.

A region of straight-line ops runs once on whole arrays (its scalar-typed values then hold all lanes, of
every program of a batch). A region with control flow (an `scf.if` from a branch in the scalar function,
a loop, a call of a helper that branches) runs once per group of `pack` lanes on numpy scalars, since its
branch conditions differ between lanes. Inputs are grouped input-major (`pack` consecutive lanes of
input 0, then of input 1, ...) and results result-major, as Triton 3.9's `tl.map_elementwise` builds
the region.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, ReturnedValues, impl, impl_terminator
from xdsl.interpreter import register_impls as _register_impls
from xdsl.ir import Operation

from mtia_xdsl.dialects import tt
from mtia_xdsl.machine.interpret.values import element_format


def _has_control_flow(op: tt.MapElementwiseOp) -> bool:
    return any(inner.regions or inner.successors or isinstance(inner, tt.CallOp) for inner in op.scalarOp.walk())


def _cast(values: list[Any], op: Operation) -> tuple[Any, ...]:
    out = []
    for v, r in zip(values, op.results, strict=True):
        dtype = element_format(tt.element_type(r.type)).compute
        with np.errstate(all="ignore"):
            out.append(np.asarray(v).astype(dtype))
    return tuple(out)


def _run_groups(interpreter: Interpreter, op: tt.MapElementwiseOp, arrays: list[np.ndarray], pack: int) -> list[Any]:
    """Run the region on each group of `pack` lanes; return one flat array per result."""
    n_results = len(op.results)
    flat = [a.reshape(-1, pack) for a in arrays]
    groups = flat[0].shape[0] if flat else 0
    outs: list[list[Any]] = [[] for _ in range(n_results)]
    for g in range(groups):
        args = [f[g, j] for f in flat for j in range(pack)]
        res = interpreter.run_ssacfg_region(op.scalarOp, tuple(args), op.name)
        for k in range(n_results):
            outs[k].extend(res[k * pack : (k + 1) * pack])
    return [np.asarray(o) for o in outs]


@_register_impls
class MapElementwiseFunctions(InterpreterFunctions):
    """Functional semantics of tt.map_elementwise and its terminator (module docstring)."""

    @impl(tt.MapElementwiseOp)
    def run_map_elementwise(
        self, interpreter: Interpreter, op: tt.MapElementwiseOp, args: PythonValues
    ) -> PythonValues:
        pack = op.pack.value.data
        arrays = list(np.broadcast_arrays(*[np.asarray(a) for a in args]))
        shape = arrays[0].shape if arrays else ()
        if pack == 1 and not _has_control_flow(op):
            with np.errstate(all="ignore"):
                out = interpreter.run_ssacfg_region(op.scalarOp, tuple(arrays), op.name)
            return _cast([np.broadcast_to(np.asarray(v), shape) for v in out], op)
        with np.errstate(all="ignore"):
            flat = _run_groups(interpreter, op, arrays, pack)
        return _cast([f.reshape(shape) for f in flat], op)

    @impl_terminator(tt.MapElementwiseReturnOp)
    def run_map_elementwise_return(
        self, interpreter: Interpreter, op: tt.MapElementwiseReturnOp, args: PythonValues
    ) -> tuple[ReturnedValues, PythonValues]:
        return ReturnedValues(args), ()


__all__ = ["MapElementwiseFunctions"]

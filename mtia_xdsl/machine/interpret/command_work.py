"""What an engine compute command records for the timing model that depends on the op alone: its work
(`machine/work.py`'s `body_work`, the one count CB sizing uses too) and its LS traffic.
"""

from __future__ import annotations

from dataclasses import dataclass

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.work import body_work
from mtia_xdsl.utils.locations import location_str


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
        in_bytes = sum(mtia.tile_bytes(mtia.tile_type(v.type)) for v in op.inputs if mtia.is_cb(v))
        work = body_work(op)
        return ComputeInfo(
            n_inputs=len(op.inputs),
            has_outs=bool(out_types),
            where=location_str(op.location),
            elems=work.elems,
            dtype=work.dtype,
            lut=work.lut,
            ls_bytes=in_bytes + sum(mtia.tile_bytes(t) for t in out_types),
            inplace=op.inplace is not None,
        )

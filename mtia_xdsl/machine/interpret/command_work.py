"""What an engine command records for the timing model: the fields that depend on the op alone (its work,
`machine/work.py`'s `body_work`, the one count CB sizing uses too, and its LS traffic), and the functions
building each kind of `Command` from plain values. The interpreter (mtia.py) and the C++ path's record
converter (backend/host.py) both build their commands with these functions, so the two agree by construction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.commands import Command, Engine, SlotRef
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.interpret.masks import valid_count
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


# -- the commands' fields, from plain values: the one home shared by the interpreter and backend/host.py --------


def compute_elems(elems: int, valid: Any, out_shape: list[int]) -> Any:
    """Elements of work of a compute command of whole-tile work `elems` under effective shape `valid`
    (extents per dimension of `out_shape`; empty: the whole tile): the work scales with the lanes computed."""
    if not valid:
        return elems
    out_elems = max(int(np.prod(out_shape, dtype=np.int64)), 1)
    return -(-elems * np.asarray(valid_count(valid, out_shape)) // out_elems)


def compute_command(
    engine: Engine,
    kind: str,
    where: str,
    waits: tuple[SlotRef, ...],
    fills: tuple[SlotRef, ...],
    elems: int,
    dtype: str,
    lut: bool,
    ls_bytes: int,
) -> Command:
    """The command of an SE / VEC / MLU compute (`elems` after `compute_elems`)."""
    return Command(engine, kind, where, waits, fills, elems=elems, dtype=dtype, lut=lut, ls_bytes=ls_bytes)


def dpe_macs(valid: Any, batch: int, m: int, n: int, k: int) -> Any:
    """MACs of a DPE matmul of [batch x] M x K by K x N tiles under valid extents (M, N, K), or whole."""
    return valid_count(valid, [m, n, k]) if valid else batch * m * n * k


def dpe_passes(config: MachineConfig, dtype: str, input_precision: int) -> int:
    """DPE passes of a matmul: MachineConfig.dpe_fp32_ieee_passes for an "ieee" (2) fp32 dot, else 1."""
    return config.dpe_fp32_ieee_passes if dtype == "f32" and input_precision == 2 else 1


def dpe_ls_bytes(op: mtia.DpeMatmulOp) -> int:
    """LS bytes a DPE matmul reads and writes: its A and B tiles and twice its output (C in, D out)."""
    out_t = op.out.type.tile if op.out is not None else op.result[0].type  # type: ignore[union-attr]
    a, b = mtia.tile_type(op.a.type), mtia.tile_type(op.b.type)
    return mtia.tile_bytes(a) + mtia.tile_bytes(b) + 2 * mtia.tile_bytes(out_t)


def dpe_command(
    where: str,
    waits: tuple[SlotRef, ...],
    fills: tuple[SlotRef, ...],
    macs: int,
    dtype: str,
    passes: int,
    ls_bytes: int,
) -> Command:
    """The command of a DPE matmul."""
    return Command(
        Engine.DPE, "dpe_matmul", where, waits, fills, macs=macs, dtype=dtype, dpe_passes=passes, ls_bytes=ls_bytes
    )


def re_ls_bytes(op: mtia.ReReduceOp) -> int:
    """LS bytes an RE reduce reads and writes: its input and output tiles."""
    out_t = op.out.type.tile if op.out is not None else op.result[0].type  # type: ignore[union-attr]
    return mtia.tile_bytes(mtia.tile_type(op.operands[0].type)) + mtia.tile_bytes(out_t)


def re_elems(valid: Any, in_shape: list[int]) -> Any:
    """Elements an RE reduce reads: the valid lanes of its input, or all."""
    return valid_count(valid, in_shape) if valid else int(np.prod(in_shape, dtype=np.int64))


def re_command(
    where: str, waits: tuple[SlotRef, ...], fills: tuple[SlotRef, ...], elems: int, dtype: str, ls_bytes: int
) -> Command:
    """The command of an RE reduce."""
    return Command(Engine.RE, "re_reduce", where, waits, fills, elems=elems, dtype=dtype, ls_bytes=ls_bytes)


def cb_read_command(where: str, slot: SlotRef) -> Command:
    """The scalar core reading one element of a CB tile (it waits for it)."""
    return Command(Engine.SCALAR, "cb_read", where, (slot,), (), elems=1, scalar_blocking=True)


def scalar_memory_command(kind: str, where: str, addr: int, nbytes: int, dtype: str, store: bool) -> Command:
    """A scalar load (blocking) or store of `nbytes` at global address `addr`."""
    if store:
        return Command(
            Engine.SCALAR, kind, where, (), (), elems=1, global_write_bytes=nbytes,
            global_ranges=((addr, nbytes),), dtype=dtype,
        )  # fmt: skip
    return Command(
        Engine.SCALAR, kind, where, (), (), elems=1, global_read_bytes=nbytes, global_ranges=((addr, nbytes),),
        scalar_blocking=True, dtype=dtype,
    )  # fmt: skip


def lanes_command(
    kind: str,
    where: str,
    waits: tuple[SlotRef, ...],
    fills: tuple[SlotRef, ...],
    active: int,
    extent: tuple[int, int] | None,
    elem_bytes: int,
    read: bool,
    write: bool,
    ls_bytes: int,
    dtype: str,
) -> Command:
    """A gather, scatter or atomic of `active` lanes of `elem_bytes` within [extent) on the scalar core."""
    return Command(
        Engine.SCALAR, kind, where, waits, fills, elems=active,
        global_read_bytes=active * elem_bytes if read else 0, global_write_bytes=active * elem_bytes if write else 0,
        global_extent=extent, descriptors=active, ls_bytes=ls_bytes, scalar_blocking=True, dtype=dtype,
    )  # fmt: skip

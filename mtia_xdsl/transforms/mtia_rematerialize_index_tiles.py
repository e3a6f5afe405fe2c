"""mtia-rematerialize-index-tiles: a tile computed from indices alone is computed again right before each reader.

Inductor's kernels compute index tiles and masks from `tl.arange` and the program id (`x0 = xindex % 3`,
`tmp6 = (tmp0 < tmp1) & (tmp3 < tmp4)`) and read some of them far apart: adaptive average pooling's 16
window masks are each read by a masked load and again, at the end, by the window's count, so all 16 are
alive at once, a CB ID each. An engine command is an *index tile* when it has no `outs`, one result, a
body of pure ops (arith, math, tt.make_range/splat/broadcast/expand_dims/reshape/addptr) and every tensor
it reads is itself an index tile (a constant tile of `mtia-rematerialize-constants` is one). This pass
gives each other op that reads an index tile its own copy of the tile's whole chain of index tiles, placed
right before it (each tile of the chain copied once per reader), and erases the originals, so an index
tile's CB lives from its copy to its one reader. Like a register allocator's rematerialization, it trades
work for room: a reader recomputes the chain (a reader in a loop, every iteration).

Run on the tensor-level program after convert-tt-to-mtia and cse (which would merge the copies again),
before mtia-cb-bufferize. The fitting driver (mtia_xdsl/fit.py) applies it when a kernel short of CB IDs
does not fit with constant tiles rematerialized; compile option `rematerialize_index_tiles=True` always does.
Example: mtia-opt k.mlir -p mtia-rematerialize-index-tiles
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from mtia_xdsl.dialects import mtia
from mtia_xdsl.utils.walk import ops_of

PURE_TT = ("tt.make_range", "tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.addptr")
"""tt ops an index tile's body may hold besides arith and math ops: pure functions of their operands."""


def _pure_body(op: mtia.EngineComputeOp) -> bool:
    for inner in op.body.block.ops:
        name = inner.name
        if not (name.startswith(("arith.", "math.")) or name in PURE_TT or isinstance(inner, mtia.YieldOp)):
            return False
    return True


def index_tiles(module: Operation) -> set[Operation]:
    """The engine commands of `module` that are index tiles (module docstring), found in program order."""
    tiles: set[Operation] = set()
    for op in ops_of(module):
        if not isinstance(op, mtia.EngineComputeOp) or len(op.results) != 1 or op.outs:
            continue
        tensors = [v for v in op.operands if isinstance(v.type, TensorType)]
        if all(isinstance(v.owner, Operation) and v.owner in tiles for v in tensors) and _pure_body(op):
            tiles.add(op)
    return tiles


def _tile_operands(op: Operation, tiles: set[Operation]) -> list[SSAValue]:
    return [v for v in op.operands if isinstance(v.owner, Operation) and v.owner in tiles]


def _need(op: Operation, tiles: set[Operation], needs: dict[Operation, int]) -> int:
    """CBs alive at once while `op`'s chain of index tiles is computed, its heavier operands first (Sethi-Ullman
    numbering: the operand needing most is computed first, each later one with the earlier results held)."""
    if op not in needs:
        inner = sorted((_need(v.owner, tiles, needs) for v in _tile_operands(op, tiles)), reverse=True)  # type: ignore[arg-type]
        needs[op] = max([1, *(n + i for i, n in enumerate(inner))])
    return needs[op]


Memo = tuple[dict[Operation, Operation], dict[Operation, int]]
"""Per reader, the copies made (original tile -> copy); for the pass, each tile's `_need`."""


def _copy_before(value: SSAValue, reader: Operation, tiles: set[Operation], memo: Memo) -> SSAValue:
    """`value`'s index tile, copied (with the index tiles it reads, each once per reader, heavier operands first)
    right before `reader`."""
    copies, needs = memo
    owner = value.owner
    assert isinstance(owner, Operation)
    if owner not in copies:
        reads = sorted(_tile_operands(owner, tiles), key=lambda v: -_need(v.owner, tiles, needs))  # type: ignore[arg-type]
        made = {v: _copy_before(v, reader, tiles, memo) for v in reads}
        copy = owner.clone()
        for i, v in enumerate(owner.operands):
            if v in made:
                copy.operands[i] = made[v]
        reader.parent_block().insert_op_before(copy, reader)  # type: ignore[union-attr]
        copies[owner] = copy
    return copies[owner].results[0]


@dataclass(frozen=True)
class MtiaRematerializeIndexTilesPass(ModulePass):
    """Compute index tiles again right before each reader instead of holding them (module docstring)."""

    name = "mtia-rematerialize-index-tiles"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        tiles = index_tiles(op)
        if not tiles:
            return
        order = [o for o in ops_of(op) if o in tiles]
        readers = [o for o in ops_of(op) if o not in tiles and any(
            isinstance(v.owner, Operation) and v.owner in tiles for v in o.operands)]  # fmt: skip
        needs: dict[Operation, int] = {}
        for reader in readers:
            memo: Memo = ({}, needs)
            for i, v in enumerate(reader.operands):
                if isinstance(v.owner, Operation) and v.owner in tiles:
                    reader.operands[i] = _copy_before(v, reader, tiles, memo)
        for tile in reversed(order):
            Rewriter.erase_op(tile)

"""mtia-pe-mapping: record how the program ids of each kernel are distributed over the PE grid.

The strategy is an attribute of the kernel function (`mtia.pe_mapping = "zigzag"`), and so is the PE
sub-grid of a launch given one (`mtia.pe_subgrid = array<i32: base_pe, tile_width, tile_height>`, S10);
the machine model's placement (`mtia_xdsl.machine.placement`) reads them when the kernel runs, so the
compiled program carries the choice the compile options made. Strategies (ASSUMPTION: our reading of S8):
- "linear": contiguous chunks of ceil(P / n) program ids per PE, PEs in row-major order;
- "round_robin": program i on PE i mod n;
- "zigzag": round-robin whose direction alternates every n programs, which pairs heavy and light programs
  on a PE when work grows with the program id (causal attention).
Example: mtia-opt k.mlir -p mtia-pe-mapping{strategy=zigzag subgrid=18,4,2}
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, StringAttr, UnknownLoc, i32
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.config import DEFAULT_PE_MAPPING, PE_MAPPINGS, SUBGRID_ATTR, PeSubgrid
from mtia_xdsl.transforms.target import machine_config_for
from mtia_xdsl.utils.locations import location_str
from mtia_xdsl.utils.walk import ops_of

STRATEGIES = PE_MAPPINGS
"""The strategies the pass accepts (`machine.config.PE_MAPPINGS`)."""


def kernel_pe_mapping(kernel: Operation) -> str | None:
    """Return the strategy recorded on `kernel` (a tt.func) by mtia-pe-mapping, or None if absent."""
    attr = kernel.attributes.get(mtia.PE_MAPPING_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


@dataclass(frozen=True)
class MtiaPeMappingPass(ModulePass):
    """Record `strategy` (and `subgrid`, if given) as attributes of every tt.func of the module.

    `subgrid` is (base_pe, tile_width, tile_height): the launch runs on `tile_height` rows of `tile_width`
    PEs from the chip's row-major PE `base_pe`; empty: the whole chip.
    Requires: for `subgrid`, the module attribute mtia.target (mtia-set-target), to check it fits the chip.
    Raises: PassFailedException if `strategy` is not one of STRATEGIES, or `subgrid` leaves the chip.
    Example: mtia-opt k.mlir -p mtia-pe-mapping{strategy=round_robin}
    """

    name = "mtia-pe-mapping"
    strategy: str = DEFAULT_PE_MAPPING
    subgrid: tuple[int, ...] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        funcs = [func for func in ops_of(op) if func.name == "tt.func"]
        located = [f for f in funcs if not isinstance(f.location, UnknownLoc)]
        where = f"{location_str(located[0].location)}: error: " if located else ""
        if self.subgrid:
            try:
                PeSubgrid.parse(self.subgrid, machine_config_for(op, self.name))
            except ValueError as e:
                raise PassFailedException(f"{where}{self.name}: {e}") from None
            subgrid = DenseArrayBase.from_list(i32, list(self.subgrid))
            for func in funcs:
                func.attributes[SUBGRID_ATTR] = subgrid
        if self.strategy not in STRATEGIES:
            raise PassFailedException(
                f"{where}{self.name}: unknown strategy '{self.strategy}'; expected one of "
                f"{', '.join(STRATEGIES)} (compile option pe_mapping)"
            )
        value = StringAttr(self.strategy)
        for func in funcs:
            func.attributes[mtia.PE_MAPPING_ATTR] = value

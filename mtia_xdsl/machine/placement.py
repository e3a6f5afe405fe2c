"""Program placement: which PE of the launch's PE grid runs each program id.

One home for the placement that the timing model schedules by and that `mtia.pe_id` (the language
extension `get_pe_id`) returns, so a kernel sees the PE it is timed on.

A launch runs on a rectangular sub-grid of the chip's PEs anchored at a base PE (S10: MTIA's launch
parameters are a base PE, a tile width and a tile height); by default the whole chip
(`MachineConfig.pe_rows` x `pe_cols`). Inside it, PEs are numbered row-major from 0; the mapping strategy
(`MAPPINGS`) deals the linear program ids (axis 0 fastest) to those numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.config import (
    DEFAULT_PE_MAPPING,
    PE_MAPPINGS,
    SUBGRID_ATTR,
    MachineConfig,
    PeSubgrid,
    derive_config,
    module_config,
)
from mtia_xdsl.utils.locations import location_str

MAPPINGS = PE_MAPPINGS
"""Program -> PE strategies (the names are `machine.config.PE_MAPPINGS`), as distributions of the linear
program ids (axis 0 fastest) over the n PEs
of the launch's grid numbered row-major; a PE runs its programs in increasing program id:
- "linear": contiguous chunks, PE p runs programs [p*k, (p+1)*k) with k = ceil(P / n);
- "round_robin": program i on PE i mod n;
- "zigzag": round-robin in rounds of n whose direction alternates (round i // n even: PE i mod n, odd:
  PE n-1-(i mod n)), so a PE that got a light program in one round gets a heavy one in the next when work
  grows with the program id (causal attention).
ASSUMPTION: our reading of S8 (the paper names the three strategies, not their exact definition)."""


def launch_grid(grid: Any) -> tuple[int, int, int]:
    """Return a launch grid (an int, or a tuple or list of 1 to 3 ints) as three program counts.

    The one rule every launch path applies (a Triton launch, a run of emitted C++ or LLVM IR); integers of
    any integral type (numpy's too) count, bools and floats do not.
    Raises: ValueError saying what is wrong with `grid` (callers add the kernel location and their type).
    """
    dims: tuple[Any, ...] = tuple(grid) if isinstance(grid, tuple | list) else (grid,)  # pyright: ignore[reportUnknownArgumentType]
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"grid {grid!r} must have 1 to 3 dimensions")
    if any(not isinstance(d, Integral) or isinstance(d, bool | np.bool_) or d < 0 for d in dims):
        raise ValueError(f"grid {grid!r} must hold non-negative integers")
    padded = (*(int(d) for d in dims), 1, 1)[:3]
    return (padded[0], padded[1], padded[2])


def local_pe(linear: Any, n_programs: int, n_pes: int, mapping: str) -> Any:
    """Return the PE (row-major index in the launch's grid) of linear program id `linear` under `mapping`.

    `linear` may be an int or an integer array (one id per program of a batch); the result has its shape.
    Raises: ValueError for an unknown mapping.
    """
    if mapping == "linear":
        return linear // -(-n_programs // n_pes)
    if mapping == "round_robin":
        return linear % n_pes
    if mapping == "zigzag":
        lane = linear % n_pes
        return np.where((linear // n_pes) % 2 == 0, lane, n_pes - 1 - lane)
    raise ValueError(f"unknown program mapping {mapping!r}; expected one of {', '.join(MAPPINGS)}")


@dataclass(frozen=True)
class Placement:
    """Where the programs of one launch run: the strategy, the sub-grid and the launch grid."""

    mapping: str
    subgrid: PeSubgrid
    grid: tuple[int, int, int]

    def local_pe(self, program_id: tuple[Any, Any, Any]) -> Any:
        """Return the row-major PE index within the sub-grid of program `(x, y, z)`.

        Each axis may be an int or an int array (a batch of programs); the result is an int or an array.
        """
        gx, gy, gz = self.grid
        x, y, z = program_id
        linear = x + gx * (y + gy * z)
        pe = local_pe(np.asarray(linear, dtype=np.int64), gx * gy * gz, self.subgrid.n_pes, self.mapping)
        return int(pe) if np.ndim(pe) == 0 else pe

    def chip_pe(self, program_id: tuple[int, int, int], config: MachineConfig) -> int:
        """Return the chip's PE number (row-major over `config`'s grid) running program `(x, y, z)`."""
        return self.subgrid.chip_pe(self.local_pe(program_id), config)

    def rounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Return (local PE, round) of every linear program id of the launch, as two int64 arrays.

        A program's round is its rank among the programs of its PE (which runs them in increasing id):
        the k-th program of every PE runs in round k. `mtia.re_allreduce` groups programs by round.
        """
        gx, gy, gz = self.grid
        n_programs = gx * gy * gz
        linear = np.arange(n_programs, dtype=np.int64)
        pe = np.asarray(local_pe(linear, n_programs, self.subgrid.n_pes, self.mapping), dtype=np.int64)
        order = np.lexsort((linear, pe))
        sorted_pe = pe[order]
        rounds = np.empty(n_programs, dtype=np.int64)
        rounds[order] = np.arange(n_programs) - np.searchsorted(sorted_pe, sorted_pe, side="left")
        return pe, rounds

    def linear_ids(self, program_id: tuple[Any, Any, Any]) -> Any:
        """Linear program id (axis 0 fastest) of program `(x, y, z)`; each axis an int or an int array."""
        gx, gy, _ = self.grid
        x, y, z = (np.asarray(a, dtype=np.int64) for a in program_id)
        return x + gx * (y + gy * z)


def machine_config(module: ModuleOp, options: Any = None) -> MachineConfig:
    """Return the MachineConfig for a run: `options.machine_config` (the compile options' machine, with
    their overrides), else `options.machine`, else the module's own (`config.module_config`: its
    `mtia.target` with its `mtia.machine_overrides`, the machine the passes sized it for).

    Raises: InterpretationError if none names a chip (lower the module with the default pipeline, or run
    mtia-set-target), or the module's overrides are bad.
    """
    config = getattr(options, "machine_config", None)
    if isinstance(config, MachineConfig):
        return config
    name = getattr(options, "machine", None)
    if name is not None:
        return derive_config(name)
    try:
        return module_config(module)
    except ValueError as e:
        raise InterpretationError(f"no chip to run on: {e}") from None


def run_placement(
    kernel: Operation, grid: tuple[int, int, int], config: MachineConfig, options: Any = None
) -> Placement:
    """Return where the programs of a launch of `kernel` run: `run_mapping` on `run_subgrid`.

    Raises: InterpretationError naming the kernel for a sub-grid off the chip of `config`.
    """
    try:
        return Placement(run_mapping(kernel, options), run_subgrid(kernel, config, options), grid)
    except ValueError as e:
        raise InterpretationError(f"{location_str(kernel.location)}: error: {e}") from None


def run_subgrid(kernel: Operation, config: MachineConfig, options: Any = None) -> PeSubgrid:
    """Return the rectangle of PEs a launch runs on (S10; machine/placement.py).

    In order: `options.subgrid_override` (mtia-run --pe-subgrid), the kernel's `mtia.pe_subgrid` attribute
    (recorded by mtia-pe-mapping from the launch option `pe_subgrid`), `options.pe_subgrid`, else the
    whole chip.
    Raises: ValueError for a sub-grid off the chip of `config`.
    """
    override = getattr(options, "subgrid_override", None)
    if override:
        return PeSubgrid.parse(tuple(override), config)
    recorded = kernel.attributes.get(SUBGRID_ATTR)
    if isinstance(recorded, DenseArrayBase):
        return PeSubgrid.parse(tuple(int(v) for v in recorded.get_values()), config)
    return PeSubgrid.parse(getattr(options, "pe_subgrid", None), config)


def run_mapping(kernel: Operation, options: Any = None) -> str:
    """Return the program-id -> PE mapping of a run (see placement.MAPPINGS).

    In order: `options.mapping_override` (mtia-run --mapping), the kernel's `mtia.pe_mapping` attribute
    (recorded by the mtia-pe-mapping pass from the compile option `pe_mapping`), `options.pe_mapping`,
    else "zigzag" (the compile default).
    """
    override = getattr(options, "mapping_override", None)
    if override:
        return str(override)
    recorded = kernel.attributes.get(mtia.PE_MAPPING_ATTR)
    if isinstance(recorded, StringAttr):
        return recorded.data
    return str(getattr(options, "pe_mapping", None) or DEFAULT_PE_MAPPING)


def has_collective(kernel: Operation) -> bool:
    """Whether `kernel` uses the cross-PE reduction (mtia.re_allreduce), whose groups must run together."""
    return any(isinstance(op, mtia.ReAllreduceOp) for op in kernel.walk())


def reads_pe_id(kernel: Operation) -> bool:
    """Whether `kernel` reads the PE it runs on (mtia.pe_id, language extension get_pe_id): it may keep per-PE
    state in global memory, which the programs of a PE must then update in their order (one after the other)."""
    return any(isinstance(op, mtia.PeIdOp) for op in kernel.walk())


def round_starts(pids: list[tuple[int, int, int]], placement: Placement) -> list[int]:
    """Return the positions in `pids` (ordered by `by_round`) where a round starts, and len(pids)."""
    _, rounds = placement.rounds()
    gx, gy, _ = placement.grid
    of = [int(rounds[p[0] + gx * (p[1] + gy * p[2])]) for p in pids]
    return [k for k in range(len(of)) if k == 0 or of[k] != of[k - 1]] + [len(of)]


def by_round(pids: list[tuple[int, int, int]], placement: Placement) -> list[tuple[int, int, int]]:
    """Return `pids` ordered by (round, PE): each round's programs contiguous (machine/placement.py)."""
    pe, rounds = placement.rounds()
    gx, gy, _ = placement.grid
    return sorted(pids, key=lambda p: (int(rounds[(k := p[0] + gx * (p[1] + gy * p[2]))]), int(pe[k])))

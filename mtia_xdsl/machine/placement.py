"""Program placement: which PE of the launch's PE grid runs each program id.

One home for the placement that the timing model schedules by and that `mtia.pe_id` (the language
extension `get_pe_id`) returns, so a kernel sees the PE it is timed on.

A launch runs on a rectangular sub-grid of the chip's PEs anchored at a base PE (S10: MTIA's launch
parameters are a base PE, a tile width and a tile height); by default the whole chip
(`MachineConfig.pe_rows` x `pe_cols`). Inside it, PEs are numbered row-major from 0; the mapping strategy
(`MAPPINGS`) deals the linear program ids (axis 0 fastest) to those numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mtia_xdsl.machine.config import PE_MAPPINGS, MachineConfig

MAPPINGS = PE_MAPPINGS
"""Program -> PE strategies (the names are `machine.config.PE_MAPPINGS`), as distributions of the linear program ids (axis 0 fastest) over the n PEs
of the launch's grid numbered row-major; a PE runs its programs in increasing program id:
- "linear": contiguous chunks, PE p runs programs [p*k, (p+1)*k) with k = ceil(P / n);
- "round_robin": program i on PE i mod n;
- "zigzag": round-robin in rounds of n whose direction alternates (round i // n even: PE i mod n, odd:
  PE n-1-(i mod n)), so a PE that got a light program in one round gets a heavy one in the next when work
  grows with the program id (causal attention).
ASSUMPTION: our reading of S8 (the paper names the three strategies, not their exact definition)."""

SUBGRID_ATTR = "mtia.pe_subgrid"
"""Kernel-function attribute `array<i32: base_pe, tile_width, tile_height>` set by mtia-pe-mapping."""


@dataclass(frozen=True)
class PeSubgrid:
    """The rectangle of PEs a launch runs on (S10): `tile_height` rows of `tile_width` PEs from `base_pe`.

    `base_pe` is the chip's row-major PE number of the rectangle's top-left PE.
    """

    base_pe: int
    tile_width: int
    tile_height: int

    @staticmethod
    def whole_chip(config: MachineConfig) -> PeSubgrid:
        """Return the sub-grid covering every PE of `config`."""
        return PeSubgrid(0, config.pe_cols, config.pe_rows)

    @staticmethod
    def parse(value: Sequence[int] | None, config: MachineConfig) -> PeSubgrid:
        """Return the sub-grid `(base_pe, tile_width, tile_height)`, or the whole chip for None or ().

        Raises: ValueError naming the values when it is not three integers or leaves the chip.
        """
        if value is None or len(value) == 0:
            return PeSubgrid.whole_chip(config)
        if len(value) != 3 or not all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in value):
            raise ValueError(f"pe_subgrid must be three integers (base_pe, tile_width, tile_height), got {value!r}")
        grid = PeSubgrid(*(int(v) for v in value))
        grid.check(config)
        return grid

    def check(self, config: MachineConfig) -> None:
        """Raise ValueError unless the rectangle lies on the chip of `config` and holds at least one PE."""
        row, col = divmod(self.base_pe, config.pe_cols) if self.base_pe >= 0 else (-1, -1)
        if self.tile_width < 1 or self.tile_height < 1:
            raise ValueError(f"pe_subgrid {self.as_tuple()}: tile width and height must be at least 1")
        if row < 0 or row + self.tile_height > config.pe_rows or col + self.tile_width > config.pe_cols:
            raise ValueError(
                f"pe_subgrid {self.as_tuple()}: {self.tile_height} rows of {self.tile_width} PEs from PE "
                f"{self.base_pe} (row {row}, column {col}) leave the {config.pe_rows} x {config.pe_cols} PE grid; "
                "choose a base PE and tile size inside it"
            )

    def as_tuple(self) -> tuple[int, int, int]:
        """Return (base_pe, tile_width, tile_height)."""
        return (self.base_pe, self.tile_width, self.tile_height)

    @property
    def n_pes(self) -> int:
        """Number of PEs of the sub-grid."""
        return self.tile_width * self.tile_height

    def chip_pe(self, local: int, config: MachineConfig) -> int:
        """Return the chip's PE number of the sub-grid's row-major PE `local`."""
        row, col = divmod(local, self.tile_width)
        return self.base_pe + row * config.pe_cols + col


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

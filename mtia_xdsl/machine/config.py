"""MachineConfig: every hardware number of the MTIA-2i machine model, with its source.

Glossary of hardware terms (the MTIA papers' names; use no other word for these units anywhere):

- PE (processing element): one of the 8 x 8 compute tiles of the chip; each has two RISC-V cores, a
  command processor, local storage and the fixed-function engines below. Source: S1 (PE description).
- DPE (dot product engine): the GEMM engine of a PE; one operand cached in the engine, the other streamed
  from LS; two MAC tiles; takes no FP32 inputs. Source: S1.
- SE (SIMD engine): elementwise arithmetic, quantization and non-linear functions by lookup table (LUT).
  Source: S1, S6.
- RE (reduction engine): accumulates DPE results, owns the reduction network to the neighbouring PE, hands
  results to the SE, computes row min/max for quantization. Source: S1.
- MLU (memory layout unit): transpose, concatenate, reshape inside LS. Source: S1.
- CP (command processor): receives commands from the cores, checks their dependencies and presents LS as
  circular buffers with hardware producer/consumer tracking. Source: S1.
- CB (circular buffer): a FIFO of equally sized slots ("tiles") in LS, `depth` slots deep; producers fill
  slots, consumers release them; the CP tracks both. Source: S1.
- CB ID: the number by which the CP tracks a CB; a kernel has `cb_ids` of them (14, S9), so CBs alive at the
  same time are limited like registers, and CBs alive at different times share IDs and LS bytes.
- LS (local storage): the per-PE scratchpad (384 KB, 1.0 TB/s read+write). Source: S1, S6.
- DMA: the engine moving blocks between LS and global memory (SRAM/DRAM) over the NoC, including indexed
  DMA for embedding rows. Source: S1.
- FI (fabric interface): the PE's port onto the NoC that the DMA engine uses. Source: S1.
- NoC (network on chip): non-blocking mesh with crossbars at the die edges and hardware broadcast reads;
  no absolute bandwidth is public. Source: S1.
- LLC (last-level cache): the 256 MB on-chip SRAM, partitioned in 32 MB units as cache or scratch.
  Source: S1.
- Scalar core: the RISC-V core of a PE running the kernel's control code and issuing commands. Source: S1.
- VEC (vector core): the RISC-V vector core of a PE, RVV with 512-bit registers. Source: S1.

Sources (docs/machine.md lists them and every field below): S1 Coburn et al., ISCA 2025; S2 Meta AI blog
April 2024; S5 Hot Chips 2024; S6 "MTIA 300", ISCA 2026; S7 TritorX, arXiv 2512.10977; S8 "Triton for MTIA", IEEE Micro;
S9 pytorch/helion pull request #3116 (July 2026), quoting Triton-MTIA's CB ID limit.
Values marked ASSUMPTION have no public source and stay overridable via `MachineConfig.replace`.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

DEFAULT_CHIP = "mtia2i"
"""The MachineConfig preset a kernel compiles for and runs on unless told otherwise (compile option
`machine`, `mtia-set-target{chip=...}`, `mtia-run --machine`)."""

PE_MAPPINGS = ("linear", "round_robin", "zigzag")
"""Strategies placing program ids on the PE grid (defined in `machine/placement.py`, recorded by the
`mtia-pe-mapping` pass, chosen by the compile option `pe_mapping` or `mtia-run --mapping`)."""

TIMELINES = ("full", "totals")
"""What a launch keeps of its schedule (the option `timeline`, `machine.run.run_kernel`'s `timeline`): "full"
every command's cycles (command spans, Perfetto traces, plots); "totals" only the report's totals and
per-line costs, in memory that follows the programs in flight rather than the launch's commands."""

DEFAULT_PE_MAPPING = "zigzag"
"""The compile default of `pe_mapping`: it balances programs whose work grows with the program id (causal
attention) and keeps consecutive programs on the chip at the same time (LLC reuse), see
benchmarks/optimizations.py."""

GLOBAL_PLACEMENTS = ("dram", "sram", "llc")
"""Where kernel tensors live: DRAM (no cache), SRAM scratch, or DRAM behind the SRAM used as LLC."""


@dataclass(frozen=True, kw_only=True)
class MachineConfig:
    """Hardware description of one accelerator; MTIA-2i by default.

    Units: every field name ends in its unit; per PE unless the name or comment says chip.
    Example: MachineConfig.preset("mtia2i").replace(global_placement="sram")
    """

    PRESET_NAMES: ClassVar[tuple[str, ...]] = (DEFAULT_CHIP, "small_test")

    # ---- which element types each engine takes (facts of the units, not tunable: class constants) ----
    DPE_INT8_RATE_DTYPES: ClassVar[frozenset[str]] = frozenset({"i8", "u8", "f8e4m3", "f8e5m2", "f8"})
    """DPE inputs at the INT8/FP8 MAC rate. Source: S1 (INT8 and FP8 peaks)."""
    DPE_16BIT_RATE_DTYPES: ClassVar[frozenset[str]] = frozenset({"bf16", "f16", "f32", "tf32"})
    """DPE inputs at the BF16/FP16 MAC rate; fp32 runs as tf32 or as BF16 passes (`dpe_fp32_ieee_passes`),
    since the DPE takes no FP32 inputs. Source: S1."""
    SE_DTYPES: ClassVar[frozenset[str]] = frozenset({"i1", "i8", "i16", "i32", "f16", "bf16", "f32"})
    """Element types the SE computes on (others, f64 and i64, go to the RISC-V vector core). Source: S1, S6."""
    TRITON_FP8_DTYPES: ClassVar[tuple[str, ...]] = ("fp8e5", "fp8e4nv", "fp8e4b15", "fp8e4b8", "fp8e5b16")
    """The fp8 formats (Triton names) kernels may use: Triton refuses the others (`supported_fp8_dtypes` of
    the compile options). fp8 values are bytes that the lowering converts where used (`fp8-emulation`)."""

    name: str = DEFAULT_CHIP

    # ---- chip ----
    pe_rows: int = 8  # source: S1 spec table (8 x 8 PE grid)
    pe_cols: int = 8  # source: S1 spec table
    clock_hz: float = 1.35e9  # source: S1 spec table (1.35 GHz)
    kernel_launch_cycles: int = 1350  # source: S1 (< 1 us); ASSUMPTION: the 1 us upper bound, reported
    # separately and not included in a kernel's simulated cycles
    host_link_bytes_per_s: float = 32e9  # source: S2 (host connection PCIe Gen5 x8) (M) 32 GT/s x 8 lanes
    # = 32 GB/s each direction (128b/130b coding not subtracted)
    host_link_latency_cycles: int = 1350  # ASSUMPTION: one transfer over the host link with its completion
    # signal, about 1 us (PCIe round trips are 0.5-1 us; not public for MTIA); a host library call in the
    # middle of a model pays it twice (inputs to the host, outputs back): runtime/inductor_host_calls.py
    gemm_bf16_peak_flops_per_s: float = 177e12  # source: S1 spec table (dense BF16/FP16)
    gemm_int8_peak_ops_per_s: float = 354e12  # source: S1 spec table (dense INT8)

    # ---- DPE ----
    dpe_bf16_macs_per_cycle: int = 1024  # source: S1 (M) 177e12 / (2 * 64 PEs * 1.35e9) = 1024
    dpe_int8_macs_per_cycle: int = 2048  # source: S1 (M) 354e12 / (2 * 64 PEs * 1.35e9) = 2048
    dpe_tile_cycles: int = 32  # ASSUMPTION: one tile command = [32 x 32 B] x [32 B x 32] on two MAC
    # tiles in 32 cycles, which matches the peak exactly
    dpe_fill_cycles: int = 32  # ASSUMPTION: pipeline fill latency of a DPE command (cached operand load)
    dpe_fp32_ieee_passes: int = 3  # ASSUMPTION: no FP32 inputs (S1); "ieee" fp32 dot = three BF16 passes

    # ---- SE ----
    se_elems_per_cycle: int = 32  # source: S1, S6 (32 elements/cycle; 5.5 TOP/s counts 2 ops per FMA)
    se_alu_latency_cycles: int = 4  # ASSUMPTION: ALU pipeline depth
    se_lut_latency_cycles: int = 10  # ASSUMPTION: LUT functions (exp, rsqrt, ...) at full rate, ~10 cycles

    # ---- VEC (RISC-V vector core) ----
    vec_register_bits: int = 512  # source: S1 (RVV, 512-bit registers)
    vec_int8_elems_per_cycle: int = 64  # source: S1 (M) 5.5 TOP/s INT8 / 64 PEs / 1.35 GHz
    vec_fp16_elems_per_cycle: int = 32  # source: S1 (M) 2.8 TOP/s FP16
    vec_fp32_elems_per_cycle: int = 16  # source: S1 (M) 1.4 TOP/s BF16/FP32
    vec_bf16_elems_per_cycle: int = 16  # source: S1 (M) 1.4 TOP/s BF16/FP32
    vec_latency_cycles: int = 4  # ASSUMPTION: vector pipeline depth

    # ---- RE ----
    re_elems_per_cycle: int = 32  # ASSUMPTION: not public; matches the SE so the DPE->RE->SE chain is even
    re_latency_cycles: int = 4  # ASSUMPTION
    re_accumulator_bytes: int = 16 * 1024  # ASSUMPTION: 16 KB accumulators
    re_link_bytes_per_cycle: int = 128  # ASSUMPTION: neighbour link width
    re_hop_cycles: int = 8  # ASSUMPTION: latency per PE hop of the reduction network

    # ---- MLU ----
    mlu_elems_per_cycle: int = 32  # ASSUMPTION: not public; one 32-element row per cycle
    mlu_latency_cycles: int = 8  # ASSUMPTION

    # ---- LS, CP, CBs ----
    ls_bytes: int = 384 * 1024  # source: S1, S6 (384 KB per PE)
    ls_bytes_per_cycle: int = 740  # source: S1, S6 (M) 1.0 TB/s / 1.35 GHz, read+write
    cb_ids: int = 14  # source: S9 (Triton-MTIA: "maximum number [of CB IDs] available on the target
    # architecture (14)"; the MTIA generation is not named): CBs alive at once per kernel on a PE
    cb_align_bytes: int = 32  # source: S7 (32-byte alignment); ASSUMPTION: a CB starts on that boundary of LS
    cp_check_cycles: int = 1  # ASSUMPTION: one cycle per CB dependency check
    cp_queue_depth_commands: int = 16  # ASSUMPTION: commands queued per engine before the scalar core stalls
    pe_programs_in_flight: int = 2  # ASSUMPTION: the CP holds the CB state of the running program and the
    # next (S1 gives the CP hardware producer/consumer tracking of CBs, not for how many programs), so a PE issues
    # its next program while the previous one drains, when both programs' CBs fit LS and the CB IDs
    # both use (mtia-cb-allocate's, shared by CBs never alive together) fit `cb_ids`;
    # 1: one program after another

    # ---- scalar core ----
    scalar_registers: int = 32  # source: RISC-V unprivileged ISA, RV64I (x0-x31); the core is RISC-V per S1
    scalar_cycles_per_instr: int = 1  # ASSUMPTION: in-order, 1 instruction/cycle
    scalar_issue_cycles: int = 4  # ASSUMPTION: cycles to issue one engine command
    scalar_outstanding_loads: int = 8  # ASSUMPTION: loads in flight for scalar gathers/scatters
    scalar_ls_latency_cycles: int = 4  # ASSUMPTION: scalar-core load of one element from LS (cb_read)

    # ---- DMA / FI ----
    dma_read_bytes_per_cycle: int = 64  # ASSUMPTION: per PE, global -> LS
    dma_write_bytes_per_cycle: int = 64  # ASSUMPTION: per PE, LS -> global
    dma_granule_bytes: int = 32  # source: S7 (32-byte alignment); each contiguous run rounds up to it
    dma_issue_cycles: int = 50  # ASSUMPTION: cycles to issue one DMA command
    dma_descriptor_cycles: int = 1  # ASSUMPTION: descriptor generation per contiguous run; an indexed DMA
    # (mtia.dma_gather_rows, S1's indexed mode for embedding rows) pays it once per gathered row, as a run
    dma_outstanding_commands: int = 16  # ASSUMPTION: DMA commands in flight per PE
    dma_max_rank: int = 4  # ASSUMPTION (not public): dimensions of one DMA command's box (a descriptor's
    # strides and bounds); 4, the descriptor of the runtime API (MTIA_MAX_RANK of backend/runtime/mtia_runtime.h).
    # The memory-access analysis merges a larger box's contiguous dimensions to fit (memory_access.py `fit_rank`)
    dma_queues: int = 2  # ASSUMPTION: command queues of a PE's DMA engine. 2: stores (the write port's
    # commands) have their own queue, so a load is not held behind an earlier store still waiting for its
    # data; one issue pipeline and one in-flight limit for both (not public).
    # 1: loads and stores start in issue order

    # ---- global memory ----
    sram_bytes: int = 256 * 1024 * 1024  # source: S1 (256 MB on-chip SRAM)
    sram_unit_bytes: int = 32 * 1024 * 1024  # source: S1 (partitioned in 32 MB units)
    llc_bytes: int = 256 * 1024 * 1024  # ASSUMPTION: all units configured as cache when placement="llc"
    sram_bytes_per_cycle: float = 2.7e12 / 1.35e9  # source: S1 (M) 2.7 TB/s read+write, chip
    sram_latency_cycles: int = 80  # ASSUMPTION: plus NoC hops
    dram_bytes: int = 128 * 1024**3  # source: S1 (128 GB LPDDR5)
    dram_channels: int = 16  # source: S5 (LPDDR5 organisation)
    dram_peak_bytes_per_cycle: float = 204.8e9 / 1.35e9  # source: S1 (M) 204.8 GB/s read or write, chip
    dram_ecc_efficiency: float = 0.9  # ASSUMPTION: S1 says ECC costs 10-15 %; sustained = 0.9 x peak
    dram_latency_cycles: int = 250  # ASSUMPTION: plus NoC hops
    noc_hop_cycles: int = 2  # ASSUMPTION: per mesh hop; memory ports sit at the west/east die edges (S1)
    global_placement: str = "llc"  # ASSUMPTION: tensors live in DRAM behind the SRAM LLC; first touch of
    # a byte comes from DRAM, re-reads hit SRAM, stores write through to DRAM (behind the PE: llc_write_behind)
    llc_write_behind: int = 1  # ASSUMPTION (LLC write policy not public): 1: a store under placement "llc"
    # ends once the SRAM LLC holds its bytes; the LLC writes them on to DRAM behind it, with the DRAM
    # bandwidth DMA reads leave (a memory controller serves reads first and drains writes from a buffer), and
    # the kernel ends when the last one reached DRAM; 0: the store waits for DRAM, sharing it with the reads

    def __post_init__(self) -> None:
        """Reject nonsense values; each error names the field."""
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.name == "name":
                if not isinstance(value, str) or not value:
                    raise ValueError("MachineConfig field 'name' must be a non-empty string")
            elif field.name == "global_placement":
                if value not in GLOBAL_PLACEMENTS:
                    raise ValueError(
                        f"MachineConfig field 'global_placement' must be one of {GLOBAL_PLACEMENTS}, got {value!r}"
                    )
            elif field.name == "dram_ecc_efficiency":
                if not isinstance(value, int | float) or not 0.0 < value <= 1.0:
                    raise ValueError(f"MachineConfig field 'dram_ecc_efficiency' must be in (0, 1], got {value!r}")
            else:
                _check_positive_number(field.name, value, field.type, allow_zero=field.name in _MAY_BE_ZERO)
        if self.dma_queues not in (1, 2):
            raise ValueError(f"MachineConfig field 'dma_queues' must be 1 or 2, got {self.dma_queues}")
        if self.llc_write_behind not in (0, 1):
            raise ValueError(f"MachineConfig field 'llc_write_behind' must be 0 or 1, got {self.llc_write_behind}")
        if self.pe_programs_in_flight not in (1, 2):
            raise ValueError(
                f"MachineConfig field 'pe_programs_in_flight' must be 1 or 2, got {self.pe_programs_in_flight}"
            )
        if self.dma_granule_bytes & (self.dma_granule_bytes - 1):
            raise ValueError(
                f"MachineConfig field 'dma_granule_bytes' must be a power of two, got {self.dma_granule_bytes}"
            )
        if self.llc_bytes > self.sram_bytes:
            raise ValueError(
                f"MachineConfig field 'llc_bytes' ({self.llc_bytes}) exceeds sram_bytes ({self.sram_bytes})"
            )

    # ---- construction ----

    @classmethod
    def preset(cls, name: str) -> MachineConfig:
        """Return the named preset ("mtia2i" or "small_test").

        Raises: ValueError naming the known presets if `name` is not one.
        """
        key = name.lower().replace("-", "_")
        if key == "mtia2i":
            return MTIA2I
        if key == "small_test":
            return SMALL_TEST
        raise ValueError(f"unknown machine preset {name!r}; known presets: {', '.join(cls.PRESET_NAMES)}")

    def replace(self, **overrides: Any) -> MachineConfig:
        """Return a copy with `overrides` applied and validated.

        Raises: ValueError naming the field if it does not exist or its value is nonsense.
        """
        known = {f.name for f in dataclasses.fields(self)}
        for key in overrides:
            if key not in known:
                raise ValueError(f"MachineConfig has no field {key!r}")
        return dataclasses.replace(self, **overrides)

    def with_overrides(self, pairs: Mapping[str, str | int | float]) -> MachineConfig:
        """Return a copy with `pairs` applied, parsing string values to each field's type.

        Strings accept Python number syntax with `_` separators ("393_216", "1.35e9", "0x100") for
        numeric fields; an int field also takes a float string with an integral value ("1e3").
        Example: MTIA2I.with_overrides({"global_placement": "sram", "dram_latency_cycles": "300"})
        Raises: ValueError for an unknown field (listing close matches) or a value that does not parse
        (naming the expected type and unit) or is nonsense for the field.
        """
        return self.replace(**{key: self.parse_override(key, value) for key, value in pairs.items()})

    @classmethod
    def parse_override(cls, key: str, value: str | int | float) -> Any:
        """Return override `value` of field `key` parsed to the field's type, as `with_overrides` does;
        whether the value makes sense for a machine is checked only when a config is made.

        Raises: ValueError for an unknown field (listing close matches) or a value that does not parse.
        """
        fields = {f.name: f for f in dataclasses.fields(cls)}
        if key not in fields:
            close = difflib.get_close_matches(key, list(fields), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise ValueError(f"MachineConfig has no field {key!r}{hint}")
        return _parse_field_value(key, fields[key].type, value)

    def to_dict(self) -> dict[str, Any]:
        """Return every field as a plain dict (JSON-serialisable)."""
        return dataclasses.asdict(self)

    # ---- derived quantities ----

    @property
    def n_pes(self) -> int:
        """PEs on the chip."""
        return self.pe_rows * self.pe_cols

    @property
    def cycle_ns(self) -> float:
        """Duration of one cycle in nanoseconds."""
        return 1e9 / self.clock_hz

    def cycles_to_us(self, cycles: float) -> float:
        """Convert cycles to microseconds."""
        return cycles / self.clock_hz * 1e6

    @property
    def dram_bytes_per_cycle(self) -> float:
        """Sustained DRAM bandwidth of the chip (peak x ECC efficiency), bytes/cycle."""
        return self.dram_peak_bytes_per_cycle * self.dram_ecc_efficiency

    def level_bytes_per_cycle(self, level: str) -> float:
        """Chip bandwidth of a global memory level ("dram" or "sram"), bytes/cycle."""
        if level == "dram":
            return self.dram_bytes_per_cycle
        if level == "sram":
            return self.sram_bytes_per_cycle
        raise ValueError(f"unknown memory level {level!r}; expected 'dram' or 'sram'")

    def level_latency_cycles(self, level: str) -> int:
        """Access latency of a global memory level before NoC hops, cycles."""
        return self.dram_latency_cycles if level == "dram" else self.sram_latency_cycles

    def dpe_macs_per_cycle(self, dtype: str) -> int:
        """Peak DPE MACs per cycle per PE for input `dtype` (one pass).

        Raises: ValueError for a dtype the DPE does not take.
        """
        if dtype in self.DPE_INT8_RATE_DTYPES:
            return self.dpe_int8_macs_per_cycle
        if dtype in self.DPE_16BIT_RATE_DTYPES:
            return self.dpe_bf16_macs_per_cycle
        raise ValueError(f"the DPE takes no {dtype!r} inputs; expected one of bf16, f16, f32 (passes), i8, f8")

    def dpe_takes(self, dtype: str) -> bool:
        """Return whether the DPE takes `tl.dot` operands of element type `dtype` ("i8", "bf16", ...)."""
        return dtype in self.DPE_INT8_RATE_DTYPES or dtype in self.DPE_16BIT_RATE_DTYPES

    def se_takes(self, dtype: str) -> bool:
        """Return whether the SE computes on elements of type `dtype` ("f32", "i16", ...)."""
        return dtype in self.SE_DTYPES

    def vec_elems_per_cycle(self, dtype: str) -> int:
        """Vector-core elements per cycle per PE for `dtype` (512-bit RVV)."""
        bits = _dtype_bits(dtype)
        if bits <= 8:
            return self.vec_int8_elems_per_cycle
        if dtype == "f16" or (bits == 16 and dtype.startswith("i")):
            return self.vec_fp16_elems_per_cycle
        if dtype == "bf16":
            return self.vec_bf16_elems_per_cycle
        if bits == 64:
            return max(1, self.vec_fp32_elems_per_cycle // 2)
        return self.vec_fp32_elems_per_cycle

    @property
    def peak_dpe_bf16_flops_per_cycle(self) -> float:
        """Chip BF16 DPE peak, FLOP/cycle (2 per MAC)."""
        return 2.0 * self.dpe_bf16_macs_per_cycle * self.n_pes

    @property
    def peak_se_elems_per_cycle(self) -> int:
        """Chip SE peak, elements/cycle."""
        return self.se_elems_per_cycle * self.n_pes

    def roofline_balance_flops_per_byte(self, level: str) -> float:
        """BF16 DPE FLOP per byte of `level` ("dram", "sram", "ls") at which compute and memory balance."""
        if level == "ls":
            return 2.0 * self.dpe_bf16_macs_per_cycle / self.ls_bytes_per_cycle
        return self.peak_dpe_bf16_flops_per_cycle / self.level_bytes_per_cycle(level)

    def roofline_balance_se_elems_per_byte(self, level: str) -> float:
        """SE elements per byte of `level` at which the SE and memory balance."""
        if level == "ls":
            return self.se_elems_per_cycle / self.ls_bytes_per_cycle
        return self.peak_se_elems_per_cycle / self.level_bytes_per_cycle(level)

    def pe_coords(self, pe: int) -> tuple[int, int]:
        """(row, col) of PE number `pe` (row-major numbering)."""
        return divmod(pe, self.pe_cols)

    def noc_hops(self, pe: int) -> int:
        """Mesh hops from PE `pe` to the nearest memory port (west or east die edge)."""
        _, col = self.pe_coords(pe)
        return min(col, self.pe_cols - 1 - col) + 1


def _field_unit(name: str) -> str:
    """The unit a field's name ends in ("bytes", "cycles", "bytes per cycle", ...), or ''."""
    for suffix in ("_bytes_per_cycle", "_macs_per_cycle", "_elems_per_cycle", "_flops_per_s", "_ops_per_s",
                   "_bytes", "_cycles", "_hz", "_commands", "_passes", "_bits", "_instr"):  # fmt: skip
        if name.endswith(suffix):
            return suffix[1:].replace("_", " ")
    return ""


def _parse_field_value(name: str, annotation: object, value: str | int | float) -> Any:
    """Parse an override value for field `name` of type `annotation` ("int", "float" or "str")."""
    kind = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    if not isinstance(value, str) or kind == "str":
        return value
    text = value.strip()
    unit = _field_unit(name)
    expected = {"int": "an integer", "float": "a number"}.get(kind, kind) + (f" (unit: {unit})" if unit else "")
    try:
        if kind == "int":
            try:
                return int(text, 0)
            except ValueError:
                number = float(text)
                if not number.is_integer():
                    raise ValueError from None
                return int(number)
        if kind == "float":
            return float(text)
    except ValueError:
        raise ValueError(f"MachineConfig field {name!r} expects {expected}, got {value!r}") from None
    return value


def dtype_bytes(dtype: str) -> int:
    """Bytes of one element of `dtype` ("f32", "bf16", "i8", ...); at least 1."""
    return max(1, _dtype_bits(dtype) // 8)


def _dtype_bits(dtype: str) -> int:
    digits = "".join(ch for ch in dtype if ch.isdigit())
    if dtype.startswith("f8") or dtype in ("i1", "u8"):
        return 8
    return int(digits) if digits else 32


_MAY_BE_ZERO = frozenset(
    {
        "kernel_launch_cycles",
        "llc_write_behind",
        "dpe_fill_cycles",
        "se_alu_latency_cycles",
        "se_lut_latency_cycles",
        "vec_latency_cycles",
        "re_latency_cycles",
        "re_hop_cycles",
        "mlu_latency_cycles",
        "cp_check_cycles",
        "scalar_issue_cycles",
        "scalar_ls_latency_cycles",
        "dma_issue_cycles",
        "dma_descriptor_cycles",
        "sram_latency_cycles",
        "dram_latency_cycles",
        "noc_hop_cycles",
    }
)
"""Latencies and overheads: 0 is a meaningful what-if (the cost left out); throughputs and sizes stay > 0."""


def _check_positive_number(name: str, value: object, annotation: object, allow_zero: bool = False) -> None:
    wants_int = annotation in (int, "int")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"MachineConfig field {name!r} must be a number, got {value!r}")
    if wants_int and not isinstance(value, int):
        raise ValueError(f"MachineConfig field {name!r} must be an integer, got {value!r}")
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"MachineConfig field {name!r} must be {bound}, got {value!r}")


MTIA2I = MachineConfig()
"""MTIA-2i as described in docs/machine.md (the default chip)."""

SMALL_TEST = MachineConfig(
    name="small_test",
    pe_rows=2,  # ASSUMPTION: a 2 x 2 grid keeps tests small
    pe_cols=2,
    ls_bytes=64 * 1024,  # ASSUMPTION: small LS so tests reach the capacity limit quickly
    sram_bytes=32 * 1024 * 1024,
    llc_bytes=32 * 1024 * 1024,
)
"""A 2 x 2 PE chip with a 64 KiB LS, for fast tests; every other number as MTIA-2i."""


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
        if len(value) != 3 or not all(hasattr(v, "__index__") and not isinstance(v, bool) for v in value):
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


def derive_config(chip: str, overrides: Mapping[str, Any] | Iterable[tuple[str, Any]] = ()) -> MachineConfig:
    """Return the MachineConfig of preset `chip` with `overrides` (field -> value or value string) applied.

    The one derivation of a machine: the compile driver's options (`MtiaOptions.machine_config`), a
    module's attributes (`module_config`) and `mtia-run --machine/--set` all call it, so CB sizing, the LS
    check and the timing model see the same machine.
    Raises: ValueError for an unknown preset or field, or a value that does not parse or is nonsense.
    """
    config = MachineConfig.preset(chip)
    pairs = dict(overrides)
    return config.with_overrides(pairs) if pairs else config


def override_value(field: str, value: Any) -> Any:
    """The Python value of one `mtia.machine_overrides` entry (a string is parsed by `with_overrides`).

    Raises: ValueError naming the entry for an attribute that is not a string, integer, float or boolean.
    """
    from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, IntegerType, StringAttr

    if isinstance(value, StringAttr):
        return value.data
    if isinstance(value, IntegerAttr):
        number = cast(IntegerAttr[IntegerType | IndexType], value)
        if isinstance(number.type, IntegerType) and number.type.width.data == 1:
            return bool(number.value.data)
        return int(number.value.data)
    if isinstance(value, FloatAttr):
        return float(value.value.data)
    raise ValueError(
        f"mtia.machine_overrides entry {field} = {value}: expected a string, an integer, a float or a boolean, "
        f'e.g. {{{field} = "..."}}'
    )


def module_or_default_config(module: Any) -> MachineConfig:
    """Return `module_config(module)` if the module has an `mtia.target`, else the default chip's MachineConfig
    (`derive_config(DEFAULT_CHIP)`): for a pass or emitter run alone on a module no `mtia-set-target` has seen,
    as in FileCheck tests.

    Raises: ValueError for a bad `mtia.machine_overrides` (as `module_config`).
    """
    from mtia_xdsl.dialects.mtia import TARGET_ATTR, TargetAttr

    if isinstance(module.attributes.get(TARGET_ATTR), TargetAttr):
        return module_config(module)
    return derive_config(DEFAULT_CHIP)


def module_config(module: Any, overrides: Mapping[str, Any] | Iterable[tuple[str, Any]] = ()) -> MachineConfig:
    """Return the MachineConfig a module is compiled for and runs on: `derive_config` of its `mtia.target`
    chip with its `mtia.machine_overrides` (a dictionary of strings, integers, floats or booleans, e.g.
    `{cb_ids = 8, dram_latency_cycles = "300"}`), then `overrides` on top.

    Raises: ValueError if the module has no `mtia.target` (run mtia-set-target) or an override is bad.
    """
    from xdsl.dialects.builtin import DictionaryAttr

    from mtia_xdsl.dialects.mtia import MACHINE_OVERRIDES_ATTR, TARGET_ATTR, TargetAttr

    target = module.attributes.get(TARGET_ATTR)
    if not isinstance(target, TargetAttr):
        raise ValueError(
            f'the module has no {TARGET_ATTR} attribute (e.g. #mtia.target<"{DEFAULT_CHIP}">); '
            f"run mtia-set-target{{chip={DEFAULT_CHIP}}} first"
        )
    recorded = module.attributes.get(MACHINE_OVERRIDES_ATTR)
    pairs: dict[str, Any] = {}
    if isinstance(recorded, DictionaryAttr):
        pairs = {k: override_value(k, v) for k, v in recorded.data.items()}
    pairs.update(dict(overrides))
    return derive_config(target.chip.data, pairs)

"""MtiaOptions: the compile options of one kernel, as the pipeline and Triton's JIT, autotuner and compiler read them.

Triton treats the options object of a backend as opaque except for the fields it reads by name
(`triton/runtime/jit.py`, `triton/compiler/compiler.py`, `triton/language/semantic.py`); those fields
are present here with values that make sense for MTIA, next to our own (`machine`, `pe_mapping`).
"""

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from mtia_xdsl.machine.config import (
    DEFAULT_CHIP,
    DEFAULT_PE_MAPPING,
    PE_MAPPINGS,
    TIMELINES,
    MachineConfig,
    derive_config,
)


@dataclass(frozen=True)
class MtiaOptions:
    """Compile options of one MTIA kernel (frozen: they are part of Triton's cache key).

    Example: MtiaOptions(num_stages=3, machine="mtia2i", machine_overrides=(("dram_ecc_efficiency", 0.85),))
    """

    num_warps: int = 4
    """Accepted for source compatibility; a PE runs one program at a time, so it changes nothing."""
    num_ctas: int = 1
    num_stages: int = 3
    """Software pipelining depth, as upstream's `num_stages`: a load inside a loop may run up to
    `num_stages - 1` iterations ahead of its use, through a CB of up to `num_stages` slots
    (`mtia-software-pipeline`, `mtia-cb-sizing`). 1 turns software pipelining off."""
    cb_sizing: str = "greedy"
    """How `mtia-cb-sizing` picks CB depths: "greedy" (the smallest depth per CB that keeps the pipeline
    full within LS) or "uniform" (every CB `num_stages` slots, as uniform multi-buffering)."""
    effective_shapes: bool = True
    """`mtia-effective-shape`: masked tails shrink DMA and compute to the valid region."""
    vector_codegen: bool = True
    """`mtia-vector-codegen`: vector-scalar forms and fusion of consecutive vector loops."""
    rematerialize_constants: bool = False
    """`mtia-rematerialize-constants`: fill a constant tile (a tl.dot's zero accumulator, a loop's initial
    value) right before each op reading it instead of holding one CB for the whole kernel. Off by default
    (each reader then costs a fill command); the fitting driver turns it on when the CBs do not fit."""
    rematerialize_index_tiles: bool = False
    """`mtia-rematerialize-index-tiles`: compute a tile made from indices alone (an Inductor kernel's `x0 =
    xindex % 3`, its masks) again right before each op reading it instead of holding one CB from its first
    computation to its last reader. Off by default (each reader recomputes the chain); the fitting driver turns
    it on when a kernel short of CB IDs does not fit with constant tiles rematerialized."""
    make_fit: bool = True
    """When the kernel's CBs do not fit a PE (CB IDs or LS), lower it again with fewer pipeline slots, fusion,
    constant rematerialization and sub-tiling until it fits (`mtia_xdsl/fit.py`); False refuses it as written."""
    sub_block: int | None = None
    """Automatic sub-tiling (`mtia-sub-tile`, see mtia_xdsl/fit.py): None lets the compiler split the program's
    row-parallel block dimension into the largest sub-tiles that fit when the kernel's CBs do not fit as
    written; 0 never splits; N > 0 always splits into sub-tiles of N rows (a power of two)."""
    warp_size: int = 1
    """One 'thread' per program: read by Triton's CompiledKernel resource check."""
    maxnreg: int | None = None
    """CUDA's register cap: accepted and ignored with a warning (see OTHER_BACKEND_OPTIONS)."""
    matrix_instr_nonkdim: int | None = None
    waves_per_eu: int | None = None
    kpack: int | None = None
    schedule_hint: str | None = None
    allow_flush_denorm: bool | None = None
    wgp_cu_mode: str | None = None
    ptx_version: int | None = None
    ptx_options: str | None = None
    enable_reflect_ftz: bool | None = None
    min_shared_mem: int | None = None
    clc: bool | None = None
    debug: bool = False
    sanitize_overflow: bool = True
    """As upstream: with `debug` (what `TRITON_DEBUG=1` sets), i32 add/sub/mul are checked for wrapping
    and a wrap is reported at the kernel line; without `debug` it changes nothing."""
    machine: str = DEFAULT_CHIP
    """MachineConfig preset the kernel is compiled for and run on."""
    machine_overrides: tuple[tuple[str, Any], ...] = ()
    """MachineConfig fields changed for the run, as sorted (field, value) pairs; a dict is accepted by
    `from_dict`. Values may be numbers or "field=value"-style strings of the field's type. The compiler
    passes see them too (module attribute `mtia.machine_overrides`): CB sizing, the LS budget and the
    cost models are those of the machine the kernel runs on."""
    pe_mapping: str = DEFAULT_PE_MAPPING
    """Strategy placing program ids on the PE grid (`mtia-pe-mapping`): "linear", "round_robin" or "zigzag".
    Zigzag is the default: it balances programs whose work grows with the program id (causal attention) and
    keeps consecutive programs on the chip at the same time (LLC reuse), see benchmarks/optimizations.py."""
    pe_subgrid: tuple[int, ...] = ()
    """The rectangle of PEs the kernel is launched on, `(base_pe, tile_width, tile_height)` as MTIA's launch
    parameters (S10): `tile_height` rows of `tile_width` PEs from the chip's row-major PE `base_pe`; empty:
    the whole chip. The PE mapping places programs inside it, and `mtl.get_pe_id` counts within it.
    Example: `kernel[grid](..., pe_subgrid=(18, 4, 2))` (rows 2-3, columns 2-5 of the 8 x 8 grid)."""
    executor: str | None = None
    """How a launch runs the compiled program: "model" (the machine model), "cpp", "llvm" or "riscv" (code
    emitted from the same program, timed by the same model; `mtia_xdsl/backend/executor.py`). None: the
    environment variable `MTIA_EXECUTOR` at launch, else "model".
    Example: `kernel[grid](..., executor="cpp")`, `mtia_xdsl.compile(fn, options={"executor": "llvm"})`."""
    timeline: str = "full"
    """What a launch keeps of its schedule (`machine.config.TIMELINES`): "full" every command's cycles (the
    Perfetto trace of `mtia_xdsl.last_run()`, plots); "totals" only the report, in memory that follows the
    programs in flight. Example: `kernel[grid](..., timeline="totals")`."""
    backend_name: str = "cpu"
    arch: str = DEFAULT_CHIP
    enable_fp_fusion: bool = True
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False
    extern_libs: tuple[tuple[str, str], ...] | None = None
    supported_fp8_dtypes: tuple[str, ...] = MachineConfig.TRITON_FP8_DTYPES
    deprecated_fp8_dot_operand_dtypes: tuple[str, ...] = ()
    default_dot_input_precision: str = "ieee"
    """Used only when "tf32" is not allowed: like upstream Triton, an fp32 `tl.dot` without
    `input_precision` is "tf32" (one DPE pass, tf32-rounded inputs) because "tf32" is allowed. Pass
    `input_precision="ieee"` for exact fp32 (three BF16 passes on the DPE, see docs/machine.md)."""
    allowed_dot_input_precisions: tuple[str, ...] = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")
    max_num_imprecise_acc_default: int = 0
    instrumentation_mode: str = ""
    fpsan_homomorphic_casts: bool = False
    ir_override: str | None = None

    def __post_init__(self) -> None:
        """Normalise `machine_overrides` to sorted pairs and check them against MachineConfig.

        Raises: ValueError naming the preset or field (unknown field, value of the wrong type or range),
        a `pe_subgrid` that is not three integers or leaves the chip, a `num_warps` that is not a power of
        two (as upstream's backends refuse it), or an optimization option out of its range (`num_stages`
        >= 1, `cb_sizing`, `pe_mapping`, `executor`, booleans).
        """
        _ignore_other_backend_options(self)
        if not isinstance(self.num_warps, int) or self.num_warps < 1 or self.num_warps & (self.num_warps - 1):
            raise ValueError(f"num_warps must be a power of two, got {self.num_warps!r}")
        _check_optimization_options(self)
        pairs = _override_pairs(self.machine_overrides)
        object.__setattr__(self, "machine_overrides", pairs)
        if pairs:
            try:
                _ = self.machine_config
            except ValueError as e:
                raise ValueError(f"machine_overrides: {e}") from None
        if self.pe_subgrid:
            from mtia_xdsl.machine.placement import PeSubgrid

            given: object = self.pe_subgrid
            if isinstance(given, str | bytes):  # tuple("0,2,2") would be its characters
                raise ValueError(f"pe_subgrid must be three integers (base_pe, tile_width, tile_height), got {given!r}")
            object.__setattr__(self, "pe_subgrid", tuple(self.pe_subgrid))
            PeSubgrid.parse(self.pe_subgrid, self.machine_config)

    @property
    def machine_config(self) -> "MachineConfig":
        """Return the MachineConfig the machine model runs with: the `machine` preset plus the overrides.

        Raises: ValueError for an unknown preset or override field, or a bad override value.
        """
        return derive_config(self.machine, self.machine_overrides)

    @classmethod
    def from_dict(cls, opts: dict[str, Any], strict: bool = False) -> "MtiaOptions":
        """Build options from a dict, keeping only known fields whose value is not None.

        Lists become tuples (JSON round trips turn tuples into lists), so the result stays hashable.
        Raises: TypeError naming the unknown keys when `strict` (user-given options); Triton's own option
        dicts carry extra keys and are read with `strict=False`.
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(opts) - known)
        if strict and unknown:
            raise TypeError(f"unknown option(s) {unknown}; MtiaOptions has: {', '.join(sorted(known))}")
        kwargs = {
            k: tuple(map(_tuple_if_list, v)) if isinstance(v, list) and k != "machine_overrides" else v
            for k, v in opts.items()
            if k in known and v is not None
        }
        return cls(**kwargs)

    def hash(self) -> str:
        """Return a stable digest of every field (Triton puts it in the kernel cache key)."""
        key = "_".join(f"{f.name}-{getattr(self, f.name)}" for f in fields(self))
        return hashlib.sha256(key.encode("utf-8")).hexdigest()


OTHER_BACKEND_OPTIONS = (
    "maxnreg",
    "matrix_instr_nonkdim",
    "waves_per_eu",
    "kpack",
    "schedule_hint",
    "allow_flush_denorm",
    "wgp_cu_mode",
    "ptx_version",
    "ptx_options",
    "enable_reflect_ftz",
    "min_shared_mem",
    "clc",
)
"""Options of Triton's CUDA and AMD backends that kernels and autotune configs carry (tutorial 03's AMD
configs set `matrix_instr_nonkdim`, `waves_per_eu` and `kpack`). They have no MTIA meaning: a given
value is ignored (reset to None, so it does not split Triton's cache) with one warning per option name
per process."""

_WARNED: set[str] = set()


def _ignore_other_backend_options(o: MtiaOptions) -> None:
    import warnings

    for name in OTHER_BACKEND_OPTIONS:
        value = getattr(o, name)
        if value is None:
            continue
        object.__setattr__(o, name, None)
        if name not in _WARNED:
            _WARNED.add(name)
            warnings.warn(
                f"mtia_xdsl ignores the option {name}={value!r} of another Triton backend (it has no MTIA meaning)",
                UserWarning,
                stacklevel=4,
            )


CB_SIZINGS = ("greedy", "uniform")


def _check_optimization_options(o: MtiaOptions) -> None:
    """Raise ValueError naming an optimization option whose value the passes would refuse."""
    if isinstance(o.num_stages, bool) or not isinstance(o.num_stages, int) or o.num_stages < 1:
        raise ValueError(f"num_stages must be an integer >= 1 (1 turns software pipelining off), got {o.num_stages!r}")
    if o.timeline not in TIMELINES:
        raise ValueError(f"timeline must be one of {', '.join(map(repr, TIMELINES))}, got {o.timeline!r}")
    if o.machine not in MachineConfig.PRESET_NAMES:
        raise ValueError(
            f"machine must be one of {', '.join(map(repr, MachineConfig.PRESET_NAMES))}, got {o.machine!r}"
        )
    if o.cb_sizing not in CB_SIZINGS:
        raise ValueError(f"cb_sizing must be one of {', '.join(map(repr, CB_SIZINGS))}, got {o.cb_sizing!r}")
    if o.pe_mapping not in PE_MAPPINGS:
        raise ValueError(f"pe_mapping must be one of {', '.join(map(repr, PE_MAPPINGS))}, got {o.pe_mapping!r}")
    sb = o.sub_block
    if sb is not None and (isinstance(sb, bool) or not isinstance(sb, int) or sb < 0 or sb & (sb - 1)):
        raise ValueError(f"sub_block must be None (automatic), 0 (off) or a power of two, got {sb!r}")
    if o.executor is not None:
        from mtia_xdsl.backend.executor import check_name

        object.__setattr__(o, "executor", check_name(o.executor))
    flags = ("effective_shapes", "vector_codegen", "rematerialize_constants", "rematerialize_index_tiles", "make_fit")
    for name in flags:
        if not isinstance(getattr(o, name), bool):
            raise ValueError(f"{name} must be True or False, got {getattr(o, name)!r}")


def _override_pairs(value: Any) -> tuple[tuple[str, Any], ...]:
    """Return `value` (a mapping or (field, value) pairs) as pairs sorted by field name.

    Raises: TypeError if it is neither.
    """
    if value is None:
        return ()
    items = value.items() if isinstance(value, Mapping) else value
    try:
        pairs = [(str(k), v) for k, v in items]
    except (TypeError, ValueError):
        raise TypeError(f"machine_overrides must be a dict of MachineConfig field -> value, got {value!r}") from None
    return tuple(sorted(pairs))


def _tuple_if_list(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value

"""MtiaOptions: the compile options of one kernel, as Triton's JIT, autotuner and compiler read them.

Triton treats the options object of a backend as opaque except for the fields it reads by name
(`triton/runtime/jit.py`, `triton/compiler/compiler.py`, `triton/language/semantic.py`); those fields
are present here with values that make sense for MTIA, next to our own (`machine`, `pe_mapping`).
"""

import hashlib
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class MtiaOptions:
    """Compile options of one MTIA kernel (frozen: they are part of Triton's cache key).

    Example: MtiaOptions(num_stages=3, machine="mtia2i")
    """

    num_warps: int = 4
    """Accepted for source compatibility; a PE runs one program at a time, so it changes nothing."""
    num_ctas: int = 1
    num_stages: int = 2
    """Circular-buffer depth the software pipeliner will aim for; no effect until pipelining lands."""
    warp_size: int = 1
    """One 'thread' per program: read by Triton's CompiledKernel resource check."""
    maxnreg: int | None = None
    debug: bool = False
    sanitize_overflow: bool = False
    machine: str = "mtia2i"
    """MachineConfig preset the kernel is compiled for and run on."""
    pe_mapping: str = "linear"
    """Strategy placing program ids on the PE grid."""
    backend_name: str = "cpu"
    arch: str = "mtia2i"
    enable_fp_fusion: bool = True
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False
    extern_libs: tuple[tuple[str, str], ...] | None = None
    supported_fp8_dtypes: tuple[str, ...] = ("fp8e4b15", "fp8e4nv", "fp8e5")
    deprecated_fp8_dot_operand_dtypes: tuple[str, ...] = ()
    default_dot_input_precision: str = "ieee"
    """Used only when "tf32" is not allowed: like upstream Triton, an fp32 `tl.dot` without
    `input_precision` is "tf32" (one DPE pass, tf32-rounded inputs) because "tf32" is allowed. Pass
    `input_precision="ieee"` for exact fp32 (three BF16 passes on the DPE, see MACHINE.md)."""
    allowed_dot_input_precisions: tuple[str, ...] = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")
    max_num_imprecise_acc_default: int = 0
    instrumentation_mode: str = ""
    fpsan_homomorphic_casts: bool = False
    ir_override: str | None = None

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
            k: tuple(map(_tuple_if_list, v)) if isinstance(v, list) else v
            for k, v in opts.items()
            if k in known and v is not None
        }
        return cls(**kwargs)

    def hash(self) -> str:
        """Return a stable digest of every field (Triton puts it in the kernel cache key)."""
        key = "_".join(f"{f.name}-{getattr(self, f.name)}" for f in fields(self))
        return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _tuple_if_list(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value

"""The default pipeline from the tt dialect to the buffer-level mtia program, as one pass-pipeline string.

`mtia-opt -p "$(python -c 'import mtia_xdsl.pipeline as p; print(p.pipeline_for())')"` replays what
the compile driver does with the default options; `default_pipeline()` is the lowering alone.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.machine.config import DEFAULT_CHIP
from mtia_xdsl.utils.heap import old_objects_frozen
from mtia_xdsl.utils.locations import fill_unknown_locations

DEFAULT_PIPELINE = ",".join(
    [
        "tt-inline",
        "tt-lift-early-returns",
        "tt-rewrite-tensor-descriptor-to-pointer",
        "mtia-set-target{{chip={chip}}}",
        "convert-tt-to-mtia",
        "canonicalize",
        "cse",
        "mtia-cb-bufferize",
    ]
)


def default_pipeline(chip: str = DEFAULT_CHIP) -> str:
    """Return the lowering pipeline for `chip` (a MachineConfig preset name), without the optimizations."""
    return DEFAULT_PIPELINE.format(chip=chip)


TT_PREFIX = ("tt-inline", "tt-lift-early-returns", "tt-rewrite-tensor-descriptor-to-pointer")
"""The tt-level steps before any target decision; mtia-sub-tile runs right after them."""


def pipeline_for(options: Any = None, sub_block: int | None = None, sub_tile_form: str = "unrolled") -> str:
    """Return the pass pipeline the compile driver runs for `options` (an MtiaOptions or a dict of its
    fields, as given to `mtia_xdsl.compile`; None: the defaults).

    It is the lowering pipeline plus the optimizations the options turn on:
    `mtia-sub-tile{sub-block=N form=F}` on the tt program when `sub_block` (or the option of that name) is
    N > 0 (F = `sub_tile_form`, "unrolled" or "loop", chosen by the fitting driver),
    `mtia-vector-codegen`, `mtia-effective-shape`, `mtia-rematerialize-constants` and
    `mtia-rematerialize-index-tiles` on the tensor-level
    program (before bufferizing),
    `mtia-software-pipeline{num-stages=N}`, `mtia-cb-sizing{strategy=S max-depth=N}` and
    `mtia-cb-allocate` (CB IDs and LS offsets) on the buffer-level program, and `mtia-pe-mapping{strategy=M}`
    (with `subgrid=B,W,H` for a `pe_subgrid`) last.
    Raises: TypeError for an unknown option, ValueError for a bad option value.
    Example: mtia-opt k.py -p "$(python -c 'import mtia_xdsl.pipeline as p; print(p.pipeline_for())')"
    """
    from mtia_xdsl.options import MtiaOptions

    if isinstance(options, dict):
        options = MtiaOptions.from_dict(options, strict=True)
    o = options if options is not None else MtiaOptions()
    steps = default_pipeline(o.machine).split(",")
    sub = o.sub_block if sub_block is None else sub_block
    if sub:
        form = "" if sub_tile_form == "unrolled" else f" form={sub_tile_form}"
        steps.insert(steps.index(TT_PREFIX[-1]) + 1, f"mtia-sub-tile{{sub-block={sub}{form}}}")
    tensor_level: list[str] = []
    if o.vector_codegen:
        tensor_level.append("mtia-vector-codegen")
    if o.effective_shapes:
        tensor_level.append("mtia-effective-shape")
    if o.rematerialize_constants:
        tensor_level.append("mtia-rematerialize-constants")
    if o.rematerialize_index_tiles:
        tensor_level.append("mtia-rematerialize-index-tiles")
    at = steps.index("mtia-cb-bufferize")
    steps[at:at] = tensor_level
    if o.num_stages > 1:
        steps.append(f"mtia-software-pipeline{{num-stages={o.num_stages}}}")
    steps.append(f"mtia-cb-sizing{{strategy={o.cb_sizing} max-depth={max(o.num_stages, 1)}}}")
    steps.append("mtia-cb-allocate")
    subgrid = f" subgrid={','.join(map(str, o.pe_subgrid))}" if o.pe_subgrid else ""
    steps.append(f"mtia-pe-mapping{{strategy={o.pe_mapping}{subgrid}}}")
    return ",".join(steps)


def tt_prefix(module: ModuleOp, options: Any = None) -> None:
    """Run the tt-level steps (TT_PREFIX) on `module` in place, as the start of `lower` does."""
    from xdsl.transforms import get_all_passes as xdsl_passes

    from mtia_xdsl.dialects import make_context
    from mtia_xdsl.transforms import get_all_passes

    available = {**xdsl_passes(), **get_all_passes()}
    PassPipeline.parse_spec(available, ",".join(TT_PREFIX)).apply(make_context(), module)


def lower(module: ModuleOp, options: Any = None, original: ModuleOp | None = None) -> ModuleOp:
    """Lower a tt module in place to the buffer-level mtia program and return it.

    A kernel whose CBs do not fit (LS bytes or CB IDs) is lowered again with fewer pipeline slots, fusion,
    then automatic sub-tiling (`mtia_xdsl.fit`); the module attribute `mtia.fit` says what was applied.

    `options` (an MtiaOptions or a dict of its fields) chooses the optimizations (`pipeline_for`); its
    `machine_overrides` become the module attribute `mtia.machine_overrides`, so the LS budget and the
    cost models are those of the machine the kernel runs on. `original`: an unmodified copy of `module`
    the caller keeps and does not change (its `.asm` text); fitting starts again from it instead of a copy
    of its own.
    Requires: helper calls inlined (the frontend does this). Raises: PassFailedException naming the
    kernel line where a construct cannot be lowered; LocalStorageOverflow (or the CB-ID refusal) with what
    was tried when nothing makes the kernel fit.
    """
    from mtia_xdsl.fit import lower_to_fit
    from mtia_xdsl.options import MtiaOptions

    if isinstance(options, dict):
        options = MtiaOptions.from_dict(options, strict=True)
    o = options if options is not None else MtiaOptions()
    with old_objects_frozen():  # collections during the lowering skip the process's older objects
        lower_to_fit(module, o, _lower_once, tt_prefix, original)
    return module


VERIFY_IR_ENV = "MTIA_VERIFY_IR"
"""Environment variable: "1" verifies the lowered module after every compile (the test suite sets it)."""


def verify_ir() -> bool:
    """Whether every compile verifies its lowered module: with `MTIA_VERIFY_IR=1` or the `debug` option.

    Off by default: the passes' contract is valid IR out, the test suite checks it on every kernel it
    compiles, and verifying was 7-10 % of a compile (benchmarks/compile_time.py)."""
    return os.environ.get(VERIFY_IR_ENV) == "1"


@functools.lru_cache(maxsize=64)
def _parsed(spec: str) -> PassPipeline:
    """The pipeline of pass-pipeline string `spec` (passes are frozen dataclasses without state, so one
    parse serves every compile with the same options: parsing was ~1 % of a compile)."""
    from xdsl.transforms import get_all_passes as xdsl_passes

    from mtia_xdsl.transforms import get_all_passes

    return PassPipeline.parse_spec({**xdsl_passes(), **get_all_passes()}, spec)


def _lower_once(module: ModuleOp, o: Any, sub_block: int, sub_tile_form: str = "unrolled") -> None:
    """Run pipeline_for(o, sub_block, sub_tile_form) on `module` in place."""
    from mtia_xdsl.dialects import make_context
    from mtia_xdsl.dialects.mtia import MACHINE_OVERRIDES_ATTR
    from mtia_xdsl.transforms.dce import canonicalize_with_region_dce
    from mtia_xdsl.transforms.errors import InternalCompilerError
    from mtia_xdsl.transforms.target import overrides_attr

    ctx = make_context()
    pipeline = _parsed(pipeline_for(o, sub_block, sub_tile_form))
    if o.machine_overrides:  # the passes size CBs and check LS for the machine the kernel will run on
        module.attributes[MACHINE_OVERRIDES_ATTR] = overrides_attr(o.machine_overrides)
    try:
        with canonicalize_with_region_dce():
            pipeline.apply(ctx, module)
        fill_unknown_locations(module)  # xDSL's canonicalize drops locations of the ops it folds
        if o.debug or verify_ir():
            module.verify()
    except PassFailedException:
        raise  # a located error about the kernel
    except Exception as e:  # the passes' contract is valid IR out: anything else is a compiler bug
        raise InternalCompilerError(
            f"internal compiler error while lowering ({type(e).__name__}: {e}); please report this kernel"
        ) from e

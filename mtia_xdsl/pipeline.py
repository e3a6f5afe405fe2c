"""The default pipeline from the tt dialect to the buffer-level mtia program, as one pass-pipeline string.

`mtia-opt -p "$(python -c 'import mtia_xdsl.pipeline as p; print(p.pipeline_for())')"` replays what
the compile driver does with the default options; `default_pipeline()` is the lowering alone.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import PassFailedException

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


def default_pipeline(chip: str = "mtia2i") -> str:
    """Return the lowering pipeline for `chip` (a MachineConfig preset name), without the optimizations."""
    return DEFAULT_PIPELINE.format(chip=chip)


def pipeline_for(options: Any = None) -> str:
    """Return the pass pipeline the compile driver runs for `options` (an MtiaOptions or a dict of its
    fields, as given to `mtia_xdsl.compile`; None: the defaults).

    It is the lowering pipeline plus the optimizations the options turn on:
    `mtia-vector-codegen` and `mtia-effective-shape` on the tensor-level program (before bufferizing),
    `mtia-software-pipeline{num-stages=N}`, `mtia-cb-sizing{strategy=S max-depth=N}` and
    `mtia-cb-allocate` (CB IDs and LS offsets) on the buffer-level program, and `mtia-pe-mapping{strategy=M}`
    (with `subgrid=B,W,H` for a `pe_subgrid`) last.
    Raises: TypeError for an unknown option, ValueError for a bad option value.
    Example: mtia-opt k.py -p "$(python -c 'import mtia_xdsl.pipeline as p; print(p.pipeline_for())')"
    """
    from mtia_xdsl.runtime.options import MtiaOptions

    if isinstance(options, dict):
        options = MtiaOptions.from_dict(options, strict=True)
    o = options if options is not None else MtiaOptions()
    steps = default_pipeline(o.machine).split(",")
    tensor_level: list[str] = []
    if o.vector_codegen:
        tensor_level.append("mtia-vector-codegen")
    if o.effective_shapes:
        tensor_level.append("mtia-effective-shape")
    at = steps.index("mtia-cb-bufferize")
    steps[at:at] = tensor_level
    if o.num_stages > 1:
        steps.append(f"mtia-software-pipeline{{num-stages={o.num_stages}}}")
    steps.append(f"mtia-cb-sizing{{strategy={o.cb_sizing} max-depth={max(o.num_stages, 1)}}}")
    steps.append("mtia-cb-allocate")
    subgrid = f" subgrid={','.join(map(str, o.pe_subgrid))}" if o.pe_subgrid else ""
    steps.append(f"mtia-pe-mapping{{strategy={o.pe_mapping}{subgrid}}}")
    return ",".join(steps)


def lower(module: ModuleOp, options: Any = None) -> ModuleOp:
    """Lower a tt module in place to the buffer-level mtia program and return it.

    `options` (an MtiaOptions or a dict of its fields) chooses the optimizations (`pipeline_for`); its
    `machine_overrides` become the module attribute `mtia.machine_overrides`, so the LS budget and the
    cost models are those of the machine the kernel runs on.
    Requires: helper calls inlined (the frontend does this). Raises: PassFailedException naming the
    kernel line where a construct cannot be lowered.
    """
    from xdsl.transforms import get_all_passes as xdsl_passes

    from mtia_xdsl.dialects import make_context
    from mtia_xdsl.runtime.options import MtiaOptions
    from mtia_xdsl.transforms import get_all_passes
    from mtia_xdsl.transforms.mtia_set_target import MACHINE_OVERRIDES, overrides_attr

    if isinstance(options, dict):
        options = MtiaOptions.from_dict(options, strict=True)
    o = options if options is not None else MtiaOptions()
    ctx = make_context()
    available = {**xdsl_passes(), **get_all_passes()}
    pipeline = PassPipeline.parse_spec(available, pipeline_for(o))
    if o.machine_overrides:  # the passes size CBs and check LS for the machine the kernel will run on
        module.attributes[MACHINE_OVERRIDES] = overrides_attr(o.machine_overrides)
    try:
        pipeline.apply(ctx, module)
        fill_unknown_locations(module)  # xDSL's canonicalize drops locations of the ops it folds
        module.verify()
    except PassFailedException:
        raise  # a located error about the kernel
    except Exception as e:  # the passes' contract is valid IR out: anything else is a compiler bug
        raise PassFailedException(
            f"internal compiler error while lowering ({type(e).__name__}: {e}); please report this kernel"
        ) from e
    return module

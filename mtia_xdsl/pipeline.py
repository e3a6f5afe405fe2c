"""The default pipeline from the tt dialect to the buffer-level mtia program, as one pass-pipeline string.

`mtia-opt -p "$(python -c 'import mtia_xdsl.pipeline as p; print(p.default_pipeline())')"` replays what
the compile driver does.
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
    """Return the default pass pipeline for `chip` (a MachineConfig preset name)."""
    return DEFAULT_PIPELINE.format(chip=chip)


def lower(module: ModuleOp, options: Any = None) -> ModuleOp:
    """Lower a tt module in place to the buffer-level mtia program and return it.

    Requires: helper calls inlined (the frontend does this). Raises: PassFailedException naming the
    kernel line where a construct cannot be lowered.
    """
    from xdsl.transforms import get_all_passes as xdsl_passes

    from mtia_xdsl.dialects import make_context
    from mtia_xdsl.runtime.options import MtiaOptions
    from mtia_xdsl.transforms import get_all_passes

    chip = (options if options is not None else MtiaOptions()).machine
    ctx = make_context()
    available = {**xdsl_passes(), **get_all_passes()}
    pipeline = PassPipeline.parse_spec(available, default_pipeline(chip))
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

"""Our passes and the default pipeline, for a caller's xDSL pass manager or `xdsl-opt`-style driver.

Public API (`__all__`):

- the registry: `get_all_passes` (ours, by MLIR-style name), `available_passes` (xDSL's and ours, the table
  `xdsl.passes.PassPipeline.parse_spec` takes), `register_passes` (into an `xDSLOptMain` subclass);
- the pipeline: `default_pipeline`, `pipeline_for`, `pipeline_steps` (the pass-pipeline text the compile
  driver runs, whole or as steps to splice a pass of one's own into), `parse_pipeline`, `run_pipeline`
  (any pipeline text on a module the caller owns) and `lower` (the compile driver: the pipeline for the
  options, made to fit a PE).

Every function works on the module in place; the caller keeps ownership. Passes read the chip from the
module attribute `mtia.target` (set by `mtia-set-target{chip=...}`, which the default pipeline runs before
`convert-tt-to-mtia`), never from a default hidden in code.
Example: run_pipeline(module, "tt-inline,mtia-set-target{chip=mtia2i},convert-tt-to-mtia")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline

from mtia_xdsl.pipeline import default_pipeline, pipeline_for

if TYPE_CHECKING:
    from xdsl.xdsl_opt_main import xDSLOptMain

    from mtia_xdsl.options import MtiaOptions

__all__ = [
    "available_passes",
    "default_pipeline",
    "get_all_passes",
    "lower",
    "parse_pipeline",
    "pipeline_for",
    "pipeline_steps",
    "register_passes",
    "run_pipeline",
]

PassFactories = Mapping[str, Callable[[], type[ModulePass]]]


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Return our passes by their MLIR-style name (`convert-tt-to-mtia`, `mtia-cb-bufferize`, ...).

    Each value is a lazy factory returning the pass class (xDSL's convention, `xdsl.transforms`), so the
    table costs no imports; the class's docstring says what it needs (`Requires:`) and raises.
    """
    from mtia_xdsl.transforms import get_all_passes as ours

    return ours()


def available_passes(extra: PassFactories | None = None) -> dict[str, Callable[[], type[ModulePass]]]:
    """Return xDSL's passes (`canonicalize`, `cse`, ...), ours, then `extra` (the caller's), by name.

    This is the table `PassPipeline.parse_spec(available_passes(), spec)` and xDSL's `PipelinePass` take;
    a name in `extra` replaces the same name before it.
    """
    from xdsl.transforms import get_all_passes as xdsl_passes

    return {**xdsl_passes(), **get_all_passes(), **dict(extra or {})}


def register_passes(main: xDSLOptMain) -> None:
    """Register our passes in an `xdsl-opt`-style driver (an `xDSLOptMain` subclass), for `-p NAME`.

    Call it from the driver's `register_all_passes`, after `super().register_all_passes()`.
    """
    for name, factory in get_all_passes().items():
        main.register_pass(name, factory)


def pipeline_steps(options: MtiaOptions | dict[str, Any] | None = None) -> list[str]:
    """Return the compile driver's pipeline for `options` as a list of pass specs (`name{opt=value}`).

    Splice a pass of your own in by name, e.g. before `convert-tt-to-mtia`:
    `steps.insert(steps.index("convert-tt-to-mtia"), "my-rewrite")`, then `",".join(steps)`.
    Raises: TypeError for an unknown option, ValueError for a bad option value (as `pipeline_for`).
    """
    steps: list[str] = []
    depth, start, text = 0, 0, pipeline_for(options)
    for i, ch in enumerate(text):  # split at the commas outside `{...}` (`subgrid=0,4,2` is one option)
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            steps.append(text[start:i])
            start = i + 1
    return [*steps, text[start:]]


def parse_pipeline(spec: str, extra: PassFactories | None = None) -> PassPipeline:
    """Parse pass-pipeline text over `available_passes(extra)`.

    Raises: ValueError naming an unknown pass (xDSL's "Unrecognized passes"), TypeError or ValueError for a
    pass option the pass does not have or of the wrong type.
    """
    return PassPipeline.parse_spec(available_passes(extra), spec)


def run_pipeline(
    module: ModuleOp,
    spec: str | None = None,
    *,
    options: MtiaOptions | dict[str, Any] | None = None,
    extra: PassFactories | None = None,
    ctx: Context | None = None,
    verify: bool = True,
) -> ModuleOp:
    """Run pass-pipeline text `spec` on `module` in place and return it (verified unless `verify=False`).

    `spec` None: `pipeline_for(options)`, the whole pipeline the compile driver runs, without its fitting
    (see `lower`). `extra`: the caller's passes, by name, usable in `spec`. `ctx`: the caller's context
    (it must hold every dialect the passes create; default `mtia_xdsl.dialects.make_context()`).
    Requires: a tt-level module runs the whole pipeline; a later step needs what its pass's `Requires:`
    says (e.g. `mtia-cb-bufferize` a tensor-level mtia module).
    Raises: PassFailedException naming the kernel line where a pass cannot proceed (e.g. CBs that do not
    fit a PE's LS: `mtia_xdsl.errors.LocalStorageOverflow`); VerifyException for invalid IR; ValueError or
    TypeError for bad pipeline text (as `parse_pipeline`).
    """
    from mtia_xdsl.dialects import make_context

    text = spec if spec is not None else pipeline_for(options)
    parse_pipeline(text, extra).apply(ctx if ctx is not None else make_context(), module)
    if verify:
        module.verify()
    return module


def lower(module: ModuleOp, options: MtiaOptions | dict[str, Any] | None = None) -> ModuleOp:
    """Lower a tt module in place to the buffer-level mtia program, as `mtia_xdsl.compile` does; return it.

    Runs `pipeline_for(options)`; a kernel whose CBs do not fit a PE (LS bytes, CB IDs) is lowered again with
    fewer pipeline slots, fusion, refilled constants and sub-tiling (module attribute `mtia.fit` says what).
    Raises: PassFailedException at the kernel line of a construct that cannot be lowered;
    `mtia_xdsl.errors.LocalStorageOverflow` / `CbIdOverflow` (PassFailedExceptions) when nothing fits;
    TypeError / ValueError for bad options.
    """
    from mtia_xdsl.pipeline import lower as lower_module

    return lower_module(module, options)

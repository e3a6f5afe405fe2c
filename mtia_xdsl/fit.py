"""Making a kernel fit a PE's CBs: what the compile driver tries before it refuses a kernel.

A kernel whose live circular buffers need more CB IDs (`MachineConfig.cb_ids`) or more local storage
(`MachineConfig.ls_bytes`) than a PE has is lowered again with, in order:

1. fewer pipeline slots: `num_stages=1` (mtia-cb-sizing already gives slots back within one lowering; this
   also drops the second slot software pipelining gives every streamed CB);
2. fusing chains of commands into one (`vector_codegen=True`, when the options had turned it off): a fused
   chain needs no CB between its commands;
3. rematerializing constant tiles (`mtia-rematerialize-constants`): a constant tile (a `tl.dot`'s zero
   accumulator, a loop's initial value, a `tl.arange` range) filled right before each reader instead of one
   CB for the whole kernel;
4. automatic sub-tiling (`mtia-sub-tile{sub-block=N form=F}`): the program's row-parallel block dimension split
   into sub-tiles, the largest N (BLOCK / 2, BLOCK / 4, ... down to `MIN_SUB_BLOCK`) that fits; at each N first
   "unrolled" (up to `MAX_UNROLLED_SUB_TILES` sub-tiles; operands without the rows, such as attention's K and V
   tiles, loaded once for all sub-tiles; costs CB IDs for the extra carried values), then "loop" (one loop over
   the sub-tiles: CB IDs as un-split, shared tiles inside a row loop loaded once per sub-tile).
5. when short of CB IDs, rematerializing index tiles (`mtia-rematerialize-index-tiles`): a tile computed from
   indices alone (an Inductor kernel's masks and `xindex % 3`) computed again right before each reader, with
   fusion, then with fused chains kept apart; last, so a kernel an earlier step fits is unchanged.

Each step starts again from the kernel as written (its own options plus the step's change), so the first
step that fits is the one applied; `mtia_xdsl.last_report().fit` lists what was tried and why, and the
module attribute `mtia.fit` carries the same lines. When no step fits, the kernel is refused with the
original error (kernel lines and CBs) followed by what each step left and what to change in the source.
A step the kernel refuses (a located PassFailedException) is noted and skipped; a compiler crash inside a
step surfaces as the InternalCompilerError it is, not as a resource refusal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.utils.clone import clone_op
from mtia_xdsl.utils.walk import ops_of

FIT = "mtia.fit"
"""Module attribute after a kernel was made to fit: the report's lines saying what was applied and why."""

MIN_SUB_BLOCK = 16
"""Smallest sub-tile the driver tries, rows: the DPE's smallest efficient M (one 16-row MAC tile pass, an
ASSUMPTION matching MachineConfig's 32 x 32 B DPE command at fp16)."""


MAX_UNROLLED_SUB_TILES = 4
"""Most sub-tiles the unrolled form is tried with: each copies the row work (the commands the scalar core
issues and the compile time grow with it); beyond, only the loop form is tried."""


def resource_errors() -> tuple[type[Exception], ...]:
    """The exceptions that mean "the CBs do not fit" (LS bytes or CB IDs), which fitting may cure."""
    from mtia_xdsl.transforms.errors import CbIdOverflow, LocalStorageOverflow

    return (LocalStorageOverflow, CbIdOverflow)


@dataclass(frozen=True)
class FitStep:
    """One way of lowering the kernel again."""

    what: str
    """What the report says was applied, e.g. "sub-tiling: 2 sub-tiles of 64 rows"."""
    options: Any
    """MtiaOptions to lower with."""
    sub_block: int = 0
    form: str = "unrolled"


UNFUSE_STEP = "keeping fused chains apart: vector_codegen=False"
"""How the fitting step that turns fusion off is named in the notes (`fit_steps`)."""


def _shortfall(e: Exception) -> str:
    """What a resource error says does not fit, in one line: needed against available."""
    if hasattr(e, "required_bytes"):
        return f"the CBs need {e.required_bytes:,} B of LS, a PE has {e.limit_bytes:,}"  # type: ignore[attr-defined]
    if hasattr(e, "required") and hasattr(e, "limit"):
        return f"{e.required} CBs are alive at once, the CP has {e.limit} CB IDs"  # type: ignore[attr-defined]
    return str(e).split("\n", 1)[0].split(": error: ", 1)[-1]


def sub_tile_plan_for(module: ModuleOp, options: Any, tt_prefix: Callable[[ModuleOp, Any], None]) -> Any:
    """Return the SubTilePlan (at the smallest sub-tile) of the kernel in tt `module`, on a clone that
    `tt_prefix` (the pipeline's tt-level steps, `pipeline.tt_prefix`) prepared."""
    from mtia_xdsl.transforms.mtia_sub_tile import plan_sub_tile

    m = clone_op(module)
    tt_prefix(m, options)
    from mtia_xdsl.dialects import tt

    funcs = [f for f in ops_of(m) if isinstance(f, tt.FuncOp) and f.regions[0].blocks]
    return plan_sub_tile(funcs[-1], MIN_SUB_BLOCK) if funcs else None


def fit_steps(
    module: ModuleOp,
    options: Any,
    notes: list[str],
    tt_prefix: Callable[[ModuleOp, Any], None],
    ids_short: bool = False,
) -> Iterator[FitStep]:
    """Yield the ways to lower `module` again, in the order they are tried; add to `notes` why steps are skipped.

    `tt_prefix` runs the pipeline's tt-level steps (see `sub_tile_plan_for`). `ids_short`: the kernel is
    short of CB IDs (not of LS bytes); then, with fusion on, keeping fused chains apart is tried before
    sub-tiling: a command fused from a chain reads all of the chain's inputs, so they are alive at once
    (a stencil's `acc += tap * w` over 9 taps holds the 9 taps), where unfused each dies at its command.
    """
    o = options
    if o.num_stages > 1:
        yield FitStep(f"fewer pipeline slots: num_stages={o.num_stages} -> 1 (one slot per streamed CB)",
                      replace(o, num_stages=1))  # fmt: skip
    else:
        notes.append("fewer pipeline slots: not applicable (num_stages=1 already)")
    if not o.vector_codegen:
        o = replace(o, vector_codegen=True)
        yield FitStep("fusing chains of commands: vector_codegen=True (a fused chain needs no CB inside)", o)
    else:
        notes.append("fusing chains of commands: already on (vector_codegen=True)")
    if not o.rematerialize_constants:
        o = replace(o, rematerialize_constants=True)
        yield FitStep("rematerializing constant tiles: filled right before each reader, not held for the whole "
                      "kernel (mtia-rematerialize-constants)", o)  # fmt: skip
    else:
        notes.append("rematerializing constant tiles: already on (rematerialize_constants=True)")
    if ids_short and options.vector_codegen:
        what = (f"{UNFUSE_STEP} (a command fused from a chain reads all of the chain's inputs, so they are alive "
                "at once)")  # fmt: skip
        yield FitStep(what, replace(o, vector_codegen=False))
    yield from _sub_tile_steps(module, o, notes, tt_prefix)
    if ids_short and not o.rematerialize_index_tiles:
        o = replace(o, rematerialize_index_tiles=True)
        what = ("rematerializing index tiles: a tile made from indices alone (a mask, `xindex % 3`) computed again "
                "right before each reader (mtia-rematerialize-index-tiles)")  # fmt: skip
        yield FitStep(what, o)
        if o.vector_codegen:
            yield FitStep(f"{what}, and {UNFUSE_STEP}", replace(o, vector_codegen=False))


def _sub_tile_steps(module: ModuleOp, o: Any, notes: list[str], tt_prefix: Callable[[ModuleOp, Any], None]
                    ) -> Iterator[FitStep]:  # fmt: skip
    """The sub-tiling steps of `fit_steps` (step 4 of the module docstring), or why there are none (in `notes`)."""
    if o.sub_block == 0:
        notes.append("sub-tiling: turned off (sub_block=0)")
        return
    plan = sub_tile_plan_for(module, o, tt_prefix)
    if plan is None or not plan.split:
        notes.append(f"sub-tiling: not applicable ({plan.reason if plan is not None else 'no kernel'})")
        return
    sub = plan.block_elems // 2
    while sub >= MIN_SUB_BLOCK:
        n = plan.block_elems // sub
        if n <= MAX_UNROLLED_SUB_TILES:
            yield FitStep(f"sub-tiling: {n} sub-tiles of {sub} rows, unrolled, shared operands loaded once "
                          f"(mtia-sub-tile{{sub-block={sub}}})", o, sub)  # fmt: skip
        yield FitStep(f"sub-tiling: a loop over {n} sub-tiles of {sub} rows, CB IDs as un-split "
                      f"(mtia-sub-tile{{sub-block={sub} form=loop}})", o, sub, "loop")  # fmt: skip
        sub //= 2


def _move_into(target: ModuleOp, source: ModuleOp) -> None:
    """Replace `target`'s body and attributes by `source`'s (lower() works in place)."""
    for op in list(target.body.block.ops):
        Rewriter.erase_op(op, safe_erase=False)
    for op in list(source.body.block.ops):
        op.detach()
        target.body.block.add_op(op)
    target.attributes.clear()
    target.attributes.update(source.attributes)


def _fits(attempt: ModuleOp, step: FitStep, lower_once: Callable[[ModuleOp, Any, int, str], None],
          notes: list[str]) -> bool:  # fmt: skip
    """Lower `attempt` in place as `step` says; return whether it fits, else add why not to `notes`.

    Raises: InternalCompilerError (a note naming the step added) or any exception but a PassFailedException.
    """
    from mtia_xdsl.transforms.errors import InternalCompilerError

    try:
        lower_once(attempt, step.options, step.sub_block, step.form)
    except resource_errors() as e:
        notes.append(f"{step.what}: still does not fit ({_shortfall(e)})")
        return False
    except InternalCompilerError as e:  # a compiler bug: surfaces as one, not as OutOfResources
        e.add_note(f"while lowering again to make the kernel fit ({step.what}); {notes[0]}")
        raise
    except PassFailedException as e:  # a located refusal: this step cannot apply to the kernel
        notes.append(f"{step.what}: not applicable ({str(e).strip().splitlines()[0]})")
        return False
    return True


def _refusal(first: Exception, notes: list[str]) -> str:
    """The first resource error's message, the fitting steps tried (`notes`) and advice appended; a step tried
    is no longer advised (the CB-ID refusal's vector_codegen=False)."""
    header = str(first).rstrip()
    if any(n.startswith(UNFUSE_STEP) for n in notes):  # tried and noted below: no longer advice
        from mtia_xdsl.transforms.mtia_cb_allocate import UNFUSE_ADVICE

        header = header.replace(UNFUSE_ADVICE, "", 1)
    message = header + "\n  tried, in order:\n" + "\n".join(f"    {n}" for n in notes[1:])
    if hasattr(first, "required"):  # CB IDs count tensors alive at once, whatever their size
        advice = ("compute with fewer tensors alive at once (use a loaded tile before loading the next, hold "
                  "fewer across a loop) or split the work")  # fmt: skip
    else:
        advice = "lower BLOCK_* (the largest CBs above are the values to shrink) or split the work"
    message += f"\n  to make it fit: {advice}"
    return message


def lower_to_fit(
    module: ModuleOp,
    options: Any,
    lower_once: Callable[[ModuleOp, Any, int, str], None],
    tt_prefix: Callable[[ModuleOp, Any], None],
    original: ModuleOp | None = None,
) -> None:
    """Lower tt `module` in place with `lower_once(module, options, sub_block, form)`, making it fit if it does not.

    `tt_prefix` runs the pipeline's tt-level steps (the sub-tiling plan reads the kernel after them); the
    pipeline passes both, so this module does not import the pipeline that calls it. `original`: an
    unmodified copy of `module` the caller keeps (the compile driver's, for `.asm`), which later tries
    start from instead of a clone taken here before the first (a clone was ~10 % of a compile).

    Raises: the first resource error (LocalStorageOverflow or the CB-ID refusal), its message extended with
    what each step left, when no step makes the kernel fit (a step the kernel refuses with a located
    PassFailedException is noted as not applicable); a step's InternalCompilerError as it is, with a note
    naming the step (a compiler bug is no resource shortage for an autotuner to skip), as any other
    exception of a step; errors of the first lowering as they are.
    """
    errors = resource_errors()
    original = original if original is not None else clone_op(module)
    forced = options.sub_block or 0
    try:
        lower_once(module, options, forced, "unrolled")
        if forced:  # the user's sub-tiles fitted: the report still says they were applied
            from mtia_xdsl.transforms.mtia_sub_tile import SUB_TILES

            applied = [f.attributes[SUB_TILES] for f in ops_of(module) if SUB_TILES in f.attributes]
            lines = [f"applied sub_block={forced} (compile option): {a.data}" for a in applied]  # type: ignore[union-attr]
            if lines:
                module.attributes[FIT] = ArrayAttr([StringAttr(line) for line in lines])
        return
    except errors as e:
        if not options.make_fit:
            raise
        if forced and not hasattr(e, "required"):
            raise  # the user chose the sub-tile size; only too many CB IDs make the loop form worth a try
        first = e
    notes = [f"as written: {_shortfall(first)}"]
    if forced:  # the user chose the sub-tile size: the loop form needs no more CB IDs than un-split
        notes[0] = f"sub_block={forced} (compile option), unrolled: {_shortfall(first)}"
        what = f"the same sub-tiles in a loop (mtia-sub-tile{{sub-block={forced} form=loop}}), CB IDs as un-split"
        steps: Iterator[FitStep] = iter([FitStep(what, options, forced, "loop")])
    else:
        steps = fit_steps(original, options, notes, tt_prefix, ids_short=hasattr(first, "required"))
    for step in steps:
        attempt = clone_op(original)
        if not _fits(attempt, step, lower_once, notes):
            continue
        notes.append(f"applied {step.what}")
        attempt.attributes[FIT] = ArrayAttr([StringAttr(n) for n in notes])
        _move_into(module, attempt)
        return
    first.args = (_refusal(first, notes), *first.args[1:])
    raise first


def fit_lines(module: Any) -> list[str]:
    """Return the `mtia.fit` lines of a buffer-level module ([] if it fitted as written)."""
    attr = module.attributes.get(FIT) if hasattr(module, "attributes") else None
    return [a.data for a in attr.data] if isinstance(attr, ArrayAttr) else []  # type: ignore[union-attr]


__all__ = ["FIT", "FitStep", "PassFailedException", "fit_lines", "fit_steps", "lower_to_fit", "resource_errors"]

"""Compaction of divergent loops: a batch runs an `scf.for` whose upper bound differs between its programs
once, each iteration over only the programs still in the loop.

Without it a divergent bound splits the batch by trip count and reruns each group from the start (the
runner's `Divergence`): causal attention's triangle of key loops runs as eight batches of four programs.
With it, iteration i runs the loop body on the sub-batch of programs whose trip count exceeds i:

- values the body reads from outside the loop, the loop-carried values and the tiles in the PE's CBs are
  indexed down to the sub-batch for the iteration, and the iteration's results merged back (programs not
  in it keep theirs);
- the commands the sub-batch issues are recorded for its programs only (`pe_state.Partial`), with the
  scalar-core instructions counted per program;
- a program that left the loop early has pushed and popped fewer tiles than the CBs' shared counters say:
  `PeState.seq_shift` holds, per CB, how many, and the commands it issues afterwards name its own slots.

Every program computes and records exactly what its per-program run would (tests/machine/
test_batched_machine.py compares both). Compaction applies to loops of a batched machine run outside
engine bodies whose iterations leave every CB with as many published and reserved tiles as before; loops
with atomics, prints, cross-PE reductions, `mtia.pe_id` or CB allocations, a value of an unknown kind, or
an iteration that changes a CB's fill level raise `Divergence` instead (the batch is split as before).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from typing import Any, cast

import numpy as np
from xdsl.dialects import scf
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import Operation, SSAValue

from mtia_xdsl.machine.interpret.batching import Divergence, logical_rank
from mtia_xdsl.machine.interpret.cb import SimCB
from mtia_xdsl.machine.interpret.pe_state import Partial, PeState
from mtia_xdsl.machine.interpret.values import as_value

ENABLED = True
"""Compact divergent loops (False: always split the batch; tests compare the two)."""

_EXCLUDED = ("atomic", "print", "allreduce", "pe_id", "cb_alloc", "assert")
"""Ops (by name fragment) whose loops are not compacted: their order across programs or their batch matters."""


class _NotCompactable(Exception):
    """The loop cannot be compacted; the caller splits the batch instead."""


@dataclasses.dataclass(frozen=True)
class _LoopFacts:
    """What compaction needs of an `scf.for` op, read once."""

    ok: bool
    captured: tuple[tuple[SSAValue, int], ...]
    """Values the loop's regions read from outside the loop, with their logical ranks."""
    carried_ranks: tuple[int, ...]


def loop_facts(op: Operation) -> _LoopFacts:
    """The `_LoopFacts` of `op`."""
    inside: set[SSAValue] = set()
    ok = True
    for inner in op.walk():
        if any(part in inner.name for part in _EXCLUDED):
            ok = False
        if inner is not op:
            inside.update(inner.results)
        for region in inner.regions:
            for block in region.blocks:
                inside.update(block.args)
    captured: dict[SSAValue, int] = {}
    for inner in op.walk():
        if inner is op:
            continue
        for v in inner.operands:
            if v not in inside and v not in captured:
                captured[v] = logical_rank(v.type)
    carried = tuple(logical_rank(r.type) for r in op.results)
    return _LoopFacts(ok, tuple(captured.items()), carried)


def _sub(x: Any, rank: int, index: np.ndarray, size: int) -> Any:
    """`x` (a runtime value of logical rank `rank`) for the programs `index` of a batch of `size`."""
    if type(x) is np.ndarray:
        if x.ndim <= rank:
            return x
        if x.ndim != rank + 1 or x.shape[0] not in (size, 1):
            raise _NotCompactable
        return x[index] if x.shape[0] == size else x
    if x is None or isinstance(x, np.generic | int | float | bool | SimCB):
        return cast(Any, x)
    raise _NotCompactable


def _merge(old: Any, new: Any, rank: int, index: np.ndarray, size: int) -> Any:
    """`old` (for the whole batch of `size`) with the entries of programs `index` replaced by `new`."""
    if new is old:
        return old
    if old is None or new is None or isinstance(old, SimCB) or isinstance(new, SimCB):
        raise _NotCompactable
    a = np.asarray(old)
    if a.ndim == rank + 1 and a.shape[0] == size:
        full = a.copy()  # already per program: a plain copy is about 4x faster than copying a broadcast view
    else:
        shape = a.shape[a.ndim - rank :] if rank else ()
        full = np.array(np.broadcast_to(a, (size, *shape)))
    full[index] = new
    return full


def run_compacted(
    interpreter: Interpreter,
    op: Operation,
    facts: _LoopFacts,
    lb: int,
    ub: np.ndarray,
    step: int,
    carried: tuple[Any, ...],
    iv_type: Any,
) -> PythonValues:
    """Run `scf.for` `op` (bounds `lb`, per-program `ub` (B,), `step` > 0) compacted; see the module docstring.

    Raises: Divergence (split the batch by `ub`) when the loop cannot be compacted.
    """
    state: PeState | None = interpreter.get_data(type_key(), "pe", lambda: None)
    usable = all(hasattr(interpreter, name) for name in ("counter", "_env", "_slot"))
    if not (ENABLED and facts.ok and usable and state is not None and not state.engine_depth):
        raise Divergence(op, ub)
    if ub.shape != (state.size,):
        raise Divergence(op, ub)
    loop = _CompactedLoop(interpreter, cast(scf.ForOp, op), facts, state)
    try:
        return loop.run(lb, ub, step, carried, iv_type)
    except (_NotCompactable, Divergence):
        raise Divergence(op, ub) from None
    finally:
        loop.restore()


class _CompactedLoop:
    """One run of a compacted loop: the batch's state, and the captured values it indexes down per iteration."""

    def __init__(self, interpreter: Any, op: scf.ForOp, facts: _LoopFacts, state: PeState) -> None:
        from mtia_xdsl.machine.interpret.tt import get_launch_state

        self.interpreter = interpreter
        self.op = op
        self.facts = facts
        self.state = state
        self.size = state.size
        self.launch = get_launch_state(interpreter)
        slots = [(interpreter._slot(v), rank) for v, rank in facts.captured]
        self.env: list[Any] = interpreter._env  # after _slot, which may grow it
        self.captured = [(slot, rank, self.env[slot]) for slot, rank in slots]
        self.left_waited: dict[int, int] = {}
        """Per CB (position in state.cbs): the least `waited` among the programs that left the loop so far (the
        CB's `waited` is that of the programs still in it; after the loop the least of all, see `_note_waited`)."""

    def run(self, lb: int, ub: np.ndarray, step: int, carried: tuple[Any, ...], iv_type: Any) -> PythonValues:
        trips = np.maximum(0, -(-(ub.astype(np.int64) - lb) // step))
        loop_args, in_loop = carried, self.size
        for i in range(int(trips.max())):
            iv = as_value(np.int64(lb + i * step), iv_type)
            index = np.flatnonzero(trips > i)
            if len(index) < in_loop:
                _note_waited(self.state, self.left_waited)
                in_loop = len(index)
            if len(index) == self.size:
                loop_args = self.interpreter.run_ssacfg_region(self.op.body, (iv, *loop_args), "for")  # pyright: ignore[reportAttributeAccessIssue]
            else:
                loop_args = self._iteration(index, iv, loop_args)
        _note_waited(self.state, self.left_waited)
        for k, cb in enumerate(self.state.cbs):
            cb.waited = self.left_waited.get(k, cb.waited)
        self.state.settle()
        return loop_args

    def _iteration(self, index: np.ndarray, iv: Any, loop_args: tuple[Any, ...]) -> tuple[Any, ...]:
        """Run one iteration for the programs `index` only; return the carried values of the whole batch."""
        from mtia_xdsl.machine.interpret.mtia import set_pe_state
        from mtia_xdsl.machine.interpret.tt import set_launch_state

        state, size, interpreter, ranks = self.state, self.size, self.interpreter, self.facts.carried_ranks
        for slot, rank, x in self.captured:
            self.env[slot] = _sub(x, rank, index, size)
        sub_args = tuple(_sub(x, r, index, size) for x, r in zip(loop_args, ranks, strict=True))
        frame: list[tuple[SimCB, list[Any], list[Any], list[Any], int]] = []
        for cb in state.cbs:
            rank = logical_rank(cb.tile)
            visible = [_sub(t, rank, index, size) for t in cb.visible]
            frame.append((cb, list(cb.visible), visible, list(cb.reserved), cb.pushed))
            cb.visible = deque(visible)
            cb.reserved = [_sub(t, rank, index, size) for t in cb.reserved]
        sub_state = state.sub_batch(index)
        launch = self.launch
        sub_launch = dataclasses.replace(
            launch, program_id=tuple(p[index] if np.ndim(p) else p for p in launch.program_id)
        )
        set_pe_state(interpreter, sub_state)
        set_launch_state(interpreter, sub_launch)
        interpreter.counter.state = sub_state
        try:
            new_args = interpreter.run_ssacfg_region(self.op.body, (iv, *sub_args), "for")
        finally:
            set_pe_state(interpreter, state)
            set_launch_state(interpreter, launch)
            interpreter.counter.state = state
        for cb, visible, sub_visible, reserved, pushed in frame:
            if len(cb.visible) != len(visible) or len(cb.reserved) != len(reserved):
                raise _NotCompactable
            rank = logical_rank(cb.tile)
            cb.visible = deque(
                old if new is sub else _merge(old, new, rank, index, size)
                for old, new, sub in zip(visible, cb.visible, sub_visible, strict=True)
            )
            cb.reserved = [
                None if old is None and new is None else _merge(old, new, rank, index, size)
                for old, new in zip(reserved, cb.reserved, strict=True)
            ]
            state.left_behind(cb.cb_id, index, cb.pushed - pushed)
        state.merge_sub_batch(index, sub_state)
        return tuple(_merge(old, new, r, index, size) for old, new, r in zip(loop_args, new_args, ranks, strict=True))

    def restore(self) -> None:
        """Give the captured values back their whole-batch values (ops after the loop read them)."""
        for slot, _, x in self.captured:
            self.env[slot] = x


def _note_waited(state: PeState, left_waited: dict[int, int]) -> None:
    """Programs leave the loop with the CBs' current `waited`: keep the least per CB.

    A CB's `waited` only guards reads and pops (an error if below the count needed), and the CB ops keep
    the least over programs exactly (`wait` raises to at least n, `pop` lowers by n), so the batch's check
    fails exactly when some program's would.
    """
    for k, cb in enumerate(state.cbs):
        left_waited[k] = min(left_waited.get(k, cb.waited), cb.waited)


def type_key() -> type:
    """The functions class under which the interpreter keeps the PE state (`interpret/mtia.py`)."""
    from mtia_xdsl.machine.interpret.mtia import MtiaFunctions

    return MtiaFunctions


__all__ = ["ENABLED", "Partial", "loop_facts", "run_compacted"]

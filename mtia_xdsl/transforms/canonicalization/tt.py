"""inline_and_clean: inline helper calls and clean the frontend's raw tt module as upstream's inliner does.

Upstream's `inline` pass (MLIR's inliner with the canonicalizer as its simplification pipeline) visits
the call graph bottom-up; for each function it canonicalizes, inlines the calls in it, and
canonicalizes again. We do the same, with a small canonicalizer that behaves like MLIR's greedy driver
for what Triton kernels contain:

- constants are uniqued per function and hoisted to the front of the entry block when each sweep
  collects its worklist (MLIR's OperationFolder, fresh per sweep: a constant at the front, or right
  after one kept by this sweep, stays; any other moves to the very front, so they come out reversed);
- folds (`folds.py`) materialize a constant right before the folded op, as MLIR's greedy driver does;
  the next sweep hoists it: casts of constants, integer arithmetic of scalar or splat constants and its
  identities (`x + 0`, `x * 1`, `x ^ x`, ...), a constant lhs of a commutative op moves right, same-type
  `arith.bitcast`, `tt.splat`/`tt.broadcast`/`tt.expand_dims`/`tt.reshape` of a splat constant,
  `tt.addptr` of a zero offset, and the addi/subi/muli constant reassociation patterns;
- trivially dead ops are erased (which drops the code generator's overflow checks and dead constants).

Matching MLIR's order matters: upstream's TTIR passes keep a contiguous block of constants as it is, so
our module, printed generic and run through them, is textually identical to upstream's TTIR
(tests/frontend/test_frontend_conformance.py).
"""

from __future__ import annotations

import functools
import importlib.util
import os

from xdsl.dialects import arith as xarith
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntegerAttr,
    ModuleOp,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter

from mtia_xdsl.dialects import tt
from mtia_xdsl.transforms.canonicalization.folds import IN_PLACE, fold_op, rewrite_op
from mtia_xdsl.transforms.dce import is_trivially_dead
from mtia_xdsl.utils.clone import clone_op
from mtia_xdsl.utils.walk import ops_of

# ---------------------------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------------------------


class _Folder:
    """Per-function constant uniquing and hoisting, as MLIR's OperationFolder does it."""

    def __init__(self, func: tt.FuncOp):
        self.entry: Block = func.body.blocks[0]
        self.known: dict[tuple[Attribute, Attribute], xarith.ConstantOp] = {}
        self.owned: set[int] = set()
        self.made: list[xarith.ConstantOp] = []
        """Constants materialized by this sweep's folds (hoisted by the next sweep)."""

    def register(self, op: xarith.ConstantOp) -> bool:
        """Unique or hoist `op`; return False if it was replaced by an existing equal constant."""
        key = (op.value, op.result.type)
        existing = self.known.get(key)
        if existing is not None and existing is not op:
            Rewriter.replace_op(op, [], [existing.result])
            return False
        front = self.entry.first_op
        prev = op.prev_op
        if op.parent_block() is not self.entry or (op is not front and (prev is None or id(prev) not in self.owned)):
            op.detach()
            self.entry.insert_op_before(op, self.entry.first_op)  # type: ignore[arg-type]
        self.known[key] = op
        self.owned.add(id(op))
        return True

    def constant(self, value: Attribute, ty: Attribute, like: Operation) -> SSAValue:
        """Return a new constant `value : ty` inserted right before `like` (the op being folded).

        MLIR's greedy driver materializes a fold's attribute where the folded op was and uniques or
        hoists it only when the next iteration collects its worklist (`register`).
        """
        op = xarith.ConstantOp(value, ty)
        op.location = like.location
        block = like.parent_block()
        assert block is not None
        block.insert_op_before(op, like)
        self.made.append(op)
        return op.result


# ---------------------------------------------------------------------------------------------
# The greedy driver
# ---------------------------------------------------------------------------------------------


def _erase(op: Operation) -> None:
    block = op.parent_block()
    if block is not None:
        block.detach_op(op)
    op.erase(safe_erase=False)


def _walk_post_order(op: Operation, out: list[Operation]) -> None:
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                _walk_post_order(child, out)
    out.append(op)


def canonicalize_function(func: tt.FuncOp) -> bool:
    """Run the canonicalizer on one function to a fixed point; return True if anything changed.

    As MLIR's greedy driver, a sweep whose folds and erasures change nothing ends the loop (hoisting
    while collecting the worklist does not count: the next sweep would find the constants in place).
    """
    changed_any = False
    for _ in range(10):
        ops: list[Operation] = []
        for block in func.body.blocks:
            for child in list(block.ops):
                _walk_post_order(child, ops)
        folder = _Folder(func)
        worklist: list[Operation] = []
        for op in ops:
            if not isinstance(op, xarith.ConstantOp):
                worklist.append(op)
            elif op.parent_block() is not None:
                folder.register(op)
        changed = _process(worklist, folder)
        changed |= _erase_dead_constants(folder)
        changed_any |= changed
        if not changed:
            break
    return changed_any


def _process(worklist: list[Operation], folder: _Folder) -> bool:
    changed = False
    erased: set[int] = set()
    for op in worklist:
        if id(op) in erased or op.parent_block() is None:
            continue
        if is_trivially_dead(op):
            _erase(op)
            erased.add(id(op))
            changed = True
            continue
        outcome = _fold_or_rewrite(op, folder)
        if outcome == "replaced":
            erased.add(id(op))
        changed |= outcome is not None
    return changed


def _fold_or_rewrite(op: Operation, folder: _Folder) -> str | None:
    """Fold `op` (retrying after an in-place change), else apply a pattern; say what happened."""
    outcome = None
    for _ in range(2):
        repl = fold_op(op, folder.constant)
        if repl is IN_PLACE:
            outcome = "modified"
            continue
        if repl is None:
            repl = rewrite_op(op, folder.constant)
        if repl is not None:
            Rewriter.replace_op(op, [], repl)
            return "replaced"
        break
    return outcome


def _erase_dead_constants(folder: _Folder) -> bool:
    """Erase the unused constants this sweep kept or made (MLIR erases them when it pops them)."""
    changed = False
    for op in [*folder.known.values(), *folder.made]:
        if op.parent_block() is not None and not op.result.uses:
            _erase(op)
            changed = True
    return changed


# ---------------------------------------------------------------------------------------------
# Inlining
# ---------------------------------------------------------------------------------------------


def _functions(module: ModuleOp) -> dict[str, tt.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, tt.FuncOp)}


def _drop_unreachable_blocks(region: Region) -> None:
    """Erase blocks after the entry that no branch targets (the code generator's post-return blocks)."""
    changed = True
    while changed:
        changed = False
        targets = {id(s) for b in region.blocks for op in b.ops for s in op.successors}
        for block in list(region.blocks)[1:]:
            if id(block) not in targets:
                for op in reversed(list(block.ops)):
                    _erase(op)
                region.detach_block(block)
                block.erase(safe_erase=False)
                changed = True


def _inlinable(func: tt.FuncOp) -> bool:
    noinline = func.attributes.get("noinline")
    if isinstance(noinline, IntegerAttr) and noinline.value.data:
        return False
    return len(func.body.blocks) == 1 and isinstance(func.body.blocks[0].last_op, tt.ReturnOp)


@functools.cache
def _triton_package_dir() -> str | None:
    spec = importlib.util.find_spec("triton")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return os.path.join(locations[0], "") if locations else None


def _in_triton_library(loc: Attribute | None) -> bool:
    """Whether `loc` is a line of Triton's own Python (standard.py's tl.zeros, tl.argmax, ...)."""
    package = _triton_package_dir()
    return isinstance(loc, FileLineColLoc) and package is not None and loc.filename.data.startswith(package)


def _inline_call(call: tt.CallOp, callee: tt.FuncOp) -> None:
    """Clone the callee's single block before `call`, map its arguments, replace the call's results.

    Ops inlined from a function of Triton's own library take the call's location: buffers and errors of
    `tl.zeros`, `tl.argmax`, ... are attributed to the user's line, not to triton/language/standard.py.
    """
    block: Block = callee.body.blocks[0]
    relocate = _in_triton_library(callee.location) or any(_in_triton_library(op.location) for op in block.ops)
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, call.args, strict=True))
    ret = block.last_op
    assert isinstance(ret, tt.ReturnOp)
    parent = call.parent_block()
    assert parent is not None
    for op in block.ops:
        if op is ret:
            break
        clone = clone_op(op, mapping)
        if relocate:
            for nested in clone.walk():
                if nested.location is None or _in_triton_library(nested.location):
                    nested.location = call.location
        parent.insert_op_before(clone, call)
        mapping.update(zip(op.results, clone.results, strict=True))
    Rewriter.replace_op(call, [], [mapping.get(v, v) for v in ret.srcs])


def _call_order(module: ModuleOp) -> list[tt.FuncOp]:
    """Return functions callees-first (post-order over the call graph from each function)."""
    funcs = _functions(module)
    order: list[tt.FuncOp] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen or name not in funcs:
            return
        seen.add(name)
        for op in ops_of(funcs[name]):
            if isinstance(op, tt.CallOp):
                visit(op.callee.string_value())
        order.append(funcs[name])

    for name in funcs:
        visit(name)
    return order


def inline_calls(module: ModuleOp) -> None:
    """Canonicalize, inline and canonicalize each function callees-first; erase unused private functions."""
    funcs = _functions(module)
    for func in funcs.values():
        _drop_unreachable_blocks(func.body)
    for func in _call_order(module):
        if not func.body.blocks:
            continue
        canonicalize_function(func)
        calls = [op for op in ops_of(func) if isinstance(op, tt.CallOp)]
        inlined = False
        for call in calls:
            callee = funcs.get(call.callee.string_value())
            if callee is not None and callee is not func and _inlinable(callee):
                _inline_call(call, callee)
                inlined = True
        if inlined:
            canonicalize_function(func)
    called = {op.callee.string_value() for op in ops_of(module) if isinstance(op, tt.CallOp)}
    for name, func in _functions(module).items():
        if func.sym_visibility is not None and func.sym_visibility.data == "private" and name not in called:
            module.body.blocks[0].erase_op(func)


def inline_and_clean(module: ModuleOp) -> ModuleOp:
    """Inline helper calls, fold constants and remove dead code in `module` (in place); return it.

    Requires: a module from `build_tt_module` (or parsed TTIR).
    """
    inline_calls(module)
    return module

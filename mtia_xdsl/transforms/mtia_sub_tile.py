"""mtia-sub-tile: split a kernel's row-parallel block dimension into sub-tiles whose CBs fit.

A program that works on a block of BLOCK_M rows (`offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)`: the query
rows of attention, the rows of a multi-row softmax or layer norm) where no command reduces or contracts across
those rows computes each row independently. This pass rewrites every value that carries that dimension into
S = BLOCK_M / sub-block copies of `sub-block` rows each (sub-tile s holds rows [s * sub-block, (s + 1) *
sub-block)), and the ops on them into S copies, emitted sub-tile after sub-tile within each loop body: an inner
loop over the sub-tiles, unrolled. Values without the dimension (attention's K and V tiles, loop counters,
scalars) are not copied: each is computed or loaded once per iteration of its loop and read by every sub-tile.
Loop-carried values with the dimension (attention's acc, m_i, l_i) become S carried values.

Level: tt, after helpers are inlined and tensor descriptors rewritten to pointers, before convert-tt-to-mtia.
There every value's dimensions are explicit (make_range, expand_dims, broadcast, trans, dot, reduce), so which
values carry the split dimension is a union of (value, dimension) pairs over the ops, checked against the two
things that forbid a split (a reduction along the dimension, a dot contracting over it); after bufferization
the same question would have to be asked of CB slots and engine commands. Unrolled copies need no slice op
(tt has none) and no dynamic loop: one sub-tile's temporaries are dead before the next sub-tile's are made,
so mtia-cb-allocate gives them the same CB IDs and LS bytes, and what stays alive at once is the shared tiles,
the carried values (whose total bytes are unchanged) and one sub-tile's temporaries.

Results: each element is computed by the same operations in the same order as before (a dot's rows split,
its K order unchanged; reductions run along the other dimensions), so a split kernel is bit-exact with the
un-split one. Stores of one sub-tile are assumed not to alias loads of a later sub-tile in the same loop body
(rows of one program do not overlap, as Triton's own pipelining assumes).

The split dimension is found from a seed: a 1-D `arith.addi` of `tt.make_range` and a `tt.splat` of a
value computed from `tt.get_program_id`, outside any loop (the program's block of rows). Each seed whose
size is a multiple of 2 * sub-block is tried; the first whose dimension is parallel is split.

Options: sub-block (the sub-tile's extent along the split dimension; 0 = off, the default).
Requires: tt-inline (one function, no tt.call) and tt-rewrite-tensor-descriptor-to-pointer.
Raises: nothing for kernels it cannot split (it leaves them unchanged; `plan_sub_tile` says why);
PassFailedException for a sub-block that is not a power of two.
Example: mtia-opt k.mlir -p mtia-sub-tile{sub-block=64}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.dialects import tt
from mtia_xdsl.utils.locations import location_str
from mtia_xdsl.utils.walk import ops_of

SUB_TILES = "mtia.sub_tiles"
"""Attribute on the kernel after a split: "S x sub-block along <dimension's seed location>"."""

_ELEMENTWISE_TT = (
    tt.AddPtrOp,
    tt.LoadOp,
    tt.StoreOp,
    tt.FpToFpOp,
    tt.ClampFOp,
    tt.PreciseSqrtOp,
    tt.PreciseDivFOp,
    tt.ApproxDivFOp,
    tt.MulhiUIOp,
    tt.ExternElementwiseOp,
    tt.IntToPtrOp,
    tt.PtrToIntOp,
    tt.BitcastOp,
)
"""tt ops that act element by element on operands and results of one shape."""

_FREE = (tt.MakeRangeOp, tt.SplatOp)
"""Tensor producers without tensor operands that a sub-tile re-creates at its own shape (with constants)."""


def _shape(v: SSAValue) -> tuple[int, ...] | None:
    t = v.type
    return tuple(t.get_shape()) if isinstance(t, TensorType) else None


def _is_free(v: SSAValue) -> bool:
    """A tensor made from scalars alone (constant, splat, make_range): each sub-tile makes its own."""
    op = v.owner
    if not isinstance(op, Operation) or _shape(v) is None:
        return False
    return isinstance(op, _FREE) or (op.name == "arith.constant" and not op.operands)


Node = tuple[object, ...]
"""A (value, dim) pair, or (op, operand index, dim) for a use of a free tensor, or ("poison",)."""

_POISON: Node = ("poison",)


class _Dims:
    """Union-find over (value, dimension) pairs: which dimensions are one and the same along the dataflow."""

    def __init__(self) -> None:
        self.parent: dict[Node, Node] = {}
        self.why: dict[Node, str] = {}

    def find(self, n: Node) -> Node:
        self.parent.setdefault(n, n)
        while self.parent[n] != n:
            self.parent[n] = self.parent[self.parent[n]]
            n = self.parent[n]
        return n

    def union(self, a: Node, b: Node) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb

    def poison(self, n: Node, why: str) -> None:
        """Mark `n` as a dimension that must not be split, for the reason `why` (its op's line and what it does)."""
        self.find(n)
        self.why.setdefault(n, why)

    def reasons(self, root: Node) -> list[str]:
        """Why the class of `root` must not be split: the reasons of its poisoned members, in IR order."""
        return list(dict.fromkeys(w for n, w in self.why.items() if self.find(n) == root))


def _operand_node(op: Operation, i: int, d: int) -> Node:
    v = op.operands[i]
    return (op, i, d) if _is_free(v) else (v, d)


def _relate_op(dims: _Dims, op: Operation) -> None:  # noqa: C901  (one branch per op kind)
    """Record which dimensions of `op`'s tensor operands and results are the same dimension."""
    tensors_in = [i for i, v in enumerate(op.operands) if _shape(v) is not None]
    tensors_out = [r for r in op.results if _shape(r) is not None]
    if not tensors_in and not tensors_out:
        return
    where = location_str(op.location)
    if isinstance(op, scf.ForOp):
        body = op.body.block
        yielded = body.last_op.operands if body.last_op is not None else ()
        for k, res in enumerate(op.results):
            shape = _shape(res)
            for d in range(len(shape or ())):
                dims.union(_operand_node(op, 3 + k, d), (res, d))
                dims.union((body.args[1 + k], d), (res, d))
                dims.union((yielded[k], d), (res, d))
        return
    if isinstance(op, scf.IfOp):  # related to its yields, and not split (yet): its branches would need copies
        for branch in (op.true_region, op.false_region):
            term = branch.blocks[0].last_op if branch.blocks else None
            for k, res in enumerate(op.results):
                for d in range(len(_shape(res) or ())):
                    if term is not None:
                        dims.union(_operand_node(term, k, d), (res, d))
                    dims.poison((res, d), f"{where}: scf.if with tensor results is not split")
        return
    if isinstance(op, scf.YieldOp) and isinstance(op.parent_op(), scf.IfOp):
        return
    if isinstance(op, scf.YieldOp) and isinstance(op.parent_op(), scf.ForOp):
        for i, v in enumerate(op.operands):
            if _is_free(v):  # a yielded constant: the carried value's dims
                res = op.parent_op().results[i]  # type: ignore[union-attr]
                for d in range(len(_shape(v) or ())):
                    dims.union((op, i, d), (res, d))
        return
    if isinstance(op, tt.ExpandDimsOp):
        axis = op.axis.value.data
        for d in range(len(_shape(op.src) or ())):
            dims.union(_operand_node(op, 0, d), (op.result, d if d < axis else d + 1))
        return
    if isinstance(op, tt.BroadcastOp):
        src, out = _shape(op.src) or (), _shape(op.result) or ()
        for d in range(len(src)):
            if src[d] == out[d]:
                dims.union(_operand_node(op, 0, d), (op.result, d))
        return
    if isinstance(op, tt.TransOp):
        order = [int(x) for x in op.order.get_values()]  # type: ignore[attr-defined]
        for d_out, d_in in enumerate(order):
            dims.union(_operand_node(op, 0, d_in), (op.result, d_out))
        return
    if isinstance(op, tt.DotOp):
        rank = len(_shape(op.d) or ())
        for d in range(rank - 2):  # batch dimensions
            for i in range(3):
                dims.union(_operand_node(op, i, d), (op.d, d))
        m, n = rank - 2, rank - 1
        dims.union(_operand_node(op, 0, m), (op.d, m))
        dims.union(_operand_node(op, 2, m), (op.d, m))
        dims.union(_operand_node(op, 1, n), (op.d, n))
        dims.union(_operand_node(op, 2, n), (op.d, n))
        dims.union(_operand_node(op, 0, n), _operand_node(op, 1, m))
        dims.poison(_operand_node(op, 0, n), f"{where}: a tt.dot contracts over it")
        return
    if isinstance(op, tt.ReduceOp | tt.ScanOp):
        axis = op.axis.value.data
        rank = len(_shape(op.operands[0]) or ())
        for i in range(len(op.operands)):
            for d in range(rank):
                dims.union(_operand_node(op, i, d), _operand_node(op, 0, d))
            dims.poison(_operand_node(op, i, axis), f"{where}: a {op.name} runs along it")
        for res in op.results:
            for d in range(rank):
                if isinstance(op, tt.ScanOp):
                    dims.union((res, d), _operand_node(op, 0, d))
                elif d != axis:
                    dims.union((res, d if d < axis else d - 1), _operand_node(op, 0, d))
        return
    shapes = {_shape(op.operands[i]) for i in tensors_in} | {_shape(r) for r in tensors_out}
    elementwise = (op.dialect_name() in ("arith", "math") or isinstance(op, _ELEMENTWISE_TT)) and not op.regions
    if elementwise and len(shapes) == 1:
        rank = len(next(iter(shapes)) or ())
        nodes = [lambda d, i=i: _operand_node(op, i, d) for i in tensors_in]
        nodes += [lambda d, r=r: (r, d) for r in tensors_out]
        for d in range(rank):
            for f in nodes[1:]:
                dims.union(nodes[0](d), f(d))
        return
    if not tensors_in and all(_is_free(r) for r in tensors_out):
        return  # constants, make_range, splat: re-created per use
    for i in tensors_in:  # anything else must not touch the split dimension
        for d in range(len(_shape(op.operands[i]) or ())):
            dims.poison(_operand_node(op, i, d), f"{where}: {op.name} is not split")
    for r in tensors_out:
        for d in range(len(_shape(r) or ())):
            dims.poison((r, d), f"{where}: {op.name} is not split")


def _relate(dims: _Dims, block: Block) -> None:
    for op in block.ops:
        _relate_op(dims, op)
        for region in op.regions:
            for b in region.blocks:
                _relate(dims, b)


def _from_program_id(v: SSAValue) -> bool:
    """Whether scalar `v` is computed (through arith) from tt.get_program_id."""
    stack, seen = [v], set()
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        op = x.owner
        if isinstance(op, tt.GetProgramIdOp):
            return True
        if isinstance(op, Operation) and op.dialect_name() == "arith":
            stack.extend(op.operands)
    return False


def _seeds(func: Operation) -> list[SSAValue]:
    """The 1-D `splat(f(program_id)) + make_range` values of the function's top-level block."""
    out: list[SSAValue] = []
    for op in func.regions[0].blocks[0].ops:
        if op.name != "arith.addi" or len(_shape(op.results[0]) or ()) != 1:
            continue
        kinds = [o.owner for o in op.operands]
        splats = [k for k in kinds if isinstance(k, tt.SplatOp)]
        if any(isinstance(k, tt.MakeRangeOp) for k in kinds) and splats and _from_program_id(splats[0].src):
            out.append(op.results[0])
    return out


@dataclass
class SubTilePlan:
    """The decision: which (value, dim) pairs carry the split dimension, or why nothing is split."""

    block_elems: int = 0
    """Extent of the split dimension (BLOCK_M), elements."""
    sub_block: int = 0
    """Extent of one sub-tile along it, elements."""
    split: dict[object, int] = field(default_factory=dict)
    """Value (or (op, operand index) use of a free tensor) -> its split dimension."""
    seed: SSAValue | None = None
    reason: str = ""
    """Why the kernel is not split (empty when it is)."""

    @property
    def count(self) -> int:
        """Number of sub-tiles S."""
        return self.block_elems // self.sub_block if self.sub_block else 1


def plan_sub_tile(func: Operation, sub_block: int) -> SubTilePlan:
    """Decide how to split `func`'s row-parallel block dimension into sub-tiles of `sub_block` elements.

    Returns a plan with an empty `split` and a `reason` when no seed dimension is parallel or divisible.
    """
    dims = _Dims()
    _relate(dims, func.regions[0].blocks[0])
    reasons: list[str] = []
    tried: set[Node] = set()
    for seed in _seeds(func):
        size = (_shape(seed) or (0,))[0]
        where = location_str(seed.owner.location)  # type: ignore[union-attr]
        if size < 2 * sub_block or size % sub_block:
            reasons.append(f"{where}: its {size} rows do not split into sub-tiles of {sub_block}")
            continue
        root = dims.find((seed, 0))
        if root in tried:
            continue  # another seed of the same dimension
        tried.add(root)
        why = dims.reasons(root)
        if why:
            reasons.append(f"{where}: the rows are not independent ({'; '.join(why[:2])})")
            continue
        split: dict[object, int] = {}
        clash = ""
        for node in list(dims.parent):
            if node != _POISON and dims.find(node) == root:
                key = node[0] if len(node) == 2 else (node[0], node[1])
                if key in split and split[key] != node[-1]:
                    clash = f"{where}: a value has the split dimension twice"
                split[key] = node[-1]  # type: ignore[assignment]
        if clash:
            reasons.append(clash)
            continue
        plan = SubTilePlan(size, sub_block, split, seed)
        nested = _split_inside_unsupported(func, plan)
        if nested:
            reasons.append(f"{where}: {nested}")
            continue
        return plan
    return SubTilePlan(reason="; ".join(reasons) or "no program-id block of rows (pid * BLOCK + tl.arange)")


def _split_inside_unsupported(func: Operation, plan: SubTilePlan) -> str:
    """Why a split value sits inside a region other than an scf.for body ("" if none does)."""
    splitter = _Splitter(plan)
    for op in ops_of(func):
        if op is func or isinstance(op, scf.ForOp) or not op.regions or splitter._is_split_op(op):
            continue
        if splitter._has_split(op):
            where = location_str(op.location)
            return f"{where}: {op.name} holds work on the split rows (only scf.for bodies are split)"
    return ""


def _sub_type(t: Attribute, dim: int, sub_block: int) -> Attribute:
    assert isinstance(t, TensorType)
    shape = list(t.get_shape())
    shape[dim] = sub_block
    return TensorType(t.element_type, shape)


class _Splitter:
    """The mechanism: rebuild blocks with S copies of the ops on split values."""

    def __init__(self, plan: SubTilePlan) -> None:
        self.plan = plan
        self.copies: dict[SSAValue, list[SSAValue]] = {}
        self.replaced: list[Operation] = []
        """Original ops, erased by `finish` once every use has been rewritten (their results are the keys of copies)."""

    def finish(self) -> None:
        """Erase the original split ops, users before producers."""
        for op in reversed(self.replaced):
            Rewriter.erase_op(op, safe_erase=False)

    def _is_split_op(self, op: Operation) -> bool:
        if any(r in self.plan.split for r in op.results):
            return True
        return any(v in self.plan.split or (op, i) in self.plan.split for i, v in enumerate(op.operands))

    def _has_split(self, op: Operation) -> bool:
        return self._is_split_op(op) or any(self._has_split(o) for r in op.regions for b in r.blocks for o in b.ops)

    def _operand(self, op: Operation, i: int, s: int, before: InsertPoint) -> SSAValue:
        v = op.operands[i]
        if v in self.copies:
            return self.copies[v][s]
        dim = self.plan.split.get((op, i))
        if dim is None:
            return v  # shared by every sub-tile
        return self._free_copy(v, dim, s, before)

    def _free_copy(self, v: SSAValue, dim: int, s: int, before: InsertPoint) -> SSAValue:
        """Re-create the free tensor `v` (constant, splat, make_range) at the sub-tile's shape."""
        op = v.owner
        assert isinstance(op, Operation)
        new_t = _sub_type(v.type, dim, self.plan.sub_block)
        props = dict(op.properties)
        if isinstance(op, tt.MakeRangeOp):
            start = op.start.value.data + s * self.plan.sub_block
            props = {"start": IntegerAttr(start, 32), "end": IntegerAttr(start + self.plan.sub_block, 32)}
        elif op.name == "arith.constant":
            value = op.properties["value"]
            if not isinstance(value, DenseIntOrFPElementsAttr) or not value.is_splat():
                raise PassFailedException(f"{location_str(op.location)}: a non-splat constant tensor is not split")
            props["value"] = DenseIntOrFPElementsAttr.from_list(new_t, [value.get_values()[0]])  # type: ignore[arg-type]
        new = op.__class__.create(
            operands=list(op.operands), result_types=[new_t], properties=props, attributes=dict(op.attributes)
        )
        new.location = op.location
        Rewriter.insert_op(new, before)
        return new.results[0]

    def _copy_op(self, op: Operation, s: int, at: InsertPoint) -> None:
        operands = [self._operand(op, i, s, at) for i in range(len(op.operands))]
        types = [
            _sub_type(r.type, self.plan.split[r], self.plan.sub_block) if r in self.plan.split else r.type
            for r in op.results
        ]
        new = op.__class__.create(
            operands=operands,
            result_types=types,
            properties=dict(op.properties),
            attributes=dict(op.attributes),
            regions=[r.clone() for r in op.regions],
        )
        new.location = op.location
        Rewriter.insert_op(new, at)
        for r, n in zip(op.results, new.results, strict=True):
            if r in self.plan.split:
                self.copies.setdefault(r, []).append(n)
            elif r.uses:
                raise PassFailedException(f"{location_str(op.location)}: a split op's unsplit result is used")

    def run_block(self, block: Block) -> None:
        """Rewrite `block`: in each stretch between loops, shared ops first, then sub-tile 0's copies, 1's, ..."""
        stretch: list[Operation] = []
        for op in list(block.ops):
            if isinstance(op, scf.ForOp) and self._has_split(op):
                self._emit(stretch, InsertPoint.before(op))
                stretch = []
                self._split_for(op)
            elif op is block.last_op and isinstance(op, scf.YieldOp | tt.ReturnOp):
                self._emit(stretch, InsertPoint.before(op))
                stretch = []
                self._rewrite_terminator(op)
            else:
                stretch.append(op)
        self._emit(stretch, InsertPoint.at_end(block))

    def _emit(self, ops: Sequence[Operation], at: InsertPoint) -> None:
        split = [op for op in ops if self._is_split_op(op)]
        if not split:
            return
        for op in ops:  # shared ops stay in order, ahead of the sub-tiles (they read no split value)
            if op not in split:
                op.detach()
                Rewriter.insert_op(op, at)
        for s in range(self.plan.count):
            for op in split:
                self._copy_op(op, s, at)
        for op in split:
            op.detach()
        self.replaced.extend(split)

    def _rewrite_terminator(self, op: Operation) -> None:
        if not self._is_split_op(op):
            return
        at = InsertPoint.before(op)
        out: list[SSAValue] = []
        for i, v in enumerate(op.operands):
            if v in self.copies or (op, i) in self.plan.split:
                out.extend(self._operand(op, i, s, at) for s in range(self.plan.count))
            else:
                out.append(v)
        op.operands = out  # type: ignore[assignment]

    def _split_for(self, loop: scf.ForOp) -> None:
        body = loop.body.block
        at = InsertPoint.before(loop)
        inits: list[SSAValue] = []
        for k, v in enumerate(loop.iter_args):
            res = loop.results[k]
            if res in self.plan.split:
                copies = self.copies.get(v)
                inits.extend(
                    copies
                    if copies is not None
                    else [self._operand(loop, 3 + k, s, at) for s in range(self.plan.count)]
                )
            else:
                inits.append(v)
        # the body's carried block arguments: one per sub-tile for split values
        old_args = list(body.args[1:])
        for k, arg in enumerate(old_args):
            if loop.results[k] in self.plan.split:
                dim = self.plan.split[loop.results[k]]
                t = _sub_type(arg.type, dim, self.plan.sub_block)
                self.copies[arg] = [body.insert_arg(t, arg.index + 1 + s) for s in range(self.plan.count)]
        self.run_block(body)
        for arg in reversed(old_args):
            if arg in self.copies:
                body.erase_arg(arg, safe_erase=False)
        new_loop = scf.ForOp(loop.lb, loop.ub, loop.step, inits, loop.detach_region(loop.body))
        new_loop.attributes.update(loop.attributes)
        new_loop.location = loop.location
        Rewriter.insert_op(new_loop, at)
        results = iter(new_loop.results)
        for res in loop.results:
            if res in self.plan.split:
                self.copies[res] = [next(results) for _ in range(self.plan.count)]
            else:
                res.replace_all_uses_with(next(results))
        loop.detach()
        self.replaced.append(loop)


FORMS = ("unrolled", "loop")


def apply_sub_tile(func: Operation, plan: SubTilePlan, form: str = "unrolled") -> None:
    """Rewrite `func` by `plan` (from plan_sub_tile) in `form`; nothing changes for a plan without a split."""
    if not plan.split or plan.seed is None:
        return
    where = location_str(plan.seed.owner.location)  # type: ignore[union-attr]
    if form == "loop":
        _wrap_in_sub_tile_loop(func, plan)
    else:
        splitter = _Splitter(plan)
        splitter.run_block(func.regions[0].blocks[0])
        splitter.finish()
    func.attributes[SUB_TILES] = StringAttr(
        f"{plan.count} x {plan.sub_block} of the {plan.block_elems} rows at {where}, {form}"
    )


def _wrap_in_sub_tile_loop(func: Operation, plan: SubTilePlan) -> None:
    """The loop form: `scf.for %s = 0 to S` around the program's work on its rows, every row value retyped
    to sub-block rows and each make_range of the rows offset by s * sub-block. Values without the rows
    defined between the first and last op on the rows move ahead of the loop; inside loops that also
    touch the rows (attention's key loop) they stay, so they are loaded once per sub-tile."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import i32

    block = func.regions[0].blocks[0]
    splitter = _Splitter(plan)
    top = list(block.ops)
    touched = [i for i, op in enumerate(top) if splitter._has_split(op)]
    moved = [op for op in top[touched[0] : touched[-1] + 1] if splitter._has_split(op)]
    anchor = top[touched[-1] + 1]
    zero, one = arith.ConstantOp.from_int_and_width(0, i32), arith.ConstantOp.from_int_and_width(1, i32)
    count = arith.ConstantOp.from_int_and_width(plan.count, i32)
    sub = arith.ConstantOp.from_int_and_width(plan.sub_block, i32)
    body = Block(arg_types=[i32])
    for c in (zero, one, count, sub):
        c.location = plan.seed.owner.location  # type: ignore[union-attr]
        Rewriter.insert_op(c, InsertPoint.before(anchor))
    offset = arith.MuliOp(body.args[0], sub.result)
    body.add_op(offset)
    for op in moved:
        op.detach()
        body.add_op(op)
    body.add_op(scf.YieldOp())
    loop = scf.ForOp(zero.result, count.result, one.result, [], body)
    loop.location = plan.seed.owner.location  # type: ignore[union-attr]
    Rewriter.insert_op(loop, InsertPoint.before(anchor))
    for key, dim in list(plan.split.items()):
        if isinstance(key, SSAValue):
            key._type = _sub_type(key.type, dim, plan.sub_block)  # type: ignore[attr-defined]  # retype in place
    for key, dim in list(plan.split.items()):
        if isinstance(key, tuple):
            user, i = key  # type: ignore[misc]
            user.operands[i] = _free_at_sub_tile(user, i, dim, plan.sub_block, offset.result)


def _free_at_sub_tile(user: Operation, i: int, dim: int, sub_block: int, offset: SSAValue) -> SSAValue:
    """A copy of free operand `i` of `user` at the sub-tile's shape, rows offset by `offset` for a range."""
    from xdsl.dialects import arith

    v = user.operands[i]
    op = v.owner
    assert isinstance(op, Operation)
    at = InsertPoint.before(user)
    new_t = _sub_type(v.type, dim, sub_block)
    props = dict(op.properties)
    if op.name == "arith.constant":
        value = op.properties["value"]
        if not isinstance(value, DenseIntOrFPElementsAttr) or not value.is_splat():
            raise PassFailedException(f"{location_str(op.location)}: a non-splat constant tensor is not split")
        props["value"] = DenseIntOrFPElementsAttr.from_list(new_t, [value.get_values()[0]])  # type: ignore[arg-type]
    if isinstance(op, tt.MakeRangeOp):
        start = op.start.value.data
        props = {"start": IntegerAttr(start, 32), "end": IntegerAttr(start + sub_block, 32)}
    new = op.__class__.create(
        operands=list(op.operands), result_types=[new_t], properties=props, attributes=dict(op.attributes)
    )
    new.location = op.location
    Rewriter.insert_op(new, at)
    if not isinstance(op, tt.MakeRangeOp):
        return new.results[0]
    shift = tt.SplatOp(offset, list(new_t.get_shape()))  # type: ignore[attr-defined]
    add = arith.AddiOp(new.results[0], shift.results[0])
    for o in (shift, add):
        o.location = op.location
        Rewriter.insert_op(o, at)
    return add.result


@dataclass(frozen=True)
class MtiaSubTilePass(ModulePass):
    """Split each kernel's row-parallel block dimension into sub-tiles of `sub_block` elements (module docstring)."""

    name = "mtia-sub-tile"
    sub_block: int = 0
    """Extent of a sub-tile along the split dimension, elements; 0 = off."""
    form: str = "unrolled"
    """"unrolled": sub-tiles one after another in each loop body, values without the rows shared (loaded once);
    "loop": one scf.for over the sub-tiles around the rows' work (CB IDs as un-split; shared tiles inside a
    loop on the rows are loaded once per sub-tile)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Split every tt.func that has a parallel program-id block dimension."""
        if self.sub_block == 0:
            return
        if self.sub_block < 0 or self.sub_block & (self.sub_block - 1):
            raise PassFailedException(f"mtia-sub-tile: sub-block={self.sub_block} is not a power of two")
        if self.form not in FORMS:
            raise PassFailedException(f"mtia-sub-tile: unknown form '{self.form}'; expected one of {', '.join(FORMS)}")
        for func in [f for f in ops_of(op) if isinstance(f, tt.FuncOp)]:
            apply_sub_tile(func, plan_sub_tile(func, self.sub_block), self.form)

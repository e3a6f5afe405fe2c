"""convert-tt-to-mtia: map tt ops onto MTIA-2i engines (tensor level).

- fp8 values become their bit patterns (i8); computing on them decodes to f32 and encodes back, on the
  RISC-V vector core (`fp8_emulation.py`).
- Loop-carried tensors of pointers that advance by a uniform step become scalar base pointers.
- tt.load/tt.store whose pointers form a strided block with a box mask -> mtia.dma_load/dma_store
  (effective shape in the bounds); a load of rows picked by an index tile (embedding lookups) ->
  mtia.dma_gather_rows (indexed DMA); other tensor accesses -> mtia.gather/scatter (scalar core);
  scalar accesses -> mtia.scalar_load/scalar_store (pattern `LowerScalarAccess`).
- tt.dot -> mtia.dpe_matmul; tt.reduce with a plain add/max/min combiner -> mtia.re_reduce (patterns
  `LowerDotToDpe`, `LowerReduceToRe`).
- tt.atomic_rmw / tt.atomic_cas -> mtia.atomic_rmw / mtia.atomic_cas (patterns `LowerAtomicRmw`,
  `LowerAtomicCas`; scalar core, element by element,
  charged as global reads and writes); with `scalar-core-atomics=false` they stay inside a vector
  command (right results, but their memory traffic is not charged).
- Every other op producing a tensor, and every scalar float op reading an engine value (one living in a
  CB: `transforms/analysis/cb_residency.py`), is wrapped into one engine command (a walk in program order,
  as the choice depends on what the ops before made): MLU for layout ops (mtia.extract_slice too: a copy
  inside LS, no DMA), SE for floating point in fp16/bf16/fp32 (with int8..int32), the RISC-V vector core
  otherwise (integers, f64, i64); a tl.dot the DPE cannot take (f64) too.
  Constant operands are cloned into the command's body (immediates).

Requires: a tt module with helper calls inlined (the frontend's `inline_and_clean`).
Example: mtia-opt k.mlir -p convert-tt-to-mtia
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter

from mtia_xdsl.dialects import mtia, tt
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.transforms.analysis.cb_residency import carried_into_cb
from mtia_xdsl.transforms.analysis.memory_access import (
    AffineForm,
    BlockAccess,
    Materializer,
    add,
    analyze_function,
    constant_other,
    leaves,
    mul,
)
from mtia_xdsl.transforms.arith_ops import arith
from mtia_xdsl.transforms.dce import region_dce
from mtia_xdsl.transforms.fp8_emulation import emulate_fp8
from mtia_xdsl.transforms.scf_utils import rebuild_for
from mtia_xdsl.transforms.walker import typed_walker
from mtia_xdsl.utils.clone import clone_op
from mtia_xdsl.utils.dtypes import element_dtype_name
from mtia_xdsl.utils.isa import isa
from mtia_xdsl.utils.locations import location_str, with_loc
from mtia_xdsl.utils.walk import ops_of

_LAYOUT_OPS = (
    "tt.broadcast",
    "tt.expand_dims",
    "tt.reshape",
    "tt.trans",
    "tt.join",
    "tt.split",
    "tt.cat",
    "mtia.extract_slice",
)
_REGION_OPS = (scf.ForOp, scf.IfOp, scf.WhileOp)
_STRUCTURAL = (*_REGION_OPS, scf.YieldOp, scf.ConditionOp)
_MAPPED_MTIA = (*mtia.ENGINE_OPS, mtia.ExtractSliceOp)
"""mtia ops the engine walk maps (other mtia ops, made by earlier steps, are left alone)."""


def _is_float(t: Attribute) -> bool:
    et = t.element_type if isinstance(t, TensorType) else t
    return isa(et, builtin.AnyFloat)  # a union of 18 float types


# ----------------------------------------------------------------------------------------------
# Step 1: loop-carried pointer tensors -> scalar base pointers
# ----------------------------------------------------------------------------------------------


def _defined_outside(v: SSAValue, loop: Operation) -> bool:
    """Whether `v` is defined outside `loop` (so it is loop-invariant)."""
    owner = v.owner if isinstance(v.owner, Operation) else v.owner.parent_op()
    return owner is None or not loop.is_ancestor(owner)


def _offsets_tensor(mat: Materializer, coeffs: tuple, shape: tuple[int, ...]) -> SSAValue | None:
    """Build `sum_d coeffs[d] * i_d` as a tensor<shape x i64> before mat.anchor (None if all zero)."""
    total: SSAValue | None = None
    rank = len(shape)
    for d, c in enumerate(coeffs):
        if isinstance(c, int) and c == 0:
            continue
        rng = mat._insert(tt.MakeRangeOp(0, shape[d]))
        r64 = mat._insert(arith.ExtSIOp(rng, TensorType(builtin.i64, [shape[d]])))
        cur = r64
        for axis in range(rank):
            if axis != d:
                cur = mat._insert(tt.ExpandDimsOp(cur, axis))
        if tuple(cur.type.get_shape()) != shape:
            cur = mat._insert(tt.BroadcastOp(cur, shape))
        coeff = mat._insert(tt.SplatOp(mat.i64(c), shape))
        term = mat._insert(arith.MuliOp(cur, coeff))
        total = term if total is None else mat._insert(arith.AddiOp(total, term))
    return total


def _carries_pointer_tensor(func: Operation) -> bool:
    """Whether an scf.for of `func` carries a tensor of pointers (what scalarize_loop_pointers rewrites)."""
    return any(
        isinstance(t := v.type, TensorType) and isinstance(t.element_type, tt.PointerType)
        for loop in ops_of(func)
        if isinstance(loop, scf.ForOp)
        for v in loop.iter_args
    )


def scalarize_loop_pointers(func: Operation) -> bool:
    """Rewrite one scf.for iter_arg of pointer-tensor type into a scalar base pointer; True if done.

    Applies when the init is an affine block `ptr + base + sum c_d i_d` and the yielded value is
    `tt.addptr(iter_arg, splat(step))`: the loop then carries `ptr + base` and rebuilds the tensor at
    the top of the body from the (loop-invariant) coefficients.
    """
    info = analyze_function(func)
    for loop in func.walk():
        if not isinstance(loop, scf.ForOp):
            continue
        body = loop.body.block
        yield_op = body.last_op
        assert isinstance(yield_op, scf.YieldOp)
        for idx, init in enumerate(loop.iter_args):
            t = init.type
            if not (isinstance(t, TensorType) and isinstance(t.element_type, tt.PointerType)):
                continue
            form = info.forms.get(init)
            arg = body.args[idx + 1]
            step_op = yield_op.operands[idx].owner
            if form is None or form.ptr is None or not isinstance(step_op, tt.AddPtrOp) or step_op.ptr != arg:
                continue
            if form.split:
                continue  # a flat index split across rows stays a tensor
            step = info.forms.get(step_op.offset)
            if (
                step is None
                or not step.uniform
                or not all(_defined_outside(v, loop) for c in form.coeffs for v in leaves(c))
            ):
                continue
            _rewrite_pointer_iter_arg(loop, idx, form, step)
            return True
    return False


def _rewrite_pointer_iter_arg(loop: scf.ForOp, idx: int, form: AffineForm, step: AffineForm) -> None:
    body = loop.body.block
    yield_op = body.last_op
    assert isinstance(yield_op, scf.YieldOp) and form.ptr is not None
    shape = tuple(loop.iter_args[idx].type.get_shape())
    before = Materializer(loop)
    first = body.first_op
    assert first is not None
    top = Materializer(first)
    at_yield = Materializer(yield_op)
    if form.limits or form.index is not None:
        # a form valid only up to its limits (a hinted `rm % M`) or with rows picked by an index tile is not
        # rebuilt from its coefficients: the loop carries the scalar distance advanced, added to the
        # loop-invariant initial tensor
        p0 = before.const(0)
        new_arg = body.insert_arg(p0.type, len(body.args))
        delta = top._insert(tt.SplatOp(new_arg, shape))
        rebuilt = top._insert(tt.AddPtrOp(loop.iter_args[idx], delta))
        p_next = at_yield.i64(add(new_arg, step.base))
    else:
        # init: the scalar base, computed before the loop
        p0 = before.ptr(form.ptr, form.base)
        coeffs_outside = tuple(before.i64(c) if not isinstance(c, int) else c for c in form.coeffs)
        # new scalar iter_arg, appended
        new_arg = body.insert_arg(p0.type, len(body.args))
        # rebuild the tensor at the top of the body
        splat = top._insert(tt.SplatOp(new_arg, shape))
        offs = _offsets_tensor(top, coeffs_outside, shape)
        rebuilt = splat if offs is None else top._insert(tt.AddPtrOp(splat, offs))
        # yield: advance the scalar base by the step
        p_next = at_yield.ptr(new_arg, step.base)
    old_arg = body.args[idx + 1]
    old_arg.replace_all_uses_with(rebuilt)
    new_yield = with_loc(scf.YieldOp(*yield_op.operands, p_next), yield_op)
    Rewriter.replace_op(yield_op, new_yield)
    inits = [*loop.iter_args, p0]
    keep = [i for i in range(len(inits)) if i != idx or loop.results[idx].uses]
    rebuild_for(loop, inits, keep)


# ----------------------------------------------------------------------------------------------
# Step 2: memory accesses
# ----------------------------------------------------------------------------------------------


def _constant_scalar(anchor: Operation, attr: Attribute) -> SSAValue:
    op = arith.ConstantOp(attr)
    op.location = anchor.location
    anchor.parent.insert_op_before(op, anchor)  # type: ignore[union-attr]
    return op.result


def convert_memory_accesses(func: Operation) -> None:
    """Replace every tt.load/tt.store in `func` by its DMA, gather/scatter or scalar-core form.

    Scalar accesses go first: a scalar they load may be a leaf of a block's bound or offset, which the
    analysis below must see as the new scalar-core load.
    """
    typed_walker(LowerScalarAccess(), (tt.LoadOp, tt.StoreOp), apply_recursively=False).rewrite_region(func.body)
    info = analyze_function(func)
    replaced: dict[SSAValue, SSAValue] = {}  # results of converted loads (an index tile may be one)
    for op in ops_of(func):
        if not isinstance(op, tt.LoadOp | tt.StoreOp):
            continue
        access = info.accesses.get(op)
        if access is not None:
            new = _dma_access(op, access, replaced)
        elif isinstance(op, tt.LoadOp):
            new = _gather(op)
        else:
            new = mtia.ScatterOp(op.ptr, op.value, op.mask)
        new.location = op.location
        if isinstance(op, tt.LoadOp) and new.results:
            replaced[op.result] = new.results[-1]
        Rewriter.replace_op(op, new)


def _store_box(op: tt.StoreOp, access: BlockAccess, mat: Materializer) -> SSAValue:
    """The tile a DMA store of `access` writes: the stored value, or for a multi-row box the flat value
    reshaped to the box, after a wrapped store's slice (the box is the block from `window` on along
    `window_dim`: the flat block, or one dimension of an n-D tile, the others whole)."""
    value = op.value
    if access.window is not None:
        assert isinstance(access.window, int) and access.view is not None
        d, view = access.window_dim, access.view
        inner = math.prod(view[:d]) * math.prod(view[d + 1 :])
        part_shape = (*view[:d], math.prod(access.shape) // inner, *view[d + 1 :])
        offsets = [access.window if e == d else 0 for e in range(len(view))]
        part = TensorType(op.value.type.element_type, part_shape)  # type: ignore[attr-defined]
        value = mat._insert(mtia.ExtractSliceOp(value, offsets, [], part))
    if access.view is not None and access.order is not None:  # moved in memory order (`fit_rank`)
        value = mat._insert(tt.ReshapeOp(value, access.unmerged))
        value = mat._insert(tt.TransOp(value, list(access.order)))
    if access.view is not None:
        value = mat._insert(tt.ReshapeOp(value, access.shape))
    return value


def _dma_access(op: tt.LoadOp | tt.StoreOp, access: BlockAccess, replaced: dict[SSAValue, SSAValue]) -> Operation:
    """The DMA form of `op`, a strided block access (`access`), its immediates built before `op`; a load of
    rows picked by an index tile (made by the converted load `replaced` maps it to) is an indexed DMA; a
    multi-row box (`access.view`) is moved as the box and reshaped to the flat tensor."""
    mat = Materializer(op)
    base = mat.ptr(access.ptr, access.offset)
    pointer = op.ptr.type.element_type  # type: ignore[attr-defined]
    if base.type != pointer:  # a block through recast pointers (bools stored as i8)
        base = mat._insert(tt.BitcastOp(base, pointer))
    if access.ls_gather is not None:
        assert isinstance(op, tt.LoadOp)
        return _ls_gather(op, access, mat, base)
    strides = [mat.i64(s) for s in access.strides]
    bounds = [mat.i64(b) for b in access.bounds]
    starts = [mat.i64(b) for b in access.starts] if access.starts is not None else []
    perm = memory_order(access)
    if perm is not None:  # moved in memory order, the MLU permutes the tile (see memory_order)
        return _permuted_dma(op, access, mat, base, [strides[d] for d in perm], [bounds[d] for d in perm],
                             [starts[d] for d in perm] if starts else [], perm, replaced)  # fmt: skip
    if isinstance(op, tt.StoreOp):
        return mtia.DmaStoreOp(base, strides, bounds, _store_box(op, access, mat), starts)
    other = access.other
    if isinstance(other, Attribute):
        other = _constant_scalar(op, other)
    if access.index is not None:
        scale = mat.i64(access.index_scale)
        index = replaced.get(access.index, access.index)
        if access.view is None:
            return mtia.DmaGatherRowsOp(base, index, scale, strides, bounds, other, op.result.type)
        index = _box_index(access, index, mat)
        box_type = TensorType(op.result.type.element_type, access.shape)
        box = mat._insert(mtia.DmaGatherRowsOp(base, index, scale, strides, bounds, other, box_type))
        return tt.ReshapeOp(box, access.view)
    if access.view is not None:  # a multi-row box, reshaped to the flat tensor
        box_type = TensorType(op.result.type.element_type, access.shape)
        box = mat._insert(mtia.DmaLoadOp(base, strides, bounds, other, box_type, starts=starts))
        return _box_to_tile(op, access, mat, box)
    return mtia.DmaLoadOp(base, strides, bounds, other, op.result.type, starts=starts)


def _box_to_tile(op: tt.LoadOp, access: BlockAccess, mat: Materializer, box: SSAValue) -> Operation:
    """The tile a load's multi-row box (`access.view`) holds: the flat box from `window` on (a wrapped box), or the
    box reshaped to the tile, after the MLU permuted a box moved in memory order (`access.order`, `fit_rank`)
    back to the tile's order."""
    if access.window is not None:
        flat = mat._insert(tt.ReshapeOp(box, (math.prod(access.shape),)))
        return mtia.ExtractSliceOp(flat, [mtia.DYNAMIC_OFFSET], [mat.i64(access.window)], op.result.type)
    assert access.view is not None
    if access.order is not None:
        order = access.order
        box = mat._insert(tt.ReshapeOp(box, [access.unmerged[d] for d in order]))
        box = mat._insert(tt.TransOp(box, [order.index(d) for d in range(len(order))]))
    return tt.ReshapeOp(box, access.view)


def _box_index(access: BlockAccess, index: SSAValue, mat: Materializer) -> SSAValue:
    """The index tile of a multi-row box's indexed DMA: the flat tile reshaped to the box (`index_box`), and
    for `index_at_row_starts` its first column, each row's start (the other columns are the row's next
    elements, which the strides reach)."""
    assert access.index_box is not None
    index = mat._insert(tt.ReshapeOp(index, access.index_box))
    if not access.index_at_row_starts:
        return index
    starts = TensorType(index.type.element_type, (*access.index_box[:-1], 1))  # type: ignore[attr-defined]
    return mat._insert(mtia.ExtractSliceOp(index, [0] * len(access.index_box), [], starts))


def _ls_gather(op: tt.LoadOp, access: BlockAccess, mat: Materializer, base: SSAValue) -> Operation:
    """An element gather from a DMA box (`BlockAccess.ls_gather`): the DMA moves the box [rows, row] into LS
    flat (it is dense), up to the rows the mask allows and no further than the end of the tensor's storage
    (`mtia.storage_extent`: a valid kernel may address a box reaching past its tensor that no lane reads past);
    the vector core computes each lane's position in it from its address (`tt.ptr_to_int`, the distance to
    the box's first element) and gathers the lanes from LS (`tt.gather`, RVV indexed loads). Lanes whose
    position is not among the elements the DMA moved are gathered from global memory by the scalar core
    (`mtia.gather` of those lanes only, which raises the out-of-bounds error for a lane outside every tensor).
    When the index provably stays in its row (`LsGather.exact`) no lane lies before the box or past its rows:
    only a box clipped at the tensor's end can leave a valid lane out (a lane reading past that end), so the
    scalar core's gather runs only then (`_lanes_past_the_clip`), not in every GEMM loop step."""
    assert access.ls_gather is not None
    t = op.result.type
    assert isinstance(t, TensorType)
    shape, elem = tuple(t.get_shape()), t.element_type
    rows, row = access.shape
    other = _constant_scalar(op, access.other) if isinstance(access.other, Attribute) else access.other
    rows_moved = mat.i64(mul(("min", ("max", access.bounds[0], 0), rows), row))
    moved = mat._insert(arith.MinSIOp(rows_moved, mat._insert(mtia.StorageExtentOp(base))))
    flat = mat._insert(mtia.DmaLoadOp(base, [mat.i64(1)], [moved], other, TensorType(elem, (rows * row,))))

    def splat(v: SSAValue) -> SSAValue:
        return mat._insert(tt.SplatOp(v, shape))

    i64s = TensorType(builtin.i64, shape)
    addr = mat._insert(tt.PtrToIntOp(op.ptr, i64s))
    first = mat._insert(tt.PtrToIntOp(base, builtin.i64))
    distance = mat._insert(arith.SubiOp(addr, splat(first)))
    pos = mat._insert(arith.DivSIOp(distance, splat(mat.const(mtia.element_bytes(elem)))))
    valid, inside = op.mask, None
    if not access.ls_gather.exact:  # lanes among the elements the DMA moved: 0 <= pos < moved
        inside = mat._insert(
            arith.AndIOp(
                mat._insert(arith.CmpiOp(pos, splat(mat.const(0)), "sge")),
                mat._insert(arith.CmpiOp(pos, splat(moved), "slt")),
            )
        )
        valid = mat._insert(arith.AndIOp(inside, op.mask)) if op.mask is not None else inside
    index = mat._insert(arith.SelectOp(valid, pos, splat(mat.const(0)))) if valid is not None else pos
    n = math.prod(shape)
    index = mat._insert(tt.ReshapeOp(index, (n,))) if len(shape) != 1 else index
    picked = mat._insert(tt.GatherOp(flat, index, 0))
    if len(shape) != 1:
        picked = mat._insert(tt.ReshapeOp(picked, shape))
    if inside is None:  # exact: a masked-off lane is `other` (its row is past the DMA's bound, or it is not)
        if op.mask is not None and other is not None:
            picked = mat._insert(arith.SelectOp(op.mask, picked, splat(other)))
        clipped = mat._insert(arith.CmpiOp(moved, rows_moved, "slt"))
        return _lanes_past_the_clip(op, clipped, pos, moved, picked, other)
    outside = mat._insert(arith.XOrIOp(inside, splat(mat._insert(arith.ConstantOp(IntegerAttr(1, 1))))))
    rest_mask = mat._insert(arith.AndIOp(outside, op.mask)) if op.mask is not None else outside
    return arith.SelectOp(valid, picked, _outside_box_gather(op, rest_mask, other, mat._insert))


def _outside_box_gather(
    op: tt.LoadOp, mask: SSAValue, other: SSAValue | None, insert: Callable[[Operation], SSAValue]
) -> SSAValue:
    """The scalar core's gather of the lanes of `op` in `mask` (`mtia.outside_box`: lanes an LS gather's box
    does not hold), `other` elsewhere, made by `insert`."""
    gather = mtia.GatherOp(op.ptr, mask, other, op.result.type)
    gather.attributes[mtia.OUTSIDE_BOX_ATTR] = builtin.UnitAttr()
    return insert(gather)


def _lanes_past_the_clip(
    op: tt.LoadOp, clipped: SSAValue, pos: SSAValue, moved: SSAValue, picked: SSAValue, other: SSAValue | None
) -> Operation:
    """`picked` (an exact LS gather's tile) with, when the box DMA was `clipped` at the end of the tensor's
    storage (`scf.if`), the valid lanes at positions >= `moved` gathered by the scalar core: lanes reading past
    the tensor's end, for which `mtia.gather` raises the out-of-bounds error (or reads memory as written)."""
    block = Block()

    def add(new: Operation) -> SSAValue:
        new.location = op.location
        block.add_op(new)
        return new.results[0]

    shape = tuple(op.result.type.get_shape())  # type: ignore[attr-defined]
    past = add(arith.CmpiOp(pos, add(tt.SplatOp(moved, shape)), "sge"))
    rest_mask = add(arith.AndIOp(past, op.mask)) if op.mask is not None else past
    rest = _outside_box_gather(op, rest_mask, other, add)
    block.add_op(scf.YieldOp(add(arith.SelectOp(rest_mask, rest, picked))))
    return scf.IfOp(clipped, [op.result.type], Region(block), Region(Block([scf.YieldOp(picked)])))


def _identity(v: SSAValue) -> Operation:
    """An op whose result is `v` (the replacement of a load must be a new op): a reshape to its own shape."""
    return tt.ReshapeOp(v, tuple(v.type.get_shape()))  # type: ignore[attr-defined]


def _permuted_dma(
    op: tt.LoadOp | tt.StoreOp,
    access: BlockAccess,
    mat: Materializer,
    base: SSAValue,
    strides: list[SSAValue],
    bounds: list[SSAValue],
    starts: list[SSAValue],
    perm: list[int],
    replaced: dict[SSAValue, SSAValue],
) -> Operation:
    """The DMA of a block in memory order `perm` (strides, bounds and starts already permuted), the tile
    permuted to or from it by `tt.trans` (an MLU layout op); rows picked by an index tile are gathered in
    memory order, the index tile permuted the same way."""
    if isinstance(op, tt.StoreOp):
        box = _store_box(op, access, mat)
        return mtia.DmaStoreOp(base, strides, bounds, mat._insert(tt.TransOp(box, perm)), starts)
    other = _constant_scalar(op, access.other) if isinstance(access.other, Attribute) else access.other
    box_type = TensorType(op.result.type.element_type, [access.shape[d] for d in perm])
    if access.index is not None:
        index = mat._insert(tt.TransOp(replaced.get(access.index, access.index), perm))
        scale = mat.i64(access.index_scale)
        box = mat._insert(mtia.DmaGatherRowsOp(base, index, scale, strides, bounds, other, box_type))
    else:
        box = mat._insert(mtia.DmaLoadOp(base, strides, bounds, other, box_type, starts=starts))
    return tt.TransOp(box, [perm.index(d) for d in range(len(perm))])


def memory_order(access: BlockAccess) -> list[int] | None:
    """The order in which a strided block is moved when its last dimension is not the contiguous one, else
    None: the dimension of unit stride goes last (`perm`, box dim i = tile dim perm[i]).

    A DMA moves a block as contiguous runs along its last dimension, one descriptor each (the timing
    model's cost); a tile read along a column of memory (a GEMM template's B = W^T of nn.Linear, strides
    [1, K]) would be one run per element. Moved in memory order instead, it is one run per row, and the
    MLU permutes the tile in LS (`tt.trans`, a layout op). Rows picked by an index tile are moved so when
    the tile is constant (size 1) along the contiguous dimension (the bmm template's B = z^T with `rn % N`);
    blocks with a multi-row view or a wrapped window keep their order, except the box an n-D tile's slice
    is stored as (cnn's channels-last copy, `_wrapped_store`): the permutation acts on the box.
    """
    strides, shape = access.strides, access.shape
    nd_window = access.window is not None and access.view is not None and len(access.view) > 1
    if ((access.view is not None or access.window is not None) and not nd_window) or len(shape) < 2:
        return None
    if isinstance(strides[-1], int) and strides[-1] == 1:
        return None
    unit = [d for d, s in enumerate(strides[:-1]) if isinstance(s, int) and s == 1 and shape[d] > 1]
    if len(unit) != 1:
        return None
    if access.index is not None:
        index_shape = access.index.type.get_shape()  # type: ignore[attr-defined]
        if len(index_shape) != len(shape) or index_shape[unit[0]] != 1:
            return None
    return [d for d in range(len(shape)) if d != unit[0]] + [unit[0]]


@dataclass(frozen=True)
class LowerScalarAccess(RewritePattern):
    """tt.load / tt.store of one scalar -> mtia.scalar_load / mtia.scalar_store (scalar core); a mask
    becomes an scf.if around the access, whose else branch of a load yields `other` (or zero)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.LoadOp | tt.StoreOp, rewriter: PatternRewriter) -> None:
        if isinstance(op.ptr.type, TensorType):
            return
        new = _scalar_access(op)
        new.location = op.location
        rewriter.replace(op, new)


def _scalar_access(op: tt.LoadOp | tt.StoreOp) -> Operation:
    """A scalar-core load or store; a mask becomes an scf.if around it (masked loads yield `other`)."""
    if isinstance(op, tt.LoadOp):
        access: Operation = mtia.ScalarLoadOp(op.ptr, op.result.type)
    else:
        access = mtia.ScalarStoreOp(op.ptr, op.value)
    access.location = op.location
    if op.mask is None:
        return access
    if isinstance(op, tt.StoreOp):
        return with_loc(scf.IfOp(op.mask, [], [access, scf.YieldOp()]), op)
    else_ops = [] if op.other is not None else _zero_ops(op.result.type)
    other = op.other if op.other is not None else else_ops[-1].results[0]
    return with_loc(
        scf.IfOp(op.mask, [op.result.type], [access, scf.YieldOp(access.results[0])], [*else_ops, scf.YieldOp(other)]),
        op,
    )


def _zero_ops(t: Attribute) -> list[Operation]:
    """Ops making a zero of scalar type `t` (a null pointer for pointers); the last one's result is it."""
    if isinstance(t, builtin.AnyFloat):
        return [arith.ConstantOp(FloatAttr(0.0, t))]
    if isinstance(t, tt.PointerType):
        zero = arith.ConstantOp(IntegerAttr(0, 64))
        return [zero, tt.IntToPtrOp(zero.result, t)]
    return [arith.ConstantOp(IntegerAttr(0, t))]


def _gather(op: tt.LoadOp) -> Operation:
    other_attr = constant_other(op.other) if op.other is not None else None
    if op.other is not None and other_attr is None:
        # gather then select the non-constant `other` where masked off
        gather = mtia.GatherOp(op.ptr, op.mask, None, op.result.type)
        gather.location = op.location
        op.parent.insert_op_before(gather, op)  # type: ignore[union-attr]
        return arith.SelectOp(op.mask, gather.result[0], op.other)
    other = _constant_scalar(op, other_attr) if other_attr is not None else None
    return mtia.GatherOp(op.ptr, op.mask, other, op.result.type)


def _loc(op: Operation) -> str:
    return location_str(op.location)


# ----------------------------------------------------------------------------------------------
# Step 3: engines
# ----------------------------------------------------------------------------------------------

_REDUCE_KINDS = {f"arith.{kind}": kind for kind in mtia.REDUCE_KINDS}
"""Combiner op name -> mtia.re_reduce kind."""


def _reduce_kind(op: tt.ReduceOp) -> str | None:
    """Return the combiner kind if op reduces one operand with a single known binary op."""
    if len(op.srcs) != 1:
        return None
    ops = list(op.combineOp.block.ops)
    if len(ops) != 2:
        return None
    comb, ret = ops
    block_args = op.combineOp.block.args
    if comb.name not in _REDUCE_KINDS or set(comb.operands) != set(block_args) or ret.operands[0] != comb.results[0]:
        return None
    return _REDUCE_KINDS[comb.name]


@dataclass
class _EngineMapper:
    """Walks a function in order, mapping each op to its engine; tracks engine-produced values."""

    resident: set[SSAValue]
    late: bool = False
    """Whether the last walk found a region argument to be an engine value after mapping its readers."""

    def run_block(self, block: Block) -> None:
        for op in list(block.ops):
            self.visit(op)

    def visit(self, op: Operation) -> None:
        if isa(op, _REGION_OPS):
            self._visit_region_op(op)
        elif not isa(op, _STRUCTURAL) and not (op.name.startswith("mtia.") and not isa(op, _MAPPED_MTIA)):
            new = self.map_op(op)
            if new is not None:
                self.resident.update(new.results)

    def _visit_region_op(self, op: Operation) -> None:
        """Values the op carries from engine values are engine values too (`cb_residency`'s rule: from
        the inits before its regions are mapped, from what they yield after). A region argument found to
        be one only after its regions were mapped sets `late`: its readers must be mapped again."""
        self.resident.update(carried_into_cb(op, self.resident))
        for region in op.regions:
            for block in region.blocks:
                self.run_block(block)
        new = [v for v in carried_into_cb(op, self.resident) if v not in self.resident]
        self.late |= any(isinstance(v, BlockArgument) for v in new)
        self.resident.update(new)

    def map_op(self, op: Operation) -> Operation | None:
        if isa(op, mtia.ENGINE_OPS):
            return op
        if isinstance(op, tt.DotOp):  # one the DPE does not take (LowerDotToDpe took the others)
            return wrap_in_engine(op, mtia.VecComputeOp)  # f64 (or wide int) GEMM: vector core
        if not self._needs_engine(op):
            return None
        return wrap_in_engine(op, _engine_for(op))

    def _needs_engine(self, op: Operation) -> bool:
        if isinstance(op, arith.ConstantOp) or op.name in ("tt.func", "tt.return", "tt.call", "func.return"):
            return False
        if any(isinstance(r.type, TensorType) for r in op.results):
            return True
        # scalar floating-point math on engine results stays on the SE; integer and pointer scalars
        # (addresses, loop bounds, branch conditions) go to the scalar core, which reads them from the CB
        return (
            any(v in self.resident for v in op.operands)
            and op.name.startswith(("arith.", "math.", "tt."))
            and any(_is_float(v.type) for v in (*op.operands, *op.results))
        )


def _in_engine_body(op: Operation) -> bool:
    """Whether `op` sits in the body of an engine command (made by the fp8 emulation): already mapped."""
    return isinstance(op.parent_op(), mtia.EngineComputeOp)


@dataclass(frozen=True)
class LowerDotToDpe(RewritePattern):
    """tt.dot whose operands the DPE takes -> mtia.dpe_matmul (the engine walk puts the others on the
    vector core)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.DotOp, rewriter: PatternRewriter) -> None:
        if not _dpe_takes(op.a.type) or _in_engine_body(op):
            return
        precision = op.inputPrecision.value.data
        rewriter.replace(op, with_loc(mtia.DpeMatmulOp(op.a, op.b, op.c, precision, op.results[0].type), op))


@dataclass(frozen=True)
class LowerReduceToRe(RewritePattern):
    """tt.reduce of one operand with a plain add/max/min combiner -> mtia.re_reduce (others: the engine
    walk wraps them into a command)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.ReduceOp, rewriter: PatternRewriter) -> None:
        kind = _reduce_kind(op)
        if kind is None or _in_engine_body(op):
            return
        new = mtia.ReReduceOp(op.srcs[0], op.axis.value.data, kind, op.results[0].type)
        rewriter.replace(op, with_loc(new, op))


@dataclass(frozen=True)
class LowerAtomicRmw(RewritePattern):
    """tt.atomic_rmw -> mtia.atomic_rmw (scalar core; only with `scalar-core-atomics`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.AtomicRMWOp, rewriter: PatternRewriter) -> None:
        if _in_engine_body(op):
            return
        props = (op.atomic_rmw_op.value.data, op.sem.value.data, op.scope.value.data)
        rewriter.replace(op, with_loc(mtia.AtomicRmwOp(op.ptr, op.val, op.mask, *props, op.result.type), op))


@dataclass(frozen=True)
class LowerAtomicCas(RewritePattern):
    """tt.atomic_cas -> mtia.atomic_cas (scalar core; only with `scalar-core-atomics`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.AtomicCASOp, rewriter: PatternRewriter) -> None:
        if _in_engine_body(op):
            return
        props = (op.sem.value.data, op.scope.value.data)
        rewriter.replace(op, with_loc(mtia.AtomicCasOp(op.ptr, op.cmp, op.val, *props, op.result.type), op))


def lower_engine_ops(func: tt.FuncOp, scalar_core_atomics: bool = True) -> None:
    """Lower the tt ops that have their own engine op (tt.dot, tt.reduce, atomics), one pattern each."""
    patterns: list[RewritePattern] = [LowerDotToDpe(), LowerReduceToRe()]
    if scalar_core_atomics:
        patterns += [LowerAtomicRmw(), LowerAtomicCas()]
    PatternRewriteWalker(GreedyRewritePatternApplier(patterns), apply_recursively=False).rewrite_region(func.body)


def _element(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, TensorType) else t


def _se_takes(t: Attribute) -> bool:
    """Whether the SE computes on elements of type `t` (`MachineConfig.SE_DTYPES`)."""
    return element_dtype_name(t) in MachineConfig.SE_DTYPES


def _dpe_takes(t: Attribute) -> bool:
    """Whether the DPE takes `tl.dot` operands of type `t` (`MachineConfig.dpe_takes`)."""
    name = element_dtype_name(t)
    return name in MachineConfig.DPE_INT8_RATE_DTYPES or name in MachineConfig.DPE_16BIT_RATE_DTYPES


def _engine_for(op: Operation) -> type[mtia.EngineComputeOp]:
    """MLU for layout ops; SE for floating-point work in the SE's types; the vector core otherwise
    (integer work, and f64 / i64 values, which the SE does not take)."""
    if op.name in _LAYOUT_OPS:
        return mtia.MluComputeOp
    if op.name == "tt.gather":  # RVV indexed loads from LS (the SE is elementwise)
        return mtia.VecComputeOp
    types = [v.type for v in (*op.results, *op.operands)]
    if any(_is_float(t) for t in types) and all(
        _se_takes(t) for t in types if not isinstance(_element(t), tt.PointerType)
    ):
        return mtia.SeComputeOp
    return mtia.VecComputeOp


def _replace(op: Operation, new: Operation) -> Operation:
    new.location = op.location
    Rewriter.replace_op(op, new)
    return new


def wrap_in_engine(op: Operation, engine: type[mtia.EngineComputeOp]) -> Operation:
    """Replace `op` by an engine command whose body is a clone of `op`; constants become immediates."""
    inputs: list[SSAValue] = []
    for v in op.operands:
        if not isinstance(v.owner, arith.ConstantOp) and v not in inputs:
            inputs.append(v)
    block = Block(arg_types=[v.type for v in inputs])
    for arg, v in zip(block.args, inputs, strict=True):
        arg.name_hint = v.name_hint  # the body reads `%x` as `%x`: the kernel's names reach the emitters
    value_map: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args, strict=True))
    for v in op.operands:
        if v not in value_map:
            const = clone_op(v.owner)
            block.add_op(const)
            value_map[v] = const.results[0]
    inner = clone_op(op, value_map)
    block.add_op(inner)
    block.add_op(with_loc(mtia.YieldOp(*inner.results), op))
    new = engine(inputs, [r.type for r in op.results], Region(block))
    return _replace(op, new)


def _wrap_leftover_constants(func: Operation) -> None:
    """Tensor constants still read outside engine bodies become fill commands (SE, or VEC for ints)."""
    for op in ops_of(func):
        if isinstance(op, arith.ConstantOp) and isinstance(op.result.type, TensorType):
            if isinstance(op.parent_op(), mtia.EngineComputeOp):
                continue
            if op.result.uses:
                wrap_in_engine(op, _engine_for(op))


@dataclass(frozen=True)
class ConvertTtToMtiaPass(ModulePass):
    """Lower tt ops to mtia engine ops (tensor level); see the module docstring.

    Requires: helper calls inlined. Raises: PassFailedException for accesses it cannot lower, naming
    the kernel line.
    Example: mtia-opt k.mlir -p convert-tt-to-mtia
    """

    name = "convert-tt-to-mtia"
    scalar_core_atomics: bool = True
    """Lower atomics to mtia.atomic_rmw/atomic_cas scalar-core commands (see the module docstring)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in [f for f in op.ops if isinstance(f, tt.FuncOp)]:
            convert_function(func, self.scalar_core_atomics)


_MAX_POINTER_ITER_ARGS = 64
"""Loop-carried pointer tensors scalarized per function at most (each rewrite re-runs the analysis)."""


def map_engines(func: tt.FuncOp) -> None:
    """Map every op of `func` not lowered by `lower_engine_ops` to its engine (step 3), in program order.

    An op reading a carried value is mapped before the value's yield: if the yield turns out to be an
    engine value, the carried value lives in a CB (`cb_residency`, the rule mtia-cb-bufferize places CBs
    by), so the walk repeats, keeping what it knows, until it finds no such value late.
    """
    mapper = _EngineMapper(set(), late=True)
    while mapper.late:
        mapper.late = False
        mapper.run_block(func.body.block)


def convert_function(func: tt.FuncOp, scalar_core_atomics: bool = True) -> None:
    """Apply the steps of the pass to one kernel function."""
    emulate_fp8(func)
    for _ in range(_MAX_POINTER_ITER_ARGS):
        if not _carries_pointer_tensor(func) or not scalarize_loop_pointers(func):
            break  # (the check first: without such an iter_arg the analysis would find nothing to rewrite)
    region_dce(func.body)
    convert_memory_accesses(func)
    region_dce(func.body)
    lower_engine_ops(func, scalar_core_atomics)
    map_engines(func)
    _wrap_leftover_constants(func)
    region_dce(func.body)

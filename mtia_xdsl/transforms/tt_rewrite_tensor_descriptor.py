"""tt-rewrite-tensor-descriptor-to-pointer: tensor descriptor ops become pointer-tensor loads and stores.

Like upstream's RewriteTensorDescriptorToPointer, every use of a `tt.make_tensor_descriptor` result is
rewritten in terms of the descriptor's base, shape and strides:
- `tt.descriptor_load %d[i_0, ...]` -> `tt.load` of `base + sum_d (i_d + range_d) * stride_d` with the mask
  `0 <= i_d + range_d < shape_d` for every d and `other` = the padding (0 or NaN);
- `tt.descriptor_store` -> masked `tt.store`; `tt.descriptor_reduce` -> masked `tt.atomic_rmw`;
- `tt.descriptor_gather` / `tt.descriptor_scatter` -> the same with rows taken from `x_offsets`.
A block load or store is one masked access: its mask is a box (`-i_d <= range_d < shape_d - i_d`),
which convert-tt-to-mtia turns into one DMA with effective-shape bounds and, for a block beginning
before its tensor, start lanes (no branch, no pointer or mask tensors at run time).

A kernel argument of type `!tt.tensordesc` (a host-side `triton.tools.tensor_descriptor.TensorDescriptor`;
Triton's frontend follows it with the descriptor's shape, i32 each, and strides, i64 each) becomes two
arguments, the base `!tt.ptr` and an i1 that is true for `padding="nan"` (the padding is not part of
Triton's specialization key, so it is a run-time value here as in upstream's decomposed descriptors):
`(!tt.tensordesc<B>, i32 x r, i64 x r) -> (!tt.ptr<e>, i1, i32 x r, i64 x r)`. The launcher
(`mtia_xdsl.runtime.launch`) passes a host descriptor in that order.

Requires: helpers inlined (each descriptor is made in the function that uses it).
Raises: PassFailedException at the op's kernel line for a descriptor that does not come from a
`tt.make_tensor_descriptor` in the same function or from a kernel argument (carried through a loop or
branch), and for `inc`/`dec` reductions.
Example: mtia-opt k.mlir -p tt-rewrite-tensor-descriptor-to-pointer
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    TensorType,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.dialects import tt
from mtia_xdsl.transforms.arith_ops import arith
from mtia_xdsl.transforms.walker import typed_walker
from mtia_xdsl.utils.isa import isa
from mtia_xdsl.utils.locations import location_str, with_loc
from mtia_xdsl.utils.walk import ops_of

_SLT, _SGE = 2, 5  # arith.cmpi predicates


@dataclass(frozen=True)
class _Descriptor:
    """What a tensor descriptor stands for: the operands of its tt.make_tensor_descriptor."""

    base: SSAValue
    shape: Sequence[SSAValue]
    strides: Sequence[SSAValue]
    block: TensorType
    """The block type with a signless element (what loads produce)."""
    padding_nan: bool
    unsigned: bool
    nan_flag: SSAValue | None = None
    """An i1 true for NaN padding, known at run time only (host descriptors), else None."""


def _is_unsigned(desc_type: tt.TensorDescType) -> bool:
    elem = desc_type.block_type.element_type
    return isinstance(elem, IntegerType) and elem.signedness.data == Signedness.UNSIGNED


def _descriptor(desc: SSAValue, user: Operation, host: dict[SSAValue, _Descriptor]) -> _Descriptor:
    if desc in host:
        return host[desc]
    make = desc.owner
    if not isinstance(make, tt.MakeTensorDescOp):
        raise PassFailedException(
            f"{location_str(user.location)}: error: {user.name} uses a tensor descriptor that is not made by "
            "tl.make_tensor_descriptor in this kernel or passed as a kernel argument (it is carried through a "
            "loop or branch); create the descriptor with tl.make_tensor_descriptor where it is used"
        )
    desc_type = make.result.type
    return _Descriptor(
        make.base,
        list(make.shape),
        list(make.strides),
        desc_type.value_type(),
        make.padding_name == "nan",
        _is_unsigned(desc_type),
    )


def _host_descriptors(func: tt.FuncOp) -> dict[SSAValue, _Descriptor]:
    """Give each `!tt.tensordesc` argument of `func` its base pointer and padding-flag arguments.

    The new arguments follow the descriptor's; the descriptor argument itself is erased by
    `_erase_host_descriptors` once nothing uses it. Raises: PassFailedException at the function when the
    descriptor is not followed by its shape (i32) and strides (i64), as Triton's frontend emits them.
    """
    block = func.body.blocks.first
    if block is None:
        return {}
    found: dict[SSAValue, _Descriptor] = {}
    for arg in [a for a in block.args if isinstance(a.type, tt.TensorDescType)]:
        desc_type = arg.type
        assert isinstance(desc_type, tt.TensorDescType)
        rank = len(desc_type.block_type.get_shape())
        rest = list(block.args[arg.index + 1 : arg.index + 1 + 2 * rank])
        if [a.type for a in rest] != [i32] * rank + [i64] * rank:
            raise PassFailedException(
                f"{location_str(func.location)}: error: the tensor descriptor argument {arg.index} of "
                f"{func.sym_name.data} is not followed by its shape ({rank} x i32) and strides ({rank} x i64) "
                "as Triton's frontend passes a host TensorDescriptor"
            )
        block_type = desc_type.value_type()
        elem = block_type.element_type
        base = block.insert_arg(tt.PointerType(elem), arg.index + 1)
        nan_flag = block.insert_arg(i1, arg.index + 2)
        found[arg] = _Descriptor(base, rest[:rank], rest[rank:], block_type, False, _is_unsigned(desc_type), nan_flag)
    return found


def _erase_host_descriptors(func: tt.FuncOp) -> None:
    """Erase the (now unused) `!tt.tensordesc` arguments of `func` and update its type and arg_attrs."""
    block = func.body.blocks.first
    if block is None:
        return
    attrs = list(func.arg_attrs.data) if func.arg_attrs is not None else None
    for arg in reversed([a for a in block.args if isinstance(a.type, tt.TensorDescType)]):
        if arg.uses:
            user = next(iter(arg.uses)).operation
            raise PassFailedException(
                f"{location_str(user.location)}: error: the tensor descriptor argument is passed to {user.name}; "
                "use it only in tt.descriptor_* ops of the kernel"
            )
        if attrs is not None:
            attrs[arg.index : arg.index + 1] = [DictionaryAttr({}), DictionaryAttr({})]
        block.erase_arg(arg)
    func.function_type = FunctionType.from_lists([a.type for a in block.args], func.function_type.outputs.data)
    if attrs is not None:
        func.arg_attrs = ArrayAttr(attrs)


class _Emit:
    """Creates ops before `anchor` with its location."""

    def __init__(self, rewriter: PatternRewriter, anchor: Operation):
        self.rewriter = rewriter
        self.anchor = anchor
        self.ip = InsertPoint.before(anchor)

    def op(self, new: Operation) -> SSAValue:
        self.rewriter.insert(with_loc(new, self.anchor), self.ip)
        return new.results[0] if new.results else None  # type: ignore[return-value]

    def const(self, value: int | float, ty: Attribute) -> SSAValue:
        attr = FloatAttr(value, ty) if not isinstance(ty, IntegerType) else IntegerAttr(int(value), ty)  # type: ignore[arg-type]
        return self.op(arith.ConstantOp(attr, ty))

    def splat(self, v: SSAValue, shape: Sequence[int]) -> SSAValue:
        return self.op(tt.SplatOp(v, list(shape)))

    def to_block(self, v: SSAValue, axis: int, shape: Sequence[int]) -> SSAValue:
        """Expand a 1-d tensor along every axis but `axis` and broadcast it to `shape`."""
        for d in range(len(shape)):
            if d != axis:
                v = self.op(tt.ExpandDimsOp(v, d))
        if list(tt.shape_of(v.type)) != list(shape):
            v = self.op(tt.BroadcastOp(v, list(shape)))
        return v

    def coords(self, start: SSAValue, size: int) -> SSAValue:
        """Return `start + [0, size)` as tensor<size x i32>."""
        return self.op(arith.AddiOp(self.splat(start, [size]), self.op(tt.MakeRangeOp(0, size))))

    def and_all(self, conds: Sequence[SSAValue]) -> SSAValue:
        out = conds[0]
        for c in conds[1:]:
            out = self.op(arith.AndIOp(out, c))
        return out


@dataclass(frozen=True)
class _Access:
    """Pointer tensor and mask (both bounds of every dimension) of one descriptor access."""

    ptr: SSAValue
    full: SSAValue


def _access(e: _Emit, d: _Descriptor, coords: Sequence[SSAValue], shape: Sequence[int]) -> _Access:
    """Build the pointers and masks for coordinates `coords[k]` (i32 tensors already of `shape`)."""
    offset: SSAValue | None = None
    upper: list[SSAValue] = []
    lower: list[SSAValue] = []
    zero = e.splat(e.const(0, i32), shape)
    for c, size, stride in zip(coords, d.shape, d.strides, strict=True):
        term = e.op(arith.MuliOp(e.op(arith.ExtSIOp(c, TensorType(i64, shape))), e.splat(stride, shape)))
        offset = term if offset is None else e.op(arith.AddiOp(offset, term))
        upper.append(e.op(arith.CmpiOp(c, e.splat(size, shape), _SLT)))
        lower.append(e.op(arith.CmpiOp(c, zero, _SGE)))
    assert offset is not None
    ptr = e.op(tt.AddPtrOp(e.splat(d.base, shape), offset))
    return _Access(ptr, e.and_all([*upper, *lower]))


def _block_access(e: _Emit, d: _Descriptor, indices: Sequence[SSAValue]) -> _Access:
    """Return the block access at `indices`."""
    shape = d.block.get_shape()
    coords = [e.to_block(e.coords(i, n), k, shape) for k, (i, n) in enumerate(zip(indices, shape, strict=True))]
    return _access(e, d, coords, shape)


def _gather_access(e: _Emit, d: _Descriptor, x_offsets: SSAValue, y_offset: SSAValue) -> _Access:
    rows = tt.shape_of(x_offsets.type)[0]
    cols = d.block.get_shape()[1]
    shape = [rows, cols]
    x = x_offsets
    if tt.element_type(x.type) != i32:
        x = e.op(arith.ExtSIOp(x, TensorType(i32, [rows])))
    return _access(e, d, [e.to_block(x, 0, shape), e.to_block(e.coords(y_offset, cols), 1, shape)], shape)


def _padding(e: _Emit, d: _Descriptor, shape: Sequence[int]) -> SSAValue:
    """Return the `other` of loads through `d`: its padding (0 or NaN) splat to `shape`."""
    elem = d.block.element_type
    if d.nan_flag is not None and not isinstance(elem, IntegerType):
        padding = e.op(arith.SelectOp(d.nan_flag, e.const(float("nan"), elem), e.const(0, elem)))
        return e.splat(padding, shape)
    value = float("nan") if d.padding_nan else 0
    return e.splat(e.const(value, elem), shape)


class _DescriptorPattern(RewritePattern):
    """A rewrite of one tt.descriptor_* op; `host` maps host-descriptor arguments to what they stand for."""

    def __init__(self, host: dict[SSAValue, _Descriptor]):
        self.host = host


class _RewriteLoad(_DescriptorPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.DescriptorLoadOp, rewriter: PatternRewriter) -> None:
        d = _descriptor(op.desc, op, self.host)
        e = _Emit(rewriter, op)
        acc = _block_access(e, d, list(op.indices))
        other = _padding(e, d, d.block.get_shape())
        load = e.op(tt.LoadOp(acc.ptr, acc.full, other, op.cache, op.evict))
        rewriter.replace(op, [], [load])


class _RewriteStore(_DescriptorPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.DescriptorStoreOp, rewriter: PatternRewriter) -> None:
        d = _descriptor(op.desc, op, self.host)
        e = _Emit(rewriter, op)
        acc = _block_access(e, d, list(op.indices))
        e.op(tt.StoreOp(acc.ptr, op.src, acc.full))
        rewriter.erase(op)


def _rmw_kind(op: tt.DescriptorReduceOp, d: _Descriptor) -> str:
    kind = op.kind_name
    is_float = not isinstance(d.block.element_type, IntegerType)
    if kind == "add":
        return "fadd" if is_float else "add"
    if kind in ("min", "max"):
        return f"u{kind}" if d.unsigned else kind
    if kind in ("and", "or", "xor"):
        return kind
    raise PassFailedException(
        f"{location_str(op.location)}: error: tt.descriptor_reduce {kind} has no tt.atomic_rmw equivalent; "
        "use add, min, max, and, or or xor"
    )


class _RewriteReduce(_DescriptorPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.DescriptorReduceOp, rewriter: PatternRewriter) -> None:
        d = _descriptor(op.desc, op, self.host)
        kind = _rmw_kind(op, d)
        e = _Emit(rewriter, op)
        acc = _block_access(e, d, list(op.indices))
        e.op(tt.AtomicRMWOp(kind, acc.ptr, op.src, acc.full, "relaxed", "gpu"))
        rewriter.erase(op)


class _RewriteGather(_DescriptorPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.DescriptorGatherOp, rewriter: PatternRewriter) -> None:
        d = _descriptor(op.desc, op, self.host)
        e = _Emit(rewriter, op)
        acc = _gather_access(e, d, op.x_offsets, op.y_offset)
        other = _padding(e, d, tt.shape_of(op.result.type))
        load = e.op(tt.LoadOp(acc.ptr, acc.full, other))
        rewriter.replace(op, [], [load])


class _RewriteScatter(_DescriptorPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.DescriptorScatterOp, rewriter: PatternRewriter) -> None:
        d = _descriptor(op.desc, op, self.host)
        e = _Emit(rewriter, op)
        acc = _gather_access(e, d, op.x_offsets, op.y_offset)
        e.op(tt.StoreOp(acc.ptr, op.src, acc.full))
        rewriter.erase(op)


class _EraseUnusedMake(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.MakeTensorDescOp, rewriter: PatternRewriter) -> None:
        if not op.result.uses:
            rewriter.erase(op)


_DESCRIPTOR_OPS = (
    tt.DescriptorLoadOp,
    tt.DescriptorStoreOp,
    tt.DescriptorReduceOp,
    tt.DescriptorGatherOp,
    tt.DescriptorScatterOp,
    tt.MakeTensorDescOp,
)
"""The ops the pass's patterns rewrite: a module without them skips both pattern walks (~2 % of a compile)."""


@dataclass(frozen=True)
class TtRewriteTensorDescriptorPass(ModulePass):
    """Rewrite tensor descriptor ops into tt.load/tt.store/tt.atomic_rmw on pointer tensors (module docstring)."""

    name = "tt-rewrite-tensor-descriptor-to-pointer"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        funcs = [f for f in ops_of(op) if isinstance(f, tt.FuncOp)]
        host: dict[SSAValue, _Descriptor] = {}
        for func in funcs:
            host.update(_host_descriptors(func))
        if any(isa(inner, _DESCRIPTOR_OPS) for inner in ops_of(op)):  # else the patterns match nothing
            kinds = (_RewriteLoad, _RewriteStore, _RewriteReduce, _RewriteGather, _RewriteScatter)
            patterns: list[RewritePattern] = [kind(host) for kind in kinds]
            PatternRewriteWalker(GreedyRewritePatternApplier(patterns), apply_recursively=False).rewrite_module(op)
            typed_walker(_EraseUnusedMake(), tt.MakeTensorDescOp).rewrite_module(op)
        for func in funcs:
            _erase_host_descriptors(func)
        for inner in ops_of(op):
            if isa(inner.results[0].type if inner.results else None, tt.TensorDescType):
                raise PassFailedException(
                    f"{location_str(inner.location)}: error: a tensor descriptor is still used after "
                    "tt-rewrite-tensor-descriptor-to-pointer (passed to a helper, loop or branch); "
                    "use it only in tt.descriptor_* ops of the kernel that makes it"
                )

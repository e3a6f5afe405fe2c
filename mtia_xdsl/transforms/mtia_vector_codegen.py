"""mtia-vector-codegen: vector-scalar operands and fusion of consecutive elementwise engine commands.

Two rewrites of the tensor-level program, each behind an option and each one RewritePattern:

- `vector-scalar` (`FoldBroadcastIntoConsumers`): an engine command that only broadcasts a scalar
  (`tt.splat` of its input) is folded into each elementwise SE / vector-core consumer: the consumer takes
  the scalar itself and splats it inside its body, where it is the instruction's scalar operand (RVV
  `vfsub.vf`, the SE's scalar operand), so no tile is written to LS. The same holds for a rank-reduced row or column
  (`tensor<BLOCK_M x 1>` broadcast by MLU commands to `tensor<BLOCK_M x BLOCK_N>`): the consumer takes
  the row/column and broadcasts it in its body (RVV: the row's scalar per output row, or one register
  reused for every row). The broadcast commands and their tiles disappear once nothing else reads them.
- `fuse` (`FuseIntoConsumer`): two elementwise commands on the same engine, in the same block, where the
  first one's result is read only by the second, become one command whose body holds both bodies: the intermediate stays
  in registers (no CB, no LS round trip, one command issue). Commands are not fused across engines,
  across reductions, dots or layout (MLU) ops, across region boundaries, when the intermediate has
  another user, or when their tensors differ in shape (they are not the same vector loop). Chains of
  scalar SE commands (e.g. `rstd = 1 / sqrt(var + eps)`) fuse the same way. Vector-core
  commands fuse only when their widest element types have the same size, so that the fused command runs
  every op at the rate it had. ASSUMPTION: SE commands chain like vector-core loops; S1 does not say at
  what granularity the SE takes commands, so fusing SE commands models one SE command running a short
  program of elementwise instructions.

The machine model charges a body's ops one by one (`body_op_work` in machine/work.py, which CB sizing uses too): a
splat, expand_dims or broadcast of a body argument costs nothing there (it is an operand form), so the
gain of both rewrites is the removed CBs, LS traffic, command issues and latencies, not less arithmetic.

Requires: convert-tt-to-mtia (tensor level, before mtia-cb-bufferize).
Example: mtia-opt k.mlir -p mtia-vector-codegen{vector-scalar=true fuse=false}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from mtia_xdsl.dialects import mtia, tt
from mtia_xdsl.transforms.program_level import require_tensor_level
from mtia_xdsl.transforms.walker import typed_walker
from mtia_xdsl.utils.isa import isa

_VECTOR_ENGINES = (mtia.SeComputeOp, mtia.VecComputeOp)
"""Engines whose commands are elementwise vector loops (the MLU only moves data)."""

_ELEMENTWISE_TT = (
    "tt.splat",
    "tt.make_range",
    "tt.addptr",
    "tt.int_to_ptr",
    "tt.ptr_to_int",
    "tt.bitcast",
    "tt.fp_to_fp",
    "tt.clampf",
    "tt.precise_sqrt",
    "tt.precise_divf",
    "tt.approx_divf",
    "tt.mulhiui",
    "tt.extern_elementwise",
)
"""tt ops that compute each output element from the same element of their operands."""

_OPERAND_FORMS = ("tt.splat", "tt.expand_dims", "tt.broadcast")
"""Ops that, applied to a body argument, only describe how an instruction reads its operand."""


def _is_elementwise(op: Operation) -> bool:
    """Whether `op` is an elementwise op a vector loop runs (no regions, no memory access)."""
    if op.regions:
        return False
    return op.name.startswith(("arith.", "math.")) or op.name in _ELEMENTWISE_TT


def _is_operand_form(op: Operation) -> bool:
    """Whether `op` broadcasts a body argument (directly or through another operand form)."""
    if op.name not in _OPERAND_FORMS:
        return False
    src = op.operands[0]
    return isinstance(src, BlockArgument) or (isinstance(src.owner, Operation) and _is_operand_form(src.owner))


def _body_ops(op: mtia.EngineComputeOp) -> list[Operation]:
    return [o for o in op.body.block.ops if not isinstance(o, mtia.YieldOp)]


# ----------------------------------------------------------------------------------------------
# Vector-scalar operands
# ----------------------------------------------------------------------------------------------


def _broadcast_source(op: Operation) -> tuple[SSAValue, list[Operation]] | None:
    """If `op` is a command that only broadcasts a scalar, row or column, return (source, its ops).

    A splat command (SE or vector core) `splat(arg)`; an MLU `expand_dims(arg)` (a row or column given a
    unit dimension); an MLU `broadcast(arg)` whose argument is a `tensor<... x 1 x ...>`, itself possibly
    made by an MLU `expand_dims` command read by nothing else (then the source is the rank-reduced
    row/column). The ops are the body ops to replay in a consumer, in order.
    """
    if not isinstance(op, mtia.EngineComputeOp) or len(op.inputs) != 1 or len(op.res) != 1:
        return None
    ops = _body_ops(op)
    if len(ops) != 1 or ops[0].operands[0] is not op.body.block.args[0]:
        return None
    inner = ops[0]
    if isa(op, _VECTOR_ENGINES) and inner.name == "tt.splat" and not isinstance(inner.operands[0].type, TensorType):
        return op.inputs[0], [inner]
    if isinstance(op, mtia.MluComputeOp) and inner.name == "tt.expand_dims":
        return op.inputs[0], [inner]  # a row or column seen with one more (unit) dimension
    if not (isinstance(op, mtia.MluComputeOp) and inner.name == "tt.broadcast"):
        return None
    src = op.inputs[0]
    producer = src.owner
    if isinstance(producer, mtia.MluComputeOp) and len(producer.inputs) == 1 and src.has_one_use():
        pre = _body_ops(producer)
        if len(pre) == 1 and pre[0].name == "tt.expand_dims" and pre[0].operands[0] is producer.body.block.args[0]:
            return producer.inputs[0], [pre[0], inner]
    return src, [inner]


def _reads_elementwise(consumer: mtia.EngineComputeOp, arg: BlockArgument) -> bool:
    """Whether every use of body argument `arg` is an elementwise op of a vector engine's command."""
    return isa(consumer, _VECTOR_ENGINES) and all(
        _is_elementwise(u.operation) and u.operation.name != "tt.splat" for u in arg.uses
    )


def _fold_into(
    consumer: mtia.EngineComputeOp,
    value: SSAValue,
    source: SSAValue,
    ops: Sequence[Operation],
    rewriter: PatternRewriter,
) -> None:
    """Make `consumer` read `source` instead of `value` (a broadcast of it) and replay `ops` in its body."""
    block = consumer.body.block
    index = list(consumer.inputs).index(value)
    old_arg = block.args[index]
    inputs = list(consumer.inputs)
    if source in inputs:
        new_arg = block.args[inputs.index(source)]
    else:
        new_arg = rewriter.insert_block_argument(block, len(block.args), source.type)
        inputs.append(source)
    current: SSAValue = new_arg
    anchor = block.first_op
    assert anchor is not None  # a body ends with mtia.yield
    for op in ops:
        clone = rewriter.insert(op.clone(value_mapper={op.operands[0]: current}), InsertPoint.before(anchor))
        current = clone.results[0]
    rewriter.replace_all_uses_with(old_arg, current)
    del inputs[index]
    rewriter.erase_block_argument(old_arg)
    _rebuild(consumer, inputs, block, rewriter)


def _rebuild(
    op: mtia.EngineComputeOp, inputs: Sequence[SSAValue], block: Block, rewriter: PatternRewriter
) -> mtia.EngineComputeOp:
    """Replace `op` by the same engine command over `inputs` whose body is `block` (taken from `op`)."""
    if block.parent is not None:
        block.parent.detach_block(block)
    new = type(op)(inputs, [r.type for r in op.res], Region(block), op.outs)
    new.location = op.location
    new.attributes.update(op.attributes)
    rewriter.replace(op, new)
    return new


@dataclass(frozen=True)
class FoldBroadcastIntoConsumers(RewritePattern):
    """A command that only broadcasts a scalar, row or column -> its elementwise SE / vector-core readers
    take the source and broadcast it in their bodies; the command goes once nothing else reads it (and
    so does an MLU expand_dims command read only by it)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mtia.EngineComputeOp, rewriter: PatternRewriter) -> None:
        found = _broadcast_source(op)
        if found is None:
            return
        source, ops = found
        value = op.results[0]
        for use in list(value.uses):
            consumer = use.operation
            if not isinstance(consumer, mtia.EngineComputeOp) or use.index >= len(consumer.inputs):
                continue
            if _reads_elementwise(consumer, consumer.body.block.args[use.index]):
                _fold_into(consumer, value, source, ops, rewriter)
        if not value.uses:
            producer = op.inputs[0].owner
            rewriter.erase(op)
            if isinstance(producer, mtia.MluComputeOp) and not producer.results[0].uses and len(ops) == 2:
                rewriter.erase(producer)


# ----------------------------------------------------------------------------------------------
# Fusion of consecutive vector loops
# ----------------------------------------------------------------------------------------------


def _loop_shape(op: mtia.EngineComputeOp) -> tuple[int, ...] | None:
    """The shape every value of `op`'s elementwise body has (its vector loop; () for scalar work on an
    engine), or None if its body is not elementwise or mixes shapes."""
    shapes: set[tuple[int, ...]] = set()
    for inner in _body_ops(op):
        if inner.name == "arith.constant" or _is_operand_form(inner):
            continue
        if not _is_elementwise(inner):
            return None
        for r in inner.results:
            shapes.add(tuple(r.type.get_shape()) if isinstance(r.type, TensorType) else ())
    return shapes.pop() if len(shapes) == 1 else None


def _widest_bytes(op: mtia.EngineComputeOp) -> int:
    """Bytes of the widest integer or float element any body op reads or writes (the vector-core rate)."""
    widest = 0
    for inner in _body_ops(op):
        for v in (*inner.operands, *inner.results):
            t: Attribute = v.type.element_type if isinstance(v.type, TensorType) else v.type
            width = getattr(t, "bitwidth", None) if not isinstance(t, tt.PointerType) else None
            if isinstance(width, int):
                widest = max(widest, (width + 7) // 8)
    return widest


def _can_fuse(producer: Operation, consumer: Operation) -> bool:
    if type(producer) is not type(consumer) or not isa(producer, _VECTOR_ENGINES):
        return False
    assert isinstance(consumer, mtia.EngineComputeOp)
    if producer.parent is not consumer.parent or len(producer.res) != 1 or producer.outs or consumer.outs:
        return False
    if any(u.operation is not consumer for u in producer.res[0].uses):
        return False
    shape = _loop_shape(producer)
    if shape is None or shape != _loop_shape(consumer):
        return False
    return isinstance(producer, mtia.SeComputeOp) or _widest_bytes(producer) == _widest_bytes(consumer)


def _fuse(
    producer: mtia.EngineComputeOp, consumer: mtia.EngineComputeOp, rewriter: PatternRewriter
) -> mtia.EngineComputeOp:
    """Replace `consumer` by one command running `producer`'s body then its own; erase `producer`.

    The bodies' ops move into the fused body (no copies: a chain of n commands fused pairwise would
    otherwise copy O(n^2) ops)."""
    inputs: list[SSAValue] = []
    for v in (*producer.inputs, *consumer.inputs):
        if v is not producer.res[0] and v not in inputs:
            inputs.append(v)
    block = Block(arg_types=[v.type for v in inputs])
    for arg, v in zip(block.args, inputs, strict=True):
        arg.name_hint = v.name_hint  # the kernel's names reach the emitters
    outer = dict(zip(inputs, block.args, strict=True))
    for a, v in zip(producer.body.block.args, producer.inputs):
        rewriter.replace_all_uses_with(a, outer[v])
    for inner in _body_ops(producer):
        inner.detach()
        block.add_op(inner)
    (produced,) = producer.body.block.last_op.operands  # type: ignore[union-attr]
    for a, v in zip(consumer.body.block.args, consumer.inputs, strict=True):
        rewriter.replace_all_uses_with(a, produced if v is producer.res[0] else outer[v])
    for inner in list(consumer.body.block.ops):
        inner.detach()
        block.add_op(inner)
    fused = _rebuild(consumer, inputs, block, rewriter)
    rewriter.erase(producer)
    return fused


@dataclass(frozen=True)
class FuseIntoConsumer(RewritePattern):
    """An elementwise command read only by the next elementwise command on its engine -> one command
    running both bodies (see `_can_fuse` for when it does not apply)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mtia.EngineComputeOp, rewriter: PatternRewriter) -> None:
        if not isa(op, _VECTOR_ENGINES) or len(op.res) != 1:
            return
        uses = list(op.res[0].uses)
        consumer = uses[0].operation if uses else None
        if isinstance(consumer, mtia.EngineComputeOp) and _can_fuse(op, consumer):
            _fuse(op, consumer, rewriter)


@dataclass(frozen=True)
class MtiaVectorCodegenPass(ModulePass):
    """Fold scalar/row/column broadcasts into their consumers and fuse consecutive vector loops.

    See the module docstring for what each option does and when it does not apply.
    Requires: convert-tt-to-mtia (tensor level).
    Example: mtia-opt k.mlir -p mtia-vector-codegen{vector-scalar=true fuse=true}
    """

    name = "mtia-vector-codegen"
    vector_scalar: bool = True
    """Fold commands that only broadcast a scalar (or a row/column) into their elementwise consumers."""
    fuse: bool = True
    """Merge an elementwise command into its only reader on the same engine (intermediate in registers)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op, self.name)
        walkers = [
            typed_walker(FoldBroadcastIntoConsumers(), mtia.EngineComputeOp) if self.vector_scalar else None,
            # fusion last command first: a fused command then merges into its reader before the producers
            # above it do, so each command's body and inputs keep program order
            typed_walker(FuseIntoConsumer(), mtia.EngineComputeOp, walk_reverse=True) if self.fuse else None,
        ]
        for func in [f for f in op.ops if isinstance(f, tt.FuncOp)]:
            if len(func.body.blocks) != 1:
                continue  # a tt-level helper with unreachable blocks: nothing here runs on an engine
            for walker in walkers:  # every broadcast folded first, then fusion to a fixed point
                if walker is not None:
                    walker.rewrite_region(func.body)

"""The `mtia` dialect: MTIA-2i engines, DMA and circular buffers (CBs) in local storage (LS).

Models the per-PE units of MTIA-2i (glossary and sources in `mtia_xdsl/machine/config.py`):
DMA between global memory and LS, the DPE (matmul), SE (SIMD), RE (reductions), MLU (layout) and the
RISC-V vector core (VEC), and the command processor's circular buffers.

Two levels share these ops:
- tensor level (after `convert-tt-to-mtia`): ops take and return tensors (value semantics); the
  engine that runs each op is decided.
- buffer level (after `mtia-cb-bufferize`): tensors live in CB slots. Engine ops name their input CBs
  (they read the front tile, after `mtia.cb_wait`) and their output CBs in `outs` (they write the
  oldest reserved slot, between `mtia.cb_reserve` and `mtia.cb_push`); they have no results.

An engine op is at buffer level exactly when it has `outs`. A buffer-level DPE or SE/VEC command marked
`inplace` updates a loop-carried accumulator in place: each of its `outs` is also one of its inputs, and
the command overwrites the front tile it read (after `mtia.cb_wait`, with no reserve, push or pop), so
the accumulator's CB needs one slot. Scalar (non-CB) operands of a buffer-level
command are immediates the scalar core passes with the command.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from xdsl.dialects.builtin import (
    I32,
    I64,
    DenseArrayBase,
    FixedBitwidthType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException


@cache
def _i32(value: int) -> IntegerAttr:
    """An i32 attribute; cached, since attributes are immutable and building one checks its range."""
    return IntegerAttr(value, 32)


# ----------------------------------------------------------------------------------------------
# Discardable attributes: their names, one spelling each for the passes that set them and the
# passes and machine model that read them
# ----------------------------------------------------------------------------------------------

TARGET_ATTR = "mtia.target"
"""Module attribute: the chip it is compiled for (a `TargetAttr`), set by mtia-set-target."""
MACHINE_OVERRIDES_ATTR = "mtia.machine_overrides"
"""Module attribute: MachineConfig fields changed for the run (a dictionary), set by the pipeline from the
compile option `machine_overrides` and read by mtia-set-target."""
PE_MAPPING_ATTR = "mtia.pe_mapping"
"""Kernel-function attribute: the program -> PE strategy, set by mtia-pe-mapping, read by the machine model."""
DEPTH_REASON_ATTR = "mtia.depth_reason"
"""`cb_alloc` attribute: why the CB has its depth, set by mtia-cb-sizing, shown in the machine's CB report."""
PIPELINE_STAGES_ATTR = "mtia.pipeline_stages"
"""`cb_alloc` and loop attribute: the software-pipelining depth, set by mtia-software-pipeline."""
LIVENESS_ATTR = "mtia.liveness"
"""`cb_alloc` attribute: the CB's live range in words, set by test-mtia-cb-liveness (for FileCheck)."""
ACCESS_ATTR = "mtia.access"
"""Memory-op attribute: the access analysis' finding, set by its test pass (for FileCheck)."""
OUTSIDE_BOX_ATTR = "mtia.outside_box"
"""`mtia.gather` attribute: the lanes of an element gather from a DMA box (convert-tt-to-mtia) whose address
falls outside the box, gathered by the scalar core; the access itself is the box's DMA."""


# ----------------------------------------------------------------------------------------------
# Attributes and types
# ----------------------------------------------------------------------------------------------


@irdl_attr_definition
class CircularBufferType(ParametrizedAttribute, TypeAttribute):
    """A circular buffer in a PE's local storage: `depth` slots, each holding one `tile`.

    Shapes: `!mtia.cb<depth, tensor<BLOCK x f32>>`; a scalar tile (`f32`) is a 0-d tile.
    Source: CP presents LS as circular buffers with hardware producer/consumer tracking (S1).
    """

    name = "mtia.cb"

    depth: IntAttr = param_def(converter=IntAttr.get)
    tile: Attribute

    def __init__(self, depth: int | IntAttr, tile: Attribute) -> None:
        super().__init__(IntAttr.get(depth) if isinstance(depth, int) else depth, tile)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_int(self.depth.data)
            printer.print_string(", ")
            printer.print_attribute(self.tile)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[IntAttr, Attribute]:
        with parser.in_angle_brackets():
            depth = IntAttr(parser.parse_integer())
            parser.parse_punctuation(",")
            tile = parser.parse_type()
        return (depth, tile)

    def verify(self) -> None:
        if self.depth.data < 1:
            raise VerifyException(f"a circular buffer needs at least one slot, got depth {self.depth.data}")


@irdl_attr_definition
class TargetAttr(ParametrizedAttribute):
    """The chip a module is compiled for: `#mtia.target<"mtia2i">` (module attribute `mtia.target`)."""

    name = "mtia.target"

    chip: StringAttr

    def __init__(self, chip: str) -> None:
        super().__init__(StringAttr(chip))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.chip.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[StringAttr]:
        with parser.in_angle_brackets():
            chip = parser.parse_str_literal()
        return (StringAttr(chip),)


def tile_type(value_type: Attribute) -> Attribute:
    """Return the tile type a value of `value_type` occupies (the CB's tile for CBs)."""
    return value_type.tile if isinstance(value_type, CircularBufferType) else value_type


def element_bytes(t: Attribute) -> int:
    """Bytes one element of type `t` takes in LS or global memory: i1 one byte, pointers eight."""
    if isinstance(t, IntegerType | FixedBitwidthType):
        return max(1, (t.bitwidth + 7) // 8)
    if t.name == "tt.ptr":
        return 8
    raise VerifyException(f"no storage size known for element type {t}")


def tile_bytes(t: Attribute) -> int:
    """Bytes of one tile of type `t` (a tensor, or a scalar as a 0-d tile)."""
    if isinstance(t, TensorType):
        count = 1
        for d in t.get_shape():
            count *= d
        return count * element_bytes(t.element_type)
    return element_bytes(t)


def is_cb(value: SSAValue) -> bool:
    """Return whether `value` is a circular buffer."""
    return isinstance(value.type, CircularBufferType)


def _verify_level(op: IRDLOperation, outs: Sequence[SSAValue], results: Sequence[SSAValue]) -> None:
    if outs and results:
        raise VerifyException(f"{op.name} has both results (tensor level) and outs (buffer level)")


# ----------------------------------------------------------------------------------------------
# Memory: DMA and scalar-core accesses
# ----------------------------------------------------------------------------------------------


def _verify_block(
    rank: int, strides: Sequence[SSAValue], bounds: Sequence[SSAValue], starts: Sequence[SSAValue]
) -> None:
    """A DMA block of rank `rank` has one stride and one bound per dimension, and no or one start each."""
    if len(strides) != rank or len(bounds) != rank or len(starts) not in (0, rank):
        raise VerifyException(
            f"block of rank {rank} needs {rank} strides and bounds (and no or {rank} starts), got "
            f"{len(strides)} strides, {len(bounds)} bounds and {len(starts)} starts"
        )


_SCALAR_LOAD_HINT = "; use mtia.scalar_load for one element"


def _loaded_block_type(op: IRDLOperation, out: SSAValue | None, hint: str = "") -> TensorType[Attribute]:
    """The tensor type a DMA read into LS produces: its result type, or the tile of its `out` CB."""
    t = out.type.tile if out is not None else op.results[0].type  # pyright: ignore[reportAttributeAccessIssue]
    if not isinstance(t, TensorType):
        raise VerifyException(f"{op.name} moves a tensor block, not {t}{hint}")
    return t


def _verify_loaded(op: IRDLOperation, out: SSAValue | None, hint: str = "") -> int:
    """Check a DMA read's level and its result-or-`out` form; return the block's rank."""
    _verify_level(op, [out] if out else [], op.results)
    if out is None and len(op.results) != 1:
        raise VerifyException(f"{op.name} needs a result or an `out` CB")
    return len(_loaded_block_type(op, out, hint).get_shape())


@irdl_op_definition
class DmaLoadOp(IRDLOperation):
    """Copy a strided block from global memory into LS.

    Element (i0, .., in) of the block is read from `base + sum(i_d * strides[d])` (in elements) if
    starts[d] <= i_d < bounds[d] for every d, else it is `other` (0 if absent) and is never read:
    `bounds` is the block's effective shape; `starts` (optional, 0 when absent) skips the leading lanes
    of a block that begins before its tensor (a tensor descriptor load at a negative offset).
    Shapes: result/tile `tensor<S0 x .. x Sn x T>`, base `!tt.ptr<T>`, one stride, one bound and
    (if any) one start (integers, any width) per dimension.
    Buffer level: `out` names the CB whose reserved slot receives the block.
    """

    name = "mtia.dma_load"

    base = operand_def()
    strides = var_operand_def(I64)
    bounds = var_operand_def(I64)
    starts = var_operand_def(I64)
    other = opt_operand_def()
    out = opt_operand_def(CircularBufferType)
    result = var_result_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$base `[` $strides `]` `bounds` `[` $bounds `]` (`starts` `[` $starts^ `]`)? "
        "(`other` `(` $other^ `:` type($other) `)`)? attr-dict "
        "`:` type($base) (`into` $out^ `:` type($out))? (`->` type($result)^)?"
    )

    def __init__(
        self,
        base: SSAValue,
        strides: Sequence[SSAValue],
        bounds: Sequence[SSAValue],
        other: SSAValue | None,
        result_type: Attribute | None,
        out: SSAValue | None = None,
        starts: Sequence[SSAValue] = (),
    ) -> None:
        super().__init__(
            operands=[base, strides, bounds, list(starts), [other] if other else [], [out] if out else []],
            result_types=[[result_type] if result_type is not None else []],
        )

    @property
    def block_type(self) -> TensorType[Attribute]:
        """The block's tensor type (result type, or the tile of `out`)."""
        return _loaded_block_type(self, self.out, _SCALAR_LOAD_HINT)

    def verify_(self) -> None:
        _verify_block(_verify_loaded(self, self.out, _SCALAR_LOAD_HINT), self.strides, self.bounds, self.starts)


@irdl_op_definition
class StorageExtentOp(IRDLOperation):
    """Elements of `base`'s pointee type from `base` to the end of the tensor storage holding it (0 when no
    tensor holds it): the bound that clips a DMA box at the end of its tensor (an LS gather's box,
    convert-tt-to-mtia, may reach past a tensor no lane reads past). The scalar core computes it from the
    storage extents the launcher passes with the tensor arguments.
    Shapes: base `!tt.ptr<T>` (scalar), result i64.
    """

    name = "mtia.storage_extent"

    base = operand_def()
    result = result_def(IntegerType(64))
    traits = traits_def(Pure())
    assembly_format = "$base attr-dict `:` type($base)"

    def __init__(self, base: SSAValue) -> None:
        super().__init__(operands=[base], result_types=[IntegerType(64)])


@irdl_op_definition
class DmaStoreOp(IRDLOperation):
    """Copy a block from LS to global memory; elements outside `[starts, bounds)` are not written.

    Shapes: value `tensor<S0 x .. x Sn x T>` (tensor level) or a CB holding it (buffer level, the
    front tile is written), base `!tt.ptr<T>`, one stride, one bound and (optional, as on
    `mtia.dma_load`) one start per dimension. A 0-d value (scalar tile) is stored at `base`.
    """

    name = "mtia.dma_store"

    base = operand_def()
    strides = var_operand_def(I64)
    bounds = var_operand_def(I64)
    starts = var_operand_def(I64)
    value = operand_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$value `,` $base `[` $strides `]` `bounds` `[` $bounds `]` (`starts` `[` $starts^ `]`)? attr-dict "
        "`:` type($value) `,` type($base)"
    )

    def __init__(
        self,
        base: SSAValue,
        strides: Sequence[SSAValue],
        bounds: Sequence[SSAValue],
        value: SSAValue,
        starts: Sequence[SSAValue] = (),
    ) -> None:
        super().__init__(operands=[base, strides, bounds, list(starts), value])

    def verify_(self) -> None:
        t = tile_type(self.value.type)
        _verify_block(len(t.get_shape()) if isinstance(t, TensorType) else 0, self.strides, self.bounds, self.starts)


@irdl_op_definition
class GatherOp(IRDLOperation):
    """Load each element through its own pointer: the scalar fallback for unstructured accesses.

    Masked-off elements are `other` (0 if absent) and are not read. Shapes: ptrs
    `tensor<S x !tt.ptr<T>>`, mask `tensor<S x i1>`, result `tensor<S x T>`; at buffer level ptrs and
    mask are CBs and `out` receives the result.
    """

    name = "mtia.gather"

    ptrs = operand_def()
    mask = opt_operand_def()
    other = opt_operand_def()
    out = opt_operand_def(CircularBufferType)
    result = var_result_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        ptrs: SSAValue,
        mask: SSAValue | None,
        other: SSAValue | None,
        result_type: Attribute | None,
        out: SSAValue | None = None,
    ) -> None:
        super().__init__(
            operands=[ptrs, [mask] if mask else [], [other] if other else [], [out] if out else []],
            result_types=[[result_type] if result_type is not None else []],
        )


@irdl_op_definition
class DmaGatherRowsOp(IRDLOperation):
    """Indexed DMA: copy rows picked by an index tile from global memory into LS (embedding lookups).

    Element i = (i0, .., in) of the block is read from
    `base + index[i] * row_stride + sum_d i_d * strides[d]` (in elements) if i_d < bounds[d] for every d,
    else it is `other` (0 if absent) and is never read. `index` is an integer tile that broadcasts to the
    block (Inductor's `tmp0` of shape [XBLOCK, 1] for a [XBLOCK, R] block of embedding rows). The DMA
    engine reads the index tile from LS and issues one descriptor per row (MTIA's indexed DMA mode for
    embedding rows, S1; its timing, one descriptor per row like a run of a strided block, is an
    ASSUMPTION stated at MachineConfig.dma_descriptor_cycles).
    Shapes: result/tile `tensor<S0 x .. x Sn x T>`, base `!tt.ptr<T>`, index `tensor<... x iN>` (a CB at
    buffer level), row_stride, one stride and one bound per dimension (integers). Buffer level: `out`
    names the CB whose reserved slot receives the block.
    """

    name = "mtia.dma_gather_rows"

    base = operand_def()
    index = operand_def()
    row_stride = operand_def(I64)
    strides = var_operand_def(I64)
    bounds = var_operand_def(I64)
    other = opt_operand_def()
    out = opt_operand_def(CircularBufferType)
    result = var_result_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$base `[` $index `*` $row_stride `]` `[` $strides `]` `bounds` `[` $bounds `]` "
        "(`other` `(` $other^ `:` type($other) `)`)? attr-dict `:` type($base) `,` type($index) "
        "(`into` $out^ `:` type($out))? (`->` type($result)^)?"
    )

    def __init__(
        self,
        base: SSAValue,
        index: SSAValue,
        row_stride: SSAValue,
        strides: Sequence[SSAValue],
        bounds: Sequence[SSAValue],
        other: SSAValue | None,
        result_type: Attribute | None,
        out: SSAValue | None = None,
    ) -> None:
        super().__init__(
            operands=[base, index, row_stride, strides, bounds, [other] if other else [], [out] if out else []],
            result_types=[[result_type] if result_type is not None else []],
        )

    @property
    def block_type(self) -> TensorType[Attribute]:
        """The block's tensor type (result type, or the tile of `out`)."""
        return _loaded_block_type(self, self.out)

    def verify_(self) -> None:
        _verify_block(_verify_loaded(self, self.out), self.strides, self.bounds, ())
        shape = tuple(self.block_type.get_shape())
        index = tile_type(self.index.type)
        index_shape = tuple(index.get_shape()) if isinstance(index, TensorType) else ()
        if len(index_shape) != len(shape) or any(i not in (1, s) for i, s in zip(index_shape, shape, strict=True)):
            raise VerifyException(
                f"index tile of shape {list(index_shape)} does not broadcast to the block {list(shape)}"
            )


@irdl_op_definition
class ScatterOp(IRDLOperation):
    """Store each element through its own pointer (scalar fallback); masked-off elements are skipped."""

    name = "mtia.scatter"

    ptrs = operand_def()
    value = operand_def()
    mask = opt_operand_def()

    def __init__(self, ptrs: SSAValue, value: SSAValue, mask: SSAValue | None) -> None:
        super().__init__(operands=[ptrs, value, [mask] if mask else []])


@irdl_op_definition
class AtomicRmwOp(IRDLOperation):
    """Atomic read-modify-write of each element through its own pointer, on the scalar core.

    `atomic_rmw_op`, `sem` and `scope` use tt.atomic_rmw's encodings; masked-off elements are neither
    read nor written (their result is 0). The result holds the values found in memory. Shapes: ptr
    `tensor<S x !tt.ptr<T>>` (or one `!tt.ptr<T>`), val `tensor<S x T>` (or `T`), mask of i1, result
    like val; at buffer level ptr, val and mask may be CBs and `out` receives the old values.
    """

    name = "mtia.atomic_rmw"

    ptr = operand_def()
    val = operand_def()
    mask = opt_operand_def()
    out = opt_operand_def(CircularBufferType)
    atomic_rmw_op = prop_def(IntegerAttr[I32])
    sem = prop_def(IntegerAttr[I32])
    scope = prop_def(IntegerAttr[I32])
    result = var_result_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        ptr: SSAValue,
        val: SSAValue,
        mask: SSAValue | None,
        kind: int,
        sem: int,
        scope: int,
        result_type: Attribute | None,
        out: SSAValue | None = None,
    ) -> None:
        super().__init__(
            operands=[ptr, val, [mask] if mask else [], [out] if out else []],
            result_types=[[result_type] if result_type is not None else []],
            properties={
                "atomic_rmw_op": _i32(kind),
                "sem": _i32(sem),
                "scope": _i32(scope),
            },
        )

    def verify_(self) -> None:
        _verify_level(self, [self.out] if self.out else [], self.result)


@irdl_op_definition
class AtomicCasOp(IRDLOperation):
    """Atomic compare-and-swap of each element through its own pointer, on the scalar core.

    Where memory holds `cmp`, it becomes `val`; the result holds the values found. `sem` and `scope` use
    tt.atomic_cas's encodings. Shapes as mtia.atomic_rmw (no mask).
    """

    name = "mtia.atomic_cas"

    ptr = operand_def()
    cmp = operand_def()
    val = operand_def()
    out = opt_operand_def(CircularBufferType)
    sem = prop_def(IntegerAttr[I32])
    scope = prop_def(IntegerAttr[I32])
    result = var_result_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        ptr: SSAValue,
        cmp: SSAValue,
        val: SSAValue,
        sem: int,
        scope: int,
        result_type: Attribute | None,
        out: SSAValue | None = None,
    ) -> None:
        super().__init__(
            operands=[ptr, cmp, val, [out] if out else []],
            result_types=[[result_type] if result_type is not None else []],
            properties={"sem": _i32(sem), "scope": _i32(scope)},
        )

    def verify_(self) -> None:
        _verify_level(self, [self.out] if self.out else [], self.result)


@irdl_op_definition
class ScalarLoadOp(IRDLOperation):
    """Load one element from global memory on the scalar core (waits for the memory latency)."""

    name = "mtia.scalar_load"

    ptr = operand_def()
    result = result_def()

    assembly_format = "$ptr attr-dict `:` type($ptr) `->` type($result)"

    def __init__(self, ptr: SSAValue, result_type: Attribute) -> None:
        super().__init__(operands=[ptr], result_types=[result_type])


@irdl_op_definition
class ScalarStoreOp(IRDLOperation):
    """Store one element to global memory from the scalar core."""

    name = "mtia.scalar_store"

    ptr = operand_def()
    value = operand_def()

    assembly_format = "$ptr `,` $value attr-dict `:` type($ptr) `,` type($value)"

    def __init__(self, ptr: SSAValue, value: SSAValue) -> None:
        super().__init__(operands=[ptr, value])


# ----------------------------------------------------------------------------------------------
# Compute engines
# ----------------------------------------------------------------------------------------------


@irdl_op_definition
class DpeMatmulOp(IRDLOperation):
    """d = a @ b + c on the DPE.

    Shapes: a `tensor<[B x] M x K x T>`, b `tensor<[B x] K x N x T>`, c and d `tensor<[B x] M x N x f32>`
    (a leading batch dimension B runs B matmuls; or CBs of those
    at buffer level, `out` receiving d). `input_precision` uses upstream tt.dot's encoding (0 tf32,
    1 tf32x3, 2 ieee, ...); the DPE takes no fp32 inputs, so fp32 "ieee" costs three BF16 passes.
    """

    name = "mtia.dpe_matmul"

    a = operand_def()
    b = operand_def()
    c = operand_def()
    out = opt_operand_def(CircularBufferType)
    valid = var_operand_def(I64)
    """Effective shape `[M, N, K]` (empty: the whole tile): rows of d at or past M and columns at or past
    N are not computed (left unwritten), and the lanes of a and b at or past K along K count as 0."""
    result = var_result_def()
    input_precision = prop_def(IntegerAttr[I32])
    inplace = opt_prop_def(UnitAttr)
    """Buffer level: accumulate into the front tile of `c` (then `out` is `c`) instead of a reserved slot."""

    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    assembly_format = (
        "$a `,` $b `,` $c (`valid` `[` $valid^ `]`)? (`inplace` $inplace^)? attr-dict "
        "`:` type($a) `,` type($b) `,` type($c) (`into` $out^ `:` type($out))? (`->` type($result)^)?"
    )

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue,
        input_precision: int,
        result_type: Attribute | None,
        out: SSAValue | None = None,
        inplace: bool = False,
        valid: Sequence[SSAValue] = (),
    ) -> None:
        properties: dict[str, Attribute] = {"input_precision": _i32(input_precision)}
        if inplace:
            properties["inplace"] = UnitAttr()
        super().__init__(
            operands=[a, b, c, [out] if out else [], valid],
            result_types=[[result_type] if result_type is not None else []],
            properties=properties,
        )

    def verify_(self) -> None:
        _verify_level(self, [self.out] if self.out else [], self.result)
        if self.inplace is not None and (self.out is None or self.out is not self.c):
            raise VerifyException("an inplace mtia.dpe_matmul accumulates into `c`: its `into` CB must be `c`")
        a, b = tile_type(self.a.type), tile_type(self.b.type)
        if isinstance(a, TensorType) and isinstance(b, TensorType):
            sa, sb = a.get_shape(), b.get_shape()
            if len(sa) != len(sb) or len(sa) not in (2, 3) or sa[:-2] != sb[:-2]:
                raise VerifyException(f"operands must be 2-d, or 3-d with equal batch: {a} @ {b}")
            (m, k), (k2, n) = sa[-2:], sb[-2:]
            if k != k2:
                raise VerifyException(f"inner dimensions differ: {m}x{k} @ {k2}x{n}")
            if self.valid and (len(self.valid) != 3 or len(sa) != 2):
                raise VerifyException(f"valid needs 3 extents [M, N, K] of a 2-d matmul, got {len(self.valid)}")
            want = (*sa[:-2], m, n)
            out = [tile_type(self.c.type), *(tile_type(o.type) for o in ([self.out] if self.out else [])),
                   *(r.type for r in self.result)]  # fmt: skip
            for t in out:
                if not isinstance(t, TensorType) or t.get_shape() != want:
                    raise VerifyException(
                        f"accumulator and result must be tensor<{'x'.join(map(str, want))}x..>, got {t}"
                    )


REDUCE_KINDS = (
    "addf",
    "addi",
    "maxnumf",
    "minnumf",
    "maximumf",
    "minimumf",
    "maxsi",
    "minsi",
    "maxui",
    "minui",
)


@irdl_op_definition
class ReReduceOp(IRDLOperation):
    """Reduce `input` along `axis` with the combiner `kind` on the RE (within one PE).

    Shapes: input `tensor<S0 x .. x Sn x T>`; result drops dimension `axis` (a scalar `T` for 1-d
    input). `kind` is the arith op name of the combiner (addf, addi, maxnumf, maximumf, ...).
    """

    name = "mtia.re_reduce"

    input = operand_def()
    out = opt_operand_def(CircularBufferType)
    valid = var_operand_def(I64)
    """Effective shape of `input`, one extent per dimension (empty: the whole tile): lanes at or past an
    extent are not read and count as the identity of `kind`."""
    result = var_result_def()
    axis = prop_def(IntegerAttr[I32])
    kind = prop_def(StringAttr)

    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    assembly_format = (
        "$input (`valid` `[` $valid^ `]`)? attr-dict `:` type($input) (`into` $out^ `:` type($out))? "
        "(`->` type($result)^)?"
    )

    def __init__(
        self,
        input: SSAValue,
        axis: int,
        kind: str,
        result_type: Attribute | None,
        out: SSAValue | None = None,
        valid: Sequence[SSAValue] = (),
    ) -> None:
        super().__init__(
            operands=[input, [out] if out else [], valid],
            result_types=[[result_type] if result_type is not None else []],
            properties={"axis": _i32(axis), "kind": StringAttr(kind)},
        )

    def verify_(self) -> None:
        _verify_level(self, [self.out] if self.out else [], self.result)
        if self.kind.data not in REDUCE_KINDS:
            raise VerifyException(f"unknown reduction kind '{self.kind.data}', expected one of {REDUCE_KINDS}")
        t, axis = tile_type(self.input.type), self.axis.value.data
        shape = list(t.get_shape()) if isinstance(t, TensorType) else []
        if not 0 <= axis < len(shape):
            raise VerifyException(f"axis {axis} is out of range for an input of rank {len(shape)}")
        if self.valid and len(self.valid) != len(shape):
            raise VerifyException(f"valid needs {len(shape)} extents (one per input dimension), got {len(self.valid)}")
        del shape[axis]
        out = tile_type(self.out.type) if self.out is not None else (self.result[0].type if self.result else None)
        out_shape = list(out.get_shape()) if isinstance(out, TensorType) else []
        if out is not None and out_shape != shape:
            raise VerifyException(f"reducing axis {axis} of {t} gives shape {shape}, not {out}")


class EngineComputeOp(IRDLOperation):
    """Base of the region ops that run one command on an elementwise/layout engine.

    The body's block arguments are the tiles (or scalars) of `inputs`; `mtia.yield` gives the result
    tiles, which are the op's results (tensor level) or are written to `outs` (buffer level).
    """

    inputs = var_operand_def()
    outs = var_operand_def(CircularBufferType)
    valid = var_operand_def(I64)
    """Effective shape of the result tiles, one extent per dimension (empty: the whole tile): the command
    computes only the lanes below every extent and leaves the others unwritten (`mtia-effective-shape`)."""
    res = var_result_def()
    body = region_def("single_block")
    inplace = opt_prop_def(UnitAttr)
    """Buffer level: each of `outs` is also an input; the command overwrites the front tile it read."""

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "(`ins` `(` $inputs^ `:` type($inputs) `)`)? (`outs` `(` $outs^ `:` type($outs) `)`)? "
        "(`valid` `[` $valid^ `]`)? (`inplace` $inplace^)? attr-dict-with-keyword $body (`->` type($res)^)?"
    )

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        body: Region,
        outs: Sequence[SSAValue] = (),
        inplace: bool = False,
        valid: Sequence[SSAValue] = (),
    ) -> None:
        super().__init__(
            operands=[inputs, outs, valid],
            result_types=[result_types],
            regions=[body],
            properties={"inplace": UnitAttr()} if inplace else {},
        )

    def verify_(self) -> None:
        _verify_level(self, self.outs, self.res)
        if self.inplace is not None:
            if not self.outs:
                raise VerifyException(f"an inplace {self.name} updates CBs: it needs `outs` (buffer level)")
            if any(o not in self.inputs for o in self.outs):
                raise VerifyException(f"an inplace {self.name} updates the tiles it reads: every out must be an input")
        args = self.body.block.args
        if len(args) != len(self.inputs):
            raise VerifyException(f"body has {len(args)} arguments for {len(self.inputs)} inputs")
        for arg, operand in zip(args, self.inputs, strict=True):
            if arg.type != tile_type(operand.type):
                raise VerifyException(
                    f"body argument type {arg.type} does not match input tile type {tile_type(operand.type)}"
                )
        term = self.body.block.last_op
        if not isinstance(term, YieldOp):
            raise VerifyException("body must end with mtia.yield")
        produced = [tile_type(o.type) for o in self.outs] if self.outs else [r.type for r in self.res]
        if [v.type for v in term.values] != produced:
            raise VerifyException("yielded types do not match the results or outs tiles")
        _verify_engine_body(self)
        if self.valid:
            shapes = {tuple(t.get_shape()) if isinstance(t, TensorType) else () for t in produced}
            if len(shapes) != 1 or len(next(iter(shapes))) != len(self.valid):
                raise VerifyException(
                    f"valid needs one extent per dimension of the result tiles (all of one shape), got "
                    f"{len(self.valid)} for {', '.join(map(str, produced))}"
                )


@irdl_op_definition
class SeComputeOp(EngineComputeOp):
    """One SIMD-engine (SE) command: elementwise arithmetic and LUT functions over tiles."""

    name = "mtia.se_compute"


@irdl_op_definition
class VecComputeOp(EngineComputeOp):
    """One RISC-V vector-core command: integer, pointer and other long-tail elementwise work."""

    name = "mtia.vec_compute"


@irdl_op_definition
class MluComputeOp(EngineComputeOp):
    """One MLU command: broadcast, transpose, reshape, concatenation (layout changes)."""

    name = "mtia.mlu_compute"


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminator of an engine body: the tiles the command produces."""

    name = "mtia.yield"

    values = var_operand_def()

    traits = traits_def(IsTerminator())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue) -> None:
        super().__init__(operands=[values])


# ----------------------------------------------------------------------------------------------
# Circular buffers (buffer level)
# ----------------------------------------------------------------------------------------------


@irdl_op_definition
class CbAllocOp(IRDLOperation):
    """Allocate a circular buffer in the PE's LS: depth x tile bytes.

    After `mtia-cb-allocate` it carries its place: `cb_id`, the CB ID the CP tracks it by (0 <= cb_id <
    MachineConfig.cb_ids), and `ls_offset`, the byte offset of its first slot in LS (slots follow one
    another, `depth` x tile bytes in all). CBs whose live ranges do not overlap may share IDs and bytes.
    The verifier checks what the op holds; that no two CBs alive at the same time share either is a
    whole-kernel fact, checked by `transforms/analysis/cb_liveness.verify_cb_allocation` (run by
    mtia-cb-allocate and by mtia-run before a run). Without them (before the pass) the CB is the kernel's
    own for the whole kernel.
    Example: `%c = mtia.cb_alloc {cb_id = 3 : i32, ls_offset = 4096 : i64} : !mtia.cb<2, tensor<32xf32>>`
    """

    name = "mtia.cb_alloc"

    result = result_def(CircularBufferType)
    cb_id = opt_prop_def(IntegerAttr[I32])
    """The CB ID (set by mtia-cb-allocate)."""
    ls_offset = opt_prop_def(IntegerAttr[I64])
    """Byte offset of the CB's slots in the PE's LS (set by mtia-cb-allocate)."""

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, cb_type: CircularBufferType, cb_id: int | None = None, ls_offset: int | None = None) -> None:
        properties: dict[str, Attribute] = {}
        if cb_id is not None:
            properties["cb_id"] = _i32(cb_id)
        if ls_offset is not None:
            properties["ls_offset"] = IntegerAttr(ls_offset, 64)
        super().__init__(result_types=[cb_type], properties=properties)

    @property
    def allocated(self) -> bool:
        """Whether mtia-cb-allocate placed this CB (it has a CB ID and an LS offset)."""
        return self.cb_id is not None and self.ls_offset is not None

    @property
    def size_bytes(self) -> int:
        """LS bytes of the CB: depth x tile bytes."""
        t = self.result.type
        assert isinstance(t, CircularBufferType)
        return t.depth.data * tile_bytes(t.tile)

    def verify_(self) -> None:
        if (self.cb_id is None) != (self.ls_offset is None):
            raise VerifyException("an allocated CB has both a cb_id and an ls_offset (set by mtia-cb-allocate)")
        if self.cb_id is not None and self.cb_id.value.data < 0:
            raise VerifyException(f"cb_id must be non-negative, got {self.cb_id.value.data}")
        if self.ls_offset is not None and self.ls_offset.value.data < 0:
            raise VerifyException(f"ls_offset must be non-negative, got {self.ls_offset.value.data}")


class CbCountOp(IRDLOperation):
    """Base of reserve/push/wait/pop: an operation on `count` slots of `cb`."""

    cb = operand_def(CircularBufferType)
    count = prop_def(IntegerAttr[I32])

    assembly_format = "$cb `,` $count attr-dict `:` type($cb)"

    def __init__(self, cb: SSAValue, count: int = 1) -> None:
        super().__init__(operands=[cb], properties={"count": _i32(count)})

    def verify_(self) -> None:
        assert isinstance(self.cb.type, CircularBufferType)
        depth, want = self.cb.type.depth.data, self.count.value.data
        if want < 1:
            raise VerifyException(f"count must be positive, got {want}")
        if want > depth:
            raise VerifyException(f"claims {want} slots but the buffer has {depth}")


@irdl_op_definition
class CbReserveOp(CbCountOp):
    """Producer: wait for `count` free slots and claim them for the next command(s) writing `cb`."""

    name = "mtia.cb_reserve"


@irdl_op_definition
class CbPushOp(CbCountOp):
    """Producer: publish the `count` oldest reserved slots to consumers."""

    name = "mtia.cb_push"


@irdl_op_definition
class CbWaitOp(CbCountOp):
    """Consumer: wait until `count` published tiles are available at the front of `cb`."""

    name = "mtia.cb_wait"


@irdl_op_definition
class CbPopOp(CbCountOp):
    """Consumer: release the `count` front tiles once every command reading them has ended."""

    name = "mtia.cb_pop"


@irdl_op_definition
class CbReadOp(IRDLOperation):
    """Scalar core: read the front tile of `cb` (a scalar), waiting for its producer to finish."""

    name = "mtia.cb_read"

    cb = operand_def(CircularBufferType)
    result = result_def()

    assembly_format = "$cb attr-dict `:` type($cb) `->` type($result)"

    def __init__(self, cb: SSAValue) -> None:
        assert isinstance(cb.type, CircularBufferType)
        super().__init__(operands=[cb], result_types=[cb.type.tile])


# ----------------------------------------------------------------------------------------------
# The PE grid (language extension get_pe_id)
# ----------------------------------------------------------------------------------------------

PE_AXES = ("x", "y")
"""PE grid axes: 0 = x (the column, along the launch's tile width), 1 = y (the row, along its height)."""


class _PeAxisOp(IRDLOperation):
    """Base of the ops reading one coordinate of the launch's PE grid (S10: base PE, tile width, height)."""

    axis = prop_def(IntegerAttr[I32])
    result = result_def(IntegerType(32))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, axis: int) -> None:
        super().__init__(properties={"axis": _i32(axis)}, result_types=[IntegerType(32)])

    def verify_(self) -> None:
        if self.axis.value.data not in (0, 1):
            raise VerifyException(f"axis must be 0 (x, PE column) or 1 (y, PE row), got {self.axis.value.data}")


@irdl_op_definition
class PeIdOp(_PeAxisOp):
    """Coordinate along `axis` of the PE running this program, within the launch's PE sub-grid.

    0 <= result < `mtia.num_pes` of the same axis; the PE is the one the program-id -> PE mapping
    (`machine/placement.py`) places the program on. The scalar core reads it from a register.
    """

    name = "mtia.pe_id"


@irdl_op_definition
class NumPesOp(_PeAxisOp):
    """Extent along `axis` of the launch's PE sub-grid (tile width for x, tile height for y)."""

    name = "mtia.num_pes"


@irdl_op_definition
class ReAllreduceOp(IRDLOperation):
    """Reduce `input` elementwise across the PEs of this PE's row (`pe_axis` 0) or column (1) of the launch's
    sub-grid, through the reduction engines' neighbour network; every participant gets the result.

    Participants: the programs running in the same round (the k-th program each PE runs) on those PEs;
    each contributes its `input`. Shapes: result type = input type (a tile or a scalar). `kind` is the
    arith op name of the combiner (addf, addi, maxnumf, minsi, ...). The issuing scalar core waits for
    the result (a collective). Language extension re_reduce; semantics in machine/interpret/mtia_renet.py.
    """

    name = "mtia.re_allreduce"

    input = operand_def()
    result = result_def()
    pe_axis = prop_def(IntegerAttr[I32])
    kind = prop_def(StringAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, pe_axis: int, kind: str) -> None:
        super().__init__(
            operands=[input],
            result_types=[input.type],
            properties={"pe_axis": _i32(pe_axis), "kind": StringAttr(kind)},
        )

    def verify_(self) -> None:
        if self.result.type != self.input.type:
            raise VerifyException(f"the result has the input's type {self.input.type}, not {self.result.type}")
        if self.pe_axis.value.data not in (0, 1):
            raise VerifyException(
                f"pe_axis must be 0 (the PEs of a row) or 1 (the PEs of a column), got {self.pe_axis.value.data}"
            )
        if self.kind.data not in REDUCE_KINDS:
            raise VerifyException(f"unknown reduction kind '{self.kind.data}', expected one of {REDUCE_KINDS}")


# ----------------------------------------------------------------------------------------------
# Slices of tiles in LS (language extension extract_slice)
# ----------------------------------------------------------------------------------------------

DYNAMIC_OFFSET = -(2**63)
"""`static_offsets` entry of a dimension whose offset is an operand (MLIR's ShapedType::kDynamic)."""


@irdl_op_definition
class ExtractSliceOp(IRDLOperation):
    """The block of `source` starting at the offsets, of the result's shape (no global memory access).

    Shapes: source `tensor<S0 x .. x Sn x T>` -> result `tensor<R0 x .. x Rn x T>`, Ri <= Si. Offsets:
    `static_offsets` has one entry per dimension; an entry DYNAMIC_OFFSET takes the next of `offsets`
    (integer scalars, in order). A static offset must keep the slice inside the source (checked here); a
    dynamic one is checked when the program runs. Lowered to an MLU command copying inside LS.
    """

    name = "mtia.extract_slice"

    source = operand_def(TensorType)
    offsets = var_operand_def(IntegerType)
    result = result_def(TensorType)
    static_offsets = prop_def(DenseArrayBase)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$source (`[` $offsets^ `]`)? attr-dict `:` type($source) `->` type($result) (`,` type($offsets)^)?"
    )

    def __init__(
        self, source: SSAValue, static_offsets: Sequence[int], offsets: Sequence[SSAValue], result_type: Attribute
    ) -> None:
        super().__init__(
            operands=[source, offsets],
            result_types=[result_type],
            properties={"static_offsets": DenseArrayBase.from_list(IntegerType(64), list(static_offsets))},
        )

    def offsets_per_dim(self) -> list[int | SSAValue]:
        """Return each dimension's offset: an int, or the operand giving it."""
        dynamic = iter(self.offsets)
        return [next(dynamic) if o == DYNAMIC_OFFSET else o for o in self.static_offsets.get_values()]

    def verify_(self) -> None:
        src, res = self.source.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(res, TensorType)
        statics = list(self.static_offsets.get_values())
        shape, sizes = list(src.get_shape()), list(res.get_shape())
        if src.element_type != res.element_type:
            raise VerifyException(f"a slice of {src} has its element type, not {res.element_type}")
        if not len(statics) == len(sizes) == len(shape):
            raise VerifyException(
                f"source rank {len(shape)}, result rank {len(sizes)} and {len(statics)} static offsets must agree"
            )
        if statics.count(DYNAMIC_OFFSET) != len(self.offsets):
            raise VerifyException(
                f"{statics.count(DYNAMIC_OFFSET)} dynamic offsets in static_offsets but {len(self.offsets)} operands"
            )
        for dim, (off, size, extent) in enumerate(zip(statics, sizes, shape, strict=True)):
            if size > extent:
                raise VerifyException(f"dimension {dim}: a slice of {size} does not fit a source of {extent}")
            if off != DYNAMIC_OFFSET and not 0 <= off <= extent - size:
                raise VerifyException(
                    f"dimension {dim}: offset {off} + size {size} leaves the source of extent {extent}"
                )


ENGINE_BODY_DIALECTS = ("arith", "math", "scf", "ub")
"""Dialects every op of which an engine command body may hold (elementwise arithmetic and functions, and
the structured control flow and poison values of combine regions)."""

ENGINE_BODY_OPS = frozenset(
    {
        "mtia.yield",
        "builtin.unrealized_conversion_cast",
        # elementwise
        "tt.addptr", "tt.bitcast", "tt.clampf", "tt.extern_elementwise", "tt.fp_to_fp", "tt.mulhiui",
        "tt.precise_divf", "tt.precise_sqrt", "tt.approx_divf", "tt.int_to_ptr", "tt.ptr_to_int",
        "tt.map_elementwise", "tt.map_elementwise.return",
        # layout and creation (the MLU's and operand forms)
        "tt.broadcast", "tt.cat", "tt.expand_dims", "tt.join", "tt.make_range", "tt.reshape", "tt.split",
        "tt.splat", "tt.trans", "tt.unsplat", "mtia.extract_slice",
        # reductions, scans, gathers, histograms and dots the RE/DPE do not take
        "tt.reduce", "tt.reduce.return", "tt.scan", "tt.scan.return", "tt.gather", "tt.histogram", "tt.dot",
        # device print of a tensor, run where the tensor lives
        "tt.print",
        # atomics on the vector core (convert-tt-to-mtia{scalar-core-atomics=false})
        "tt.atomic_rmw", "tt.atomic_cas", "tt.atomic_load", "tt.atomic_store", "tt.atomic_poll",
    }
)  # fmt: skip
"""The ops, besides those of ENGINE_BODY_DIALECTS, that an engine compute command's body (and the regions
nested in it) may hold: what `convert-tt-to-mtia` wraps into SE/VEC/MLU commands and `mtia-vector-codegen`
fuses, so what an emitter must translate. The verifier rejects any other op in a body."""


def _verify_engine_body(op: EngineComputeOp) -> None:
    """Raise VerifyException if `op`'s body holds an op outside ENGINE_BODY_OPS / ENGINE_BODY_DIALECTS."""
    for inner in op.body.walk():
        if inner.name not in ENGINE_BODY_OPS and inner.name.split(".", 1)[0] not in ENGINE_BODY_DIALECTS:
            raise VerifyException(
                f"{inner.name} may not appear in the body of {op.name} (mtia.ENGINE_BODY_OPS lists what an "
                "engine command computes)"
            )


ENGINE_OPS = (
    DmaLoadOp,
    DmaStoreOp,
    DmaGatherRowsOp,
    GatherOp,
    ScatterOp,
    AtomicRmwOp,
    AtomicCasOp,
    DpeMatmulOp,
    ReReduceOp,
    SeComputeOp,
    VecComputeOp,
    MluComputeOp,
)

MTIA = Dialect(
    "mtia",
    [
        DmaLoadOp,
        StorageExtentOp,
        DmaStoreOp,
        DmaGatherRowsOp,
        GatherOp,
        ScatterOp,
        AtomicRmwOp,
        AtomicCasOp,
        ScalarLoadOp,
        ScalarStoreOp,
        DpeMatmulOp,
        ReReduceOp,
        SeComputeOp,
        VecComputeOp,
        MluComputeOp,
        YieldOp,
        CbAllocOp,
        CbReserveOp,
        CbPushOp,
        CbWaitOp,
        CbPopOp,
        CbReadOp,
        PeIdOp,
        NumPesOp,
        ExtractSliceOp,
        ReAllreduceOp,
    ],
    [CircularBufferType, TargetAttr],
)

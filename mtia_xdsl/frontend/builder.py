"""XdslBuilder: the `ir.builder` API of Triton 3.9's code generator, creating xDSL tt/arith/math/scf ops.

Triton's `CodeGenerator` and `TritonSemantic` call ~175 builder methods; this class implements the ones
non-descriptor kernels reach, with libtriton's semantics (see triton/_C/libtriton ir.cc of 3.9):
`create_block` appends to the current region and moves the insertion point there; a splat of a
constant folds to a dense constant; same-width int casts are `arith.bitcast`; scf.for/scf.if get an
implicit `scf.yield` only when they carry nothing; `get_insertion_block` is None when unset.
Every op gets the current location, a `FileLineColLoc(kernel_file, line, col)` set by the code
generator's `visit`. Methods not implemented raise `UnsupportedConstruct` naming that location.

Names: while the code generator evaluates the right-hand side of `name = ...` its locations carry `name`
(upstream's name locations, `create_name_loc`). The value an assignment produces gets `name` as its xDSL
`name_hint` (printed `%name`; the emitters' C++ and LLVM value names): every result of an op built under a
named location gets the name, and loses it again when a later op of the same assignment consumes it, so the
last value of `offs = pid * BLOCK + tl.arange(0, BLOCK)` is `%offs` and its intermediates stay unnamed.
Loop-carried values, loop results and arguments are named through `Value.set_loc`, as upstream names them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import arith as xarith
from xdsl.dialects import cf, math, scf, ub
from xdsl.dialects.builtin import (
    BFloat16Type,
    BoolAttr,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    FunctionType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NoneType,
    Signedness,
    StringAttr,
    TensorType,
    UnitAttr,
    UnknownLoc,
    bf16,
    f8E4M3FN,
    f8E4M3FNUZ,
    f8E5M2,
    f8E5M2FNUZ,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from mtia_xdsl.dialects import arith, mtia, tt
from mtia_xdsl.dialects.ttg import BarrierOp
from mtia_xdsl.frontend.errors import UnsupportedConstruct
from mtia_xdsl.frontend.handles import (
    Attr,
    BlockArg,
    BlockHandle,
    FunctionHandle,
    FunctionTypeHandle,
    Loc,
    ModuleHandle,
    OpState,
    RegionHandle,
    Type,
    Value,
    scalar_attr,
    unwrap,
    value_name,
)
from mtia_xdsl.utils.isa import isa


class InsertPointHandle:
    """A saved insertion point (`ir.InsertPoint`); None when the builder had none."""

    def __init__(self, ip: InsertPoint | None):
        self.ip = ip


_INTERNED: dict[tuple[Any, ...], Attribute] = {}
"""Types and locations the builder made, by (class, parameters...): attributes are immutable and equal by
value, so builds share one instance instead of building and verifying a new one per use (constructing
them was ~10 % of a build). Cleared when it reaches `_INTERNED_MAX` entries."""

_INTERNED_MAX = 1 << 16

_CONSTANT = "constant"
"""Key tag of a constant's value attribute in _INTERNED: (_CONSTANT, type, Python type, value)."""


def _intern(key: tuple[Any, ...], attr: Attribute) -> Attribute:
    if len(_INTERNED) >= _INTERNED_MAX:
        _INTERNED.clear()
    _INTERNED[key] = attr
    return attr


def interned(cls: Callable[..., Attribute], *params: Any) -> Any:
    """Return the shared `cls(*params)` (params hashable: attributes, ints, strings, tuples)."""
    key = (cls, *params)
    attr = _INTERNED.get(key)
    return attr if attr is not None else _intern(key, cls(*params))


_TRUE, _FALSE = BoolAttr.from_bool(True), BoolAttr.from_bool(False)
"""The `noinline` attribute values (immutable, shared by every function)."""


def _elem(ty: Attribute) -> Attribute:
    return ty.element_type if isinstance(ty, TensorType) else ty


def _width(ty: Attribute) -> int:
    e = _elem(ty)
    if isinstance(e, IntegerType):
        return e.width.data
    return e.bitwidth  # type: ignore[attr-defined]


_ICMP = {"EQ": "eq", "NE": "ne", "SLT": "slt", "SLE": "sle", "SGT": "sgt", "SGE": "sge",
         "ULT": "ult", "ULE": "ule", "UGT": "ugt", "UGE": "uge"}  # fmt: skip
_FCMP = {"OEQ": "oeq", "OGT": "ogt", "OGE": "oge", "OLT": "olt", "OLE": "ole", "ONE": "one",
         "UEQ": "ueq", "UGT": "ugt", "UGE": "uge", "ULT": "ult", "ULE": "ule", "UNE": "une"}  # fmt: skip

_BINARY: dict[str, type[Operation]] = {
    "create_add": xarith.AddiOp, "create_sub": xarith.SubiOp, "create_mul": xarith.MuliOp,
    "create_sdiv": xarith.DivSIOp, "create_udiv": xarith.DivUIOp, "create_srem": xarith.RemSIOp,
    "create_urem": xarith.RemUIOp, "create_shl": xarith.ShLIOp, "create_lshr": xarith.ShRUIOp,
    "create_ashr": xarith.ShRSIOp, "create_and": xarith.AndIOp, "create_or": xarith.OrIOp,
    "create_xor": xarith.XOrIOp, "create_minsi": xarith.MinSIOp, "create_maxsi": xarith.MaxSIOp,
    "create_minui": xarith.MinUIOp, "create_maxui": xarith.MaxUIOp, "create_fadd": xarith.AddfOp,
    "create_fsub": xarith.SubfOp, "create_fmul": xarith.MulfOp, "create_fdiv": xarith.DivfOp,
    "create_frem": arith.RemFOp, "create_minimumf": xarith.MinimumfOp, "create_maximumf": xarith.MaximumfOp,
    "create_minnumf": xarith.MinnumfOp, "create_maxnumf": xarith.MaxnumfOp,
    "create_precise_divf": tt.PreciseDivFOp,
    "create_approx_divf": tt.ApproxDivFOp, "create_umulhi": tt.MulhiUIOp,
}  # fmt: skip

_UNARY: dict[str, type[Operation]] = {
    "create_exp": math.ExpOp, "create_exp2": math.Exp2Op, "create_log": math.LogOp,
    "create_log2": math.Log2Op, "create_cos": math.CosOp, "create_sin": math.SinOp,
    "create_sqrt": math.SqrtOp, "create_rsqrt": math.RsqrtOp, "create_erf": math.ErfOp,
    "create_floor": math.FloorOp, "create_ceil": math.CeilOp, "create_fabs": math.AbsFOp,
    "create_iabs": math.AbsIOp, "create_fneg": xarith.NegfOp, "create_precise_sqrt": tt.PreciseSqrtOp,
}  # fmt: skip

_CASTS: dict[str, type[Operation]] = {
    "create_fp_ext": arith.ExtFOp, "create_fp_trunc": arith.TruncFOp, "create_si_to_fp": arith.SIToFPOp,
    "create_ui_to_fp": arith.UIToFPOp, "create_fp_to_si": arith.FPToSIOp, "create_fp_to_ui": arith.FPToUIOp,
    "create_bitcast": tt.BitcastOp, "create_int_to_ptr": tt.IntToPtrOp, "create_ptr_to_int": tt.PtrToIntOp,
}  # fmt: skip


_GPU_ONLY = {
    "create_inline_asm": (
        "tl.inline_asm_elementwise",
        "inline assembly targets one GPU's instruction set and cannot run on MTIA; write the computation with "
        "tl operations (tl.map_elementwise for scalar code)",
    ),
    "create_grid_dependency_wait": (
        "tl.extra.cuda.gdc_wait",
        "programmatic dependent launch is CUDA-only; remove the call (launches on MTIA run in stream order)",
    ),
    "create_grid_dependency_launch_dependents": (
        "tl.extra.cuda.gdc_launch_dependents",
        "programmatic dependent launch is CUDA-only; remove the call (launches on MTIA run in stream order)",
    ),
}
"""Builder methods reached only by GPU-specific constructs: (construct, what to do instead)."""


class XdslBuilder:
    """Triton's `ir.builder`, producing xDSL operations (see the module docstring)."""

    def __init__(
        self,
        context: Any,
        last_loc: list[Any] | None = None,
    ):
        self.context = context
        self.ip: InsertPoint | None = None
        self._loc = Loc(UnknownLoc())
        self._named: set[SSAValue] = set()
        """Values named by the assignment being built (see the module docstring); emptied when it ends."""
        self._last_loc = last_loc if last_loc is not None else [None]
        self.options: Any = None
        self.codegen_fns: dict[str, Any] = {}
        self.module_map: dict[str, Any] = {}
        self._values: dict[int, Value] = {}
        self._blocks: dict[int, BlockHandle] = {}
        self.verify_module = True
        """Whether `module.verify()` (Triton's code generator calls it once built) verifies the module."""

    # ----- handles -------------------------------------------------------------------------

    def value(self, ssa: SSAValue) -> Value:
        """Return the one handle of `ssa`."""
        handle = self._values.get(id(ssa))
        if handle is None or handle.ssa is not ssa:
            from xdsl.ir import BlockArgument

            cls = BlockArg if isa(ssa, BlockArgument) else Value
            handle = cls(self, ssa)
            self._values[id(ssa)] = handle
        return handle

    def block(self, block: Block) -> BlockHandle:
        """Return the one handle of `block`."""
        handle = self._blocks.get(id(block))
        if handle is None or handle.block is not block:
            handle = BlockHandle(self, block)
            self._blocks[id(block)] = handle
        return handle

    def unsupported(self, what: str) -> UnsupportedConstruct:
        """Return the error for a construct mtia_xdsl cannot build, at the current kernel location."""
        loc = self.loc.attr
        if isinstance(loc, FileLineColLoc):
            return UnsupportedConstruct(
                f"{what}: not supported by mtia_xdsl yet", loc.filename.data, loc.line.data, loc.column.data
            )
        return UnsupportedConstruct(f"{what}: not supported by mtia_xdsl yet")

    def gpu_only(self, construct: str, instead: str) -> UnsupportedConstruct:
        """Return the error for a GPU-only construct, at the current kernel location."""
        loc = self.loc.attr
        message = f"{construct} is GPU-only and not supported on MTIA: {instead}"
        if isinstance(loc, FileLineColLoc):
            return UnsupportedConstruct(message, loc.filename.data, loc.line.data, loc.column.data)
        return UnsupportedConstruct(message)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name in _GPU_ONLY:
            construct, instead = _GPU_ONLY[name]

            def refuse(*args: Any, **kwargs: Any) -> Any:
                raise self.gpu_only(construct, instead)

            return refuse
        if name.startswith(("create_", "get_")):

            def fail(*args: Any, **kwargs: Any) -> Any:
                raise self.unsupported(f"the Triton construct behind builder.{name}")

            return fail
        raise AttributeError(name)

    # ----- insertion and locations -----------------------------------------------------------

    @property
    def loc(self) -> Loc:
        """The location stamped on new ops."""
        return self._loc

    @loc.setter
    def loc(self, loc: Loc) -> None:
        if self._named and (loc.name is None or loc.name != self._loc.name):
            self._named = set()  # a new statement, or another assignment's right-hand side
        self._loc = loc
        self._last_loc[0] = loc

    def insert(self, op: Operation) -> Operation:
        """Insert `op` at the insertion point with the current location; return it."""
        op.location = self._loc.attr
        if self._loc.name is not None:
            name = value_name(self._loc.name)
            if name is not None:
                self._name_results(op, name)
        ip = self.ip
        if ip is not None:  # with no insertion point the op stays detached, as in MLIR
            if ip.insert_before is not None:  # what Rewriter.insert_op does, for one op
                ip.block.insert_op_before(op, ip.insert_before)
            else:
                ip.block.add_op(op)
        return op

    def _name_results(self, op: Operation, name: str) -> None:
        """Name `op`'s results `name`; an operand named by the same assignment is an intermediate: unname it."""
        for operand in op.operands:
            if operand in self._named:
                operand.name_hint = None
                self._named.discard(operand)
        for r in op.results:
            if r.name_hint is None:
                r.name_hint = name
                self._named.add(r)

    def result(self, op: Operation) -> Value:
        """Insert `op` and return its only result."""
        return self.value(self.insert(op).results[0])

    def set_loc(self, *args: Any) -> None:
        """Set the location: `set_loc(loc)` or `set_loc(file, line, col)`."""
        if len(args) == 1:
            if isinstance(args[0], Loc):
                self.loc = args[0]
            return
        self.loc = self.create_loc(*args)

    def create_loc(self, file: str, line: int, col: int) -> Loc:
        """Return a file:line:col location."""
        key = (FileLineColLoc, file or "<unknown>", int(line), int(col))
        attr = _INTERNED.get(key)
        if attr is None:
            attr = _intern(key, FileLineColLoc(StringAttr(key[1]), IntAttr(key[2]), IntAttr(key[3])))
        return Loc(attr)  # type: ignore[arg-type]

    def create_name_loc(self, name: str, child: Loc | None = None) -> Loc:
        """Return `child` carrying a variable name (ops keep the file:line:col location)."""
        return Loc(child.attr if child is not None else self.loc.attr, name)

    def get_loc(self) -> Loc:
        """Return the current location."""
        return self.loc

    def get_insertion_block(self) -> BlockHandle | None:
        """Return the block of the insertion point, None when unset."""
        return self.block(self.ip.block) if self.ip is not None else None

    def get_insertion_point(self) -> InsertPointHandle:
        """Return the insertion point."""
        return InsertPointHandle(self.ip)

    def restore_insertion_point(self, ip: InsertPointHandle) -> None:
        """Restore a saved insertion point."""
        self.ip = ip.ip

    def set_insertion_point_to_start(self, block: BlockHandle) -> None:
        """Insert before the current first op of `block`."""
        self.ip = InsertPoint.at_start(block.block)

    def set_insertion_point_to_end(self, block: BlockHandle) -> None:
        """Insert at the end of `block`."""
        self.ip = InsertPoint.at_end(block.block)

    def set_insertion_point_after(self, op: OpState) -> None:
        """Insert after `op`."""
        self.ip = InsertPoint.after(op.op)

    # ----- blocks --------------------------------------------------------------------------

    def create_block(self) -> BlockHandle:
        """Append a block to the current region and insert at its end."""
        if self.ip is None or self.ip.block.parent is None:
            raise self.unsupported("create_block outside a region")
        block = Block()
        self.ip.block.parent.add_block(block)
        self.ip = InsertPoint.at_end(block)
        return self.block(block)

    def create_block_with_parent(self, region: RegionHandle, arg_types: Sequence[Type]) -> BlockHandle:
        """Append a block with arguments to `region` and insert at its end."""
        block = Block(arg_types=[t.attr for t in arg_types])
        for arg in block.args:
            arg.location = self.loc.attr
        region.region.add_block(block)
        self.ip = InsertPoint.at_end(block)
        return self.block(block)

    def new_block(self) -> BlockHandle:
        """Return a detached block."""
        return self.block(Block())

    def erase_block(self, block: Block) -> None:
        """Erase `block` and its ops (the code generator's dry runs)."""
        for op in reversed(list(block.ops)):
            block.detach_op(op)
            op.erase(safe_erase=False)
        if block.parent is not None:
            block.parent.detach_block(block)
        block.erase(safe_erase=False)

    def merge_block_before(self, src: Block, dst: Block) -> None:
        """Move the ops of `src` to the start of `dst` and erase `src`."""
        first = dst.first_op
        for op in list(src.ops):
            op.detach()
            if first is None:
                dst.add_op(op)
            else:
                dst.insert_op_before(op, first)
        if self.ip is not None and self.ip.block is src:
            self.ip = InsertPoint.at_end(dst)
        if src.parent is not None:
            src.parent.detach_block(src)

    # ----- module and functions --------------------------------------------------------------

    def create_module(self) -> ModuleHandle:
        """Return an empty module."""
        module = ModuleOp([])
        module.location = self.loc.attr
        return ModuleHandle(self, module)

    def get_or_insert_function(
        self,
        module: ModuleHandle,
        name: str,
        fn_ty: FunctionTypeHandle,
        visibility: str,
        noinline: bool | None,
    ) -> FunctionHandle:
        """Return the tt.func `name`, creating it (bodyless, `noinline` attr) if absent."""
        if module.has_function(name):
            return module.get_function(name)
        func = tt.FuncOp(name, fn_ty.attr, Region(), visibility)  # type: ignore[arg-type]
        func.attributes["noinline"] = _TRUE if noinline else _FALSE
        func.location = self.loc.attr
        return FunctionHandle(self, func)

    def ret(self, vals: Sequence[Value]) -> OpState:
        """Create tt.return."""
        return OpState(self, self.insert(tt.ReturnOp(*unwrap(vals))))

    def call(self, fn: FunctionHandle, args: Sequence[Value]) -> OpState:
        """Create tt.call of `fn`."""
        op = tt.CallOp(fn.op.sym_name.data, unwrap(args), fn.op.function_type.outputs.data)
        return OpState(self, self.insert(op))

    # ----- types -------------------------------------------------------------------------------

    def get_void_ty(self) -> Type:
        """Return the void type (dropped from function types)."""
        return Type(NoneType())

    def get_int1_ty(self) -> Type:
        """Return i1."""
        return Type(interned(IntegerType, 1))

    def get_int8_ty(self) -> Type:
        """Return i8."""
        return Type(interned(IntegerType, 8))

    def get_int16_ty(self) -> Type:
        """Return i16."""
        return Type(interned(IntegerType, 16))

    def get_int32_ty(self) -> Type:
        """Return i32."""
        return Type(interned(IntegerType, 32))

    def get_int64_ty(self) -> Type:
        """Return i64."""
        return Type(interned(IntegerType, 64))

    def get_int128_ty(self) -> Type:
        """Return i128."""
        return Type(interned(IntegerType, 128))

    def get_uint8_ty(self) -> Type:
        """Return i8 (MLIR integers are signless; Triton tracks signedness in its own types)."""
        return Type(interned(IntegerType, 8))

    def get_uint16_ty(self) -> Type:
        """Return i16 (signless, as get_uint8_ty)."""
        return Type(interned(IntegerType, 16))

    def get_uint32_ty(self) -> Type:
        """Return i32 (signless, as get_uint8_ty)."""
        return Type(interned(IntegerType, 32))

    def get_uint64_ty(self) -> Type:
        """Return i64 (signless, as get_uint8_ty)."""
        return Type(interned(IntegerType, 64))

    def create_tensor_descriptor_type(self, block_ty: Type, is_signed: bool) -> Type:
        """Return `!tt.tensordesc<block>`; an unsigned integer block records its element as `ui<N>`."""
        return Type(tt.TensorDescType(_desc_block(block_ty.attr, is_signed)))

    def get_half_ty(self) -> Type:
        """Return f16."""
        return Type(interned(Float16Type))

    def get_bf16_ty(self) -> Type:
        """Return bf16."""
        return Type(interned(BFloat16Type))

    def get_float_ty(self) -> Type:
        """Return f32."""
        return Type(interned(Float32Type))

    def get_double_ty(self) -> Type:
        """Return f64."""
        return Type(interned(Float64Type))

    def get_fp8e5_ty(self) -> Type:
        """Return f8E5M2."""
        return Type(f8E5M2)

    def get_fp8e5b16_ty(self) -> Type:
        """Return f8E5M2FNUZ."""
        return Type(f8E5M2FNUZ)

    def get_fp8e4nv_ty(self) -> Type:
        """Return f8E4M3FN."""
        return Type(f8E4M3FN)

    def get_fp8e4b8_ty(self) -> Type:
        """Return f8E4M3FNUZ."""
        return Type(f8E4M3FNUZ)

    def get_fp8e4b15_ty(self) -> Type:
        """Return i8: fp8e4b15 is stored as bytes and converted in integer ops, as in libtriton."""
        return Type(interned(IntegerType, 8))

    def get_ptr_ty(self, pointee: Type, address_space: str) -> Type:
        """Return `!tt.ptr<pointee>` in the named address space ("global", "constant")."""
        return Type(interned(tt.PointerType, pointee.attr, str(address_space)))

    def get_block_ty(self, elem: Type, shape: Sequence[int]) -> Type:
        """Return `tensor<shape x elem>`."""
        return Type(interned(TensorType, elem.attr, tuple(shape)))

    def get_function_ty(self, ins: Sequence[Type], outs: Sequence[Type]) -> FunctionTypeHandle:
        """Return a function type (void results dropped)."""
        res = tuple(t.attr for t in outs if not isinstance(t.attr, NoneType))
        return FunctionTypeHandle(interned(FunctionType.from_lists, tuple(t.attr for t in ins), res))

    # ----- attributes ----------------------------------------------------------------------------

    def get_int32_attr(self, v: int) -> Attr:
        """Return `v : i32`."""
        return Attr(IntegerAttr(int(v), 32))

    def get_unit_attr(self) -> Attr:
        """Return the unit attribute."""
        return Attr(UnitAttr())

    def get_bool_attr(self, v: bool) -> Attr:
        """Return a bool attribute."""
        return Attr(BoolAttr.from_bool(bool(v)))

    def get_string_attr(self, v: str) -> Attr:
        """Return a string attribute."""
        return Attr(StringAttr(v))

    def get_cache_policy(self, cache: str, evict: str) -> Attr:
        """Return `#tt.cache_policy<...>`."""
        return Attr(tt.CachePolicyAttr(cache, evict))

    def get_disable_loop_licm_attr(self) -> Attr:
        """Return the loop annotation that disables LICM (kept as a unit attribute)."""
        return Attr(UnitAttr())

    # ----- constants -------------------------------------------------------------------------------

    def _constant(self, value: float | int | bool, ty: Attribute) -> Value:
        kind = type(value)
        key = (_CONSTANT, ty, kind, value.hex() if kind is float else value) if kind in (int, bool, float) else None
        attr = _INTERNED.get(key) if key is not None else None  # float.hex keeps -0.0 and NaN apart
        if attr is None:
            if isinstance(ty, TensorType):
                scalar = scalar_attr(value, ty.element_type)
                attr = DenseIntOrFPElementsAttr.from_list(ty, [scalar.value.data])  # type: ignore[attr-defined]  # a splat
            else:
                attr = scalar_attr(value, ty)
            if key is not None:
                _intern(key, attr)
        return self.result(xarith.ConstantOp(attr, ty))

    def get_int1(self, v: Any) -> Value:
        """Return `arith.constant v : i1`."""
        return self._constant(bool(v), i1)

    def get_int8(self, v: int) -> Value:
        """Return an i8 constant."""
        return self._constant(v, i8)

    def get_uint8(self, v: int) -> Value:
        """Return an i8 constant (unsigned value)."""
        return self._constant(v, i8)

    def get_int16(self, v: int) -> Value:
        """Return an i16 constant."""
        return self._constant(v, i16)

    def get_uint16(self, v: int) -> Value:
        """Return an i16 constant (unsigned value)."""
        return self._constant(v, i16)

    def get_int32(self, v: int) -> Value:
        """Return an i32 constant."""
        return self._constant(v, i32)

    def get_uint32(self, v: int) -> Value:
        """Return an i32 constant (unsigned value)."""
        return self._constant(v, i32)

    def get_int64(self, v: int) -> Value:
        """Return an i64 constant."""
        return self._constant(v, i64)

    def get_uint64(self, v: int) -> Value:
        """Return an i64 constant (unsigned value)."""
        return self._constant(v, i64)

    def get_fp16(self, v: float) -> Value:
        """Return an f16 constant."""
        return self._constant(v, f16)

    def get_bf16(self, v: float) -> Value:
        """Return a bf16 constant."""
        return self._constant(v, bf16)

    def get_fp32(self, v: float) -> Value:
        """Return an f32 constant."""
        return self._constant(v, f32)

    def get_fp64(self, v: float) -> Value:
        """Return an f64 constant."""
        return self._constant(v, f64)

    def get_null_value(self, ty: Type) -> Value:
        """Return the zero of `ty`."""
        return self._constant(0, ty.attr)

    def get_all_ones_value(self, ty: Type) -> Value:
        """Return the all-ones integer of `ty`."""
        return self._constant(-1, ty.attr)

    def create_poison(self, ty: Type) -> Value:
        """Return `ub.poison : ty`."""
        return self.result(ub.PoisonOp(ty.attr))

    # ----- arithmetic ---------------------------------------------------------------------------------

    def _binary(self, cls: type[Operation], a: Value, b: Value) -> Value:
        assert a.ssa is not None and b.ssa is not None
        return self.result(cls.build(operands=[a.ssa, b.ssa], result_types=[a.ssa.type]))

    def _unary(self, cls: type[Operation], a: Value) -> Value:
        assert a.ssa is not None
        return self.result(cls.build(operands=[a.ssa], result_types=[a.ssa.type]))

    def _cast(self, cls: type[Operation], a: Value, ty: Type) -> Value:
        assert a.ssa is not None
        return self.result(cls.build(operands=[a.ssa], result_types=[ty.attr]))

    def create_fma(self, a: Value, b: Value, c: Value) -> Value:
        """Return math.fma(a, b, c)."""
        return self.result(math.FmaOp.build(operands=unwrap([a, b, c]), result_types=[a.get_type().attr]))

    def create_select(self, c: Value, a: Value, b: Value) -> Value:
        """Return arith.select."""
        return self.result(arith.SelectOp(*unwrap([c, a, b])))

    def create_clampf(self, x: Value, lo: Value, hi: Value, propagate_nan: Any) -> Value:
        """Return tt.clampf."""
        name = tt.enum_name(tt.PROPAGATE_NAN, int(propagate_nan.value))
        return self.result(tt.ClampFOp(*unwrap([x, lo, hi]), name))

    def create_int_cast(self, v: Value, ty: Type, is_signed: bool) -> Value:
        """Extend, truncate or (same width) bitcast an integer."""
        src = v.get_type().attr
        ws, wd = _width(src), _width(ty.attr)
        cls = (
            arith.BitcastOp
            if ws == wd
            else arith.TruncIOp
            if ws > wd
            else arith.ExtSIOp
            if is_signed
            else arith.ExtUIOp
        )
        return self._cast(cls, v, ty)

    def create_fp_to_fp(self, v: Value, ty: Type, rounding: Any = None) -> Value:
        """Return tt.fp_to_fp (rounding rtz/rtne or none)."""
        name = None if rounding is None else tt.enum_name(tt.ROUNDING_MODE, int(rounding.value))
        assert v.ssa is not None
        return self.result(tt.FpToFpOp(v.ssa, ty.attr, name))

    # ----- tensors and pointers ---------------------------------------------------------------------

    def create_make_range(self, ty: Type, start: int, end: int) -> Value:
        """Return tt.make_range."""
        return self.result(tt.MakeRangeOp(start, end))

    def create_splat(self, ty: Type, v: Value) -> Value:
        """Return tt.splat, folded to a dense constant when `v` is a scalar constant."""
        assert v.ssa is not None
        owner = v.ssa.owner
        if isinstance(owner, xarith.ConstantOp) and isinstance(owner.value, IntegerAttr | FloatAttr):
            return self._constant(owner.value.value.data, ty.attr)
        return self.result(tt.SplatOp(v.ssa, ty.attr.get_shape()))  # type: ignore[attr-defined]

    def create_unsplat(self, v: Value) -> Value:
        """Return tt.unsplat."""
        return self.result(tt.UnsplatOp(unwrap([v])[0]))

    def create_broadcast(self, v: Value, shape: Sequence[int]) -> Value:
        """Return tt.broadcast."""
        return self.result(tt.BroadcastOp(unwrap([v])[0], list(shape)))

    def create_expand_dims(self, v: Value, axis: int) -> Value:
        """Return tt.expand_dims."""
        return self.result(tt.ExpandDimsOp(unwrap([v])[0], axis))

    def create_reshape(self, v: Value, shape: Sequence[int], allow_reorder: bool) -> Value:
        """Return tt.reshape."""
        return self.result(tt.ReshapeOp(unwrap([v])[0], list(shape), allow_reorder))

    def create_trans(self, v: Value, order: Sequence[int]) -> Value:
        """Return tt.trans."""
        return self.result(tt.TransOp(unwrap([v])[0], list(order)))

    def create_cat(self, a: Value, b: Value) -> Value:
        """Return tt.cat."""
        return self.result(tt.CatOp(*unwrap([a, b])))

    def create_join(self, a: Value, b: Value) -> Value:
        """Return tt.join."""
        return self.result(tt.JoinOp(*unwrap([a, b])))

    def create_split(self, v: Value) -> list[Value]:
        """Return the two results of tt.split."""
        op = self.insert(tt.SplitOp(unwrap([v])[0]))
        return [self.value(r) for r in op.results]

    def create_histogram(self, v: Value, bins: int, mask: Value | None = None) -> Value:
        """Return tt.histogram."""
        return self.result(tt.HistogramOp(unwrap([v])[0], bins, mask.ssa if mask else None))

    def create_gather(self, src: Value, idx: Value, axis: int) -> Value:
        """Return tt.gather."""
        return self.result(tt.GatherOp(*unwrap([src, idx]), axis))

    def create_addptr(self, ptr: Value, offset: Value) -> Value:
        """Return tt.addptr."""
        return self.result(tt.AddPtrOp(*unwrap([ptr, offset])))

    def create_get_program_id(self, axis: int) -> Value:
        """Return tt.get_program_id."""
        return self.result(tt.GetProgramIdOp(axis))

    def create_pe_id(self, axis: int) -> Value:
        """Return mtia.pe_id (language extension get_pe_id): the PE's column (axis 0) or row (axis 1)."""
        return self.result(mtia.PeIdOp(axis))

    def create_num_pes(self, axis: int) -> Value:
        """Return mtia.num_pes: the launch's PE grid width (axis 0) or height (axis 1)."""
        return self.result(mtia.NumPesOp(axis))

    def create_mtia_extract_slice(
        self, src: Value, static_offsets: Sequence[int], offsets: Sequence[Value], ret_ty: Type
    ) -> Value:
        """Return mtia.extract_slice (language extension extract_slice) of `src` with result type `ret_ty`."""
        source, dynamic = unwrap([src, *offsets])[0], unwrap(offsets)
        return self.result(mtia.ExtractSliceOp(source, static_offsets, dynamic, ret_ty.attr))

    def create_mtia_re_allreduce(self, x: Value, pe_axis: int, kind: str) -> Value:
        """Return mtia.re_allreduce (language extension re_reduce) of `x` over a PE row (0) or column (1)."""
        (value,) = unwrap([x])
        return self.result(mtia.ReAllreduceOp(value, pe_axis, kind))

    def create_get_num_programs(self, axis: int) -> Value:
        """Return tt.get_num_programs."""
        return self.result(tt.GetNumProgramsOp(axis))

    def create_dot(self, a: Value, b: Value, c: Value, precision: Any, max_imprecise: int | None) -> Value:
        """Return tt.dot."""
        name = tt.enum_name(tt.INPUT_PRECISION, int(precision.value))
        return self.result(tt.DotOp(*unwrap([a, b, c]), name, int(max_imprecise or 0)))

    def create_extern_elementwise(
        self, libname: str, libpath: str, symbol: str, args: Sequence[Value], ret: Type, pure: bool
    ) -> Value:
        """Return tt.extern_elementwise."""
        return self.result(tt.ExternElementwiseOp(unwrap(args), ret.attr, libname, libpath, symbol, pure))

    # ----- memory --------------------------------------------------------------------------------

    def _load(self, ptr: Value, mask: Value | None, other: Value | None, cp: Attr, volatile: bool) -> Value:
        policy = cp.attr if isinstance(cp.attr, tt.CachePolicyAttr) else tt.CachePolicyAttr()
        op = tt.LoadOp(
            unwrap([ptr])[0],
            mask.ssa if mask is not None else None,
            other.ssa if other is not None else None,
            policy.cache_modifier.data,
            policy.eviction_policy.data,
            volatile,
        )
        return self.result(op)

    def create_load(self, ptr: Value, cp: Attr, volatile: bool) -> Value:
        """Return tt.load."""
        return self._load(ptr, None, None, cp, volatile)

    def create_masked_load(self, ptr: Value, mask: Value, other: Value | None, cp: Attr, volatile: bool) -> Value:
        """Return a masked tt.load."""
        return self._load(ptr, mask, other, cp, volatile)

    def _store(self, ptr: Value, val: Value, mask: Value | None, cp: Attr) -> None:
        policy = cp.attr if isinstance(cp.attr, tt.CachePolicyAttr) else tt.CachePolicyAttr()
        self.insert(
            tt.StoreOp(
                *unwrap([ptr, val]),
                mask.ssa if mask is not None else None,
                policy.cache_modifier.data,
                policy.eviction_policy.data,
            )
        )

    def create_store(self, ptr: Value, val: Value, cp: Attr) -> None:
        """Create tt.store."""
        self._store(ptr, val, None, cp)

    def create_masked_store(self, ptr: Value, val: Value, mask: Value, cp: Attr) -> None:
        """Create a masked tt.store."""
        self._store(ptr, val, mask, cp)

    def create_atomic_rmw(self, kind: Any, ptr: Value, val: Value, mask: Value | None, sem: Any, scope: Any) -> Value:
        """Return tt.atomic_rmw."""
        op = tt.AtomicRMWOp(
            tt.enum_name(tt.ATOMIC_RMW_OP, int(kind.value)),
            *unwrap([ptr, val]),
            mask.ssa if mask is not None else None,
            tt.enum_name(tt.MEM_SEMANTIC, int(sem.value)),
            tt.enum_name(tt.MEM_SYNC_SCOPE, int(scope.value)),
        )
        return self.result(op)

    def create_atomic_cas(self, ptr: Value, cmp: Value, val: Value, sem: Any, scope: Any) -> Value:
        """Return tt.atomic_cas."""
        op = tt.AtomicCASOp(
            *unwrap([ptr, cmp, val]),
            tt.enum_name(tt.MEM_SEMANTIC, int(sem.value)),
            tt.enum_name(tt.MEM_SYNC_SCOPE, int(scope.value)),
        )
        return self.result(op)

    def create_atomic_load(self, ptr: Value, mask: Value | None, sem: Any, scope: Any) -> Value:
        """Return tt.atomic_load."""
        op = tt.AtomicLoadOp(
            unwrap([ptr])[0],
            mask.ssa if mask is not None else None,
            tt.enum_name(tt.MEM_SEMANTIC, int(sem.value)),
            tt.enum_name(tt.MEM_SYNC_SCOPE, int(scope.value)),
        )
        return self.result(op)

    def create_atomic_store(self, ptr: Value, val: Value, mask: Value | None, sem: Any, scope: Any) -> None:
        """Create tt.atomic_store."""
        op = tt.AtomicStoreOp(
            *unwrap([ptr, val]),
            mask.ssa if mask is not None else None,
            tt.enum_name(tt.MEM_SEMANTIC, int(sem.value)),
            tt.enum_name(tt.MEM_SYNC_SCOPE, int(scope.value)),
        )
        self.insert(op)

    def create_atomic_poll(self, ptr: Value, expected: Value, timeout: Value, sem: Any, scope: Any) -> Value:
        """Return tt.atomic_poll (`timeout` is an empty `ir.value()` when absent)."""
        op = tt.AtomicPollOp(
            *unwrap([ptr, expected]),
            timeout.ssa,
            tt.enum_name(tt.MEM_SEMANTIC, int(sem.value)),
            tt.enum_name(tt.MEM_SYNC_SCOPE, int(scope.value)),
        )
        return self.result(op)

    # ----- tensor descriptors ------------------------------------------------------------------------

    def create_make_tensor_descriptor(
        self,
        base: Value,
        shape: Sequence[Value],
        strides: Sequence[Value],
        block_shape: Sequence[int],
        is_signed: bool,
        padding: Any,
    ) -> Value:
        """Return tt.make_tensor_descriptor with blocks `block_shape` of the base's pointee type."""
        assert base.ssa is not None
        block = _desc_block(TensorType(tt.pointee_of(base.ssa.type), list(block_shape)), is_signed)
        name = tt.enum_name(tt.PADDING_OPTION, int(padding.value))
        return self.result(tt.MakeTensorDescOp(base.ssa, unwrap(shape), unwrap(strides), block, name))

    def create_descriptor_load(self, desc: Value, offsets: Sequence[Value], cp: Attr) -> Value:
        """Return tt.descriptor_load."""
        policy = cp.attr if isinstance(cp.attr, tt.CachePolicyAttr) else tt.CachePolicyAttr()
        op = tt.DescriptorLoadOp(
            unwrap([desc])[0], unwrap(offsets), policy.cache_modifier.data, policy.eviction_policy.data
        )
        return self.result(op)

    def create_descriptor_store(self, desc: Value, value: Value, offsets: Sequence[Value]) -> None:
        """Create tt.descriptor_store."""
        self.insert(tt.DescriptorStoreOp(*unwrap([desc, value]), unwrap(offsets)))

    def create_descriptor_reduce(self, kind: Any, desc: Value, value: Value, offsets: Sequence[Value]) -> None:
        """Create tt.descriptor_reduce (`kind` is an ir.DESCRIPTOR_REDUCE_KIND)."""
        name = tt.enum_name(tt.DESCRIPTOR_REDUCE_KIND, int(kind.value))
        self.insert(tt.DescriptorReduceOp(name, *unwrap([desc, value]), unwrap(offsets)))

    def create_descriptor_gather(self, desc: Value, x_offsets: Value, y_offset: Value, ty: Type) -> Value:
        """Return tt.descriptor_gather."""
        return self.result(tt.DescriptorGatherOp(*unwrap([desc, x_offsets, y_offset]), ty.attr))

    def create_descriptor_scatter(self, desc: Value, value: Value, x_offsets: Value, y_offset: Value) -> None:
        """Create tt.descriptor_scatter."""
        self.insert(tt.DescriptorScatterOp(*unwrap([desc, x_offsets, y_offset, value])))

    # ----- map_elementwise ---------------------------------------------------------------------------

    def create_map_elementwise(self, inputs: Sequence[Value], result_types: Sequence[Type], pack: int) -> OpState:
        """Return tt.map_elementwise with an empty region (tl.map_elementwise pushes the scalar block)."""
        op = tt.MapElementwiseOp(unwrap(inputs), [t.attr for t in result_types], int(pack), Region())
        return OpState(self, self.insert(op))

    def create_map_elementwise_ret(self, vals: Sequence[Value]) -> OpState:
        """Create tt.map_elementwise.return."""
        return OpState(self, self.insert(tt.MapElementwiseReturnOp(*unwrap(vals))))

    # ----- reductions --------------------------------------------------------------------------------

    def create_reduce(self, vals: Sequence[Value], axis: int) -> OpState:
        """Return tt.reduce with an empty combine region (the semantic layer fills it)."""
        return OpState(self, self.insert(tt.ReduceOp(unwrap(vals), axis, Region())))

    def create_reduce_ret(self, *vals: Value) -> OpState:
        """Create tt.reduce.return."""
        return OpState(self, self.insert(tt.ReduceReturnOp(*unwrap(vals))))

    def create_scan(self, vals: Sequence[Value], axis: int, reverse: bool) -> OpState:
        """Return tt.scan with an empty combine region."""
        return OpState(self, self.insert(tt.ScanOp(unwrap(vals), axis, reverse, Region())))

    def create_scan_ret(self, *vals: Value) -> OpState:
        """Create tt.scan.return."""
        return OpState(self, self.insert(tt.ScanReturnOp(*unwrap(vals))))

    # ----- hints and debug -------------------------------------------------------------------------------

    def create_assume(self, cond: Value) -> None:
        """Create llvm.intr.assume (`tl.assume`), as upstream: a hint, undefined behaviour if false."""
        from mtia_xdsl.dialects.llvm_intr import AssumeOp  # imports xDSL's llvm dialect (~0.1 s): on first use

        self.insert(AssumeOp(unwrap([cond])[0]))

    def create_barrier(self) -> None:
        """Create `ttg.barrier all` (`tl.debug_barrier`), as upstream; a no-op on one in-order PE."""
        self.insert(BarrierOp())

    def create_assert(self, cond: Value, msg: str) -> None:
        """Create tt.assert."""
        self.insert(tt.AssertOp(unwrap([cond])[0], msg))

    def create_print(self, prefix: str, hex: bool, vals: Sequence[Value], is_signed: Sequence[int]) -> None:
        """Create tt.print."""
        self.insert(tt.PrintOp(prefix, hex, unwrap(vals), list(is_signed)))

    # ----- control flow -----------------------------------------------------------------------------

    def create_for_op(self, lb: Value, ub_: Value, step: Value, inits: Sequence[Value]) -> OpState:
        """Return scf.for; with no iter_args its body gets the implicit scf.yield."""
        iv_type = lb.get_type().attr
        body = Block(arg_types=[iv_type, *[v.get_type().attr for v in inits]])
        for arg in body.args:
            arg.location = self.loc.attr
        if not inits:
            y = scf.YieldOp()
            y.location = self.loc.attr
            body.add_op(y)
        op = scf.ForOp(*unwrap([lb, ub_, step]), unwrap(inits), body)
        return OpState(self, self.insert(op))

    def create_if_op(self, types: Sequence[Type], cond: Value, with_else: bool) -> OpState:
        """Return scf.if; with no results both blocks get the implicit scf.yield."""
        blocks = [Block() for _ in range(2 if with_else else 1)]
        if not types:
            for b in blocks:
                y = scf.YieldOp()
                y.location = self.loc.attr
                b.add_op(y)
        op = scf.IfOp(
            unwrap([cond])[0],
            [t.attr for t in types],
            Region(blocks[0]),
            Region(blocks[1]) if with_else else Region(),
        )
        return OpState(self, self.insert(op))

    def create_while_op(self, types: Sequence[Type], inits: Sequence[Value]) -> OpState:
        """Return scf.while with empty regions."""
        op = scf.WhileOp(unwrap(inits), [t.attr for t in types], Region(), Region())
        return OpState(self, self.insert(op))

    def create_condition_op(self, cond: Value, args: Sequence[Value]) -> OpState:
        """Create scf.condition."""
        return OpState(self, self.insert(scf.ConditionOp(*unwrap([cond, *args]))))

    def create_yield_op(self, vals: Sequence[Value]) -> OpState:
        """Create scf.yield."""
        return OpState(self, self.insert(scf.YieldOp(*unwrap(vals))))

    def create_branch(self, dest: BlockHandle, args: Sequence[Value]) -> OpState:
        """Create cf.br."""
        return OpState(self, self.insert(cf.BranchOp(dest.block, *unwrap(args))))

    def create_cond_branch(self, cond: Value, then: BlockHandle, other: BlockHandle) -> OpState:
        """Create cf.cond_br."""
        op = cf.ConditionalBranchOp(unwrap([cond])[0], then.block, [], other.block, [])
        return OpState(self, self.insert(op))


def _desc_block(block: Attribute, is_signed: bool) -> TensorType:
    """Return the block type a tensor descriptor records: unsigned integers as `ui<N>`, as upstream."""
    assert isinstance(block, TensorType)
    elem = block.element_type
    if isinstance(elem, IntegerType) and not is_signed and elem.width.data > 1:
        elem = IntegerType(elem.width.data, Signedness.UNSIGNED)
    return TensorType(elem, block.get_shape())


def _install_tables() -> None:
    """Attach the table-driven methods (binary, unary, compare, cast) to XdslBuilder."""

    def binary(cls: type[Operation]) -> Callable[..., Value]:
        return lambda self, a, b: self._binary(cls, a, b)  # pyright: ignore[reportPrivateUsage]

    def unary(cls: type[Operation]) -> Callable[..., Value]:
        return lambda self, a: self._unary(cls, a)  # pyright: ignore[reportPrivateUsage]

    def cast(cls: type[Operation]) -> Callable[..., Value]:
        return lambda self, a, ty: self._cast(cls, a, ty)  # pyright: ignore[reportPrivateUsage]

    def cmp(cls: type[arith.CmpiOp] | type[arith.CmpfOp], pred: str) -> Callable[..., Value]:
        return lambda self, a, b: self.result(cls(a.ssa, b.ssa, pred))

    for name, cls in _BINARY.items():
        setattr(XdslBuilder, name, binary(cls))
    for name, cls in _UNARY.items():
        setattr(XdslBuilder, name, unary(cls))
    for name, cls in _CASTS.items():
        setattr(XdslBuilder, name, cast(cls))
    for suffix, pred in _ICMP.items():
        setattr(XdslBuilder, f"create_icmp{suffix}", cmp(arith.CmpiOp, pred))
    for suffix, pred in _FCMP.items():
        setattr(XdslBuilder, f"create_fcmp{suffix}", cmp(arith.CmpfOp, pred))


_install_tables()

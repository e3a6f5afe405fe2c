"""Handle classes standing in for libtriton's `ir.value`, `ir.block`, `ir.type`, ... around xDSL objects.

Triton's code generator compares values and blocks by identity (`live_handles != loop_handles`), so
handles never define `__eq__` except types, which compare by the wrapped attribute. One handle object
exists per xDSL value/block (the builder memoises them), which keeps identity meaningful.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from xdsl.dialects import scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    LocationAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from mtia_xdsl.dialects import tt


class HandleOwner(Protocol):
    """What a handle asks of the builder that made it (`frontend.builder.XdslBuilder` is one).

    Handles only need the builder's memoised handles and two block edits; stating that here keeps
    `handles` below `builder` (the builder imports the handles, not the other way round).
    """

    context: Any
    verify_module: bool
    """Whether `ModuleHandle.verify` verifies (False when the caller verifies after lowering)."""

    def value(self, ssa: SSAValue) -> Value:
        """Return the one handle of `ssa`."""
        ...

    def block(self, block: Block) -> BlockHandle:
        """Return the one handle of `block`."""
        ...

    def erase_block(self, block: Block) -> None:
        """Erase `block` and its ops."""
        ...

    def merge_block_before(self, src: Block, dst: Block) -> None:
        """Move the ops of `src` to the start of `dst` and erase `src`."""
        ...


class Loc:
    """A source location (`ir.location`); wraps an xDSL LocationAttr."""

    def __init__(self, attr: LocationAttr, name: str | None = None):
        self.attr = attr
        self.name = name

    def get_name(self) -> str | None:
        """Return the variable name attached by the code generator, if any."""
        return self.name

    def set_name(self, name: str) -> None:
        """Attach a variable name (kept for diagnostics; ops keep their file:line:col location)."""
        self.name = name


def value_name(variable: str | None) -> str | None:
    """Return the `name_hint` for a kernel variable the code generator names (`m.strides.0`, a field of a
    structure argument, is `m_strides_0`); None when there is none or it is no valid SSA name."""
    if variable is None:
        return None
    name = variable.replace(".", "_")
    if not SSAValue.is_valid_name(name):
        return None
    return SSAValue.extract_valid_name(name) or None  # xDSL keeps `_1` as "" (its `_<digits>` suffix rule)


class Type:
    """An IR type (`ir.type`); equal when the wrapped xDSL attributes are equal."""

    def __init__(self, attr: Attribute):
        self.attr = attr

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Type) and other.attr == self.attr

    def __hash__(self) -> int:
        return hash(self.attr)

    def __repr__(self) -> str:
        return str(self.attr)

    def is_fp16(self) -> bool:
        """Return True for f16."""
        return str(self.attr) == "f16"

    def is_integer(self) -> bool:
        """Return True for an integer type."""
        return isinstance(self.attr, IntegerType)


class FunctionTypeHandle(Type):
    """A function type (`ir.function_type`)."""

    attr: FunctionType

    def param_types(self) -> list[Type]:
        """Return the input types."""
        return [Type(t) for t in self.attr.inputs.data]


class Attr:
    """An attribute handle (`ir.attribute`)."""

    def __init__(self, attr: Attribute | None):
        self.attr = attr


class Value:
    """An SSA value (`ir.value`); compared by identity."""

    def __init__(self, builder: HandleOwner | None = None, ssa: SSAValue | None = None):
        self.builder = builder
        self.ssa = ssa

    def get_type(self) -> Type:
        """Return the value's type."""
        assert self.ssa is not None
        return Type(self.ssa.type)

    def get_shape(self) -> list[int]:
        """Return the tensor shape ([] for a scalar)."""
        assert self.ssa is not None
        t = self.ssa.type
        return list(t.get_shape()) if isinstance(t, TensorType) else []

    def get_context(self) -> Any:
        """Return the builder's context."""
        return self.builder.context if self.builder else None

    def get_loc(self) -> Loc:
        """Return the location of the defining op (or of the block argument)."""
        assert self.ssa is not None
        owner = self.ssa.owner
        if isinstance(owner, Operation):
            return Loc(owner.location)
        return Loc(self.ssa.location) if isinstance(self.ssa, BlockArgument) else Loc(owner.parent_op().location)  # type: ignore[union-attr]

    def set_loc(self, loc: Loc) -> None:
        """Keep an op's file:line:col location (a block argument takes `loc`'s); a name location (the code
        generator's `create_name_loc(variable, ...)`) names an unnamed value: `%acc`, `%k`."""
        if loc is None or self.ssa is None:
            return
        if isinstance(self.ssa, BlockArgument):
            self.ssa.location = loc.attr
        name = value_name(loc.name)
        if name is not None and self.ssa.name_hint is None:
            self.ssa.name_hint = name

    def set_attr(self, name: str, attr: Any) -> None:
        """Set a discardable attribute on the defining op (e.g. `tt.divisibility` hints)."""
        assert self.ssa is not None
        owner = self.ssa.owner
        value = attr.attr if isinstance(attr, Attr) else attr
        if isinstance(owner, Operation) and value is not None:
            owner.attributes[name] = value

    def replace_all_uses_with(self, other: Value) -> None:
        """Replace every use of this value by `other`."""
        assert self.ssa is not None and other.ssa is not None
        self.ssa.replace_all_uses_with(other.ssa)

    def id(self) -> int:
        """Return a stable identifier."""
        return id(self.ssa)


class BlockArg(Value):
    """A block argument (`ir.block_argument`)."""


class BlockHandle:
    """A basic block (`ir.block`); compared by identity."""

    def __init__(self, builder: HandleOwner, block: Block):
        self.builder = builder
        self.block = block

    def arg(self, i: int) -> Value:
        """Return argument i."""
        return self.builder.value(self.block.args[i])

    def add_argument_at(self, ty: Type, loc: Loc) -> Value:
        """Append an argument of type `ty` located at `loc`."""
        arg = self.block.insert_arg(ty.attr, len(self.block.args))
        arg.location = loc.attr
        return self.builder.value(arg)

    def get_argument(self, i: int) -> Value:
        """Return argument i."""
        return self.arg(i)

    def get_num_arguments(self) -> int:
        """Return the number of arguments."""
        return len(self.block.args)

    def add_argument(self, ty: Type) -> Value:
        """Append an argument of type `ty`."""
        return self.builder.value(self.block.insert_arg(ty.attr, len(self.block.args)))

    def has_terminator(self) -> bool:
        """Return True if the last op is a terminator."""
        from xdsl.traits import IsTerminator

        last = self.block.last_op
        return last is not None and last.has_trait(IsTerminator)

    def has_return(self) -> bool:
        """Return True if the block ends with tt.return."""
        return isinstance(self.block.last_op, tt.ReturnOp)

    def get_parent(self) -> RegionHandle:
        """Return the enclosing region."""
        assert self.block.parent is not None
        return RegionHandle(self.builder, self.block.parent)

    def erase(self) -> None:
        """Erase the block and every op in it."""
        self.builder.erase_block(self.block)

    def merge_block_before(self, dst: BlockHandle) -> None:
        """Move all ops of this block to the start of `dst`, then erase this block."""
        self.builder.merge_block_before(self.block, dst.block)

    def move_before(self, other: BlockHandle) -> None:
        """Move this block before `other` in other's region."""
        region = other.block.parent
        assert region is not None
        if self.block.parent is not None:
            self.block.parent.detach_block(self.block)
        region.insert_block_before(self.block, other.block)

    def id(self) -> int:
        """Return a stable identifier."""
        return id(self.block)


class RegionHandle:
    """A region (`ir.region`)."""

    def __init__(self, builder: HandleOwner, region: Region):
        self.builder = builder
        self.region = region

    def size(self) -> int:
        """Return the number of blocks."""
        return len(self.region.blocks)

    def empty(self) -> bool:
        """Return True if the region has no blocks."""
        return not self.region.blocks

    def push_back(self, block: BlockHandle) -> None:
        """Append `block`."""
        self.region.add_block(block.block)

    def id(self) -> int:
        """Return a stable identifier."""
        return id(self.region)


class OpState:
    """An operation (`ir.OpState` and the ForOp/IfOp/WhileOp/... wrappers)."""

    def __init__(self, builder: HandleOwner, op: Operation):
        self.builder = builder
        self.op = op

    def get_result(self, i: int) -> Value:
        """Return result i."""
        return self.builder.value(self.op.results[i])

    def get_num_results(self) -> int:
        """Return the number of results."""
        return len(self.op.results)

    def get_region(self, i: int) -> RegionHandle:
        """Return region i."""
        return RegionHandle(self.builder, self.op.regions[i])

    def get_body(self, i: int) -> BlockHandle:
        """Return block i of region 0."""
        return self.builder.block(self.op.regions[0].blocks[i])

    def get_operation(self) -> OpState:
        """Return self (libtriton distinguishes OpState and Operation)."""
        return self

    def set_attr(self, name: str, attr: Any) -> None:
        """Set a discardable attribute."""
        value = attr.attr if isinstance(attr, Attr) else attr
        if value is not None:
            self.op.attributes[name] = value

    def verify(self) -> bool:
        """Verify this op alone (its regions may still be under construction)."""
        self.op.verify_()
        return True

    def dump(self) -> None:
        """Print the op."""
        print(self.op)

    def str_nodebug(self) -> str:
        """Return the op's text."""
        return str(self.op)

    # scf.for
    def get_induction_var(self) -> Value:
        """Return the scf.for induction variable."""
        return self.builder.value(self.op.regions[0].blocks[0].args[0])

    # scf.if
    def get_then_block(self) -> BlockHandle:
        """Return the scf.if then block."""
        return self.builder.block(self.op.regions[0].blocks[0])

    def get_else_block(self) -> BlockHandle:
        """Return the scf.if else block."""
        return self.builder.block(self.op.regions[1].blocks[0])

    def get_then_yield(self) -> OpState:
        """Return the then block's scf.yield."""
        return OpState(self.builder, self.op.regions[0].blocks[0].last_op)  # type: ignore[arg-type]

    def get_else_yield(self) -> OpState:
        """Return the else block's scf.yield."""
        return OpState(self.builder, self.op.regions[1].blocks[0].last_op)  # type: ignore[arg-type]

    # scf.while
    def get_before(self) -> RegionHandle:
        """Return the scf.while condition region."""
        return RegionHandle(self.builder, self.op.regions[0])

    def get_after(self) -> RegionHandle:
        """Return the scf.while body region."""
        return RegionHandle(self.builder, self.op.regions[1])


class FunctionHandle(OpState):
    """A tt.func (`ir.function`)."""

    op: tt.FuncOp

    def add_entry_block(self) -> BlockHandle:
        """Create the entry block with one argument per input type."""
        block = Block(arg_types=self.op.function_type.inputs.data)
        for arg in block.args:
            arg.location = self.op.location
        self.op.body.add_block(block)
        return self.builder.block(block)

    def args(self, i: int) -> Value:
        """Return entry block argument i."""
        return self.builder.value(self.op.body.blocks[0].args[i])

    def get_num_args(self) -> int:
        """Return the number of inputs."""
        return len(self.op.function_type.inputs.data)

    def set_arg_attr(self, idx: int, name: str, value: int) -> None:
        """Attach `{name = value : i32}` to argument idx (e.g. tt.divisibility)."""
        n = self.get_num_args()
        current = self.op.arg_attrs.data if self.op.arg_attrs else tuple(DictionaryAttr({}) for _ in range(n))
        dicts = [dict(d.data) for d in current]
        dicts[idx][name] = IntegerAttr(value, 32)
        self.op.properties["arg_attrs"] = ArrayAttr([DictionaryAttr(d) for d in dicts])

    def reset_type(self, ty: FunctionTypeHandle | Type) -> None:
        """Replace the function type (the code generator learns the return types last)."""
        self.op.properties["function_type"] = ty.attr

    def type(self) -> FunctionTypeHandle:
        """Return the function type."""
        return FunctionTypeHandle(self.op.function_type)


class ModuleHandle:
    """The module (`ir.module`)."""

    def __init__(self, builder: HandleOwner, module: ModuleOp):
        self.builder = builder
        self.op = module
        self.context: Any = None

    def push_back(self, fn: FunctionHandle) -> None:
        """Append a function (no-op if already there)."""
        if fn.op.parent is None:
            self.op.body.blocks[0].add_op(fn.op)

    def _functions(self) -> dict[str, tt.FuncOp]:
        return {f.sym_name.data: f for f in self.op.ops if isinstance(f, tt.FuncOp)}  # functions are top-level

    def has_function(self, name: str) -> bool:
        """Return True if a tt.func named `name` exists."""
        return name in self._functions()

    def get_function(self, name: str) -> FunctionHandle:
        """Return the tt.func named `name`."""
        return FunctionHandle(self.builder, self._functions()[name])

    def get_body(self) -> BlockHandle:
        """Return the module's block."""
        return self.builder.block(self.op.body.blocks[0])

    def set_attr(self, name: str, attr: Any) -> None:
        """Set a module attribute."""
        self.op.attributes[name] = attr.attr if isinstance(attr, Attr) else attr

    def verify(self) -> bool:
        """Verify the whole module (unless the build was asked not to: `build_tt_module(verify=False)`)."""
        if self.builder.verify_module:
            self.op.verify()
        return True

    def str(self) -> str:
        """Return the module's text."""
        return str(self.op)

    def get_entry_func_name(self) -> str:
        """Return the public function's name."""
        for name, f in self._functions().items():
            if f.sym_visibility is None or f.sym_visibility.data == "public":
                return name
        raise KeyError("no public function")


def scalar_attr(value: float | int | bool, ty: Attribute) -> Attribute:
    """Return the IntegerAttr/FloatAttr of `value` typed `ty`."""
    if isinstance(ty, IntegerType):
        width = ty.width.data
        v = int(value)
        if width == 1:
            v = 1 if v else 0
        elif v >= 2 ** (width - 1):
            v -= 2**width
        return IntegerAttr(v, ty)
    return FloatAttr(float(value), ty)  # type: ignore[arg-type]


def unwrap(vals: Sequence[Value]) -> list[SSAValue]:
    """Return the SSA values of handles."""
    out = []
    for v in vals:
        assert v.ssa is not None
        out.append(v.ssa)
    return out


def is_if(op: Operation) -> bool:
    """Return True for scf.if."""
    return isinstance(op, scf.IfOp)


_ = StringAttr  # re-exported for builder helpers

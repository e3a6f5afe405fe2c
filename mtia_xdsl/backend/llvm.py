"""The LLVM IR emitter (`mtia-opt -t mtia-llvm`, `asm["llir"]`): the buffer-level mtia program lowered to xDSL's
`llvm` dialect and printed as LLVM IR text through xDSL's llvm -> llvmlite translation (backend/llvm_ir.py).

What the IR holds:
- `void @K(ptr %pe, ptr %args)`: the scalar core's code for one Triton program of kernel K. `args` holds the
  kernel parameters as int64 words (pointers as byte addresses, floats as their bits), unpacked into registers;
  the program id and grid come from the runtime (`@mtia_program_id`, ...). Structured control flow (scf.for /
  scf.if / scf.while) becomes branches and phis. A function the kernel calls (`tt.call`, a noinline helper)
  is `@f(ptr %pe, <its scalars>)` returning its result (a literal struct of several).
- CB operations and engine commands are calls to the C runtime API (`RUNTIME_FUNCTIONS`, mtia_runtime.h) with
  the op's kernel location: `@mtia_cb_alloc/reserve/push/wait/pop`, DMA with an `mtia_dma_desc` on the stack
  (`@mtia_dma_load`, `@mtia_dma_gather_rows`, ...). SE, VEC, MLU, DPE and RE commands compute on their LS tiles
  in emitted loops (backend/llvm_engines.py) between `@mtia_cmd_begin` and their recording call. Gathers and
  scatters are runtime calls on their lane tiles; atomics are lane loops over `@mtia_global`, recorded by
  `@mtia_lanes_end`; `@mtia_re_allreduce` reduces across PEs.
- Tensors on the scalar core (a whole tile read by mtia.cb_read, a cross-PE reduction's result) live in stack
  arrays; the tensor ops reading them (tt.reduce, tt.assert, elementwise ops) are evaluated element by element
  with the engine bodies' evaluator. A failing tt.assert (or an out-of-range tt.gather index) stops the
  program through `@mtia_assert_fail`.
- `@mtia_scalar_instrs(i64 n)` before each command, branch and return: the scalar-core instructions the
  machine model counts (every op outside an engine body that is not an engine command, per execution; a
  combine region the model runs once per tree level), so the recorded command stream carries the model's
  issue costs exactly.

Requires: a buffer-level program (the default pipeline through mtia-cb-bufferize; mtia-cb-allocate for CB
IDs and LS offsets). Raises: NotHandled (`file:line:col: error: ...`) for an op the emitter does not
translate, never wrong code.
Example: mtia-opt examples/vector_add.py -t mtia-llvm \
    -p "$(python -c 'import mtia_xdsl.pipeline as p; print(p.pipeline_for())')"
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any, cast

from xdsl.context import Context
from xdsl.dialects import builtin, llvm
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.target import Target

from mtia_xdsl.backend.llvm_engines import (
    MAX_RANK,
    combine_region_instrs,
    emit_dpe,
    emit_engine_command,
    emit_loop,
    emit_re,
    load_element,
    scalar_core_assert,
    scalar_core_tile,
    scalar_core_values,
    store_element,
)
from mtia_xdsl.backend.llvm_scalar import (
    I8,
    I16,
    I32,
    I64,
    LIBM_FUNCTIONS,
    PTR,
    SCALAR_RULES,
    Builder,
    NotHandled,
    element_type,
    emit_scalar,
    is_float,
    is_int,
    is_tensor,
    not_handled,
    register_type,
    shape_of,
    storage_type,
)
from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.commands import command_kind
from mtia_xdsl.machine.interpret.formats import dtype_name
from mtia_xdsl.machine.work import elem_count
from mtia_xdsl.semantics.atomic import FLOAT_RMW_MAX_MIN
from mtia_xdsl.utils.locations import location_str

VOID = llvm.LLVMVoidType()
F32, F64 = builtin.Float32Type(), builtin.Float64Type()

RUNTIME_FUNCTIONS: dict[str, tuple[list[Attribute], Attribute]] = {
    "mtia_program_id": ([PTR, I32], I32),
    "mtia_num_programs": ([PTR, I32], I32),
    "mtia_pe_id": ([PTR, I32], I32),
    "mtia_num_pes": ([PTR, I32], I32),
    "mtia_scalar_instrs": ([PTR, I64], VOID),
    "mtia_assert_fail": ([PTR, PTR, PTR], VOID),
    "mtia_cb_front_ptr": ([PTR, I32, PTR], PTR),
    "mtia_re_allreduce": ([PTR, PTR, I64, I32, PTR, PTR, I32, PTR], VOID),
    "mtia_dma_store_value": ([PTR, PTR, PTR, PTR], VOID),
    "mtia_dma_gather_rows": ([PTR, I32, I32, PTR, I32, I64, PTR, PTR, I64, PTR], VOID),
    "mtia_cb_alloc": ([PTR, I32, I32, I64, I64, PTR], I32),
    "mtia_cb_reserve": ([PTR, I32, I32, PTR], VOID),
    "mtia_cb_push": ([PTR, I32, I32, PTR], VOID),
    "mtia_cb_wait": ([PTR, I32, I32, PTR], VOID),
    "mtia_cb_pop": ([PTR, I32, I32, PTR], VOID),
    "mtia_cb_read": ([PTR, I32, PTR, I64, PTR], VOID),
    "mtia_dma_load": ([PTR, I32, PTR, PTR, PTR], VOID),
    "mtia_dma_store": ([PTR, I32, PTR, PTR], VOID),
    "mtia_dma_store_scalar": ([PTR, PTR, PTR, PTR], VOID),
    "mtia_scalar_load": ([PTR, I64, PTR, I32, PTR, PTR], VOID),
    "mtia_scalar_store": ([PTR, I64, PTR, I32, PTR, PTR], VOID),
    "mtia_cmd_begin": ([PTR, I32, PTR, PTR], VOID),
    "mtia_cmd_in": ([PTR, I32], PTR),
    "mtia_cmd_out": ([PTR, I32], PTR),
    "mtia_cmd_inout": ([PTR, I32], PTR),
    "mtia_compute_end": ([PTR, PTR], VOID),
    "mtia_dpe_end": ([PTR, I64, I64, I64, I64, PTR, I32, I64, I32, PTR], VOID),
    "mtia_re_end": ([PTR, I32, PTR, PTR, I64, I32, PTR], VOID),
    "mtia_global": ([PTR, I64, I64, PTR], PTR),
    "mtia_storage_extent": ([PTR, I64, I32], I64),
    "mtia_lanes_end": ([PTR, PTR, PTR, I64, I32, I32, I32, I64, PTR], VOID),
    "mtia_gather": ([PTR, PTR, PTR, PTR, PTR, I64, I32, I64, PTR], VOID),
    "mtia_scatter": ([PTR, PTR, PTR, PTR, I64, I32, PTR], VOID),
}
"""The functions of backend/runtime/mtia_runtime.h the emitted IR calls, as `(params), result` in LLVM types
(`mtia_pe *` and every other pointer as `ptr`)."""

DMA_DESC = {"base": 0, "rank": 8, "elem_bytes": 12, "shape": 16, "strides": 48, "bounds": 80, "starts": 112,
            "has_starts": 144, "is_float": 148, "dtype": 152, "size": 160}  # fmt: skip
"""Byte offsets of the fields of `mtia_dma_desc` (mtia_runtime.h) on an LP64 host; "size" its size."""

META_GLOBAL = "mtia_kernel_meta"
"""Global string holding the kernel's metadata as JSON (backend/cpp.py `_kernel_meta`: parameters, chip,
PE mapping), which `run_llvm` reads to launch it."""

_ENGINE_OP_TYPES = frozenset(mtia.ENGINE_OPS)
"""Ops the machine model does not count as scalar-core instructions (machine/interpret/pe_state.py)."""


def _minmax(signed: str, floating: str) -> Callable[[Builder, SSAValue, SSAValue], SSAValue]:
    """Integer max/min by the `signed` intrinsic; a float by semantics.atomic.FLOAT_RMW_MAX_MIN[floating]."""

    def update(b: Builder, old: SSAValue, val: SSAValue) -> SSAValue:
        name = FLOAT_RMW_MAX_MIN[floating].llvm_intrinsic if is_float(old.type) else signed
        return b.intrinsic(name, [old, val], old.type)

    return update


def _uminmax(unsigned: str) -> Callable[[Builder, SSAValue, SSAValue], SSAValue]:
    """Unsigned max/min by the `unsigned` intrinsic; a float's bit patterns compared so (semantics.atomic:
    umax/umin view the bits as unsigned integers; a bf16 register is f32, whose bits order as bf16's)."""

    def update(b: Builder, old: SSAValue, val: SSAValue) -> SSAValue:
        if not is_float(old.type):
            return b.intrinsic(unsigned, [old, val], old.type)
        bits = IntegerType(cast(Any, old.type).bitwidth)
        as_int = [b.add(llvm.BitcastOp(v, bits)) for v in (old, val)]
        return b.add(llvm.BitcastOp(b.intrinsic(unsigned, as_int, bits), old.type))

    return update


def _add(b: Builder, old: SSAValue, val: SSAValue) -> SSAValue:
    return b.add(llvm.FAddOp(old, val) if is_float(old.type) else llvm.AddOp(old, val))


def _cas(b: Builder, old: SSAValue, cmp: SSAValue, val: SSAValue) -> SSAValue:
    """semantics.atomic.cas_update: `val` where old == cmp, else `old`."""
    same = b.add(llvm.FCmpOp(old, cmp, builtin.IntegerAttr(1, 64))) if is_float(old.type) else b.icmp("eq", old, cmp)
    return b.add(llvm.SelectOp(same, val, old))


_RMW_UPDATES: dict[int, Callable[[Builder, SSAValue, SSAValue], SSAValue]] = {
    1: lambda b, old, val: b.add(llvm.AndOp(old, val)),
    2: lambda b, old, val: b.add(llvm.OrOp(old, val)),
    3: lambda b, old, val: b.add(llvm.XOrOp(old, val)),
    4: _add,
    5: _add,
    6: _minmax("llvm.smax", "max"),
    7: _minmax("llvm.smin", "min"),
    8: _uminmax("llvm.umax"),
    9: _uminmax("llvm.umin"),
    10: lambda b, old, val: val,
}
"""tt.atomic_rmw codes (semantics/atomic.py RMW_KINDS) -> the update (old, val) -> new on registers (bf16 as
f32, rounded when stored), as semantics.atomic.rmw_update computes it."""

_CB_CALLS = {
    mtia.CbReserveOp: "mtia_cb_reserve",
    mtia.CbPushOp: "mtia_cb_push",
    mtia.CbWaitOp: "mtia_cb_wait",
    mtia.CbPopOp: "mtia_cb_pop",
}


def kernels(module: ModuleOp) -> list[Operation]:
    """The kernel functions (`tt.func` / `func.func` with a body) of a buffer-level program."""
    return [op for op in module.ops if op.name in ("tt.func", "func.func") and op.regions[0].blocks]


def emit_module(module: ModuleOp) -> ModuleOp:
    """Lower the kernel of the buffer-level `module` (and the functions it calls, `tt.call`) to an `llvm`
    dialect module.

    Raises: NotHandled naming the kernel line of the first op the emitter does not translate.
    """
    out = ModuleOp([])
    funcs = kernels(module)
    public = [f for f in funcs if _visibility(f) != "private"]
    if len(public) != 1:
        where = location_str(public[1].location) if public else location_str(module.location)
        raise NotHandled(f"{where}: error: the LLVM IR emitter takes one kernel per module, got {len(public)}")
    kernel = public[0]
    for func in funcs:
        for op in func.walk():
            if (isinstance(op, mtia.CbAllocOp) and not op.allocated) or op.name in ("tt.load", "tt.store"):
                raise NotHandled(
                    f"{location_str(op.location)}: error: the LLVM IR emitter takes the buffer-level program with "
                    "its CBs allocated; lower the kernel with the default pipeline "
                    "(mtia_xdsl.pipeline.pipeline_for()) first"
                )
    root = KernelEmitter(kernel, out)
    for func in funcs:
        if func is not kernel:
            KernelEmitter(func, out, shared=root).run_helper()
    root.run(_kernel_meta(kernel, module))
    return out


def _visibility(func: Operation) -> str:
    vis = func.properties.get("sym_visibility") or func.attributes.get("sym_visibility")
    return vis.data if isinstance(vis, builtin.StringAttr) else "public"


def _kernel_meta(kernel: Operation, module: ModuleOp) -> str:
    """The kernel's launch metadata as JSON: the one the C++ emitter gives its translation unit."""
    from mtia_xdsl.backend.cpp import _kernel_meta as cpp_meta  # pyright: ignore[reportPrivateUsage]

    return json.dumps(cpp_meta(kernel, module), sort_keys=True)


def emit_llvm_ir(module: ModuleOp) -> str:
    """Return the LLVM IR text of the buffer-level `module` (see the module docstring)."""
    from mtia_xdsl.backend.llvm_ir import to_llvmlite

    return str(to_llvmlite(emit_module(module)))


@dataclass(frozen=True)
class MtiaLlvmTarget(Target):
    """`mtia-opt -t mtia-llvm`: the buffer-level program as LLVM IR text."""

    name = "mtia-llvm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        """Print the LLVM IR of `module` to `output`. Raises: NotHandled naming the kernel line."""
        print(emit_llvm_ir(module), file=output, end="")


# ------------------------------------------------------------------------------------------------
# one kernel
# ------------------------------------------------------------------------------------------------


def _c_string_global(name: str, text: str, linkage: str) -> llvm.GlobalOp:
    """A constant global holding `text` as a NUL-terminated byte array (an i8 array of its UTF-8 bytes)."""
    return llvm.GlobalOp(
        _array(len((text + "\0").encode()), I8), name, linkage, constant=True, value=builtin.StringAttr(text + "\0")
    )


def _array(n: int, elem: Attribute) -> Attribute:
    """The LLVM array type of `n` elements of `elem`."""
    return cast(Attribute, llvm.LLVMArrayType(n, elem))  # pyright: ignore[reportUnknownArgumentType]


def _word_type(t: Attribute) -> Attribute:
    """The register type of a kernel parameter of IR type `t`, as unpacked from its int64 argument word (a
    CB, passed to a called function, as its i32 handle)."""
    if isinstance(t, mtia.CircularBufferType):
        return I32
    return I64 if t.name == "tt.ptr" else register_type(t)


def _return_type(results: Sequence[Attribute]) -> Attribute:
    """The LLVM return type of a called function with IR result types `results`: void, the one result's
    register type, or a literal struct of the registers of several (`{i32, float}`).
    Raises: ValueError for a type with no register (from `_word_type`)."""
    if len(results) <= 1:
        return _word_type(results[0]) if results else VOID
    return llvm.LLVMStructType.from_type_list([_word_type(t) for t in results])


class KernelEmitter:
    """Lowers one kernel function; `values` maps its scalar SSA values (and CB handles) to `llvm` values."""

    def __init__(self, kernel: Operation, out: ModuleOp, shared: KernelEmitter | None = None) -> None:
        """`shared`: the emitter of another function of the same module (its declarations and strings)."""
        self.kernel = kernel
        self.out = out
        self.declared: set[str] = shared.declared if shared else set()
        self.strings: dict[str, str] = shared.strings if shared else {}
        self.is_kernel = shared is None
        """The launched kernel (`void @K(ptr pe, ptr args)`), else a function it calls (`tt.call`)."""
        self.values: dict[SSAValue, SSAValue] = {}
        self.pending = 0
        """Scalar-core instructions counted since the last `@mtia_scalar_instrs`."""
        self.region = Region()
        self.entry = Block(arg_types=[PTR, PTR])
        self.b = Builder(self.entry)
        self.pe: SSAValue = self.entry.args[0]
        self.one: SSAValue | None = None
        self.tiles: dict[SSAValue, SSAValue] = {}
        """Tiles the scalar core read whole (mtia.cb_read) -> the address of their stack copy (storage format)."""

    # -- helpers -------------------------------------------------------------------------------------
    def declare(self, name: str, params: list[Attribute], result: Attribute) -> None:
        """Declare external function `name` once per module."""
        if name in self.declared:
            return
        self.declared.add(name)
        fn = llvm.FuncOp(name, llvm.LLVMFunctionType(params, result), linkage=llvm.LinkageAttr("external"))
        self.out.body.block.add_op(fn)

    def call(self, name: str, *args: SSAValue) -> SSAValue:
        """Call runtime function `name` (declared on first use) with the PE as first argument."""
        params, result = RUNTIME_FUNCTIONS[name]
        self.declare(name, params, result)
        return self.b.add(llvm.CallOp(name, self.pe, *args, return_type=None if result == VOID else result))

    def string(self, text: str, prefix: str = "") -> SSAValue:
        """The address of a NUL-terminated constant string (a kernel location, a kind, a dtype), a global named
        `prefix` + the text (a location by its file's name, line and column)."""
        name = self.strings.get(text)
        if name is None:
            readable = prefix + (text.rsplit("/", 1)[-1] if prefix == "" else text)
            taken = set(self.strings.values())
            name = readable if readable not in taken else f"{readable}.{len(self.strings)}"
            self.strings[text] = name
            self.out.body.block.add_op(_c_string_global(name, text, "internal"))
        return self.b.add(llvm.AddressOfOp(name, PTR))

    def constant_array(self, values: Sequence[int | float], elem: Attribute) -> str:
        """The name of a new constant global holding `values` (row-major, LLVM type `elem`)."""
        name = f"const.{len([o for o in self.out.ops if isinstance(o, llvm.GlobalOp)])}"
        dense = builtin.DenseIntOrFPElementsAttr.from_list(TensorType(elem, [len(values)]), list(values))  # type: ignore[arg-type]
        glob = llvm.GlobalOp(_array(len(values), elem), name, "internal", constant=True, value=cast(Attribute, dense))
        self.out.body.block.add_op(glob)
        return name

    def printf(self, fmt: str, *args: SSAValue) -> None:
        """Call the C library's printf with format `fmt` (a constant string) and `args` (promoted as C varargs:
        i32 / i64, f64)."""
        if "printf" not in self.declared:
            self.declared.add("printf")
            fn_t = llvm.LLVMFunctionType([PTR], I32, is_variadic=True)
            self.out.body.block.add_op(llvm.FuncOp("printf", fn_t, linkage=llvm.LinkageAttr("external")))
        self.b.add(llvm.CallOp("printf", self.string(fmt, "fmt."), *args, return_type=I32))

    def loc(self, op: Operation) -> SSAValue:
        """The kernel location of `op` ("file:line:col") as a constant string, named after the kernel line."""
        return self.string(location_str(op.location))

    def flush(self) -> None:
        """Report the scalar-core instructions counted so far to the runtime."""
        if self.pending:
            self.call("mtia_scalar_instrs", self.b.const(self.pending, I64))
            self.pending = 0

    def alloca(self, n: int, elem: Attribute = I64, name: str = "") -> SSAValue:
        """A stack array of `n` elements (named `name`), allocated once in the entry block."""
        assert self.one is not None
        size = llvm.ConstantOp(builtin.IntegerAttr(n, I64), I64)
        op = llvm.AllocaOp(size, elem, alignment=8)
        opaque = llvm.BitcastOp(op, PTR)  # llvmlite types an alloca's pointer; the IR's pointers are opaque
        opaque.results[0].name_hint = name or None
        self.entry.insert_op_after(opaque, self.one.owner)  # type: ignore[arg-type]
        self.entry.insert_op_after(op, self.one.owner)  # type: ignore[arg-type]
        self.entry.insert_op_after(size, self.one.owner)  # type: ignore[arg-type]
        return opaque.results[0]

    def store_at(self, base: SSAValue, offset: int, value: SSAValue) -> None:
        """Store `value` at byte `offset` of the struct at `base`."""
        ptr = self.b.add(llvm.GEPOp(base, [offset], I8)) if offset else base
        self.b.add(llvm.StoreOp(value, ptr))

    def i64_array(self, values: Sequence[SSAValue | int], n: int | None = None) -> SSAValue:
        """A stack array of `n` (default len(values)) i64 holding `values`, zero-padded."""
        arr = self.alloca(max(n or len(values), 1))
        for k in range(n or len(values)):
            v = values[k] if k < len(values) else 0
            self.store_at(arr, 8 * k, self.b.const(v, I64) if isinstance(v, int) else v)
        return arr

    def new_block(self, name: str, arg_types: Sequence[Attribute] = (), attach: bool = True) -> Block:
        """A new block named `name`; `attach=False` leaves placing it to `attach` (blocks print in region order:
        a loop's exit goes after its body's blocks)."""
        block = Block(arg_types=list(arg_types))
        block.name_hint = name
        if attach:
            self.region.add_block(block)
        return block

    def attach(self, block: Block) -> None:
        """Place `block` (made with attach=False) after the blocks placed so far."""
        self.region.add_block(block)

    def value(self, v: SSAValue) -> SSAValue:
        got = self.values.get(v)
        if got is None:
            owner = v.owner
            op = owner if isinstance(owner, Operation) else owner.parent_op()
            raise not_handled(op, f"its value {v.name_hint or ''} of type {v.type} has no LLVM value")  # type: ignore[arg-type]
        return got

    def to_slot(self, v: SSAValue, t: Attribute) -> SSAValue:
        """A stack slot holding register `v` (IR type `t`) as stored in memory; its address."""
        slot = self.alloca(1, storage_type(t), "value")
        self.b.add(llvm.StoreOp(self.b.to_storage(v, t), slot))
        return slot

    # -- the function ---------------------------------------------------------------------------------
    def run(self, meta: str) -> None:
        kernel = self.kernel
        block = kernel.regions[0].blocks.first
        assert block is not None
        if len(kernel.regions[0].blocks) != 1:
            raise not_handled(kernel, "a kernel of several blocks (cf branches)")
        self.region.add_block(self.entry)
        self.entry.name_hint = "entry"
        self.entry.args[0].name_hint, self.entry.args[1].name_hint = "pe", "args"
        self.one = self.b.const(1, I64)
        for k, arg in enumerate(block.args):
            ptr = self.b.add(llvm.GEPOp(self.entry.args[1], [k], I64)) if k else self.entry.args[1]
            word = self.b.add(llvm.LoadOp(ptr, I64))
            t = _word_type(arg.type)
            if isinstance(arg.type, builtin.BFloat16Type):
                v = self.b.bf16_to_f32(self.b.int_cast(word, I16))
            elif is_float(arg.type):
                width = {builtin.Float16Type: 16, builtin.Float64Type: 64}.get(type(arg.type), 32)  # type: ignore[call-overload]
                v = self.b.add(llvm.BitcastOp(self.b.int_cast(word, IntegerType(cast(int, width))), t))
            else:
                v = self.b.int_cast(word, t)
            if arg.name_hint:
                v.name_hint = arg.name_hint
            self.values[arg] = v
        name = cast(builtin.StringAttr, kernel.properties["sym_name"]).data
        self.emit_ops(block.ops)
        fn = llvm.FuncOp(
            name, llvm.LLVMFunctionType([PTR, PTR], VOID), linkage=llvm.LinkageAttr("external"), body=self.region
        )
        self.finish(fn)
        self.out.body.block.add_op(_c_string_global(META_GLOBAL, meta, "external"))

    def run_helper(self) -> None:
        """Lower a function the kernel calls (`tt.call`): `@f(ptr pe, <its parameters' registers>)` returning
        its one result's register, a literal struct of several (`_return_type`), or void.
        Raises: NotHandled for tensor parameters or results."""
        func = self.kernel
        block = func.regions[0].blocks.first
        assert block is not None
        if len(func.regions[0].blocks) != 1:
            raise not_handled(func, "a function of several blocks (cf branches)")
        results = list(cast(Any, func.properties["function_type"]).outputs.data)
        if any(is_tensor(t) for t in (*results, *(a.type for a in block.args))):
            raise not_handled(func, "a called function with tensor values")
        try:
            params = [_word_type(a.type) for a in block.args]
            ret = _return_type(results)
        except ValueError as e:
            raise not_handled(func, str(e)) from None
        self.entry = Block(arg_types=[PTR, *params])
        self.b = Builder(self.entry)
        self.pe = self.entry.args[0]
        self.region.add_block(self.entry)
        self.entry.name_hint = "entry"
        self.pe.name_hint = "pe"
        self.one = self.b.const(1, I64)
        for arg, v in zip(block.args, self.entry.args[1:], strict=True):
            v.name_hint = arg.name_hint
            self.values[arg] = v
        self.emit_ops(block.ops)
        name = cast(builtin.StringAttr, func.properties["sym_name"]).data
        fn_t = llvm.LLVMFunctionType([PTR, *params], ret)
        self.finish(llvm.FuncOp(name, fn_t, linkage=llvm.LinkageAttr("internal"), body=self.region))

    def finish(self, fn: llvm.FuncOp) -> None:
        """Add function `fn` to the module, declaring the libm functions it calls."""
        for o in fn.walk():  # the libm functions called (f32 names in LIBM_FUNCTIONS, f64 ones without the `f`)
            callee = o.callee.string_value() if isinstance(o, llvm.CallOp) and o.callee is not None else ""
            arity = LIBM_FUNCTIONS.get(callee) or LIBM_FUNCTIONS.get(callee + "f")
            if arity:
                t = F32 if callee in LIBM_FUNCTIONS else F64
                self.declare(callee, [t] * arity, t)
        self.out.body.block.add_op(fn)

    def emit_ops(self, ops: Iterable[Operation]) -> None:
        for op in ops:
            if type(op) not in _ENGINE_OP_TYPES:
                self.pending += 1
            handler = _HANDLERS.get(type(op)) or _NAMED_HANDLERS.get(op.name)
            if handler is not None:
                handler(self, op)
            elif op.name in _SCALAR_NAMES:
                self.scalar(op)
            elif op.name in _TENSOR_NAMES:
                self.tensor_op(op)
            else:
                raise not_handled(op)
            self.carry_names(op.results)

    def carry_names(self, values: Iterable[SSAValue]) -> None:
        """Give the LLVM values of `values` their kernel names (`%offs`, `%acc`) where they have none yet;
        llvmlite makes clashing names unique (`%acc.1`)."""
        for v in values:
            got = self.values.get(v)
            if v.name_hint and got is not None and got.name_hint is None:
                got.name_hint = v.name_hint

    def scalar(self, op: Operation) -> None:
        if any(isinstance(t.type, TensorType) for t in (*op.results, *op.operands)):
            self.tensor_op(op)
            return
        self.values[op.results[0]] = emit_scalar(self.b, op, [self.value(v) for v in op.operands])

    def tensor_op(self, op: Operation) -> None:
        """A scalar-core op on tensor values: a tensor result is evaluated where it is read; scalar results
        (a reduction of a tile the scalar core read) are computed here from the tensors' elements."""
        self.pending += combine_region_instrs(op)
        if any(isinstance(r.type, TensorType) for r in op.results):
            return
        for r, v in zip(op.results, scalar_core_values(self, op, self.tiles), strict=True):
            self.values[r] = v

    def assert_(self, op: Operation) -> None:
        """tt.assert on the scalar core: a failing element stops the program at the kernel line."""
        self.flush()
        scalar_core_assert(self, op, self.tiles)

    # -- ops -------------------------------------------------------------------------------------------
    def grid_query(self, op: Operation) -> None:
        axis = cast(builtin.IntegerAttr, op.properties["axis"]).value.data
        fn = {"tt.get_program_id": "mtia_program_id", "tt.get_num_programs": "mtia_num_programs",
              "mtia.pe_id": "mtia_pe_id", "mtia.num_pes": "mtia_num_pes"}[op.name]  # fmt: skip
        self.values[op.results[0]] = self.call(fn, self.b.const(axis, I32))

    def storage_extent(self, op: Operation) -> None:
        """mtia.storage_extent: elements from a pointer to the end of its tensor's storage (the runtime's)."""
        eb = mtia.element_bytes(op.operands[0].type.pointee_type)  # type: ignore[attr-defined]
        self.values[op.results[0]] = self.call("mtia_storage_extent", self.value(op.operands[0]), self.b.const(eb, I32))

    def ret(self, op: Operation) -> None:
        if op.operands and self.is_kernel:
            raise not_handled(op, "a kernel returning values")
        self.flush()
        values = [self.value(v) for v in op.operands]
        if len(values) > 1:  # several results: one literal struct (`_return_type`)
            struct = self.b.add(llvm.UndefOp(_return_type([v.type for v in op.operands])))
            for i, v in enumerate(values):
                struct = self.b.add(llvm.InsertValueOp(builtin.DenseArrayBase.from_list(builtin.i64, [i]), struct, v))
            values = [struct]
        self.b.add(llvm.ReturnOp(*values))

    def call_func(self, op: Operation) -> None:
        """tt.call of a function of the module (lowered by `run_helper`): `@f(pe, args...)`."""
        callee = cast(builtin.SymbolRefAttr, op.properties["callee"]).string_value()
        if any(is_tensor(v.type) for v in (*op.operands, *op.results)):
            raise not_handled(op, "a call with tensor values")
        args = [self.value(v) for v in op.operands]
        self.flush()
        ret = _return_type([r.type for r in op.results])
        result = self.b.add(llvm.CallOp(callee, self.pe, *args, return_type=None if ret == VOID else ret))
        if len(op.results) == 1:
            self.values[op.results[0]] = result
        for i, r in enumerate(op.results if len(op.results) > 1 else ()):
            position = builtin.DenseArrayBase.from_list(builtin.i64, [i])
            self.values[r] = self.b.add(llvm.ExtractValueOp(position, result, _word_type(r.type)))

    def cb_alloc(self, op: mtia.CbAllocOp) -> None:
        t = op.result.type
        assert op.cb_id is not None and op.ls_offset is not None  # emit_module checked the allocation
        cb_id = op.cb_id.value.data
        handle = self.values[op.result] = self.call(
            "mtia_cb_alloc", self.b.const(cb_id, I32), self.b.const(t.depth.data, I32),
            self.b.const(mtia.tile_bytes(t.tile), I64), self.b.const(op.ls_offset.value.data, I64), self.loc(op),
        )  # fmt: skip
        handle.name_hint = op.result.name_hint or f"cb{cb_id}"  # `%x_cb`: the CB of the kernel's `x`

    def cb_count(self, op: mtia.CbCountOp) -> None:
        self.flush()
        count = self.b.const(op.count.value.data, I32)
        self.call(_CB_CALLS[type(op)], self.value(op.cb), count, self.loc(op))  # pyright: ignore[reportArgumentType]

    def cb_read(self, op: mtia.CbReadOp) -> None:
        t = op.result.type
        self.flush()
        if is_tensor(t):  # the whole tile, copied to the stack; its ops read it element by element
            nbytes = mtia.tile_bytes(t)
            slot = self.alloca((nbytes + 7) // 8, I64, "tile")
            self.call("mtia_cb_read", self.value(op.cb), slot, self.b.const(nbytes, I64), self.loc(op))
            self.tiles[op.result] = slot
            return
        slot = self.alloca(1, storage_type(t))
        nbytes = self.b.const(mtia.element_bytes(t), I64)
        self.call("mtia_cb_read", self.value(op.cb), slot, nbytes, self.loc(op))
        self.values[op.result] = self.b.from_storage(self.b.add(llvm.LoadOp(slot, storage_type(t))), t)

    def dma_desc(self, op: Operation, t: Attribute, base: SSAValue) -> SSAValue:
        """An `mtia_dma_desc` on the stack for DMA op `op` moving a block of tile type `t` from `base`."""
        shape = shape_of(t)
        if len(shape) > MAX_RANK:
            raise not_handled(op, f"a DMA block of rank {len(shape)} (at most {MAX_RANK})")
        elem = element_type(t)
        d = self.alloca(DMA_DESC["size"] // 8, name="dma")
        b = self.b
        self.store_at(d, DMA_DESC["base"], self.value(base))
        self.store_at(d, DMA_DESC["rank"], b.const(len(shape), I32))
        self.store_at(d, DMA_DESC["elem_bytes"], b.const(mtia.element_bytes(elem), I32))
        fields = {"shape": [b.const(x, I64) for x in shape]}
        for key in ("strides", "bounds", "starts"):  # an indexed DMA (dma_gather_rows) has no starts
            fields[key] = [self.value(v) for v in getattr(op, key, ())]
        for key, vals in fields.items():
            for k in range(MAX_RANK):
                self.store_at(d, DMA_DESC[key] + 8 * k, vals[k] if k < len(vals) else b.const(0, I64))
        self.store_at(d, DMA_DESC["has_starts"], b.const(int(bool(fields["starts"])), I32))
        self.store_at(d, DMA_DESC["is_float"], b.const(int(is_float(elem)), I32))
        self.store_at(d, DMA_DESC["dtype"], self.string(dtype_name(t), "dtype."))
        return d

    def dma_load(self, op: mtia.DmaLoadOp) -> None:
        if op.out is None:
            raise not_handled(op, "a tensor-level DMA load (run mtia-cb-bufferize)")
        self.flush()
        d = self.dma_desc(op, op.block_type, op.base)
        self.call("mtia_dma_load", self.value(op.out), d, self.other_slot(op), self.loc(op))

    def other_slot(self, op: mtia.DmaLoadOp | mtia.DmaGatherRowsOp) -> SSAValue:
        """A pointer to the element masked lanes of DMA load `op` get (its scalar `other`), or null."""
        if op.other is None:
            return self.b.add(llvm.ZeroOp(result_types=[PTR]))
        if isinstance(op.other.type, TensorType):
            raise not_handled(op, "a DMA load whose `other` is a tensor")
        return self.to_slot(self.value(op.other), op.block_type.element_type)

    def dma_gather_rows(self, op: mtia.DmaGatherRowsOp) -> None:
        """Indexed DMA: the rows the index tile in a CB picks (`mtia_dma_gather_rows`)."""
        if op.out is None or not mtia.is_cb(op.index):
            raise not_handled(op, "a tensor-level indexed DMA (run mtia-cb-bufferize)")
        self.flush()
        index = mtia.tile_type(op.index.type)
        d = self.dma_desc(op, op.block_type, op.base)
        extents = shape_of(index)
        shape = self.i64_array([*extents, *[1] * (MAX_RANK - len(extents))], MAX_RANK)
        b = self.b
        self.call(
            "mtia_dma_gather_rows", self.value(op.out), self.value(op.index), shape,
            b.const(mtia.element_bytes(element_type(index)), I32), self.value(op.row_stride), d,
            self.other_slot(op), b.const(mtia.tile_bytes(op.block_type) + mtia.tile_bytes(index), I64),
            self.loc(op),
        )  # fmt: skip

    def dma_store(self, op: mtia.DmaStoreOp) -> None:
        self.flush()
        t = mtia.tile_type(op.value.type)
        d = self.dma_desc(op, t, op.base)
        if mtia.is_cb(op.value):
            self.call("mtia_dma_store", self.value(op.value), d, self.loc(op))
        elif is_tensor(t):  # a tile the scalar core holds (an mtia.re_allreduce result): no command
            self.call("mtia_dma_store_value", scalar_core_tile(self, op.value, self.tiles), d, self.loc(op))
        else:
            self.call("mtia_dma_store_scalar", self.to_slot(self.value(op.value), t), d, self.loc(op))

    def scalar_memory(self, op: Operation) -> None:
        self.flush()
        load = isinstance(op, mtia.ScalarLoadOp)
        t = op.results[0].type if load else op.operands[1].type
        addr = self.value(op.operands[0])
        slot = self.alloca(1, storage_type(t)) if load else self.to_slot(self.value(op.operands[1]), t)
        nbytes = self.b.const(mtia.element_bytes(t), I32)
        fn = "mtia_scalar_load" if load else "mtia_scalar_store"
        self.call(fn, addr, slot, nbytes, self.string(dtype_name(t), "dtype."), self.loc(op))
        if load:
            self.values[op.results[0]] = self.b.from_storage(self.b.add(llvm.LoadOp(slot, storage_type(t))), t)

    def atomic(self, op: Operation) -> None:
        """An atomic on the scalar core (mtia.atomic_rmw / mtia.atomic_cas) as a loop over its lanes: each active
        lane reads the global element (`mtia_global`), writes the update (semantics/atomic.py: `rmw_update`,
        `cas_update`) and keeps the old value in the out CB (0 for a masked-off lane); `mtia_lanes_end` records
        the command. Raises: NotHandled for an atomic without an out CB or of an unknown kind."""
        cas = isinstance(op, mtia.AtomicCasOp)
        out_cb = cast(mtia.AtomicRmwOp | mtia.AtomicCasOp, op).out
        if out_cb is None:
            raise not_handled(op, "an atomic whose old values are not kept in a CB")
        t = mtia.tile_type(out_cb.type)
        n = elem_count(t)
        elem = element_type(t)
        code = 0 if cas else cast(mtia.AtomicRmwOp, op).atomic_rmw_op.value.data
        if not cas and code not in _RMW_UPDATES:
            raise not_handled(op, f"atomic kind {code}")
        ptr, *args = [op.operands[0], *op.operands[1:3]] if cas else [op.operands[0], op.operands[1]]
        mask = None if cas else cast(mtia.AtomicRmwOp, op).mask
        if n != 1 and not all(mtia.is_cb(v) for v in [ptr, *args, *([mask] if mask is not None else [])]):
            raise not_handled(op, "an atomic on tensor operands outside CBs")
        self.flush()
        b = self.b
        self.call("mtia_cmd_begin", b.const(0, I32), self.string(command_kind(op.name), "kind."), self.loc(op))

        def lanes(v: SSAValue) -> Callable[[SSAValue], SSAValue]:
            """Lane i of operand `v`: an element of its CB tile, or the scalar itself."""
            if not mtia.is_cb(v):
                value = self.value(v)
                return lambda i: value
            tile = self.call("mtia_cmd_in", self.value(v))
            et = element_type(mtia.tile_type(v.type))
            return lambda i: load_element(b, tile, i, et)

        addr_tile = self.call("mtia_cmd_in", self.value(ptr)) if mtia.is_cb(ptr) else self.to_slot(self.value(ptr), I64)
        arg_lanes = [lanes(v) for v in args]
        mask_tile = self.call("mtia_cmd_in", self.value(mask)) if mask is not None and mtia.is_cb(mask) else None
        mask_scalar = self.value(mask) if mask is not None and mask_tile is None else None
        old_tile = self.call("mtia_cmd_out", self.value(out_cb))
        eb = mtia.element_bytes(elem)
        reg = register_type(elem)

        def lane(i: SSAValue) -> None:
            active = mask_scalar
            if mask_tile is not None:
                active = load_element(b, mask_tile, i, builtin.IntegerType(1))
            on, off, done = self.new_block("atomic.lane"), self.new_block("atomic.off"), self.new_block("atomic.next")
            if active is None:
                b.add(llvm.BrOp(on))
            else:
                b.add(llvm.CondBrOp(active, on, [], off, []))
            b.block = off
            store_element(b, old_tile, i, elem, b.const(0, reg))
            b.add(llvm.BrOp(done))
            b.block = on
            addr = load_element(b, addr_tile, i, I64)
            p = self.call("mtia_global", addr, b.const(eb, I64), b.add(llvm.ZeroOp(result_types=[PTR])))
            old = b.from_storage(b.add(llvm.LoadOp(p, storage_type(elem))), elem)
            vals = [b.int_cast(f(i), reg) if is_int(reg) else f(i) for f in arg_lanes]
            new = _cas(b, old, *vals) if cas else _RMW_UPDATES[code](b, old, vals[0])
            b.add(llvm.StoreOp(b.to_storage(new, elem), p))
            store_element(b, old_tile, i, elem, old)
            b.add(llvm.BrOp(done))
            b.block = done

        emit_loop(self, b.const(n, I64), "atomic", lane)
        null = b.add(llvm.ZeroOp(result_types=[PTR]))
        self.call(
            "mtia_lanes_end", addr_tile, mask_tile if mask_tile is not None else null, b.const(n, I64),
            b.const(eb, I32), b.const(1, I32), b.const(1, I32), b.const(mtia.tile_bytes(t), I64),
            self.string(dtype_name(t), "dtype."),
        )  # fmt: skip

    def re_allreduce(self, op: mtia.ReAllreduceOp) -> None:
        """Cross-PE reduction of a scalar or of a tile the scalar core holds (`mtia_re_allreduce` reduces a copy
        in place; the host reruns a program stopped at it until its group's result is known)."""
        self.flush()
        t = op.input.type
        elem = element_type(t)
        b = self.b
        if is_tensor(t):
            data = self.alloca((mtia.tile_bytes(t) + 7) // 8, I64, "tile")
            nbytes = mtia.tile_bytes(t)
            src = scalar_core_tile(self, op.input, self.tiles)
            args = [data, src, b.const(nbytes, I64), b.const(0, builtin.IntegerType(1))]
            b.add(llvm.CallIntrinsicOp("llvm.memcpy.p0.p0.i64", args, []))
            n = elem_count(t)
        else:
            data, n = self.to_slot(self.value(op.input), t), 1
        self.call(
            "mtia_re_allreduce", data, b.const(n, I64), b.const(mtia.element_bytes(elem), I32),
            self.string(dtype_name(elem), "dtype."), self.string(op.kind.data, "kind."),
            b.const(op.pe_axis.value.data, I32), self.loc(op),
        )  # fmt: skip
        if is_tensor(t):
            self.tiles[op.result] = data
        else:
            self.values[op.result] = b.from_storage(b.add(llvm.LoadOp(data, storage_type(t))), t)

    def _lanes(self, op: Operation, cbs: list[SSAValue | None], t: Attribute) -> list[SSAValue]:
        """Begin the scalar core's command `op` on lanes and return the LS addresses of its CB tiles `cbs`
        (`mtia_cmd_in`; a null pointer for None). Raises: NotHandled unless every tile has the shape of `t`."""
        shape = t.get_shape()  # type: ignore[attr-defined]
        for v in cbs:
            if v is not None and (not mtia.is_cb(v) or mtia.tile_type(v.type).get_shape() != shape):  # type: ignore[attr-defined]
                raise not_handled(op, "lanes outside CBs, or tiles of different shapes")
        self.flush()
        self.call("mtia_cmd_begin", self.b.const(0, I32), self.string(command_kind(op.name), "kind."), self.loc(op))
        null = self.b.add(llvm.ZeroOp(result_types=[PTR]))
        return [self.call("mtia_cmd_in", self.value(v)) if v is not None else null for v in cbs]

    def gather(self, op: mtia.GatherOp) -> None:
        """A gather on the scalar core: `mtia_gather` of the lanes of its pointer tile into its out CB."""
        if op.out is None:
            raise not_handled(op, "a tensor-level gather (run the buffer-level program)")
        t = mtia.tile_type(op.out.type)
        if not is_tensor(t) or (op.other is not None and is_tensor(op.other.type)):
            raise not_handled(op, "a gather of a scalar, or with a tensor `other`")
        addrs, mask = self._lanes(op, [op.ptrs, op.mask], t)
        dst = self.call("mtia_cmd_out", self.value(op.out))
        elem, b = element_type(t), self.b
        if op.other is not None:
            other = self.to_slot(self.value(op.other), elem)
        elif is_float(elem):  # masked lanes read as the model's unwritten LS: NaN
            other = self.to_slot(b.const(float("nan"), register_type(elem)), elem)
        else:
            other = b.add(llvm.ZeroOp(result_types=[PTR]))
        self.call(
            "mtia_gather", dst, addrs, mask, other, b.const(elem_count(t), I64), b.const(mtia.element_bytes(elem), I32),
            b.const(mtia.tile_bytes(t), I64), self.string(dtype_name(t), "dtype."),
        )  # fmt: skip

    def scatter(self, op: mtia.ScatterOp) -> None:
        """A scatter on the scalar core: `mtia_scatter` of its value tile through its pointer tile."""
        t = mtia.tile_type(op.value.type)
        if not is_tensor(t):
            raise not_handled(op, "a scatter of a scalar")
        addrs, src, mask = self._lanes(op, [op.ptrs, op.value, op.mask], t)
        elem, b = element_type(t), self.b
        self.call(
            "mtia_scatter", src, addrs, mask, b.const(elem_count(t), I64), b.const(mtia.element_bytes(elem), I32),
            self.string(dtype_name(t), "dtype."),
        )  # fmt: skip

    def compute(self, op: Operation) -> None:
        self.flush()
        {mtia.DpeMatmulOp: emit_dpe, mtia.ReReduceOp: emit_re}.get(type(op), emit_engine_command)(self, op)  # type: ignore[arg-type]

    # -- structured control flow ------------------------------------------------------------------------
    @staticmethod
    def _no_tensors(op: Operation) -> None:
        """Raises: NotHandled if control flow `op` carries a tensor (the scalar core keeps no tensor registers)."""
        if any(is_tensor(v.type) for v in (*op.operands, *op.results)):
            raise not_handled(op, "a tensor carried by control flow on the scalar core")

    def region_ops(self, block: Block, args: list[SSAValue]) -> Operation:
        """Emit the ops of `block` (its arguments bound to `args`) but its terminator; return the terminator."""
        for a, v in zip(block.args, args, strict=True):
            self.values[a] = v
        self.carry_names(block.args)
        ops = list(block.ops)
        self.emit_ops(ops[:-1])
        term = ops[-1]
        self.pending += 1  # scf.yield / scf.condition are scalar-core instructions too
        self.flush()
        return term

    def scf_for(self, op: Operation) -> None:
        self._no_tensors(op)
        lb, ub, step, *inits = (self.value(v) for v in op.operands)
        self.flush()
        iter_types = [_word_type(r.type) for r in op.results]
        header = self.new_block("for", [lb.type, *iter_types])
        body = self.new_block("for.body")
        exit_ = self.new_block("for.end", iter_types, attach=False)
        self.b.add(llvm.BrOp(header, lb, *inits))
        self.b.block = header
        iv, *iters = header.args
        iv.name_hint = op.regions[0].blocks.first.args[0].name_hint or "iv"  # type: ignore[union-attr]
        self.b.add(llvm.CondBrOp(self.b.icmp("slt", iv, ub), body, [], exit_, iters))
        self.b.block = body
        term = self.region_ops(op.regions[0].blocks.first, [iv, *iters])  # type: ignore[arg-type]
        nxt = self.b.add(llvm.AddOp(iv, step))
        self.b.add(llvm.BrOp(header, nxt, *(self.value(v) for v in term.operands)))
        self.attach(exit_)
        self.b.block = exit_
        for r, a in zip(op.results, exit_.args, strict=True):
            self.values[r] = a

    def scf_if(self, op: Operation) -> None:
        self._no_tensors(op)
        cond = self.value(op.operands[0])
        self.flush()
        types = [_word_type(r.type) for r in op.results]
        then, merge = self.new_block("if.then"), self.new_block("if.end", types, attach=False)
        has_else = bool(op.regions[1].blocks)
        other = self.new_block("if.else", attach=False) if has_else else merge
        self.b.add(llvm.CondBrOp(cond, then, [], other, []))
        for region, block in ((op.regions[0], then), *(((op.regions[1], other),) if has_else else ())):
            if block is not then:
                self.attach(block)
            self.b.block = block
            term = self.region_ops(region.blocks.first, [])  # type: ignore[arg-type]
            self.b.add(llvm.BrOp(merge, *(self.value(v) for v in term.operands)))
        self.attach(merge)
        self.b.block = merge
        for r, a in zip(op.results, merge.args, strict=True):
            self.values[r] = a

    def scf_while(self, op: Operation) -> None:
        self._no_tensors(op)
        inits = [self.value(v) for v in op.operands]
        self.flush()
        before_blk, after_blk = op.regions[0].blocks.first, op.regions[1].blocks.first
        assert before_blk is not None and after_blk is not None
        before = self.new_block("while", [v.type for v in inits])
        after = self.new_block("while.body", [_word_type(a.type) for a in after_blk.args], attach=False)
        exit_ = self.new_block("while.end", [_word_type(r.type) for r in op.results], attach=False)
        self.b.add(llvm.BrOp(before, *inits))
        self.b.block = before
        cond_op = self.region_ops(before_blk, list(before.args))
        cond, *passed = (self.value(v) for v in cond_op.operands)
        self.b.add(llvm.CondBrOp(cond, after, passed, exit_, passed))
        self.attach(after)
        self.b.block = after
        term = self.region_ops(after_blk, list(after.args))
        self.b.add(llvm.BrOp(before, *(self.value(v) for v in term.operands)))
        self.attach(exit_)
        self.b.block = exit_
        for r, a in zip(op.results, exit_.args, strict=True):
            self.values[r] = a


_HANDLERS: dict[type[Operation], Callable[[KernelEmitter, Operation], None]] = {
    mtia.CbAllocOp: KernelEmitter.cb_alloc,  # type: ignore[dict-item]
    **{t: KernelEmitter.cb_count for t in _CB_CALLS},  # type: ignore[dict-item]
    mtia.CbReadOp: KernelEmitter.cb_read,  # type: ignore[dict-item]
    mtia.DmaLoadOp: KernelEmitter.dma_load,  # type: ignore[dict-item]
    mtia.DmaStoreOp: KernelEmitter.dma_store,  # type: ignore[dict-item]
    mtia.DmaGatherRowsOp: KernelEmitter.dma_gather_rows,  # type: ignore[dict-item]
    mtia.ScalarLoadOp: KernelEmitter.scalar_memory,
    mtia.ScalarStoreOp: KernelEmitter.scalar_memory,
    mtia.SeComputeOp: KernelEmitter.compute,
    mtia.VecComputeOp: KernelEmitter.compute,
    mtia.MluComputeOp: KernelEmitter.compute,
    mtia.DpeMatmulOp: KernelEmitter.compute,
    mtia.ReReduceOp: KernelEmitter.compute,
    mtia.AtomicRmwOp: KernelEmitter.atomic,
    mtia.AtomicCasOp: KernelEmitter.atomic,
    mtia.ReAllreduceOp: KernelEmitter.re_allreduce,  # type: ignore[dict-item]
    mtia.GatherOp: KernelEmitter.gather,  # type: ignore[dict-item]
    mtia.ScatterOp: KernelEmitter.scatter,  # type: ignore[dict-item]
    mtia.PeIdOp: KernelEmitter.grid_query,
    mtia.NumPesOp: KernelEmitter.grid_query,
    mtia.StorageExtentOp: KernelEmitter.storage_extent,
}
_NAMED_HANDLERS: dict[str, Callable[[KernelEmitter, Operation], None]] = {
    "llvm.intr.assume": lambda em, op: None,  # a hint (tl.assume): the scalar core counts it, nothing to compute
    "ttg.barrier": lambda em, op: None,  # tl.debug_barrier: a program runs in order on one PE (dialects/ttg.py)
    "tt.get_program_id": KernelEmitter.grid_query,
    "tt.get_num_programs": KernelEmitter.grid_query,
    "tt.return": KernelEmitter.ret,
    "tt.call": KernelEmitter.call_func,
    "tt.assert": KernelEmitter.assert_,
    "func.return": KernelEmitter.ret,
    "scf.for": KernelEmitter.scf_for,
    "scf.if": KernelEmitter.scf_if,
    "scf.while": KernelEmitter.scf_while,
}
_SCALAR_NAMES = frozenset(SCALAR_RULES)
_TENSOR_NAMES = frozenset(
    ("tt.reduce", "tt.scan", "tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.trans", "tt.make_range",
     "tt.join", "tt.split", "tt.cat", "tt.gather", "tt.histogram")
)  # fmt: skip
"""Tensor ops the scalar core evaluates element by element where their values are read (backend/llvm_engines.py
`_Element`), as in engine bodies."""

"""The LLVM IR emitter (`mtia-opt -t mtia-llvm`, `asm["llir"]`): the buffer-level mtia program lowered to xDSL's
`llvm` dialect and printed as LLVM IR text through xDSL's llvm -> llvmlite translation (backend/llvm_ir.py).

What the IR holds, per kernel `@K` of the program:
- `void @K(<kernel parameters>, i32 %pid_x, i32 %pid_y, i32 %pid_z, i32 %num_x, i32 %num_y, i32 %num_z)`: the
  scalar core's code for one Triton program. Pointer parameters are `ptr`, held as i64 byte addresses inside;
  scalars are themselves. Structured control flow (scf.for / scf.if / scf.while) becomes branches and phis.
- Engine commands and CB operations are calls to the runtime's external C functions (`RUNTIME_FUNCTIONS`),
  each with the command's `site` (the position of its op in a walk of the kernel, `command_sites`, so a
  runtime error names the kernel line): `@mtia_cb_alloc/reserve/push/wait/pop`; SE, VEC and MLU commands
  get their tiles' LS addresses from `@mtia_cb_front` (an input's front tile) and `@mtia_cb_back` (an
  output's reserved slot), compute in the emitted loop (backend/llvm_body.py) and are recorded by
  `@mtia_se_compute` / `@mtia_vec_compute` / `@mtia_mlu_compute`; every other command (DMA, DPE, RE,
  gather/scatter, atomics, scalar loads and stores, cb_read, the PE grid ops) is `@mtia_<kind>(i32 site,
  ptr args, ptr results)` with its operands packed as i64 in operand order (a CB as its handle, a float as
  its bits) and its scalar results returned the same way.
- `@mtia_scalar_instrs(i64 n)` before each command, branch and return: the scalar-core instructions the
  machine model counts (every op outside an engine body that is not an engine command, per execution), so
  the recorded command stream carries the model's issue costs exactly.

Requires: a buffer-level program (the default pipeline through mtia-cb-bufferize; mtia-cb-allocate for CB
IDs and LS offsets). Raises: NotHandled (`file:line:col: error: ...`) for an op the emitter does not
translate, never wrong code.
Example: mtia-opt examples/vector_add.py -p "$(python -c 'import mtia_xdsl.pipeline as p; print(p.pipeline_for())')" -t mtia-llvm
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects import builtin, llvm
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.target import Target

from mtia_xdsl.backend.llvm_scalar import (
    I1,
    I32,
    I64,
    LIBM_FUNCTIONS,
    PTR,
    Builder,
    NotHandled,
    emit_scalar,
    is_float,
    not_handled,
    register_type,
)
from mtia_xdsl.dialects import mtia
from mtia_xdsl.utils.locations import location_str

VOID = llvm.LLVMVoidType()
F32, F64 = builtin.Float32Type(), builtin.Float64Type()

GRID_PARAMS = ("pid_x", "pid_y", "pid_z", "num_x", "num_y", "num_z")
"""The i32 parameters every emitted kernel takes after its own: program id and grid, per axis."""

COMMAND_SIGNATURE = ([I32, PTR, PTR], VOID)
"""`@mtia_<kind>(i32 site, ptr args, ptr results)` of a packed command."""

RUNTIME_FUNCTIONS: dict[str, tuple[list[Attribute], Attribute]] = {
    "mtia_scalar_instrs": ([I64], VOID),
    "mtia_cb_alloc": ([I32, I32, I64, I32, I64], I32),
    "mtia_cb_reserve": ([I32, I32, I32], VOID),
    "mtia_cb_push": ([I32, I32, I32], VOID),
    "mtia_cb_wait": ([I32, I32, I32], VOID),
    "mtia_cb_pop": ([I32, I32, I32], VOID),
    "mtia_cb_front": ([I32, I32], PTR),
    "mtia_cb_back": ([I32, I32], PTR),
    "mtia_se_compute": ([I32, PTR], VOID),
    "mtia_vec_compute": ([I32, PTR], VOID),
    "mtia_mlu_compute": ([I32, PTR], VOID),
}
"""Runtime functions with their own signature (`(params), result`); packed commands use COMMAND_SIGNATURE."""

PACKED_COMMANDS: tuple[type[Operation], ...] = (
    mtia.DmaLoadOp,
    mtia.DmaStoreOp,
    mtia.DmaGatherRowsOp,
    mtia.GatherOp,
    mtia.ScatterOp,
    mtia.AtomicRmwOp,
    mtia.AtomicCasOp,
    mtia.ScalarLoadOp,
    mtia.ScalarStoreOp,
    mtia.DpeMatmulOp,
    mtia.ReReduceOp,
    mtia.CbReadOp,
    mtia.PeIdOp,
    mtia.NumPesOp,
)
"""Ops emitted as a packed `@mtia_<kind>` call (the runtime executes them)."""

_ENGINE_OP_TYPES = frozenset(mtia.ENGINE_OPS)
"""Ops the machine model does not count as scalar-core instructions (machine/interpret/pe_state.py)."""

_CB_CALLS = {
    mtia.CbReserveOp: "mtia_cb_reserve",
    mtia.CbPushOp: "mtia_cb_push",
    mtia.CbWaitOp: "mtia_cb_wait",
    mtia.CbPopOp: "mtia_cb_pop",
}


def runtime_name(op_name: str) -> str:
    """The runtime function of a command op: `mtia_` + the op name without its dialect (`mtia_dma_load`)."""
    return "mtia_" + op_name.partition(".")[2]


def command_sites(kernel: Operation) -> list[Operation]:
    """Every op of `kernel` in walk order: a runtime call's `site` is its op's position in this list."""
    return list(kernel.walk())


def kernels(module: ModuleOp) -> list[Operation]:
    """The kernel functions (`tt.func` / `func.func` with a body) of a buffer-level program."""
    return [op for op in module.ops if op.name in ("tt.func", "func.func") and op.regions[0].blocks]


def emit_module(module: ModuleOp) -> ModuleOp:
    """Lower every kernel of the buffer-level `module` to an `llvm` dialect module.

    Raises: NotHandled naming the kernel line of the first op the emitter does not translate.
    """
    out = ModuleOp([])
    declared: set[str] = set()
    for kernel in kernels(module):
        if not any(isinstance(op, mtia.CbAllocOp) for op in kernel.walk()) and any(
            op.name in ("tt.load", "tt.store", "tt.dot") for op in kernel.walk()
        ):
            raise NotHandled(
                f"{location_str(kernel.location)}: error: the LLVM IR emitter takes the buffer-level mtia program; "
                "lower the kernel with the default pipeline (mtia_xdsl.pipeline.pipeline_for()) first"
            )
        _KernelEmitter(kernel, out, declared).run()
    return out


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


def _param_type(t: Attribute) -> Attribute:
    return PTR if t.name == "tt.ptr" else register_type(t)


class _KernelEmitter:
    """Lowers one kernel function; `values` maps its scalar SSA values (and CB handles) to `llvm` values."""

    def __init__(self, kernel: Operation, out: ModuleOp, declared: set[str]) -> None:
        self.kernel = kernel
        self.out = out
        self.declared = declared
        self.site = {op: i for i, op in enumerate(command_sites(kernel))}
        self.values: dict[SSAValue, SSAValue] = {}
        self.pending = 0
        """Scalar-core instructions counted since the last `@mtia_scalar_instrs`."""
        self.region = Region()
        self.b = Builder(Block())
        self.entry = self.b.block
        self.one: SSAValue | None = None
        self.grid: list[SSAValue] = []

    # -- helpers -------------------------------------------------------------------------------------
    def declare(self, name: str, params: list[Attribute], result: Attribute) -> None:
        """Declare external function `name` once per module."""
        if name in self.declared:
            return
        self.declared.add(name)
        fn = llvm.FuncOp(name, llvm.LLVMFunctionType(params, result), linkage=llvm.LinkageAttr("external"))
        self.out.body.block.add_op(fn)

    def call(self, name: str, *args: SSAValue) -> SSAValue:
        """Call runtime function `name` (declared on first use)."""
        params, result = RUNTIME_FUNCTIONS.get(name, COMMAND_SIGNATURE)
        self.declare(name, params, result)
        return self.b.add(llvm.CallOp(name, *args, return_type=None if result == VOID else result))

    def flush(self) -> None:
        """Report the scalar-core instructions counted so far to the runtime."""
        if self.pending:
            self.call("mtia_scalar_instrs", self.b.const(self.pending, I64))
            self.pending = 0

    def site_of(self, op: Operation) -> SSAValue:
        return self.b.const(self.site[op], I32)

    def alloca(self, n: int, elem: Attribute = I64) -> SSAValue:
        """A stack array of `n` elements, allocated once in the entry block."""
        assert self.one is not None
        size = llvm.ConstantOp(builtin.IntegerAttr(n, I64), I64)
        op = llvm.AllocaOp(size, elem, alignment=8)
        self.entry.insert_op_after(op, self.one.owner)  # type: ignore[arg-type]
        self.entry.insert_op_after(size, self.one.owner)  # type: ignore[arg-type]
        return op.results[0]

    def new_block(self, name: str, arg_types: list[Attribute] = (), attach: bool = True) -> Block:  # type: ignore[assignment]
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

    # -- the function ---------------------------------------------------------------------------------
    def run(self) -> None:
        kernel = self.kernel
        block = kernel.regions[0].blocks.first
        assert block is not None
        if len(kernel.regions[0].blocks) != 1:
            raise not_handled(kernel, "a kernel of several blocks (cf branches)")
        params = [_param_type(a.type) for a in block.args]
        self.region.add_block(self.entry)
        self.entry.name_hint = "entry"
        for t in params:
            self.entry.insert_arg(t, len(self.entry.args))
        for _ in GRID_PARAMS:
            self.entry.insert_arg(I32, len(self.entry.args))
        self.one = self.b.const(1, I64)
        for arg, llvm_arg in zip(block.args, self.entry.args, strict=False):
            llvm_arg.name_hint = arg.name_hint
            v: SSAValue = llvm_arg
            if arg.type.name == "tt.ptr":
                v = self.b.add(llvm.PtrToIntOp(llvm_arg, I64))
            self.values[arg] = v
        self.grid = list(self.entry.args[len(params) :])
        for arg, name in zip(self.grid, GRID_PARAMS, strict=True):
            arg.name_hint = name
        name = kernel.properties["sym_name"].data  # type: ignore[attr-defined]
        self.emit_ops(block.ops)
        fn = llvm.FuncOp(
            name, llvm.LLVMFunctionType([*params, *[I32] * 6], VOID), linkage=llvm.LinkageAttr("external"),
            body=self.region,
        )  # fmt: skip
        for lib in LIBM_FUNCTIONS:
            if any(isinstance(o, llvm.CallOp) and o.callee.string_value() == lib for o in fn.walk()):
                t = F32 if lib.endswith("f") else F64
                self.declare(lib, [t], t)
        self.out.body.block.add_op(fn)

    def emit_ops(self, ops: object) -> None:
        for op in ops:  # type: ignore[attr-defined]
            if type(op) not in _ENGINE_OP_TYPES:
                self.pending += 1
            handler = _HANDLERS.get(type(op)) or _NAMED_HANDLERS.get(op.name)
            if handler is not None:
                handler(self, op)
            elif op.name in _SCALAR_NAMES:
                self.scalar(op)
            else:
                raise not_handled(op)

    def scalar(self, op: Operation) -> None:
        if any(isinstance(r.type, TensorType) for r in op.results):
            raise not_handled(op, "a tensor outside an engine command at buffer level")
        self.values[op.results[0]] = emit_scalar(self.b, op, [self.value(v) for v in op.operands])

    # -- ops -------------------------------------------------------------------------------------------
    def program_id(self, op: Operation) -> None:
        axis = op.properties["axis"].value.data  # type: ignore[attr-defined]
        base = 0 if op.name == "tt.get_program_id" else 3
        self.values[op.results[0]] = self.grid[base + axis]

    def ret(self, op: Operation) -> None:
        if op.operands:
            raise not_handled(op, "a kernel returning values")
        self.flush()
        self.b.add(llvm.ReturnOp())

    def cb_alloc(self, op: mtia.CbAllocOp) -> None:
        t = op.result.type
        cb_id = op.cb_id.value.data if op.cb_id is not None else -1
        offset = op.ls_offset.value.data if op.ls_offset is not None else -1
        args = (self.b.const(cb_id, I32), self.b.const(offset, I64), self.b.const(t.depth.data, I32))
        tile = self.b.const(mtia.tile_bytes(t.tile), I64)
        handle = self.values[op.result] = self.call("mtia_cb_alloc", self.site_of(op), *args, tile)
        handle.name_hint = f"cb{cb_id}" if cb_id >= 0 else "cb"


    def cb_count(self, op: mtia.CbCountOp) -> None:
        self.flush()
        count = self.b.const(op.count.value.data, I32)
        self.call(_CB_CALLS[type(op)], self.site_of(op), self.value(op.cb), count)

    def pack(self, v: SSAValue, t: Attribute) -> SSAValue:
        """Operand value `v` (of IR type `t`) as an i64 for a packed command."""
        if isinstance(t, mtia.CircularBufferType):
            return self.b.int_cast(v, I64)
        if is_float(t):
            width = {builtin.Float16Type: 16, builtin.Float64Type: 64}.get(type(v.type), 32)  # type: ignore[call-overload]
            bits = self.b.add(llvm.BitcastOp(v, IntegerType(width)))
            return self.b.int_cast(bits, I64, signed=False)
        if isinstance(t, TensorType):
            raise not_handled(v.owner if isinstance(v.owner, Operation) else self.kernel, "a tensor operand")  # type: ignore[arg-type]
        return self.b.int_cast(v, I64, signed=v.type != I1)

    def unpack(self, v: SSAValue, t: Attribute) -> SSAValue:
        """A packed i64 result as a register of IR type `t`."""
        r = register_type(t)
        if is_float(t):
            width = {builtin.Float16Type: 16, builtin.Float64Type: 64}.get(type(r), 32)  # type: ignore[call-overload]
            return self.b.add(llvm.BitcastOp(self.b.int_cast(v, IntegerType(width)), r))
        return self.b.int_cast(v, r)

    def packed(self, op: Operation) -> None:
        """A command the runtime executes: operands packed as i64, results unpacked."""
        for r in op.results:
            if isinstance(r.type, TensorType):
                raise not_handled(op, "a tensor-level command (run the buffer-level program)")
        self.flush()
        args = self.alloca(max(len(op.operands), 1))
        for k, v in enumerate(op.operands):
            slot = self.b.add(llvm.GEPOp(args, [k], I64))
            self.b.add(llvm.StoreOp(self.pack(self.value(v), v.type), slot))
        results = self.alloca(max(len(op.results), 1))
        self.call(runtime_name(op.name), self.site_of(op), args, results)
        for k, r in enumerate(op.results):
            slot = self.b.add(llvm.GEPOp(results, [k], I64))
            self.values[r] = self.unpack(self.b.add(llvm.LoadOp(slot, I64)), r.type)

    def compute(self, op: mtia.EngineComputeOp) -> None:
        from mtia_xdsl.backend.llvm_body import emit_engine_command

        self.flush()
        emit_engine_command(self, op)

    # -- structured control flow ------------------------------------------------------------------------
    def region_ops(self, block: Block, args: list[SSAValue]) -> Operation:
        """Emit the ops of `block` (its arguments bound to `args`) but its terminator; return the terminator."""
        for a, v in zip(block.args, args, strict=True):
            self.values[a] = v
        ops = list(block.ops)
        self.emit_ops(ops[:-1])
        term = ops[-1]
        self.pending += 1  # scf.yield / scf.condition are scalar-core instructions too
        self.flush()
        return term

    def scf_for(self, op: Operation) -> None:
        lb, ub, step, *inits = (self.value(v) for v in op.operands)
        self.flush()
        iter_types = [register_type(r.type) for r in op.results]
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
        cond = self.value(op.operands[0])
        self.flush()
        types = [register_type(r.type) for r in op.results]
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
        inits = [self.value(v) for v in op.operands]
        self.flush()
        before_blk, after_blk = op.regions[0].blocks.first, op.regions[1].blocks.first
        assert before_blk is not None and after_blk is not None
        before = self.new_block("while", [v.type for v in inits])
        after = self.new_block("while.body", [register_type(a.type) for a in after_blk.args], attach=False)
        exit_ = self.new_block("while.end", [register_type(r.type) for r in op.results], attach=False)
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


_HANDLERS: dict[type[Operation], Callable[[_KernelEmitter, Operation], None]] = {
    mtia.CbAllocOp: _KernelEmitter.cb_alloc,  # type: ignore[dict-item]
    **{t: _KernelEmitter.cb_count for t in _CB_CALLS},  # type: ignore[dict-item]
    **{t: _KernelEmitter.packed for t in PACKED_COMMANDS},
    mtia.SeComputeOp: _KernelEmitter.compute,  # type: ignore[dict-item]
    mtia.VecComputeOp: _KernelEmitter.compute,  # type: ignore[dict-item]
    mtia.MluComputeOp: _KernelEmitter.compute,  # type: ignore[dict-item]
}
_NAMED_HANDLERS: dict[str, Callable[[_KernelEmitter, Operation], None]] = {
    "tt.get_program_id": _KernelEmitter.program_id,
    "tt.get_num_programs": _KernelEmitter.program_id,
    "tt.return": _KernelEmitter.ret,
    "func.return": _KernelEmitter.ret,
    "scf.for": _KernelEmitter.scf_for,
    "scf.if": _KernelEmitter.scf_if,
    "scf.while": _KernelEmitter.scf_while,
}


def _scalar_names() -> frozenset[str]:
    from mtia_xdsl.backend.llvm_scalar import SCALAR_RULES

    return frozenset(SCALAR_RULES)


_SCALAR_NAMES = _scalar_names()

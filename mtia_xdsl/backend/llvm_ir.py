"""xDSL `llvm` dialect -> LLVM IR text: xDSL 0.74's translation (`xdsl/backend/llvm/convert.py`, on llvmlite)
with the casts it lacks.

xDSL's `llvm` dialect has no `fptosi`, `fptoui` or `uitofp` and its translation no `ord`/`uno` float compares;
the three casts are defined here as `llvm` ops (not registered in any context: they exist only between the
emitter and this translation) and translated with llvmlite's builder; every other op goes through xDSL's own
`convert_op`.
"""

# llvmlite ships no type stubs: its values are untyped at this boundary (STYLE.md section 11).
# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false, reportUnknownVariableType=false
# pyright: reportUnknownArgumentType=false

from __future__ import annotations

import llvmlite.ir as ir
from xdsl.backend.llvm import convert as xconvert
from xdsl.backend.llvm.convert_op import convert_op
from xdsl.backend.llvm.convert_type import convert_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.irdl import irdl_op_definition


@irdl_op_definition
class FPToSIOp(llvm.GenericCastOp):
    """`fptosi`: float to signed integer (LLVM IR's own instruction)."""

    name = "llvm.fptosi"


@irdl_op_definition
class FPToUIOp(llvm.GenericCastOp):
    """`fptoui`: float to unsigned integer."""

    name = "llvm.fptoui"


@irdl_op_definition
class UIToFPOp(llvm.GenericCastOp):
    """`uitofp`: unsigned integer to float."""

    name = "llvm.uitofp"


_EXTRA_CASTS: dict[type[Operation], str] = {FPToSIOp: "fptosi", FPToUIOp: "fptoui", UIToFPOp: "uitofp"}


def _convert_op(
    op: Operation, builder: ir.IRBuilder, val_map: dict[SSAValue, ir.Value], block_map: dict[Block, ir.Block]
) -> None:
    cast = _EXTRA_CASTS.get(type(op))
    if cast is not None:
        val_map[op.results[0]] = getattr(builder, cast)(val_map[op.operands[0]], convert_type(op.results[0].type))
        return
    convert_op(op, builder, val_map, block_map)


def _convert_func(op: llvm.FuncOp, module: ir.Module) -> None:
    """xDSL's `_convert_func`, dispatching through `_convert_op` and keeping the emitter's value names."""
    func = module.get_global(op.sym_name.data)
    block_map: dict[Block, ir.Block] = {}
    val_map: dict[SSAValue, ir.Value] = {}
    for block in op.body.blocks:
        block_map[block] = func.append_basic_block(name=block.name_hint or "")
    entry = op.body.blocks.first
    assert entry is not None
    for arg, llvm_arg in zip(entry.args, func.args, strict=True):
        val_map[arg] = llvm_arg
        llvm_arg.name = arg.name_hint or ""
    for block in op.body.blocks:
        if block is not entry:
            builder = ir.IRBuilder(block_map[block])
            for arg in block.args:
                val_map[arg] = builder.phi(convert_type(arg.type), name=arg.name_hint or "")
    for block in op.body.blocks:
        builder = ir.IRBuilder(block_map[block])
        if block_map[block].instructions:
            builder.position_after(block_map[block].instructions[-1])
        for inner in block.ops:
            _convert_op(inner, builder, val_map, block_map)
            _name_results(inner, val_map)


def _name_results(op: Operation, val_map: dict[SSAValue, ir.Value]) -> None:
    """Give the LLVM values of `op`'s results the emitter's names (kernel variables, CBs, loop indices)."""
    for r in op.results:
        value = val_map.get(r)
        if r.name_hint and isinstance(value, ir.NamedValue):
            value.name = r.name_hint


def to_llvmlite(module: ModuleOp) -> ir.Module:
    """Translate an xDSL module of `llvm.func`/`llvm.mlir.global` ops to an llvmlite module (host triple).

    Raises: NotImplementedError (from xDSL) for an op neither xDSL nor this module translates.
    """
    out = ir.Module()
    from llvmlite import binding

    out.triple = binding.get_default_triple()
    funcs = [op for op in module.ops if isinstance(op, llvm.FuncOp)]
    for op in module.ops:
        if isinstance(op, llvm.GlobalOp):
            xconvert._convert_global(op, out)  # pyright: ignore[reportPrivateUsage]
            gvar = out.get_global(op.sym_name.data)
            if gvar.linkage == "external" and op.value is not None:
                gvar.linkage = ""  # a defined global of external linkage prints no keyword
    for op in funcs:
        xconvert._declare_func(op, out)  # pyright: ignore[reportPrivateUsage]
    for op in funcs:
        if op.body.blocks:
            _convert_func(op, out)
    return out

"""Frontend unit tests: locations, errors, builder invariants, inline_and_clean, dialect round trips."""

from __future__ import annotations

import math
from io import StringIO
from pathlib import Path

import pytest

pytest.importorskip("triton")

import test_frontend_kernels as fk
from xdsl.dialects import arith as xarith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    ModuleOp,
    TensorType,
    f32,
)
from xdsl.parser import Parser
from xdsl.printer import Printer

from examples.softmax import softmax_kernel
from examples.vector_add import add_kernel
from mtia_xdsl.dialects import make_context, tt
from mtia_xdsl.frontend import FrontendOptions, KernelError, build_tt_module, inline_and_clean
from mtia_xdsl.frontend.builder import XdslBuilder

ADD_SIG = {
    "x_ptr": "*fp32",
    "y_ptr": "*fp32",
    "output_ptr": "*fp32",
    "n_elements": "i32",
    "BLOCK_SIZE": "constexpr",
}
SOFTMAX_SIG = {"output_ptr": "*fp32", "input_ptr": "*fp32", "input_row_stride": "i32",
               "output_row_stride": "i32", "n_cols": "i32", "BLOCK_SIZE": "constexpr"}  # fmt: skip


def _roundtrip(module: ModuleOp, generic: bool) -> ModuleOp:
    out = StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return Parser(make_context(), out.getvalue()).parse_module()


def test_every_op_has_the_kernel_line_location() -> None:
    module = build_tt_module(add_kernel, ADD_SIG, {"BLOCK_SIZE": 128})
    src = Path(add_kernel.fn.__code__.co_filename)
    first = add_kernel.fn.__code__.co_firstlineno
    lines = {op.name: op.location for op in module.walk() if op is not module}
    assert lines, "no ops built"
    for name, loc in lines.items():
        assert isinstance(loc, FileLineColLoc), name
        assert Path(loc.filename.data) == src
        assert first <= loc.line.data <= first + 12, (name, loc.line.data)
    load_line = next(op.location.line.data for op in module.walk() if isinstance(op, tt.LoadOp))
    assert "tl.load" in src.read_text().splitlines()[load_line - 1]


def test_unsupported_construct_names_file_and_line() -> None:
    with pytest.raises(KernelError) as info:
        build_tt_module(fk.unsupported_inline_asm, {"x_ptr": "*fp32", "y_ptr": "*fp32", "BLOCK": "constexpr"},
                        {"BLOCK": 64})  # fmt: skip
    err = info.value
    assert err.file is not None and Path(err.file).name == "test_frontend_kernels.py"
    assert "tl.inline_asm_elementwise" in str(err)
    line = Path(err.file).read_text().splitlines()[err.line - 1]  # type: ignore[operator]
    assert "inline_asm_elementwise" in line
    assert str(err).startswith(f"{err.file}:{err.line}:")


def test_triton_semantic_error_names_the_kernel_line() -> None:
    with pytest.raises(KernelError) as info:
        build_tt_module(fk.shape_mismatch, {"x_ptr": "*fp32", "BLOCK": "constexpr"}, {"BLOCK": 64})
    err = info.value
    assert "incompatible dimensions" in err.message
    line = Path(err.file).read_text().splitlines()[err.line - 1]  # type: ignore[arg-type,operator]
    assert "tl.arange(0, 2 * BLOCK)" in line


def test_module_verifies_and_round_trips_in_both_forms() -> None:
    module = build_tt_module(softmax_kernel, SOFTMAX_SIG, {"BLOCK_SIZE": 128})
    module.verify()
    for generic in (False, True):
        again = _roundtrip(module, generic)
        again.verify()
        assert str(again) == str(module)


def test_negative_infinity_constant_survives_print_and_parse() -> None:
    ty = TensorType(f32, [4])
    const = xarith.ConstantOp(DenseIntOrFPElementsAttr.from_list(ty, [-math.inf, math.inf, 1.5, -0.0]), ty)
    module = ModuleOp([const])
    for generic in (False, True):
        parsed = _roundtrip(module, generic)
        value = next(op for op in parsed.walk() if isinstance(op, xarith.ConstantOp)).value
        assert isinstance(value, DenseIntOrFPElementsAttr)
        assert list(value.get_values()) == [-math.inf, math.inf, 1.5, -0.0]


def test_builder_insertion_and_identity_invariants() -> None:
    b = XdslBuilder(None)
    assert b.get_insertion_block() is None
    module = b.create_module()
    fn = b.get_or_insert_function(module, "k", b.get_function_ty([b.get_int32_ty()], []), "public", False)
    module.push_back(fn)
    entry = fn.add_entry_block()
    b.set_insertion_point_to_start(entry)
    assert b.get_insertion_block() is entry
    assert fn.args(0) is fn.args(0)
    c = b.get_fp32(2.0)
    splat = b.create_splat(b.get_block_ty(b.get_float_ty(), [8]), c)
    assert isinstance(splat.ssa.owner, xarith.ConstantOp)  # a splat of a constant folds
    same_width = b.create_int_cast(fn.args(0), b.get_int32_ty(), True)
    assert same_width.ssa.owner.name == "arith.bitcast"
    other = b.create_block()
    assert b.get_insertion_block() is other  # create_block moves the insertion point
    assert other.get_parent().size() == 2


def test_inline_and_clean_inlines_helpers_and_drops_overflow_checks() -> None:
    module = build_tt_module(fk.helpers_and_casts, {"x_ptr": "*fp16", "y_ptr": "*fp16", "n": "i32",
                                                    "BLOCK": "constexpr"},
                             {"BLOCK": 64}, options=FrontendOptions(sanitize_overflow=True))  # fmt: skip
    raw_ops = [op.name for op in module.walk()]
    assert "tt.call" in raw_ops and "arith.extsi" in raw_ops
    inline_and_clean(module)
    module.verify()
    names = [op.name for op in module.walk()]
    assert "tt.call" not in names
    assert "arith.extsi" not in names  # the overflow checks were dead
    funcs = [op for op in module.ops if isinstance(op, tt.FuncOp)]
    assert [f.sym_name.data for f in funcs] == ["helpers_and_casts"]


def test_loops_if_while_build_scf() -> None:
    module = inline_and_clean(
        build_tt_module(
            fk.if_and_while,
            {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "flag": "i32", "BLOCK": "constexpr"},
            {"BLOCK": 32},
        )
    )
    names = {op.name for op in module.walk()}
    assert {"scf.if", "scf.while", "scf.condition", "tt.load", "tt.store"} <= names


ARITH_TENSOR_IR = """
%t, %b, %f, %s = "test.op"() : () -> (tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, i1)
%0 = arith.cmpi slt, %t, %t : tensor<4xi32>
%1 = arith.cmpf olt, %f, %f : tensor<4xf32>
%2 = arith.select %b, %f, %f : tensor<4xi1>, tensor<4xf32>
%3 = arith.select %s, %f, %f : tensor<4xf32>
%4 = arith.sitofp %t : tensor<4xi32> to tensor<4xf32>
%5 = arith.truncf %f : tensor<4xf32> to tensor<4xbf16>
%6 = arith.remf %f, %f : tensor<4xf32>
%7 = arith.bitcast %f : tensor<4xf32> to tensor<4xi32>
%8 = arith.extsi %t : tensor<4xi32> to tensor<4xi64>
%9 = arith.andi %b, %b : tensor<4xi1>
"""


def test_tensor_arith_round_trips_with_i1_tensor_results() -> None:
    module = Parser(make_context(), ARITH_TENSOR_IR).parse_module()
    module.verify()
    cmpi = next(op for op in module.walk() if op.name == "arith.cmpi")
    assert str(cmpi.results[0].type) == "tensor<4xi1>"
    for generic in (False, True):
        assert str(_roundtrip(module, generic)) == str(module)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("%0 = arith.extsi %t : tensor<4xi32> to tensor<4xi16>", "needs a wider result"),
        ("%0 = arith.sitofp %t : tensor<4xi32> to tensor<8xf32>", "operand and result shapes differ"),
        ("%0 = arith.bitcast %t : tensor<4xi32> to tensor<4xf16>", "needs a same result"),
        (
            '%0 = "arith.cmpi"(%t, %t) <{predicate = 2 : i64}> : (tensor<4xi32>, tensor<4xi32>) -> i1',
            "result must be tensor<4xi1>",
        ),
        (
            '%0 = "arith.select"(%t, %f, %f) : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
            "condition must be i1 or a tensor of i1",
        ),
    ],
)
def test_tensor_arith_verifiers(line: str, message: str) -> None:
    from xdsl.utils.exceptions import VerifyException

    text = '%t, %f = "test.op"() : () -> (tensor<4xi32>, tensor<4xf32>)\n' + line
    module = Parser(make_context(), text).parse_module()
    with pytest.raises(VerifyException, match=message):
        module.verify()


def test_tt_ops_generic_form_parses_in_libtriton(tmp_path: Path) -> None:
    from triton._C.libtriton import ir

    text = (Path(__file__).parents[1] / "filecheck" / "dialects" / "tt" / "ops.mlir").read_text()
    module = Parser(make_context(), text).parse_module()
    path = tmp_path / "ops.mlir"
    with path.open("w") as f:
        Printer(stream=f, print_generic_format=True).print_op(module)
    ctx = ir.context()
    ir.load_dialects(ctx)
    parsed = ir.parse_mlir_module(str(path), ctx)
    parsed.context = ctx
    printed = parsed.str_nodebug()
    assert "tt.atomic_rmw fadd, acq_rel, gpu" in printed
    assert "#tt.cache_policy<cache_modifier = cg, eviction_policy = evict_last>" in printed


def test_debug_option_keeps_device_asserts() -> None:
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    quiet = inline_and_clean(build_tt_module(fk.hints_and_asserts, sig, {"BLOCK": 32}))
    loud = inline_and_clean(
        build_tt_module(
            fk.hints_and_asserts, sig, {"BLOCK": 32}, options=FrontendOptions(debug=True, sanitize_overflow=False)
        )
    )
    assert not any(isinstance(op, tt.AssertOp) for op in quiet.walk())
    messages = [op.message.data for op in loud.walk() if isinstance(op, tt.AssertOp)]
    assert messages == ["n must be positive"]


def test_debug_checks_i32_overflow_by_default_as_upstream() -> None:
    """sanitize_overflow defaults to True, as in upstream's backends: TRITON_DEBUG=1 reports an i32 wrap."""
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    loud = inline_and_clean(
        build_tt_module(fk.hints_and_asserts, sig, {"BLOCK": 32}, options=FrontendOptions(debug=True))
    )
    messages = [op.message.data for op in loud.walk() if isinstance(op, tt.AssertOp)]
    assert "n must be positive" in messages
    assert any(m.startswith("int32 overflow detected") for m in messages)

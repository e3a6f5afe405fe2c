"""Reference semantics of arith/math ops (MLIR rules) on scalars and tensors, one op at a time."""

import numpy as np
import pytest
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.parser import Parser

from mtia_xdsl.dialects import make_context
from mtia_xdsl.machine.interpret.arith import ArithFunctions
from mtia_xdsl.machine.interpret.math import MathFunctions


def run_op(op_text: str, in_types: list[str], out_type: str, *args: object) -> object:
    """Run `%r = <op_text>(%a0, %a1, ...)` in a func.func and return %r's runtime value."""
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(in_types))
    operands = ", ".join(f"%a{i}" for i in range(len(in_types)))
    src = f"""
func.func @f({params}) -> {out_type} {{
  %r = {op_text.format(operands=operands)} : ({", ".join(in_types)}) -> {out_type}
  func.return %r : {out_type}
}}"""
    module = Parser(make_context(), src).parse_module()
    interpreter = Interpreter(module)
    for functions in (ArithFunctions(), MathFunctions(), FuncFunctions()):
        interpreter.register_implementations(functions)
    return interpreter.call_op("f", args)[0]


T4I = "tensor<4xi32>"
T6I = "tensor<6xi32>"
T4F = "tensor<4xf32>"


def i32(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.int32)


def f32(*v: float) -> np.ndarray:
    return np.array(v, dtype=np.float32)


def test_addi_wraps_and_muli_wraps():
    r = run_op('"arith.addi"({operands})', [T4I, T4I], T4I, i32(2**31 - 1, -(2**31), 5, 0), i32(1, -1, 5, 0))
    assert r.tolist() == [-(2**31), 2**31 - 1, 10, 0]
    r = run_op('"arith.muli"({operands})', ["i32", "i32"], "i32", np.int32(65536), np.int32(65536))
    assert r == 0 and isinstance(r, np.int32)


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("addi", [False, True, True, False]),  # i1 arithmetic wraps: addition and subtraction are xor
        ("subi", [False, True, True, False]),
        ("muli", [True, False, False, False]),
        ("andi", [True, False, False, False]),
        ("ori", [True, True, True, False]),
        ("xori", [False, True, True, False]),
    ],
)
def test_i1_binary_ops_wrap_to_one_bit(name: str, want: list[bool]) -> None:
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    t = "tensor<4xi1>"
    r = run_op(f'"arith.{name}"({{operands}})', [t, t], t, a, b)
    assert r.dtype == np.bool_ and r.tolist() == want


def test_narrow_integer_ops_wrap_in_their_width():
    t = "tensor<4xi8>"
    a, b = np.array([127, -128, 100, -1], dtype=np.int8), np.array([1, -1, 100, -1], dtype=np.int8)
    assert run_op('"arith.addi"({operands})', [t, t], t, a, b).tolist() == [-128, 127, -56, -2]
    assert run_op('"arith.muli"({operands})', [t, t], t, a, b).tolist() == [127, -128, 16, 1]
    assert run_op('"arith.subi"({operands})', [t, t], t, a, b).tolist() == [126, -127, 0, 0]


def test_divsi_remsi_truncate_and_unsigned_division():
    a, b = i32(7, -7, 7, -7), i32(2, 2, -2, -2)
    assert run_op('"arith.divsi"({operands})', [T4I, T4I], T4I, a, b).tolist() == [3, -3, -3, 3]
    assert run_op('"arith.remsi"({operands})', [T4I, T4I], T4I, a, b).tolist() == [1, -1, 1, -1]
    assert run_op('"arith.floordivsi"({operands})', [T4I, T4I], T4I, a, b).tolist() == [3, -4, -4, 3]
    assert run_op('"arith.divui"({operands})', [T4I, T4I], T4I, a, b).tolist() == [3, 2147483644, 0, 0]
    assert run_op('"arith.ceildivsi"({operands})', [T4I, T4I], T4I, a, b).tolist() == [4, -3, -3, 4]


def test_shifts():
    a = i32(-8, 1, -1, 3)
    assert run_op('"arith.shrsi"({operands})', [T4I, T4I], T4I, a, i32(1, 1, 31, 0)).tolist() == [
        -4,
        0,
        -1,
        3,
    ]
    assert run_op('"arith.shrui"({operands})', [T4I, T4I], T4I, a, i32(1, 1, 31, 0)).tolist() == [
        2147483644, 0, 1, 3]  # fmt: skip
    assert run_op('"arith.shli"({operands})', [T4I, T4I], T4I, a, i32(1, 31, 32, 2)).tolist() == [
        -16, -(2**31), 0, 12]  # fmt: skip


def test_cmpi_signed_vs_unsigned():
    a, b = i32(-1, 1, 0, 5), i32(1, -1, 0, 5)
    assert run_op('"arith.cmpi"({operands}) <{{predicate = 2 : i64}}>', [T4I, T4I], "tensor<4xi1>", a, b).tolist() == [
        True, False, False, False]  # fmt: skip
    assert run_op('"arith.cmpi"({operands}) <{{predicate = 6 : i64}}>', [T4I, T4I], "tensor<4xi1>", a, b).tolist() == [
        False, True, False, False]  # fmt: skip


@pytest.mark.parametrize("predicate", range(10))
def test_cmpi_same_dtype_operands_compare_as_widened(predicate: int) -> None:
    """Operands of one int32 dtype compare unwidened (signed predicates): the same lanes as int64 operands."""
    a = i32(-(2**31), -1, 0, 7, 2**31 - 1, 5)
    b = i32(2**31 - 1, 0, -1, 7, -(2**31), 5)
    op = f'"arith.cmpi"({{operands}}) <{{{{predicate = {predicate} : i64}}}}>'
    direct = run_op(op, [T6I, T6I], "tensor<6xi1>", a, b)
    widened = run_op(op, [T6I, T6I], "tensor<6xi1>", a.astype(np.int64), b)  # two dtypes: widened to int64
    assert np.asarray(direct).tolist() == np.asarray(widened).tolist()
    assert np.asarray(direct).any() and not np.asarray(direct).all()


@pytest.mark.parametrize(
    ("predicate", "expected"),
    [(1, [False, False, True, False]), (8, [True, True, True, False]), (13, [True, True, False, True]),
     (6, [False, False, False, True]), (14, [True, True, False, False]), (7, [False, False, True, True])],
)  # fmt: skip
def test_cmpf_ordered_and_unordered(predicate, expected):
    a, b = f32(np.nan, 1, 2, 3), f32(1, np.nan, 2, 4)
    r = run_op(
        f'"arith.cmpf"({{operands}}) <{{{{predicate = {predicate} : i64}}}}>',
        [T4F, T4F],
        "tensor<4xi1>",
        a,
        b,
    )
    assert r.tolist() == expected


def test_max_min_nan_and_signed_zero_rules():
    a, b = f32(np.nan, 1, -0.0, 0.0), f32(2, np.nan, 0.0, -0.0)
    maximum = run_op('"arith.maximumf"({operands})', [T4F, T4F], T4F, a, b)
    assert np.isnan(maximum[:2]).all() and not np.signbit(maximum[2:]).any()
    maxnum = run_op('"arith.maxnumf"({operands})', [T4F, T4F], T4F, a, b)
    assert maxnum[:2].tolist() == [2.0, 1.0]
    minimum = run_op('"arith.minimumf"({operands})', [T4F, T4F], T4F, a, b)
    assert np.signbit(minimum[2:]).all()


def test_select_tensor_and_scalar():
    r = run_op('"arith.select"({operands})', ["tensor<4xi1>", T4F, T4F], T4F,
               np.array([True, False, True, False]), f32(1, 2, 3, 4), f32(5, 6, 7, 8))  # fmt: skip
    assert r.tolist() == [1, 6, 3, 8]
    assert (
        run_op(
            '"arith.select"({operands})',
            ["i1", "f32", "f32"],
            "f32",
            np.bool_(False),
            np.float32(1),
            np.float32(2),
        )
        == 2
    )


def test_casts():
    assert run_op('"arith.truncf"({operands})', [T4F], "tensor<4xbf16>", f32(1 + 2**-8, 1 + 3 * 2**-8, 3.4e38, -1)).tolist() == [
        1.0, 1 + 2**-6, float("inf"), -1.0]  # fmt: skip
    assert run_op('"arith.fptosi"({operands})', [T4F], T4I, f32(-1.7, 1.7, 2.5, -0.2)).tolist() == [
        -1,
        1,
        2,
        0,
    ]
    assert run_op('"arith.extui"({operands})', ["tensor<4xi8>"], T4I, np.array([-1, 1, -128, 0], np.int8)).tolist() == [
        255, 1, 128, 0]  # fmt: skip
    assert run_op('"arith.extsi"({operands})', ["tensor<4xi1>"], T4I, np.array([True, False, True, False])).tolist() == [
        -1, 0, -1, 0]  # fmt: skip
    assert run_op('"arith.trunci"({operands})', [T4I], "tensor<4xi8>", i32(255, 256, -129, 7)).tolist() == [
        -1,
        0,
        127,
        7,
    ]
    assert run_op('"arith.uitofp"({operands})', [T4I], T4F, i32(-1, 0, 1, 2)).tolist() == [
        4294967296.0,
        0,
        1,
        2,
    ]
    bits = run_op('"arith.bitcast"({operands})', ["tensor<4xbf16>"], "tensor<4xi16>", f32(1.0, -2.0, 0.5, 0.0))
    assert bits.tolist() == [0x3F80, -16384, 0x3F00, 0]
    assert run_op('"arith.bitcast"({operands})', [T4F], T4I, f32(1.0, -0.0, 0, 2)).tolist() == [
        0x3F800000, -(2**31), 0, 0x40000000]  # fmt: skip


def test_remf_and_math():
    assert run_op('"arith.remf"({operands})', [T4F, T4F], T4F, f32(5.5, -5.5, 1, 3), f32(2, 2, 3, 1)).tolist() == [
        1.5, -1.5, 1, 0]  # fmt: skip
    r = run_op('"math.rsqrt"({operands})', [T4F], T4F, f32(4, 16, 0.25, 1))
    assert r.tolist() == [0.5, 0.25, 2.0, 1.0]
    r = run_op('"math.erf"({operands})', [T4F], T4F, f32(0, 1, -1, 10))
    np.testing.assert_allclose(r, [0, 0.8427008, -0.8427008, 1], rtol=1e-6)
    r = run_op('"math.fma"({operands})', [T4F, T4F, T4F], T4F, f32(1, 2, 3, 4), f32(2, 2, 2, 2), f32(1, 1, 1, 1))
    assert r.tolist() == [3, 5, 7, 9]
    assert run_op('"math.absi"({operands})', [T4I], T4I, i32(-3, 3, 0, -(2**31))).tolist() == [
        3,
        3,
        0,
        -(2**31),
    ]
    r = run_op('"math.exp"({operands})', ["tensor<4xf16>"], "tensor<4xf16>", np.array([0, 1, -1, 12], np.float16))
    assert r.dtype == np.float16 and r[0] == 1 and np.isinf(r[3])


def test_dense_constants_incl_nonfinite_splat():
    src = """
func.func @f() -> (tensor<4xf32>, tensor<2x2xi32>, bf16) {
  %a = arith.constant dense<0xFF800000> : tensor<4xf32>
  %b = arith.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %c = arith.constant 1.5 : bf16
  func.return %a, %b, %c : tensor<4xf32>, tensor<2x2xi32>, bf16
}"""
    module = Parser(make_context(), src).parse_module()
    interpreter = Interpreter(module)
    for functions in (ArithFunctions(), FuncFunctions()):
        interpreter.register_implementations(functions)
    a, b, c = interpreter.call_op("f", ())
    assert (a == -np.inf).all() and a.shape == (4,)
    assert b.tolist() == [[1, 2], [3, 4]]
    assert c == 1.5 and c.dtype == np.float32

"""Reference semantics (run_tt) of tt/arith/math/scf ops on small hand-written kernels in generic TTIR."""

import numpy as np
import pytest
import torch
from xdsl.parser import Parser
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects import make_context
from mtia_xdsl.machine.reference import run_tt


def kernel(params: str, body: str, name: str = "k") -> object:
    """Parse a one-function module: params like '%x: !tt.ptr<f32>, %n: i32'."""
    types = ", ".join(p.split(":", 1)[1].strip() for p in params.split(",")) if params else ""
    src = f'''
"tt.func"() <{{sym_name = "{name}", function_type = ({types}) -> ()}}> ({{
^bb0({params}):
{body}
  "tt.return"() : () -> ()
}}) : () -> ()
'''
    return Parser(make_context(), src).parse_module()


def ptrs(name: str, base: str, offs: str, n: int, elem: str = "f32") -> str:
    """IR making tensor<n x !tt.ptr<elem>> `%name` = base + offs."""
    t = f"tensor<{n}x!tt.ptr<{elem}>>"
    return f"""
  %{name}_s = "tt.splat"(%{base}) : (!tt.ptr<{elem}>) -> {t}
  %{name} = "tt.addptr"(%{name}_s, %{offs}) : ({t}, tensor<{n}xi32>) -> {t}"""


def load(res: str, p: str, n: int, elem: str = "f32", loc: str = "") -> str:
    t = f"tensor<{n}x!tt.ptr<{elem}>>"
    return (
        f'  %{res} = "tt.load"(%{p}) <{{operandSegmentSizes = array<i32: 1, 0, 0>}}> : ({t}) -> '
        f"tensor<{n}x{elem}> {loc}"
    )


def store(p: str, v: str, n: int, elem: str = "f32", loc: str = "") -> str:
    t = f"tensor<{n}x!tt.ptr<{elem}>>"
    return (
        f'  "tt.store"(%{p}, %{v}) <{{operandSegmentSizes = array<i32: 1, 1, 0>}}> : '
        f"({t}, tensor<{n}x{elem}>) -> () {loc}"
    )


def arange(n: int) -> str:
    """IR making `%r` = tt.make_range 0..n."""
    return f'  %r = "tt.make_range"() <{{start = 0 : i32, end = {n} : i32}}> : () -> tensor<{n}xi32>'


def reduce_kernel(n: int, combiner: str, elem: str = "f32") -> object:
    body = "\n".join(
        [
            arange(n),
            ptrs("xp", "x", "r", n, elem),
            load("xv", "xp", n, elem),
            f"""  %red = "tt.reduce"(%xv) <{{axis = 0 : i32}}> ({{
  ^bb1(%a: {elem}, %b: {elem}):
{combiner}
  }}) : (tensor<{n}x{elem}>) -> {elem}
  "tt.store"(%o, %red) <{{operandSegmentSizes = array<i32: 1, 1, 0>}}> : (!tt.ptr<{elem}>, {elem}) -> ()""",
        ]
    )
    return kernel(f"%x: !tt.ptr<{elem}>, %o: !tt.ptr<{elem}>", body)


def test_reduce_fast_path_equals_generic_region_path():
    x = torch.randn(37, generator=torch.Generator().manual_seed(0))
    fast = reduce_kernel(
        37,
        """    %s = "arith.addf"(%a, %b) : (f32, f32) -> f32
    "tt.reduce.return"(%s) : (f32) -> ()""",
    )
    # same sum, but the region is not a single op: it goes through the generic (region) path
    generic = reduce_kernel(
        37,
        """    %z = "arith.constant"() <{value = 0.0 : f32}> : () -> f32
    %s0 = "arith.addf"(%a, %z) : (f32, f32) -> f32
    %s = "arith.addf"(%s0, %b) : (f32, f32) -> f32
    "tt.reduce.return"(%s) : (f32) -> ()""",
    )
    o1, o2 = torch.zeros(1), torch.zeros(1)
    run_tt(fast, (1, 1, 1), [x, o1])
    run_tt(generic, (1, 1, 1), [x, o2])
    assert o1.item() == o2.item()
    assert o1.item() == pytest.approx(x.sum().item(), rel=1e-5)


def test_reduce_maxnumf_ignores_nan_and_maximumf_propagates():
    x = torch.tensor([1.0, float("nan"), 3.0, -2.0, 0.5])
    maxnum = reduce_kernel(
        5,
        """    %m = "arith.maxnumf"(%a, %b) : (f32, f32) -> f32
    "tt.reduce.return"(%m) : (f32) -> ()""",
    )
    maximum = reduce_kernel(
        5,
        """    %m = "arith.maximumf"(%a, %b) : (f32, f32) -> f32
    "tt.reduce.return"(%m) : (f32) -> ()""",
    )
    o = torch.zeros(1)
    run_tt(maxnum, (1, 1, 1), [x, o])
    assert o.item() == 3.0
    run_tt(maximum, (1, 1, 1), [x, o])
    assert np.isnan(o.item())


def test_reduce_bf16_rounds_every_combine():
    # 1 + 2^-8 + 2^-8 ... in bf16: each pairwise add rounds to bf16
    x = torch.tensor([1.0, 2**-8, 2**-8, 2**-8], dtype=torch.bfloat16)
    k = reduce_kernel(
        4,
        """    %s = "arith.addf"(%a, %b) : (bf16, bf16) -> bf16
    "tt.reduce.return"(%s) : (bf16) -> ()""",
        elem="bf16",
    )
    o = torch.zeros(1, dtype=torch.bfloat16)
    run_tt(k, (1, 1, 1), [x, o])
    # tree: (1 + 2^-8) -> 1 (tie to even), (2^-8 + 2^-8) = 2^-7, 1 + 2^-7 exact
    assert o.item() == 1 + 2**-7


def test_argmax_two_operand_reduce():
    n = 10
    x = torch.tensor([3.0, 9.0, 1.0, 9.0, -4.0, 2.0, 0.0, 8.0, 9.0, 5.0])
    body = "\n".join(
        [
            arange(n),
            ptrs("xp", "x", "r", n),
            load("xv", "xp", n),
            f"""  %v, %i = "tt.reduce"(%xv, %r) <{{axis = 0 : i32}}> ({{
  ^bb1(%a: f32, %ai: i32, %b: f32, %bi: i32):
    %gt = "arith.cmpf"(%a, %b) <{{predicate = 2 : i64}}> : (f32, f32) -> i1
    %eq = "arith.cmpf"(%a, %b) <{{predicate = 1 : i64}}> : (f32, f32) -> i1
    %lt = "arith.cmpi"(%ai, %bi) <{{predicate = 2 : i64}}> : (i32, i32) -> i1
    %tie = "arith.andi"(%eq, %lt) : (i1, i1) -> i1
    %take = "arith.ori"(%gt, %tie) : (i1, i1) -> i1
    %rv = "arith.select"(%take, %a, %b) : (i1, f32, f32) -> f32
    %ri = "arith.select"(%take, %ai, %bi) : (i1, i32, i32) -> i32
    "tt.reduce.return"(%rv, %ri) : (f32, i32) -> ()
  }}) : (tensor<{n}xf32>, tensor<{n}xi32>) -> (f32, i32)
  "tt.store"(%o, %i) <{{operandSegmentSizes = array<i32: 1, 1, 0>}}> : (!tt.ptr<i32>, i32) -> ()""",
        ]
    )
    k = kernel("%x: !tt.ptr<f32>, %o: !tt.ptr<i32>", body)
    o = torch.zeros(1, dtype=torch.int32)
    run_tt(k, (1, 1, 1), [x, o])
    assert o.item() == 1


def test_scan_cumsum_int_and_reverse():
    n = 13
    x = torch.arange(1, n + 1, dtype=torch.int32)
    for reverse, expected in ((0, torch.cumsum(x, 0)), (1, torch.cumsum(x.flip(0), 0).flip(0))):
        body = "\n".join(
            [
                arange(n),
                ptrs("xp", "x", "r", n, "i32"),
                load("xv", "xp", n, "i32"),
                f"""  %c = "tt.scan"(%xv) <{{axis = 0 : i32, reverse = {"true" if reverse else "false"}}}> ({{
  ^bb1(%a: i32, %b: i32):
    %s = "arith.addi"(%a, %b) : (i32, i32) -> i32
    "tt.scan.return"(%s) : (i32) -> ()
  }}) : (tensor<{n}xi32>) -> tensor<{n}xi32>""",
                ptrs("op", "o", "r", n, "i32"),
                store("op", "c", n, "i32"),
            ]
        )
        k = kernel("%x: !tt.ptr<i32>, %o: !tt.ptr<i32>", body)
        o = torch.zeros(n, dtype=torch.int32)
        run_tt(k, (1, 1, 1), [x, o])
        assert torch.equal(o, expected.to(torch.int32))


def dot_kernel(m: int, k: int, n: int, elem: str, precision: int) -> object:
    body = f"""
  %a = "tt.make_range"() <{{start = 0 : i32, end = {m * k} : i32}}> : () -> tensor<{m * k}xi32>
  %b = "tt.make_range"() <{{start = 0 : i32, end = {k * n} : i32}}> : () -> tensor<{k * n}xi32>
  %c = "tt.make_range"() <{{start = 0 : i32, end = {m * n} : i32}}> : () -> tensor<{m * n}xi32>
{ptrs("ap", "x", "a", m * k, elem)}
{ptrs("bp", "y", "b", k * n, elem)}
{ptrs("cp", "o", "c", m * n, "f32")}
{load("av", "ap", m * k, elem)}
{load("bv", "bp", k * n, elem)}
  %a2 = "tt.reshape"(%av) : (tensor<{m * k}x{elem}>) -> tensor<{m}x{k}x{elem}>
  %b2 = "tt.reshape"(%bv) : (tensor<{k * n}x{elem}>) -> tensor<{k}x{n}x{elem}>
  %z = "arith.constant"() <{{value = dense<0.0> : tensor<{m}x{n}xf32>}}> : () -> tensor<{m}x{n}xf32>
  %d = "tt.dot"(%a2, %b2, %z) <{{inputPrecision = {precision} : i32, maxNumImpreciseAcc = 0 : i32}}> : (tensor<{m}x{k}x{elem}>, tensor<{k}x{n}x{elem}>, tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %d1 = "tt.reshape"(%d) : (tensor<{m}x{n}xf32>) -> tensor<{m * n}xf32>
{store("cp", "d1", m * n)}"""
    return kernel(f"%x: !tt.ptr<{elem}>, %y: !tt.ptr<{elem}>, %o: !tt.ptr<f32>", body)


def test_dot_f16_accumulates_in_f32():
    gen = torch.Generator().manual_seed(2)
    a, b = torch.randn(4, 16, generator=gen).half(), torch.randn(16, 8, generator=gen).half()
    o = torch.zeros(32)
    run_tt(dot_kernel(4, 16, 8, "f16", 2), (1, 1, 1), [a, b, o])
    torch.testing.assert_close(o.reshape(4, 8), a.double() @ b.double(), check_dtype=False, rtol=1e-6, atol=1e-6)


def test_dot_tf32_rounds_inputs():
    a = torch.full((2, 4), 1 + 2**-12)
    b = torch.ones(4, 2)
    o_ieee, o_tf32 = torch.zeros(4), torch.zeros(4)
    run_tt(dot_kernel(2, 4, 2, "f32", 2), (1, 1, 1), [a, b, o_ieee])
    run_tt(dot_kernel(2, 4, 2, "f32", 0), (1, 1, 1), [a, b, o_tf32])
    assert torch.all(o_ieee == 4 * (1 + 2**-12))
    assert torch.all(o_tf32 == 4.0)


def test_atomic_add_with_duplicate_addresses_and_old_values():
    n = 8
    body = "\n".join(
        [
            arange(n),
            '  %two = "arith.constant"() <{value = dense<2> : tensor<8xi32>}> : () -> tensor<8xi32>',
            '  %bin = "arith.remsi"(%r, %two) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>',
            ptrs("hp", "h", "bin", n),
            ptrs("xp", "x", "r", n),
            load("xv", "xp", n),
            '  %old = "tt.atomic_rmw"(%hp, %xv) <{atomic_rmw_op = 5 : i32, sem = 4 : i32, scope = 1 : i32, '
            "operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<8x!tt.ptr<f32>>, tensor<8xf32>) -> tensor<8xf32>",
            ptrs("op", "o", "r", n),
            store("op", "old", n),
        ]
    )
    k = kernel("%x: !tt.ptr<f32>, %h: !tt.ptr<f32>, %o: !tt.ptr<f32>", body)
    x = torch.arange(1.0, 9.0)
    h, o = torch.zeros(2), torch.zeros(8)
    run_tt(k, (3, 1, 1), [x, h, o])
    assert h.tolist() == [3 * (1 + 3 + 5 + 7), 3 * (2 + 4 + 6 + 8)]
    # third program: lanes see the running sums of earlier lanes and programs, row-major
    assert o.tolist() == [32.0, 40.0, 33.0, 42.0, 36.0, 46.0, 41.0, 52.0]


def test_out_of_bounds_names_kernel_line_and_leaves_tensors_untouched():
    n = 16
    body = "\n".join(
        [
            arange(n),
            ptrs("xp", "x", "r", n),
            load("xv", "xp", n),
            ptrs("op", "o", "r", n),
            store("op", "xv", n, loc='loc("my_kernel.py":7:4)'),
        ]
    )
    k = kernel("%x: !tt.ptr<f32>, %o: !tt.ptr<f32>", body)
    x, o = torch.ones(16), torch.zeros(12)
    with pytest.raises(InterpretationError) as info:
        run_tt(k, (1, 1, 1), [x, o])
    msg = str(info.value)
    assert msg.startswith("my_kernel.py:7:4: error: out-of-bounds f32 access")
    assert "1 element(s) past the end of 'o'" in msg
    assert "(program id (0, 0, 0))" in msg
    assert o.sum().item() == 0


def test_program_ids_and_scalar_args():
    body = """
  %px = "tt.get_program_id"() <{axis = 0 : i32}> : () -> i32
  %py = "tt.get_program_id"() <{axis = 1 : i32}> : () -> i32
  %nx = "tt.get_num_programs"() <{axis = 0 : i32}> : () -> i32
  %row = "arith.muli"(%py, %nx) : (i32, i32) -> i32
  %idx = "arith.addi"(%row, %px) : (i32, i32) -> i32
  %p = "tt.addptr"(%o, %idx) : (!tt.ptr<i32>, i32) -> !tt.ptr<i32>
  %v = "arith.muli"(%idx, %scale) : (i32, i32) -> i32
  "tt.store"(%p, %v) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (!tt.ptr<i32>, i32) -> ()"""
    k = kernel("%o: !tt.ptr<i32>, %scale: i32", body)
    o = torch.zeros(6, dtype=torch.int32)
    run_tt(k, (3, 2, 1), [o, 10])
    assert o.tolist() == [0, 10, 20, 30, 40, 50]
    with pytest.raises(InterpretationError, match="takes 2 non-constexpr arguments"):
        run_tt(k, (1, 1, 1), [o])
    with pytest.raises(InterpretationError, match="does not fit in i32"):
        run_tt(k, (1, 1, 1), [o, 2**40])


def test_scf_for_typed_induction_variable_wraps():
    body = """
  %lb = "arith.constant"() <{value = 0 : i32}> : () -> i32
  %ub = "arith.constant"() <{value = 4 : i32}> : () -> i32
  %st = "arith.constant"() <{value = 1 : i32}> : () -> i32
  %big = "arith.constant"() <{value = 2147483647 : i32}> : () -> i32
  %r = "scf.for"(%lb, %ub, %st, %big) ({
  ^bb1(%i: i32, %acc: i32):
    %n = "arith.addi"(%acc, %i) : (i32, i32) -> i32
    "scf.yield"(%n) : (i32) -> ()
  }) : (i32, i32, i32, i32) -> i32
  "tt.store"(%o, %r) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (!tt.ptr<i32>, i32) -> ()"""
    o = torch.zeros(1, dtype=torch.int32)
    run_tt(kernel("%o: !tt.ptr<i32>", body), (1, 1, 1), [o])
    assert o.item() == -2147483648 + 5


def test_every_tt_op_has_reference_semantics():
    from mtia_xdsl.dialects.tt import TT
    from mtia_xdsl.machine.interpret.descriptor import DescriptorFunctions
    from mtia_xdsl.machine.interpret.map_elementwise import MapElementwiseFunctions
    from mtia_xdsl.machine.interpret.tt import TtFunctions

    implemented: set[type] = set()
    for functions in (TtFunctions, DescriptorFunctions, MapElementwiseFunctions):
        for table in ("__impl_dict", "__callable_impl_dict", "__terminator_impl_dict"):
            implemented |= set(getattr(functions, table, {}))
    missing = sorted(op.name for op in TT.operations if op not in implemented)
    assert missing == []


def test_views_of_one_storage_as_two_arguments():
    n = 4
    body = "\n".join(
        [
            arange(n),
            ptrs("xp", "x", "r", n),
            load("xv", "xp", n),
            '  %two = "arith.constant"() <{value = dense<2.0> : tensor<4xf32>}> : () -> tensor<4xf32>',
            '  %y = "arith.mulf"(%xv, %two) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
            ptrs("op", "o", "r", n),
            store("op", "y", n),
        ]
    )
    k = kernel("%x: !tt.ptr<f32>, %o: !tt.ptr<f32>", body)
    buf = torch.arange(8.0)
    run_tt(k, (1, 1, 1), [buf[:4], buf[4:]])
    assert buf.tolist() == [0, 1, 2, 3, 0, 2, 4, 6]


def test_error_without_location_gets_the_failing_ops_location():
    body = """
  %v = "tt.load"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (!tt.ptr<f32>) -> f32
  %h = "tt.fp_to_fp"(%v) <{rounding = 1 : i32}> : (f32) -> f8E8M0FNU loc("fp8.py":3:9)"""
    k = kernel("%x: !tt.ptr<f32>", body)
    with pytest.raises(
        InterpretationError, match=r"^fp8.py:3:9: error: tt.fp_to_fp: .*f8E8M0FNU has no representation"
    ):
        run_tt(k, (1, 1, 1), [torch.ones(1)])

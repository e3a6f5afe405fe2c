"""How far an executor's float results may be from the machine model's: the one table of ULP bounds per function.

Everything but the functions below is bit-exact across executors: integer ops and data movement by
definition, and +, -, *, /, sqrt, fma-free conversions and comparisons because IEEE 754 rounds them
correctly on every path (the emitted C++ is built without -ffast-math or contraction, so a*b+c stays two
roundings, as in the model). A transcendental function is not correctly rounded by any library used here:
the model computes with numpy's float32/float64 loops (`mtia_xdsl/semantics/scalar.py`), the C++ and LLVM
paths call the C library's (glibc's) functions, so the two results can differ by the sum of both
libraries' worst errors against the correctly rounded value.

Columns of each entry: numpy's bound (the `ulperr` column of numpy 2.x's own accuracy test data,
`numpy/_core/tests/data/umath-validation-set-<ufunc>.csv`, float32 rows), glibc's bound (its
`sysdeps/x86_64/fpu/libm-test-ulps`, "float" in round-to-nearest; no entry there means glibc is correctly
rounded, 0; the riscv64 executor's glibc, `sysdeps/riscv/rvd/libm-test-ulps`, lists no larger bound for any
function here), and the bound the harness uses, their sum (never below 1). An output is compared in ULPs of
its own dtype: a float32 difference of b ulp is at most b ulp of a narrower result. A program's bound is the
largest of the functions it calls; outputs computed without any of them must match bit for bit.

expm1, log1p, sinh and cbrt on f32 are computed in f64 and rounded once on every path
(`mtia_xdsl.semantics.scalar.WIDENED_F32`): both call the C library's double function, so neither library's
float error applies (0, 0); the bound 1 covers another machine's double function (the riscv64 glibc) rounding
differently in a double-rounding case. (With float functions on both sides, 1 to 2 ulp of log1p and expm1
became 32 ulp of Inductor's cancelling `log1p(|x|) + expm1(x)`: ew_libdevice_inductor.)
"""

from __future__ import annotations

from typing import Any

ULP_BOUNDS: dict[str, tuple[int, int, int]] = {
    # op name: (numpy float32 ulp, glibc float ulp, bound used)
    "math.exp": (3, 1, 4),
    "math.exp2": (2, 1, 3),
    "math.expm1": (0, 0, 1),
    "math.log": (4, 1, 5),
    "math.log2": (3, 1, 4),
    "math.log10": (4, 2, 6),
    "math.log1p": (0, 0, 1),
    "math.sin": (2, 1, 3),
    "math.cos": (2, 1, 3),
    "math.tan": (4, 0, 4),
    "math.sinh": (0, 0, 1),
    "math.cosh": (3, 2, 5),
    "math.tanh": (2, 2, 4),
    "math.asin": (4, 1, 5),
    "math.acos": (3, 1, 4),
    "math.atan": (3, 1, 4),
    "math.asinh": (2, 2, 4),
    "math.acosh": (2, 2, 4),
    "math.atanh": (2, 2, 4),
    "math.cbrt": (0, 0, 1),
    # The model's erf rounds torch's float64 erf (within 1 float64 ulp) to the output type: <= 1 ulp there.
    "math.erf": (1, 0, 1),
    # numpy has no float32 validation data for these two: its float32 loops call the C library's powf and
    # atan2f (npymath), so numpy's side is glibc's bound too.
    "math.powf": (1, 1, 2),
    "math.atan2": (2, 2, 4),
}
"""Transcendental op -> (numpy ulp, glibc ulp, harness bound in ulp of the output dtype)."""


def _libdevice_op(op: Any) -> str | None:
    from mtia_xdsl.semantics.libdevice import SAME_AS_OP, libdevice_stem

    symbol = getattr(op, "symbol", None)
    return None if symbol is None else SAME_AS_OP.get(libdevice_stem(symbol.data))


def transcendentals(module: Any) -> set[str]:
    """Return the names of the ULP_BOUNDS functions `module` (tt or buffer level) calls, libdevice included."""
    found: set[str] = set()
    for op in module.walk():
        name = _libdevice_op(op) if op.name == "tt.extern_elementwise" else op.name
        if name in ULP_BOUNDS:
            found.add(name)
    return found


def program_bound(modules: list[Any]) -> tuple[int, list[str]]:
    """Return (ulp bound, functions that set it) for the float outputs of a launch of these programs."""
    names = sorted(set().union(*(transcendentals(m) for m in modules)))
    return max((ULP_BOUNDS[n][2] for n in names), default=0), names

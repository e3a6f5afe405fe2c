"""Differential harness: every corpus kernel and every example through each executor, held to the machine model.

Per (executor, kernel): the same launch (seed 0 of the corpus case, or the example's seeded launch from
examples/launches.py) runs with MTIA_EXECUTOR=model and MTIA_EXECUTOR=<executor>; outputs must be equal bit for
bit (float outputs of programs calling a transcendental function: within that function's bound,
executor_tolerance.py) and every kernel launch must take exactly the model's cycles (differential.py).

What runs here, to keep the suite's time reasonable (each kernel is a C++ build or a JIT compile, and qemu is
slow): every example through every executor, and a sample of the corpus, every CORPUS_EVERY[path]-th kernel by
sorted name (the names start with their area, so the sample spans all of them). scripts/executor_matrix.py runs
the whole matrix (every corpus kernel through every executor) and prints the pass/gap counts. Known gaps (executor_gaps.py) are xfail(strict=True).
An executor not in this build, or whose toolchain is missing, is skipped with its one-line message.
"""

from __future__ import annotations

import pytest
import torch
from checks import example_launch
from corpus import all_cases
from differential import Outcome, Run, capture, check, corpus_run, difference
from executor_gaps import CORPUS_GAPS, EXAMPLE_GAPS
from executor_tolerance import ULP_BOUNDS, program_bound
from known_gaps import GAPS

from examples.launches import LAUNCHES
from mtia_xdsl.backend import executor
from mtia_xdsl.backend.executor import ExecutorUnavailableError

CASES = all_cases()
EXAMPLES = {launch.name: launch for launch in LAUNCHES}
PATHS = ("cpp", "riscv", "llvm")
"""In the order they run."""
CORPUS_EVERY = {"cpp": 3, "llvm": 3, "riscv": 8}
"""The corpus sample of each executor in the suite; the matrix script runs all of it."""


def corpus_names(path: str) -> list[str]:
    return sorted(CASES)[:: CORPUS_EVERY[path]]


def _params() -> list[object]:
    """(executor, name) for every sampled corpus kernel, then every example ("example:<name>"), executor by executor."""
    params = []
    for path in PATHS:
        skip = [] if executor.available(path) else [pytest.mark.skip(reason=f"executor {path!r} is not in this build")]
        names = [(n, CORPUS_GAPS) for n in corpus_names(path)] + [
            (f"example:{n}", EXAMPLE_GAPS) for n in sorted(EXAMPLES)
        ]
        for name, gaps in names:
            reason = gaps.get(path, {}).get(name.removeprefix("example:"))
            marks = [*skip, pytest.mark.xfail(strict=True, reason=reason)] if reason else skip
            params.append(pytest.param(path, name, marks=marks, id=f"{path}-{name}"))
    return params


_MODEL: dict[str, Outcome] = {}
"""The model's outcome of each corpus kernel and example, computed once for all executors."""


def _run_of(name: str) -> Run:
    if name.startswith("example:"):
        return EXAMPLES[name.removeprefix("example:")].run
    case = CASES[name]
    return corpus_run(case, example_launch(case, 0))


@pytest.mark.parametrize(("path", "name"), _params())
def test_matches_the_model(path: str, name: str) -> None:
    if "machine" in GAPS.get(name, {}):
        pytest.skip("the model itself does not run it (known_gaps.py)")
    run = _run_of(name)
    if name not in _MODEL:
        _MODEL[name] = capture(run, "model")
    try:
        failure = check(run, path, _MODEL[name])
    except ExecutorUnavailableError as e:  # a missing toolchain: its install command
        pytest.skip(str(e))
    assert failure is None, failure


def test_gap_lists_name_only_known_paths_and_kernels() -> None:
    for gaps, known in ((CORPUS_GAPS, set(CASES)), (EXAMPLE_GAPS, set(EXAMPLES))):
        assert set(gaps) <= set(PATHS)
        for path, entries in gaps.items():
            assert set(entries) <= known, f"{path}: unknown names {sorted(set(entries) - known)}"
            assert all(reason.strip() for reason in entries.values())


# ---------------------------------------------------------------- the comparison itself


class _Report:
    def __init__(self, cycles: int) -> None:
        self.total_cycles = cycles


class _Result:
    def __init__(self, cycles: int) -> None:
        self.report = _Report(cycles)


def _program(*op_names: str) -> object:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.dialects.test import TestOp

    module = ModuleOp([])
    for name in op_names:
        op = TestOp()
        op.name = name  # type: ignore[misc]  # stands in for an op of that name (transcendentals() reads names)
        module.body.block.add_op(op)
    return module


def _outcome(values: list[float], cycles: int, *ops: str, dtype: torch.dtype = torch.float32) -> Outcome:
    return Outcome([torch.tensor(values, dtype=dtype)], [(_program(*ops), _Result(cycles))])


def _next_up(x: float, ulps: int) -> float:
    t = torch.tensor([x], dtype=torch.float32)
    return float((t.view(torch.int32) + ulps).view(torch.float32).item())


def test_a_one_ulp_difference_without_transcendentals_is_reported() -> None:
    model = _outcome([1.0, 2.0], 100)
    assert difference(model, _outcome([1.0, 2.0], 100)) is None
    found = difference(model, _outcome([1.0, _next_up(2.0, 1)], 100))
    assert found is not None and "must be bit-exact" in found


def test_an_exp_program_may_differ_by_the_bound_of_exp_and_no_more() -> None:
    bound = ULP_BOUNDS["math.exp"][2]
    model = _outcome([1.0, 2.0], 100, "math.exp")
    assert difference(model, _outcome([1.0, _next_up(2.0, bound)], 100, "math.exp")) is None
    found = difference(model, _outcome([1.0, _next_up(2.0, bound + 1)], 100, "math.exp"))
    assert found is not None and "math.exp" in found


def test_integer_outputs_are_bit_exact_even_next_to_a_transcendental() -> None:
    model = _outcome([1, 2], 100, "math.exp", dtype=torch.int32)
    found = difference(model, _outcome([1, 3], 100, "math.exp", dtype=torch.int32))
    assert found is not None and "1 elements differ" in found


def test_other_cycles_are_reported() -> None:
    found = difference(_outcome([1.0], 100), _outcome([1.0], 101))
    assert found == "launch 0: 101 cycles, the model 100"


def test_the_bound_is_the_largest_of_the_functions_called() -> None:
    assert program_bound([_program("math.exp"), _program("math.log", "arith.addf")]) == (
        max(ULP_BOUNDS["math.exp"][2], ULP_BOUNDS["math.log"][2]),
        ["math.exp", "math.log"],
    )
    assert program_bound([_program("arith.addf", "math.sqrt")]) == (0, [])


def test_each_bound_is_the_sum_of_both_libraries_and_at_least_one() -> None:
    for name, (numpy_ulp, glibc_ulp, bound) in ULP_BOUNDS.items():
        assert bound == max(1, numpy_ulp + glibc_ulp), name


def test_the_harness_records_every_kernel_launch_of_an_example() -> None:
    """column_sums "per_pe" launches two kernels; the model against itself differs in nothing."""
    run = EXAMPLES["column_sums_per_pe"].run
    model = capture(run, "model")
    assert len(model.launches) == 2
    assert all(result.report.total_cycles > 0 for _, result in model.launches)
    assert difference(model, capture(run, "model")) is None


@pytest.mark.skipif(
    not (executor.available("cpp") and executor.available("llvm")), reason="needs the cpp and llvm executors"
)
def test_cpp_after_llvm_in_one_process() -> None:
    """A launch through llvm, then a cpp launch of a kernel whose C++ library was not loaded yet, in one process.

    Once failed ('access ... is outside every tensor argument'): the kernel library bound its runtime calls to the
    copy of the runtime llvm_jit had loaded globally."""
    import triton

    from examples.vector_add import add_kernel

    x, y = torch.rand(700), torch.rand(700)
    out = torch.zeros(700)
    add_kernel[(triton.cdiv(700, 512),)](x, y, out, 700, BLOCK_SIZE=512, executor="llvm")
    out = torch.zeros(700)
    add_kernel[(triton.cdiv(700, 64),)](x, y, out, 700, BLOCK_SIZE=64, executor="cpp")  # a new C++ library
    assert torch.equal(out, x + y)

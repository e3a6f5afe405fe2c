"""`mtia_xdsl.compile`: signatures, per-launch specialisation, grids, argument binding and errors.

Uses the doubles of test_runtime_support for the frontend, pipeline and machine.
"""

import pytest
import torch
import triton
import triton.language as tl
from test_runtime_support import FakeToolchain, install

import mtia_xdsl
from mtia_xdsl.options import MtiaOptions
from mtia_xdsl.runtime import binary
from mtia_xdsl.runtime.launch import KernelLaunchError, flat_view, normalize_grid, scalar_type


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeToolchain:
    return install(monkeypatch)


def _stage(fake: FakeToolchain, stage: str) -> list:
    return [details for s, details in fake.calls if s == stage]


def test_compile_with_signature_then_run(fake: FakeToolchain) -> None:
    kernel = mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 16})
    assert "func.func @add_kernel" in kernel.asm["ttir"] and "add_kernel" in kernel.asm["mtia"]
    _, signature, constexprs, options = _stage(fake, "build")[0]
    assert signature == {**SIG, "BLOCK": "constexpr"} and constexprs == {(4,): 16}
    assert isinstance(options, MtiaOptions)
    x, out = torch.arange(8.0), torch.zeros(8)
    result = kernel[(1,)](x, x, out, 8)
    assert torch.equal(out, 2 * x)
    assert kernel.last_report is result.report and kernel.last_report.total_cycles == 1000 // 16
    assert len(_stage(fake, "build")) == 1


def test_all_arguments_including_constexpr_are_accepted(fake: FakeToolchain) -> None:
    kernel = mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 16})
    x, out = torch.ones(4), torch.zeros(4)
    kernel[(1,)](x, x, out, 4, 16)
    assert torch.equal(out, 2 * x)
    with pytest.raises(KernelLaunchError, match="constexpr 'BLOCK' was compiled as 16 but launched with 32"):
        kernel[(1,)](x, x, out, 4, 32)


def test_without_signature_specialises_per_launch(fake: FakeToolchain) -> None:
    kernel = mtia_xdsl.compile(add_kernel, options={"num_stages": 4})
    with pytest.raises(RuntimeError, match="no compiled variant yet"):
        _ = kernel.asm
    kernel[(1,)](torch.ones(4), torch.ones(4), torch.zeros(4), 4, BLOCK=4)
    kernel[(1,)](torch.ones(4), torch.ones(4), torch.zeros(4), 4, BLOCK=4)
    half = torch.ones(4, dtype=torch.float16)
    kernel[(1,)](half, half, torch.zeros(4, dtype=torch.float16), 2**40, BLOCK=8)
    builds = _stage(fake, "build")
    assert len(builds) == 2
    assert builds[0][1]["x_ptr"] == "*fp32" and builds[0][1]["n"] == "i32"
    assert builds[1][1]["x_ptr"] == "*fp16" and builds[1][1]["n"] == "i64" and builds[1][2] == {(4,): 8}
    assert builds[1][3].num_stages == 4


@pytest.mark.parametrize(
    ("grid", "expected"),
    [
        (3, (3, 1, 1)),
        ((2, 5), (2, 5, 1)),
        ((1, 2, 3), (1, 2, 3)),
        (lambda meta: (meta["n"] // 2,), (4, 1, 1)),
    ],
)
def test_grid_forms(fake: FakeToolchain, grid: object, expected: tuple[int, int, int]) -> None:
    kernel = mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 4})
    kernel[grid](torch.ones(8), torch.ones(8), torch.zeros(8), 8)
    assert _stage(fake, "run")[0][0] == expected


def test_bad_grid_is_reported() -> None:
    with pytest.raises(KernelLaunchError, match=r"grid \(1, -2\) must hold non-negative"):
        normalize_grid(add_kernel, (1, -2), {})
    with pytest.raises(KernelLaunchError, match="1 to 3 dimensions"):
        normalize_grid(add_kernel, (1, 1, 1, 1), {})


def test_wrong_argument_count_names_kernel_line(fake: FakeToolchain) -> None:
    kernel = mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 4})
    line = add_kernel.def_file_line_number
    with pytest.raises(KernelLaunchError, match=rf"test_runtime\.py:{line}:\d+: error: .*missing arguments \['n'\]"):
        kernel[(1,)](torch.ones(4), torch.ones(4), torch.zeros(4))
    with pytest.raises(KernelLaunchError, match="takes 4 positional arguments"):
        kernel[(1,)](torch.ones(4), torch.ones(4), torch.zeros(4), 4, 4, 4)
    with pytest.raises(KernelLaunchError, match="has no parameter 'm'"):
        kernel[(1,)](torch.ones(4), torch.ones(4), torch.zeros(4), m=4)


def test_non_cpu_tensor_and_wrong_kinds_are_reported(fake: FakeToolchain) -> None:
    kernel = mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 4})
    with pytest.raises(KernelLaunchError, match=r"'y_ptr' is on device meta.*\.cpu\(\)"):
        kernel[(1,)](torch.ones(4), torch.ones(4, device="meta"), torch.zeros(4), 4)
    with pytest.raises(KernelLaunchError, match="'n' is a tensor but the kernel expects a scalar of type i32"):
        kernel[(1,)](torch.ones(4), torch.ones(4), torch.zeros(4), torch.ones(1))
    assert _stage(fake, "run") == []


def test_compile_rejects_non_jit_and_unknown_names() -> None:
    with pytest.raises(TypeError, match=r"expects a @triton\.jit function"):
        mtia_xdsl.compile(lambda: None)
    with pytest.raises(TypeError, match=r"unknown parameters \['z'\]"):
        mtia_xdsl.compile(add_kernel, {**SIG, "z": "i32"}, {"BLOCK": 4})
    with pytest.raises(TypeError, match=r"no type for parameters \['BLOCK'\]"):
        mtia_xdsl.compile(add_kernel, SIG)


def test_flat_view_spans_storage_from_data_ptr() -> None:
    base = torch.arange(24.0).reshape(4, 6)
    view = base[1:, 2:].t()
    flat = flat_view(view)
    assert flat.data_ptr() == view.data_ptr()
    assert flat.shape == (24 - 8,) and flat[0] == 8.0 and flat[-1] == 23.0
    flat[1] = -1.0
    assert base[1, 3] == -1.0


def test_scalar_types() -> None:
    assert scalar_type(torch.empty(2, dtype=torch.bfloat16)) == "*bf16"
    assert [scalar_type(v) for v in (True, 3, -(2**31), 2**31, 2**63, 1.5)] == [
        "i1",
        "i32",
        "i32",
        "i64",
        "u64",
        "fp32",
    ]


def test_binary_round_trip_and_bad_header() -> None:
    blob = binary.encode("k", "builtin.module {\n}\n")
    loaded = binary.load(blob)
    assert loaded.name == "k" and list(loaded.module.body.ops) == []
    with pytest.raises(ValueError, match="not an mtia_xdsl kernel binary"):
        binary.decode(b"not json\nbuiltin.module {}")


def test_options_hash_and_from_dict() -> None:
    a = MtiaOptions.from_dict({"num_stages": 3, "unknown": 1, "maxnreg": None, "supported_fp8_dtypes": ["fp8e5"]})
    assert a.num_stages == 3 and a.supported_fp8_dtypes == ("fp8e5",)
    assert a.hash() != MtiaOptions().hash() and a.hash() == MtiaOptions(**a.__dict__).hash()


def test_explicit_signature_rejects_other_dtypes(fake: FakeToolchain) -> None:
    kernel = mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 4})
    half = torch.ones(4, dtype=torch.float16)
    with pytest.raises(KernelLaunchError, match=r"'x_ptr' is a \*fp16 tensor but the kernel was compiled for \*fp32"):
        kernel[(1,)](half, torch.ones(4), torch.zeros(4), 4)
    assert len(_stage(fake, "build")) == 1


def test_binary_that_does_not_parse_names_kernel() -> None:
    with pytest.raises(ValueError, match="kernel k: its printed mtia program does not parse back"):
        binary.load(binary.encode("k", 'builtin.module { "no.such_op"( }'))


def test_constexprs_by_position(fake: FakeToolchain) -> None:
    kernel = mtia_xdsl.compile(add_kernel, SIG, {4: 8})
    assert kernel.constexprs == {"BLOCK": 8} and _stage(fake, "build")[0][2] == {(4,): 8}


def test_argument_count_message_agrees_in_number() -> None:
    from mtia_xdsl.utils.locations import argument_count_error

    assert argument_count_error("k.py:3:0", "k", ["a", "b"], 1).endswith("takes 2 arguments (a, b) but 1 was given")
    assert argument_count_error("k.py:3:0", "k", ["a"], 3).endswith("takes 1 argument (a) but 3 were given")

"""Constructs the machine model must run (issue 3, item 2): each kernel through `kernel[grid](...)`
on CPU tensors (compiled with the default pipeline, run on the MTIA-2i model) against torch.

Regression tests for gaps found by probe kernels: tensors carried by `while` loops, helpers with an
early return, fp8 values (emulated on the vector core), atomics as scalar-core commands.
"""

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl

# ---------------------------------------------------------------------------------------------
# tensors carried by scf.while
# ---------------------------------------------------------------------------------------------


@triton.jit
def while_doubles(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    i = 0
    while i < n:
        x = x * 2
        i += 1
    tl.store(out_ptr + offs, x)


@triton.jit
def while_tensor_condition(x_ptr, out_ptr, limit, BLOCK: tl.constexpr):
    """The loop condition reads the carried tensor (a reduction in the before region)."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    steps = 0
    while tl.max(x, 0) < limit:
        x = x + 1.5
        steps += 1
    tl.store(out_ptr + offs, x + steps)


@triton.jit
def while_two_tensors_in_for(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Two carried tensors, one read after its next value is made, inside a for loop."""
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs)
    b = a * 0
    for _ in range(2):
        i = 0
        while i < n:
            b_next = b + a
            a = a * 0.5 + b
            b = b_next
            i += 1
    tl.store(out_ptr + offs, a + b)


@triton.jit
def while_branch_and_nested(x_ptr, p_out_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """An scf.if yielding the carried tensor, a nested while, and a carried tensor of pointers."""
    r = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + r)
    y = x * 0
    p = x_ptr + r
    acc = tl.zeros((BLOCK,), tl.float32)
    i = 0
    while i < n:
        if i % 2 == 0:
            y = y + x
        else:
            y = y - 1.0
        j = 0
        while j < i:
            y = y + 0.5
            j += 1
        acc += tl.load(p)
        p += BLOCK
        i += 1
    tl.store(out_ptr + r, y)
    tl.store(p_out_ptr + r, acc)


def test_while_with_branches_nested_loops_and_pointers() -> None:
    x = torch.randn(64)
    out = torch.zeros(16)
    acc = torch.zeros(16)
    while_branch_and_nested[(1,)](x, acc, out, 4, BLOCK=16)
    y = x[:16] * 0
    for i in range(4):
        y = y + x[:16] if i % 2 == 0 else y - 1.0
        for _ in range(i):
            y = y + 0.5
    assert torch.equal(out, y)
    torch.testing.assert_close(acc, x.view(4, 16).sum(0))


def test_while_carries_a_tensor() -> None:
    x = torch.randn(16)
    out = torch.zeros(16)
    while_doubles[(1,)](x, out, 3, BLOCK=16)
    assert torch.equal(out, x * 8)
    while_doubles[(1,)](x, out, 0, BLOCK=16)
    assert torch.equal(out, x)


def test_while_condition_reads_the_carried_tensor() -> None:
    x = torch.arange(32, dtype=torch.float32) / 8
    out = torch.zeros(32)
    while_tensor_condition[(1,)](x, out, 10.0, BLOCK=32)
    ref, steps = x.clone(), 0
    while ref.max() < 10.0:
        ref, steps = ref + 1.5, steps + 1
    assert steps > 0
    assert torch.equal(out, ref + steps)


def test_while_two_tensors_nested_in_for() -> None:
    x = torch.randn(16)
    out = torch.zeros(16)
    while_two_tensors_in_for[(1,)](x, out, 3, BLOCK=16)
    a, b = x.clone(), x * 0
    for _ in range(2):
        for _ in range(3):
            a, b = a * 0.5 + b, b + a
    torch.testing.assert_close(out, a + b, rtol=0, atol=0)
    assert mtia_xdsl.last_report() is not None


# ---------------------------------------------------------------------------------------------
# helpers with early returns (multi-block tt.func, inlined once lifted to scf.if)
# ---------------------------------------------------------------------------------------------


@triton.jit
def _pick(x, flag):
    if flag > 0:
        return x + 1
    if flag < -5:
        return x - x
    return x * 2


@triton.jit
def _pair(x, flag):
    if flag == 0:
        return x, x + 1.0
    return x * 3, x


@triton.jit
def helper_early_returns(x_ptr, out_ptr, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    a, b = _pair(x, flag)
    tl.store(out_ptr + offs, _pick(x, flag) + a * b)


def test_helper_with_early_returns_runs() -> None:
    x = torch.randn(16)
    cases = [(1, x + 1, (x * 3, x)), (-9, x - x, (x * 3, x)), (0, x * 2, (x, x + 1)), (-2, x * 2, (x * 3, x))]
    for flag, pick, (a, b) in cases:
        out = torch.zeros(16)
        helper_early_returns[(1,)](x, out, flag, BLOCK=16)
        assert torch.equal(out, pick + a * b), flag


# ---------------------------------------------------------------------------------------------
# fp8: emulated on the vector core, bit-exact with torch's conversions
# ---------------------------------------------------------------------------------------------

FP8 = [
    (tl.float8e5, torch.float8_e5m2),
    (tl.float8e4nv, torch.float8_e4m3fn),
    (tl.float8e5b16, torch.float8_e5m2fnuz),
    (tl.float8e4b8, torch.float8_e4m3fnuz),
]
"""The fp8 types the frontend accepts with a torch twin (its supported_fp8_dtypes; fp8e4b15 has none)."""


def _wide_floats(n: int) -> torch.Tensor:
    """Values across every fp8 range (subnormals, ties, overflow) plus the specials."""
    g = torch.Generator().manual_seed(7)
    x = torch.randn(n, generator=g) * 10.0 ** torch.randint(-7, 6, (n,), generator=g)
    ties = torch.tensor([1.125, 1.375, 2.5, 0.09375, 464.0, 480.0, 61440.0, 2.0**-17, 3 * 2.0**-18, 2.0**-10])
    special = torch.tensor([float("inf"), -float("inf"), float("nan"), 0.0, -0.0, 1e30, -1e30])
    return torch.cat([x, ties, -ties, special])


@triton.jit
def fp8_roundtrip(x_ptr, bits_ptr, back_ptr, n, DT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    y = tl.load(x_ptr + offs, mask=m).to(DT)
    tl.store(bits_ptr + offs, y.to(tl.uint8, bitcast=True), mask=m)
    tl.store(back_ptr + offs, y.to(tl.float32), mask=m)


def test_fp8_conversions_match_torch_bit_for_bit() -> None:
    x = _wide_floats(1000)
    for tl_type, torch_type in FP8:
        bits = torch.zeros(x.numel(), dtype=torch.uint8)
        back = torch.zeros(x.numel())
        fp8_roundtrip[(triton.cdiv(x.numel(), 256),)](x, bits, back, x.numel(), DT=tl_type, BLOCK=256)
        ref = x.to(torch_type)
        assert torch.equal(bits, ref.view(torch.uint8)), torch_type
        torch.testing.assert_close(back, ref.float(), rtol=0, atol=0, equal_nan=True)


@triton.jit
def fp8_rtz(x_ptr, bits_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.load(x_ptr + offs).to(tl.float8e5, fp_downcast_rounding="rtz")
    tl.store(bits_ptr + offs, y.to(tl.uint8, bitcast=True))


def test_fp8_round_toward_zero() -> None:
    x = torch.tensor([1.0, 1.2, 1.249, -1.249, 1.25, 1.49, 57344.0, 60000.0, 2.0**-16 * 1.9, -3.0, 0.0, 7.9])
    xs = torch.cat([x, torch.zeros(4)])
    bits = torch.zeros(16, dtype=torch.uint8)
    fp8_rtz[(1,)](xs, bits, BLOCK=16)
    # toward zero: the largest-magnitude fp8 value not above |x| (finite inputs stay finite)
    grid = torch.arange(256, dtype=torch.uint8).view(torch.float8_e5m2).float()
    finite = grid[torch.isfinite(grid)]
    want = []
    for v in xs.tolist():
        cands = finite[(finite.abs() <= abs(v)) & ((finite >= 0) if v >= 0 else (finite <= 0))]
        best = cands[cands.abs().argmax()] if cands.numel() else torch.tensor(0.0)
        want.append(best.item())
    got = bits.view(torch.float8_e5m2).float()
    assert got.tolist() == want


@triton.jit
def fp8_compute(a_ptr, b_ptr, out_ptr, max_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    c = a * b + a  # fp8 arithmetic: each op in f32, rounded to fp8
    c = tl.where(c > b, c, b)
    tl.store(out_ptr + offs, c)
    tl.store(max_ptr, tl.max(c, 0))


def test_fp8_arithmetic_rounds_each_op() -> None:
    g = torch.Generator().manual_seed(3)
    for _, torch_type in FP8:
        a = (torch.randn(64, generator=g) * 4).to(torch_type)
        b = (torch.randn(64, generator=g) * 4).to(torch_type)
        out = torch.zeros(64, dtype=torch_type)
        mx = torch.zeros(1, dtype=torch_type)
        fp8_compute[(1,)](a, b, out, mx, BLOCK=64)
        c = (a.float() * b.float()).to(torch_type).float()
        c = (c + a.float()).to(torch_type)
        c = torch.where(c.float() > b.float(), c, b)
        assert torch.equal(out.view(torch.uint8), c.view(torch.uint8)), torch_type
        assert mx.float().item() == c.float().max().item()


@triton.jit
def fp8_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


def test_fp8_dot_runs_on_the_dpe_as_fp16() -> None:
    g = torch.Generator().manual_seed(5)
    a = torch.randn(16, 32, generator=g).to(torch.float8_e5m2)
    b = torch.randn(32, 16, generator=g).to(torch.float8_e4m3fn)
    c = torch.zeros(16, 16)
    fp8_dot[(1,)](a, b, c, M=16, N=16, K=32)
    torch.testing.assert_close(c, a.double().matmul(b.double()).float(), rtol=1e-6, atol=1e-6)
    report = mtia_xdsl.last_report()
    assert report is not None and "dpe" in report.format()


def test_fp8_numpy_codec_matches_torch_for_every_format() -> None:
    """The numpy twin of the IR sequence (used for fp8 constants) against torch, FNUZ formats included."""
    import numpy as np
    from xdsl.dialects import builtin

    from mtia_xdsl.utils.fp8 import FP8_FORMATS, decode_fp8_np, encode_fp8_np

    x = _wide_floats(4000)
    every = torch.arange(256, dtype=torch.uint8)
    for mlir_type, torch_type in [
        (builtin.Float8E5M2Type, torch.float8_e5m2),
        (builtin.Float8E4M3FNType, torch.float8_e4m3fn),
        (builtin.Float8E5M2FNUZType, torch.float8_e5m2fnuz),
        (builtin.Float8E4M3FNUZType, torch.float8_e4m3fnuz),
    ]:
        fmt = FP8_FORMATS[mlir_type]
        assert np.array_equal(encode_fp8_np(x.numpy(), fmt), x.to(torch_type).view(torch.uint8).numpy()), torch_type
        want = every.view(torch_type).float().numpy()
        np.testing.assert_array_equal(decode_fp8_np(every.numpy(), fmt), want)


# ---------------------------------------------------------------------------------------------
# atomics: scalar-core commands that read and write global memory
# ---------------------------------------------------------------------------------------------


@triton.jit
def atomics_all_kinds(x_ptr, out_ptr, old_ptr, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tgt = out_ptr + offs % 4
    if KIND == 0:
        old = tl.atomic_add(tgt, x, mask=m)
    elif KIND == 1:
        old = tl.atomic_max(tgt, x, mask=m)
    elif KIND == 2:
        old = tl.atomic_min(tgt, x, mask=m)
    elif KIND == 3:
        old = tl.atomic_and(tgt, x, mask=m)
    elif KIND == 4:
        old = tl.atomic_or(tgt, x, mask=m)
    elif KIND == 5:
        old = tl.atomic_xor(tgt, x, mask=m)
    else:
        old = tl.atomic_xchg(out_ptr + offs, x, mask=m)
    tl.store(old_ptr + offs, old, mask=m)


def test_atomics_of_every_kind_with_masks() -> None:
    sig = {"x_ptr": "*i32", "out_ptr": "*i32", "old_ptr": "*i32", "n": "i32", "KIND": "constexpr", "BLOCK": "constexpr"}
    program = mtia_xdsl.compile(atomics_all_kinds, sig, {"KIND": 1, "BLOCK": 16}).asm["mtia"]
    assert '"mtia.atomic_rmw"' in program and "tt.atomic" not in program
    x = (torch.arange(40, dtype=torch.int32) * 7) % 13 - 4
    n = 37
    for kind, fold in enumerate(["add", "max", "min", "and", "or", "xor", "xchg"]):
        out = torch.full((40,), 3, dtype=torch.int32)
        old = torch.zeros(40, dtype=torch.int32)
        atomics_all_kinds[(3,)](x, out, old, n, KIND=kind, BLOCK=16)
        want = torch.full((40,), 3, dtype=torch.int32)
        olds = torch.zeros(40, dtype=torch.int32)
        for i in range(n):  # programs in order, lanes in order: one valid serialization
            j = i if fold == "xchg" else i % 4
            olds[i] = want[j]
            v, w = int(x[i]), int(want[j])
            want[j] = {"add": w + v, "max": max(w, v), "min": min(w, v), "and": w & v, "or": w | v,
                       "xor": w ^ v, "xchg": v}[fold]  # fmt: skip
        assert torch.equal(out, want), fold
        assert torch.equal(old[:n], olds[:n]), fold
    report = mtia_xdsl.last_report()
    assert report is not None and report.dram_write_bytes + report.sram_write_bytes > 0  # atomics write memory


@triton.jit
def cas_ticket(lock_ptr, out_ptr, sum_ptr):
    pid = tl.program_id(0)
    two = tl.arange(0, 2)
    old = tl.atomic_cas(lock_ptr + two, two * 0, two + 10 * pid + 1)
    tl.store(out_ptr + 2 * pid + two, old)
    ticket = tl.atomic_add(sum_ptr, 1.5)  # scalar: once per program, its old value read back
    tl.store(out_ptr + 8 + pid, ticket.to(tl.int32))


def test_atomic_cas_and_scalar_atomics() -> None:
    lock = torch.zeros(2, dtype=torch.int32)
    out = torch.full((12,), -1, dtype=torch.int32)
    total = torch.zeros(1)
    cas_ticket[(4,)](lock, out, total)
    assert lock.tolist() == [1, 2] and out[:8].tolist() == [0, 0, 1, 2, 1, 2, 1, 2]
    assert total.item() == 6.0
    assert sorted(out[8:].tolist()) == [0, 1, 3, 4]  # old values 0, 1.5, 3, 4.5 truncated


# ---------------------------------------------------------------------------------------------
# dtypes the SE / DPE do not take run on the vector core
# ---------------------------------------------------------------------------------------------


@triton.jit
def f64_dot_and_i64(a_ptr, b_ptr, c_ptr, i_ptr, j_ptr, M: tl.constexpr):
    r = tl.arange(0, M)
    a = tl.load(a_ptr + r[:, None] * M + r[None, :])
    b = tl.load(b_ptr + r[:, None] * M + r[None, :])
    tl.store(c_ptr + r[:, None] * M + r[None, :], tl.dot(a, b) + a * 2.0)
    i = tl.load(i_ptr + r)
    tl.store(j_ptr + r, (i * 3 + (1 << 40)) // 7 + tl.sum(i, 0))


def test_f64_dot_and_i64_arithmetic() -> None:
    g = torch.Generator().manual_seed(11)
    a = torch.randn(16, 16, generator=g, dtype=torch.float64)
    b = torch.randn(16, 16, generator=g, dtype=torch.float64)
    c = torch.zeros(16, 16, dtype=torch.float64)
    i = torch.randint(-(2**40), 2**40, (16,), generator=g)
    j = torch.zeros(16, dtype=torch.int64)
    f64_dot_and_i64[(1,)](a, b, c, i, j, M=16)
    torch.testing.assert_close(c, a @ b + a * 2.0, rtol=1e-12, atol=1e-12)
    assert torch.equal(j, torch.div(i * 3 + (1 << 40), 7, rounding_mode="trunc") + i.sum())


@triton.jit
def histogram_unmasked(x_ptr, out_ptr, BLOCK: tl.constexpr, BINS: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr + tl.arange(0, BINS), tl.histogram(v, BINS))


def test_histogram_without_a_mask() -> None:
    # regression: the reference reshaped the absent mask (a broadcast scalar) and crashed
    x = torch.randint(0, 16, (128,), dtype=torch.int32, generator=torch.Generator().manual_seed(3))
    out = torch.zeros(16, dtype=torch.int32)
    histogram_unmasked[(1,)](x, out, BLOCK=128, BINS=16)
    assert torch.equal(out, torch.bincount(x, minlength=16).int())


def test_an_internal_error_of_the_model_names_the_kernel_line_and_writes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import re

    import numpy as np

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated bug")

    x = torch.randint(0, 16, (128,), dtype=torch.int32)
    out = torch.full((16,), 7, dtype=torch.int32)
    monkeypatch.setattr(np, "bincount", broken)
    with pytest.raises(Exception, match="internal error of the machine model") as info:
        histogram_unmasked[(1,)](x, out, BLOCK=128, BINS=16)
    message = str(info.value)
    assert re.search(r"test_lowering_coverage.py:\d+:\d+: error: ", message), message
    assert "RuntimeError: simulated bug" in message and "no tensor was written" in message
    assert torch.equal(out, torch.full((16,), 7, dtype=torch.int32))

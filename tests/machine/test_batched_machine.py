"""The machine model runs programs in batches; the result must equal the plain per-program run.

Each kernel runs twice on the machine model: batched (the default) and one program at a time
(`max_batch=1`, the specification). Outputs, per-program traces (every recorded command) and errors
must agree, including when control flow diverges within a batch (the batch is undone and split).
"""

import dataclasses

import pytest
import torch
import triton
import triton.language as tl
from xdsl.utils.exceptions import InterpretationError

import mtia_xdsl
from mtia_xdsl.machine.run import run_kernel


@triton.jit
def ragged_scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x * 2.0 - tl.max(x, axis=0), mask=offs < n)


@triton.jit
def divergent_loop(x_ptr, out_ptr, count_ptr, BLOCK: tl.constexpr):
    """Bumps a counter before a loop whose trip count depends on the program id (undo must cancel it)."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    tl.store(count_ptr + pid, tl.load(count_ptr + pid) + 1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(pid % 3 + 1):
        acc += tl.load(x_ptr + i * BLOCK + offs)
    if pid % 2 == 0:
        acc = acc * 2.0
    tl.store(out_ptr + pid * BLOCK + offs, acc)


@triton.jit
def oob_from_program(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def two_axes(x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    col = tl.program_id(1)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + (row * 3 + col) * BLOCK + offs)
    tl.store(out_ptr + (row * 3 + col) * BLOCK + offs, tl.cumsum(x, axis=0) + row - col)


@triton.jit
def masked_load_without_other(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x)


@triton.jit
def nested_divergent(x_ptr, out_ptr, BLOCK: tl.constexpr):
    """An outer loop whose trip count depends on the program id, an inner one on the outer index, and a
    mask that switches a program's updates off after a data-dependent point (an early exit)."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(pid % 4):
        for j in range(i + 1):
            x = tl.load(x_ptr + (i + j) * BLOCK + offs)
            live = tl.sum(acc, axis=0) < 3.0 + pid
            acc = tl.where(live, acc + tl.abs(x), acc)
    tl.store(out_ptr + pid * BLOCK + offs, acc)


def _program(fn, signature, constexprs):
    kernel = mtia_xdsl.compile(fn, signature, constexprs)
    return kernel.fixed.program


def _both(fn, signature, constexprs, grid, make_args):
    """Run batched and one program at a time on fresh arguments; return (outputs, traces) of each."""
    program = _program(fn, signature, constexprs)
    args = make_args()  # the same tensors both times, so that recorded addresses agree
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    initial = [t.clone() for t in tensors]
    runs = []
    for max_batch in (None, 1):
        for t, t0 in zip(tensors, initial, strict=True):
            t.copy_(t0)
        result = run_kernel(program, grid, list(args), max_batch=max_batch)
        runs.append(([t.clone() for t in tensors], result.traces, result.report.total_cycles))
    return runs


def _assert_same(runs) -> None:
    (out_b, traces_b, cycles_b), (out_1, traces_1, cycles_1) = runs
    assert cycles_b == cycles_1
    for a, b in zip(out_b, out_1, strict=True):
        assert torch.equal(a, b)
    assert [t.program_id for t in traces_b] == [t.program_id for t in traces_1]
    for tb, t1 in zip(traces_b, traces_1, strict=True):
        assert [dataclasses.asdict(c) for c in tb.commands] == [dataclasses.asdict(c) for c in t1.commands]
        assert (tb.cb_depth, tb.tail_scalar_instrs) == (t1.cb_depth, t1.tail_scalar_instrs)


def test_batched_run_equals_per_program_run_with_ragged_tail() -> None:
    x = torch.randn(1000, generator=torch.Generator().manual_seed(0))
    runs = _both(
        ragged_scale,
        {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
        {"BLOCK": 128},
        (8,),
        lambda: (x.clone(), torch.zeros(1000), 1000),
    )
    _assert_same(runs)
    out = runs[0][0][1]
    blocks = torch.nn.functional.pad(x, (0, 24)).reshape(8, 128)
    expected = (blocks * 2.0 - blocks.max(dim=1, keepdim=True).values).reshape(-1)[:1000]
    assert torch.equal(out, expected)


def test_divergent_loop_and_branch_are_undone_and_split() -> None:
    block = 16
    x = torch.randn(3 * block, generator=torch.Generator().manual_seed(1))
    runs = _both(
        divergent_loop,
        {"x_ptr": "*fp32", "out_ptr": "*fp32", "count_ptr": "*i32"},
        {"BLOCK": block},
        (7,),
        lambda: (x.clone(), torch.zeros(7 * block), torch.zeros(7, dtype=torch.int32)),
    )
    _assert_same(runs)
    _, out, count = runs[0][0]
    assert torch.equal(count, torch.ones(7, dtype=torch.int32))  # every program bumped it exactly once
    rows = x.reshape(3, block)
    for pid in range(7):
        want = rows[: pid % 3 + 1].sum(0) * (2.0 if pid % 2 == 0 else 1.0)
        torch.testing.assert_close(out[pid * block : (pid + 1) * block], want)


def test_two_axis_grid_and_scan() -> None:
    x = torch.randn(6 * 32, generator=torch.Generator().manual_seed(2))
    runs = _both(
        two_axes,
        {"x_ptr": "*fp32", "out_ptr": "*fp32"},
        {"BLOCK": 32},
        (2, 3),
        lambda: (x.clone(), torch.zeros(6 * 32)),
    )
    _assert_same(runs)


@pytest.mark.parametrize("max_batch", [None, 1])
def test_error_names_the_first_failing_program_and_writes_nothing(max_batch) -> None:
    program = _program(oob_from_program, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 64})
    x, out = torch.randn(64 * 5 + 10), torch.full((64 * 8,), 3.0)
    with pytest.raises(InterpretationError) as info:
        run_kernel(program, (8,), [x, out], max_batch=max_batch)
    message = str(info.value)
    assert "out-of-bounds f32 access" in message
    assert "(program id (5, 0, 0))" in message
    assert "no tensor was written" in message
    assert torch.equal(out, torch.full((64 * 8,), 3.0))


def test_uninitialized_local_storage_reads_as_nan() -> None:
    """Masked-off lanes of a load without `other` are LS bytes no engine wrote: NaN, as in Pallas."""
    program = _program(masked_load_without_other, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 16})
    x, out = torch.arange(16, dtype=torch.float32), torch.zeros(16)
    run_kernel(program, (1,), [x, out, 5])
    assert torch.equal(out[:5], x[:5])
    assert torch.isnan(out[5:]).all()


def test_causal_attention_batched_equals_per_program() -> None:
    """The causal key loop's bound differs per query block: the batched run (the loop compacted) gives the
    same outputs, per-program command traces and cycles as the per-program run."""
    n_ctx = 96
    program, grid, args, (out,) = _attention_program_and_args(n_ctx)
    q, k, v = args[:3]
    runs = []
    for max_batch in (None, 1):
        out.zero_()
        result = run_kernel(program, grid, list(args), max_batch=max_batch)
        runs.append(([out.clone()], result.traces, result.report.total_cycles))
    _assert_same(runs)
    assert [len(t.commands) for t in runs[0][1][:3]] == sorted(len(t.commands) for t in runs[0][1][:3])
    s = (q.float() @ k.float().transpose(-1, -2)) * 0.25
    s = s.masked_fill(torch.ones(n_ctx, n_ctx, dtype=torch.bool).triu(1), float("-inf"))
    torch.testing.assert_close(runs[0][0][0].float(), torch.softmax(s, -1) @ v.float(), atol=2e-2, rtol=2e-2)


def test_nested_divergent_loops_with_an_early_exit_mask() -> None:
    block = 16
    x = torch.randn(8 * block, generator=torch.Generator().manual_seed(4))
    runs = _both(
        nested_divergent,
        {"x_ptr": "*fp32", "out_ptr": "*fp32"},
        {"BLOCK": block},
        (9,),
        lambda: (x.clone(), torch.zeros(9 * block)),
    )
    _assert_same(runs)
    out, rows = runs[0][0][1], x.reshape(8, block)
    for pid in range(9):
        acc = torch.zeros(block)
        for i in range(pid % 4):
            for j in range(i + 1):
                if acc.sum() < 3.0 + pid:
                    acc = acc + rows[i + j].abs()
        torch.testing.assert_close(out[pid * block : (pid + 1) * block], acc)


@triton.jit
def two_divergent_loops(x_ptr, out_ptr, BLOCK: tl.constexpr):
    """Two loops in a row whose trip counts depend on the program id in different ways, each carrying a value
    through a CB across iterations, and work after both: the slots a program names after a compacted loop it
    left early are its own."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(pid % 3):
        acc = acc * 0.5 + tl.load(x_ptr + i * BLOCK + offs)
    m = tl.max(acc, axis=0)
    for j in range(1, 4 - pid % 4):
        acc = tl.maximum(acc, tl.load(x_ptr + j * BLOCK + offs) - m)
    tl.store(out_ptr + pid * BLOCK + offs, acc + m)


@triton.jit
def scalar_loop(x_ptr, out_ptr, BLOCK: tl.constexpr):
    """A divergent loop of scalar-core work only (no engine command in it): programs differ only in the scalar
    instructions before their next command."""
    pid = tl.program_id(0)
    s = tl.load(x_ptr + pid)
    for i in range(pid % 4):
        s = s * 0.5 + i
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + pid * BLOCK + offs, tl.load(x_ptr + offs) + s)


def _attention_program_and_args(n_ctx: int = 96, d: int = 16):
    from examples.attention import attn_fwd

    z, h = 1, 2
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(z, h, n_ctx, d, generator=g).half() for _ in range(3))
    signature = {name: "*fp16" for name in ("Q", "K", "V", "Out")} | {"sm_scale": "fp32"}
    strides = [f"stride_{t}{s}" for t in "qkvo" for s in ("z", "h", "m" if t in "qo" else "n")]
    signature |= dict.fromkeys([*strides, "H", "N_CTX"], "i32")
    program = _program(attn_fwd, signature, {"HEAD_DIM": d, "BLOCK_M": 32, "BLOCK_N": 32, "CAUSAL": 1})
    out = torch.zeros_like(q)
    stride_args = [t.stride(i) for t in (q, k, v, out) for i in range(3)]
    return program, (n_ctx // 32, z * h, 1), [q, k, v, out, 0.25, *stride_args, h, n_ctx], [out]


@pytest.mark.parametrize("kernel", ["attention", "nested", "two_loops", "loop_and_branch", "scalar_loop"])
def test_compacted_divergent_loops_equal_split_batches(kernel, monkeypatch) -> None:
    """A loop whose bound differs within a batch runs once, each iteration over the programs still in it
    (compaction); the outputs, every recorded command (slots, scalar instructions) and cycles are those of
    splitting the batch by trip count, and of the per-program run. The attention batch runs as one batch."""
    from mtia_xdsl.machine import run as machine_run
    from mtia_xdsl.machine.interpret import compaction

    block = 16
    x = torch.randn(8 * block, generator=torch.Generator().manual_seed(5))
    if kernel == "attention":
        program, grid, args, outputs = _attention_program_and_args()
    else:
        fn = {
            "nested": nested_divergent,
            "two_loops": two_divergent_loops,
            "loop_and_branch": divergent_loop,
            "scalar_loop": scalar_loop,
        }[kernel]
        signature = {"x_ptr": "*fp32", "out_ptr": "*fp32"}
        extra = []
        if kernel == "loop_and_branch":
            signature["count_ptr"] = "*i32"
            extra = [torch.zeros(9, dtype=torch.int32)]
        program = _program(fn, signature, {"BLOCK": block})
        outputs = [torch.zeros(9 * block), *extra]
        grid, args = (9, 1, 1), [x, *outputs]
    batches = []
    real_run_batch = machine_run._BatchRunner._run_batch

    def counting(self, group):
        batches.append(len(group))
        return real_run_batch(self, group)

    monkeypatch.setattr(machine_run._BatchRunner, "_run_batch", counting)
    runs = []
    for enabled, max_batch in ((True, None), (False, None), (True, 1)):
        monkeypatch.setattr(compaction, "ENABLED", enabled)
        for t in outputs:
            t.zero_()
        batches.clear()
        result = run_kernel(program, grid, list(args), max_batch=max_batch)
        runs.append(([t.clone() for t in outputs], result.traces, result.report.total_cycles))
        if enabled and max_batch is None and kernel != "loop_and_branch":
            assert batches == [grid[0] * grid[1]]  # no split: the loops ran compacted
        if not enabled:
            assert len(batches) > 1
    _assert_same(runs[:2])
    _assert_same(runs[::2])
    by_structure: dict[int, set] = {}  # programs sharing a structure object have the same command structure
    for t in runs[0][1]:
        shape = tuple((c.engine, c.waits, c.fills, c.scalar_instrs, c.scalar_blocking) for c in t.commands)
        by_structure.setdefault(id(t.structure), set()).add(shape)
    assert all(len(shapes) == 1 for shapes in by_structure.values())


def test_dma_commands_fill_the_fields_they_name() -> None:
    """dma_trace builds DMA commands positionally (one per program): each field holds what its name says."""
    from mtia_xdsl.machine.commands import Command, Engine, SlotRef
    from mtia_xdsl.machine.interpret.dma_trace import cached_block_runs, dma_commands
    from mtia_xdsl.machine.interpret.pe_state import PeState

    fills = (SlotRef(2, 5),)
    runs = cached_block_runs({}, [64, 1], [3, 16], 4)
    (cmd,) = dma_commands("dma_load", "k.py:3:4", (), fills, True, runs, [1000], 256, False, "f32")
    want = Command(
        Engine.DMA, "dma_load", "k.py:3:4", (), fills, global_read_bytes=192, global_write_bytes=0,
        global_ranges=((1000, 64), (1256, 64), (1512, 64)), global_extent=(1000, 1576), ls_bytes=192,
        descriptors=3, dtype="f32",
    )  # fmt: skip
    assert dataclasses.asdict(cmd) == dataclasses.asdict(want)
    from mtia_xdsl.machine.config import MachineConfig

    state = PeState([(0, 0, 0), (1, 0, 0)], MachineConfig())  # traces are built positionally too
    state.issue(cmd)
    state.scalar_instrs = 7
    traces = state.traces(None)
    assert [t.program_id for t in traces] == [(0, 0, 0), (1, 0, 0)]
    assert all(t.commands == [cmd] and t.tail_scalar_instrs == 7 and t.extra_ls_bytes == 0 for t in traces)
    assert all(t.cb_depth == {} and t.cb_tile_bytes == {} and t.cb_ls_offset == {} for t in traces)

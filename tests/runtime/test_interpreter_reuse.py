"""Launches of a loaded kernel reuse one interpreter of its module (plans and per-op facts resolved once),
with the same results, commands and cycles as a fresh one, and keep nothing of the launch alive between."""

import dataclasses
from typing import Any

import pytest
import torch
import triton
import triton.language as tl

from mtia_xdsl.machine import run as machine_run


@triton.jit
def scaled_prefix(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(pid + 1):  # a divergent loop: compacted, with per-op loop facts the interpreter keeps
        acc = acc * 0.5 + tl.load(x_ptr + i * BLOCK + offs, mask=i * BLOCK + offs < n, other=0.0)
    tl.store(out_ptr + pid * BLOCK + offs, acc, mask=pid * BLOCK + offs < n)


@pytest.fixture(autouse=True)
def private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))


def test_launches_of_a_loaded_kernel_reuse_one_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[Any] = []
    real_take = machine_run._take_interpreter

    def take(module: Any) -> Any:
        taken.append(real_take(module))
        return taken[-1]

    monkeypatch.setattr(machine_run, "_take_interpreter", take)
    n = 200
    x = torch.randn(n, generator=torch.Generator().manual_seed(0))
    results = []
    out = torch.zeros(n)  # the same tensors each launch, so that recorded addresses agree
    for _ in range(3):
        out.zero_()
        scaled_prefix[(triton.cdiv(n, 64),)](x, out, n, BLOCK=64)
        result = triton.runtime.driver.active.last_result
        results.append((out.clone(), result.traces, result.report.total_cycles))
    assert taken[1] is taken[0] and taken[2] is taken[0]
    assert not taken[0]._impl_data  # no launch's memory or PE state kept by the idle interpreter
    for out, traces, cycles in results[1:]:
        assert torch.equal(out, results[0][0])
        assert cycles == results[0][2]
        assert [[dataclasses.asdict(c) for c in t.commands] for t in traces] == [
            [dataclasses.asdict(c) for c in t.commands] for t in results[0][1]
        ]
    want = torch.zeros(n)
    rows = torch.nn.functional.pad(x, (0, 256 - n)).reshape(4, 64)
    for pid in range(4):
        acc = torch.zeros(64)
        for i in range(pid + 1):
            acc = acc * 0.5 + rows[i]
        want[pid * 64 : min(n, pid * 64 + 64)] = acc[: min(64, n - pid * 64)]
    torch.testing.assert_close(results[0][0], want)


def test_a_module_run_directly_gets_a_fresh_interpreter_each_launch() -> None:
    """`machine.run_kernel` on a module the caller may edit in place: nothing is reused."""
    import mtia_xdsl

    kernel = mtia_xdsl.compile(scaled_prefix, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 64})
    program = kernel.fixed.program
    x, out = torch.randn(128), torch.zeros(128)
    mtia_xdsl.machine.run_kernel(program, (2,), [x, out, 128])
    assert not hasattr(program, machine_run._IDLE)


def test_a_module_whose_launches_reuse_an_interpreter_is_freed_with_it() -> None:
    """The idle interpreter refers to its module: kept on the module, the two go together."""
    import gc
    import weakref

    import mtia_xdsl

    kernel = mtia_xdsl.compile(scaled_prefix, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 64})
    program = kernel.fixed.program
    machine_run.reuse_interpreters(program)
    mtia_xdsl.machine.run_kernel(program, (2,), [torch.randn(128), torch.zeros(128), 128])
    assert hasattr(program, machine_run._IDLE)
    gone = weakref.ref(program)
    del program, kernel
    gc.collect()
    assert gone() is None

"""The machine model places CB slots at the LS offsets and CB IDs mtia-cb-allocate gave them: a wrong
allocation is an error naming the kernel line, never a silently wrong result (machine/interpret/cb.py)."""

import pytest
import torch
import triton
import triton.language as tl
from xdsl.dialects.builtin import IntegerAttr
from xdsl.utils.exceptions import InterpretationError

import mtia_xdsl
from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine import run_kernel
from mtia_xdsl.options import MtiaOptions


@triton.jit
def _two_alive(x_ptr, out_ptr, B: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, B))
    y = x * 2.0
    tl.store(out_ptr + tl.arange(0, B), x + y)


def _program(vector_codegen: bool = False):
    kernel = mtia_xdsl.compile(_two_alive, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"B": 64},
                               {"vector_codegen": vector_codegen})  # fmt: skip
    return kernel.fixed.program


def _allocs(program) -> list[mtia.CbAllocOp]:
    return [op for op in program.walk() if isinstance(op, mtia.CbAllocOp)]


def test_the_allocated_program_runs_correctly() -> None:
    program = _program()
    allocs = _allocs(program)
    assert len(allocs) == 3 and all(a.allocated for a in allocs)
    x, out = torch.rand(64), torch.zeros(64)
    run_kernel(program, (1,), [x, out])
    torch.testing.assert_close(out, x * 3.0)


def test_two_live_cbs_sharing_bytes_is_caught_by_the_model() -> None:
    """x and y are alive together (x + y reads both); give y the bytes of x: writing y clobbers x, and the
    read of x by `x + y` is an error naming that line (no static check ran: verify_cb_allocation would refuse it)."""
    program = _program()
    x_cb, y_cb = _allocs(program)[:2]
    y_cb.properties["ls_offset"] = x_cb.ls_offset
    y_cb.properties["cb_id"] = IntegerAttr(7, 32)
    x, out = torch.rand(64), torch.zeros(64)
    with pytest.raises(InterpretationError) as info:
        run_kernel(program, (1,), [x, out])
    text = str(info.value)
    assert "reads a tile whose LS bytes another CB has written since" in text, text
    lines = open(__file__).read().splitlines()
    read_at, write_at = (
        lines.index("    tl.store(out_ptr + tl.arange(0, B), x + y)") + 1,
        lines.index("    y = x * 2.0") + 1,
    )
    assert f"test_cb_allocation.py:{read_at}:" in text.split(": error:")[0]  # `x + y` reads x
    assert f"written at {__file__}:{write_at}:" in text  # `y = x * 2.0` wrote y over x's bytes
    assert torch.equal(out, torch.zeros(64))


def test_two_live_cbs_sharing_an_id_is_caught_by_the_model() -> None:
    program = _program()
    x_cb, y_cb = _allocs(program)[:2]
    y_cb.properties["cb_id"] = x_cb.cb_id
    x, out = torch.rand(64), torch.zeros(64)
    with pytest.raises(InterpretationError, match=r"CB ID 0 is still in use by CB #0"):
        run_kernel(program, (1,), [x, out])


def test_the_model_checks_the_cb_id_limit_at_run_time() -> None:
    """A program without allocation (as an older .mlir) runs with one CB ID per CB; with cb_ids=1 the
    second CB holding a tile at once is an error."""
    program = _program()
    for a in _allocs(program):
        del a.properties["cb_id"], a.properties["ls_offset"]
    x, out = torch.rand(64), torch.zeros(64)
    run_kernel(program, (1,), [x, out])
    torch.testing.assert_close(out, x * 3.0)
    with pytest.raises(InterpretationError, match=r"more than the 1 CB IDs of a PE's CP \(MachineConfig.cb_ids\)"):
        run_kernel(program, (1,), [x, out], MtiaOptions.from_dict({"machine_overrides": {"cb_ids": 1}}))

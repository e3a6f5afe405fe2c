"""A kernel whose programs issue no engine command (upstream's test_dtype_tensor, test_tensor_member,
test_short_circuiting: only compile-time work) runs and reports, on a full and on a totals timeline."""

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl


@triton.jit
def _no_command_kernel(x, DTYPE: tl.constexpr):
    t = tl.zeros((1,), DTYPE)  # unused: no command reaches an engine  # noqa: F841


@pytest.mark.parametrize("timeline", ["full", "totals"])
def test_a_kernel_without_engine_commands_runs_and_reports(timeline: str) -> None:
    """It raised IndexError ("index 0 is out of bounds for axis 0 with size 0") in timeline.busy_cycles."""
    _no_command_kernel[(2,)](torch.zeros(1), tl.float32, timeline=timeline)
    report = mtia_xdsl.last_report()
    assert report is not None
    assert "2 on 2 of 64 PEs, 0 engine commands" in report.format()

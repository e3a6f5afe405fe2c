"""One rule for a launch grid (machine/placement.launch_grid) on every path: a Triton launch
(runtime/launch.normalize_grid) and a run of emitted C++ or LLVM IR (backend/host.py, riscv.py) accept and
refuse the same grids with the same words."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.utils.exceptions import InterpretationError

from examples.vector_add import add_kernel
from mtia_xdsl.backend import host
from mtia_xdsl.runtime.launch import KernelLaunchError, normalize_grid


@pytest.mark.parametrize("grid", [4, (4,), (2, np.int64(3)), [1, 2, 3], (0,)])
def test_both_paths_read_a_grid_alike(grid: object) -> None:
    assert normalize_grid(add_kernel, grid, {}) == host.launch_grid(grid, "k.py:1:1")


@pytest.mark.parametrize("grid", [(1, -2), (1, 1, 1, 1), (), (1.5,), (True,)])
def test_both_paths_refuse_a_bad_grid_with_the_same_message(grid: object) -> None:
    with pytest.raises(KernelLaunchError) as launch:
        normalize_grid(add_kernel, grid, {})
    with pytest.raises(InterpretationError) as run:
        host.launch_grid(grid, "k.py:1:1")
    assert str(run.value) == f"k.py:1:1: error: {str(launch.value).split('error: ', 1)[1]}"

"""What upstream host code reads from Triton's driver and a compiled kernel has MTIA meanings
(tutorial 02 divides by n_regs and metadata.shared), and other backends' options are ignored with a warning."""

import warnings

import pytest
import torch
import triton
import triton.language as tl
from triton.runtime import driver

from mtia_xdsl import options as options_module
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.options import MtiaOptions


@triton.jit
def _add_one(x, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs) + 1)


def test_device_properties_are_the_pes_and_local_storage():
    props = driver.active.utils.get_device_properties(None)
    config = MachineConfig.preset("mtia2i")
    assert props["multiprocessor_count"] == config.n_pes
    assert props["max_shared_mem"] == config.ls_bytes
    assert props["warpSize"] == 1 and props["max_num_regs"] > 0


@pytest.mark.parametrize("num_warps", [1, 8])
def test_kernel_metadata_gives_one_program_per_pe_in_cudas_occupancy_formula(num_warps):
    x = torch.zeros(64)
    kernel = _add_one.warmup(x, x, BLOCK=64, num_warps=num_warps, grid=(1,))
    kernel._init_handles()
    props = driver.active.utils.get_device_properties(None)
    assert kernel.n_spills == 0
    assert props["max_num_regs"] // (kernel.n_regs * props["warpSize"] * num_warps) == 1
    # two CBs of 64 fp32 (the load and the sum), as the report lists them
    assert kernel.metadata.shared >= 2 * 64 * 4
    assert kernel.metadata.shared <= props["max_shared_mem"]


def test_other_backends_options_are_ignored_with_one_warning(monkeypatch):
    monkeypatch.setattr(options_module, "_WARNED", set())
    with pytest.warns(UserWarning, match="matrix_instr_nonkdim"):
        first = MtiaOptions.from_dict({"matrix_instr_nonkdim": 16, "num_warps": 8})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = MtiaOptions.from_dict({"matrix_instr_nonkdim": 32})
    assert first.matrix_instr_nonkdim is None and again.matrix_instr_nonkdim is None
    assert first.hash() == MtiaOptions(num_warps=8).hash()  # ignored options do not split the cache


def test_an_autotune_config_with_amd_options_runs(monkeypatch):
    monkeypatch.setattr(options_module, "_WARNED", set())
    configs = [triton.Config({"BLOCK": 32, "matrix_instr_nonkdim": 16, "waves_per_eu": 2, "kpack": 2}, num_warps=8)]
    tuned = triton.autotune(configs=configs, key=[])(_add_one)
    x, y = torch.arange(32.0), torch.zeros(32)
    with pytest.warns(UserWarning, match="kpack"):
        tuned[(1,)](x, y)
    assert torch.equal(y, x + 1)

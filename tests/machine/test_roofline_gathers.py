"""A kernel whose accesses are gathers (a mask that is not a box) has a roofline from its gathered bytes,
not 0.0 % and inf ops per byte."""

import math

import torch
import triton
import triton.language as tl

import mtia_xdsl


@triton.jit
def _masked_copy(x, y, N: tl.constexpr):
    offs = tl.arange(0, N)
    keep = (offs % 3) != 1  # not a box: the access becomes a scalar-core gather/scatter
    tl.store(y + offs, tl.load(x + offs, mask=keep, other=0.0) * 2, mask=keep)


def test_gathered_bytes_are_in_the_roofline_and_the_intensity():
    x, y = torch.arange(256.0), torch.zeros(256)
    _masked_copy[(4,)](x, y, 64)
    report = mtia_xdsl.last_report()
    assert report.dma_dram_bytes + report.dma_sram_bytes == 0  # all through the scalar core
    assert report.gather_dram_bytes + report.gather_sram_bytes > 0
    assert 0.0 < report.achieved_fraction <= 1.0
    assert math.isfinite(report.intensity_ops_per_byte)
    assert "inf ops per" not in report.format() and "0.0 %" not in report.format()

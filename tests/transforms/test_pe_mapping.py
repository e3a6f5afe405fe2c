"""Program-id -> PE mapping: the three distributions, the mtia-pe-mapping attribute and the option plumbing."""

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.run import run_mapping
from mtia_xdsl.machine.timing import MAPPINGS, place_programs
from mtia_xdsl.tools import mtia_run
from mtia_xdsl.transforms.mtia_pe_mapping import STRATEGIES

MTIA2I = MachineConfig.preset("mtia2i")
N_PES = 64


@triton.jit
def _weighted(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(0, pid % 4 + 1):  # work grows with the program id
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, acc, mask=offs < n)


def _programs(grid: tuple[int, int, int]) -> list[SimpleNamespace]:
    gx, gy, gz = grid
    return [SimpleNamespace(program_id=(x, y, z)) for z in range(gz) for y in range(gy) for x in range(gx)]


def _per_pe(grid: tuple[int, int, int], mapping: str) -> dict[int, list[int]]:
    pes = place_programs(_programs(grid), MTIA2I, mapping, grid)  # type: ignore[arg-type]
    out: dict[int, list[int]] = {}
    for linear, pe in enumerate(pes):
        out.setdefault(pe, []).append(linear)
    return out


@pytest.mark.parametrize("grid", [(10, 1, 1), (64, 1, 1), (200, 1, 1), (16, 16, 1), (5, 3, 7)])
def test_linear_gives_each_pe_a_contiguous_chunk(grid):
    total = grid[0] * grid[1] * grid[2]
    k = -(-total // N_PES)
    per_pe = _per_pe(grid, "linear")
    for pe, ids in per_pe.items():
        assert ids == list(range(pe * k, min((pe + 1) * k, total)))


@pytest.mark.parametrize("grid", [(10, 1, 1), (200, 1, 1), (16, 16, 1), (5, 3, 7)])
def test_round_robin_deals_program_i_to_pe_i_mod_n(grid):
    for pe, ids in _per_pe(grid, "round_robin").items():
        assert all(i % N_PES == pe for i in ids)
        assert ids == sorted(ids)


def test_zigzag_alternates_direction_every_round():
    per_pe = _per_pe((256, 1, 1), "zigzag")
    assert per_pe[0] == [0, 127, 128, 255]
    assert per_pe[63] == [63, 64, 191, 192]
    assert per_pe[5] == [5, 122, 133, 250]
    # Work growing with the program id within each round of 64 is balanced over two rounds.
    assert {sum(i % N_PES for i in ids[:2]) for ids in per_pe.values()} == {63}


def test_axis_order_is_axis_0_fastest():
    grid = (3, 2, 1)  # linear id = x + 3 y
    pes = place_programs(_programs(grid), MTIA2I, "round_robin", grid)  # type: ignore[arg-type]
    assert pes == [0, 1, 2, 3, 4, 5]
    shuffled = [SimpleNamespace(program_id=(1, 1, 0)), SimpleNamespace(program_id=(2, 0, 0))]
    assert place_programs(shuffled, MTIA2I, "round_robin", grid) == [4, 2]  # type: ignore[arg-type]


def test_unknown_mapping_is_refused():
    with pytest.raises(ValueError, match="unknown program mapping 'random'"):
        place_programs(_programs((4, 1, 1)), MTIA2I, "random", (4, 1, 1))  # type: ignore[arg-type]


def test_pass_strategies_are_the_machine_mappings():
    assert STRATEGIES == MAPPINGS


def test_compile_option_reaches_the_attribute_and_the_report():
    kernel = mtia_xdsl.compile(
        _weighted, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 64}, options={"pe_mapping": "zigzag"}
    )
    assert 'mtia.pe_mapping = "zigzag"' in str(kernel.asm["mtia"])
    x = torch.arange(1000, dtype=torch.float32)
    out = torch.empty_like(x)
    result = kernel[(16,)](x, out, 1000)
    assert result.report.mapping == "zigzag"
    assert torch.equal(out, x * (torch.arange(1000) // 64 % 4 + 1).float())


def test_launch_kwarg_selects_the_mapping_and_results_are_identical():
    x = torch.randn(130 * 64)
    outs = {}
    ends = {}
    for mapping in MAPPINGS:
        out = torch.empty_like(x)
        _weighted[(130,)](x, out, x.numel(), BLOCK=64, pe_mapping=mapping)
        run = mtia_xdsl.last_run()
        assert run.report.mapping == mapping
        outs[mapping] = out
        ends[mapping] = run.timeline.pe_of_program
    assert torch.equal(outs["linear"], outs["round_robin"])
    assert torch.equal(outs["linear"], outs["zigzag"])
    assert ends["linear"][:4] == [0, 0, 0, 1]  # 130 programs: chunks of 3
    assert ends["zigzag"][64:66] == [63, 62]


def test_unknown_strategy_is_refused_with_the_option():
    """(The pass's own located error is tests/filecheck/transforms/mtia-pe-mapping-invalid.mlir.)"""
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    with pytest.raises(ValueError, match=r"pe_mapping must be one of 'linear', 'round_robin', 'zigzag', got 'spiral'"):
        mtia_xdsl.compile(_weighted, signature, {"BLOCK": 64}, options={"pe_mapping": "spiral"})


def test_run_mapping_prefers_override_then_attribute():
    from xdsl.dialects.builtin import StringAttr

    kernel = SimpleNamespace(attributes={"mtia.pe_mapping": StringAttr("zigzag")})
    bare = SimpleNamespace(attributes={})
    assert run_mapping(kernel) == "zigzag"  # type: ignore[arg-type]
    assert run_mapping(kernel, SimpleNamespace(pe_mapping="linear")) == "zigzag"  # type: ignore[arg-type]
    assert run_mapping(kernel, mtia_run.RunOptions("mtia2i", "round_robin")) == "round_robin"  # type: ignore[arg-type]
    assert run_mapping(bare, SimpleNamespace(pe_mapping="round_robin")) == "round_robin"  # type: ignore[arg-type]
    assert run_mapping(bare) == "zigzag"  # type: ignore[arg-type]


def test_mtia_run_mapping_flag(capsys):
    src = Path(__file__).parents[1] / "filecheck" / "tools" / "mtia-run-set.mlir"
    args = ["f32:4000", "f32:4000", "zeros:f32:4000", "4000"]
    argv = [str(src), "--grid", "4", *(x for a in args for x in ("--arg", a))]
    assert mtia_run.main([*argv, "--mapping", "linear"]) == 0
    assert "mapping linear" in capsys.readouterr().out
    assert mtia_run.main(argv) == 0
    assert "mapping zigzag" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        mtia_run.main([*argv, "--mapping", "spiral"])

"""get_pe_id / get_num_pes: a program sees the PE the timing model runs it on, within the launch's sub-grid."""

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl
import mtia_xdsl.language as mtl
from mtia_xdsl.frontend.build import build_tt_module
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.reference import run_tt
from mtia_xdsl.options import MtiaOptions

MTIA2I = MachineConfig.preset("mtia2i")


def line_of(fn, text: str) -> int:
    """Line number of the first source line of kernel `fn` (jit or plain) containing `text`."""
    import inspect

    lines, start = inspect.getsourcelines(getattr(fn, "fn", fn))
    return start + next(i for i, line in enumerate(lines) if text in line)


@triton.jit
def pe_kernel(out_ptr):
    pid = tl.program_id(0) + tl.num_programs(0) * tl.program_id(1)
    tl.store(out_ptr + 4 * pid, mtl.get_pe_id(0))
    tl.store(out_ptr + 4 * pid + 1, mtl.get_pe_id(1))
    tl.store(out_ptr + 4 * pid + 2, tl.mtia.get_pe_id())
    tl.store(out_ptr + 4 * pid + 3, mtl.get_num_pes(0) * 100 + mtl.get_num_pes(1))


def _expected(pes: list[int], subgrid: tuple[int, int, int]) -> torch.Tensor:
    """What each program must see, derived from the chip PE the timing model placed it on."""
    base, width, height = subgrid
    rows = []
    for pe in pes:
        row, col = divmod(pe, MTIA2I.pe_cols)
        x, y = col - base % MTIA2I.pe_cols, row - base // MTIA2I.pe_cols
        assert 0 <= x < width and 0 <= y < height, "placed outside the launch's sub-grid"
        rows.append([x, y, y * width + x, width * 100 + height])
    return torch.tensor(rows, dtype=torch.int32)


@pytest.mark.parametrize(
    ("mapping", "subgrid", "grid"),
    [("zigzag", None, (70, 1)), ("linear", (18, 4, 2), (5, 3)), ("round_robin", (7, 1, 8), (9, 1))],
)
def test_pe_id_is_the_pe_the_model_runs_the_program_on(mapping, subgrid, grid):
    n = grid[0] * grid[1]
    out = torch.full((n, 4), -1, dtype=torch.int32)
    extra = {"pe_subgrid": subgrid} if subgrid else {}
    pe_kernel[grid](out, pe_mapping=mapping, **extra)
    pes = mtia_xdsl.last_run().timeline.pe_of_program
    assert torch.equal(out, _expected(pes, subgrid or (0, MTIA2I.pe_cols, MTIA2I.pe_rows)))


def test_tt_reference_places_programs_like_the_machine():
    module = build_tt_module(pe_kernel, {"out_ptr": "*i32"})
    out = torch.full((12, 4), -1, dtype=torch.int32)
    run_tt(module, (12, 1, 1), [out], options=MtiaOptions(pe_subgrid=(9, 3, 2), pe_mapping="linear"))
    machine = torch.full((12, 4), -1, dtype=torch.int32)
    pe_kernel[(12,)](machine, pe_subgrid=(9, 3, 2), pe_mapping="linear")
    assert torch.equal(out, machine)
    assert out[:, 3].eq(302).all()


def test_tt_reference_without_a_machine_names_what_to_pass():
    module = build_tt_module(pe_kernel, {"out_ptr": "*i32"})
    with pytest.raises(
        Exception, match=rf"test_language_pe_id.py:{line_of(pe_kernel, 'get_pe_id(0)')}:.*pass options with `machine`"
    ):
        run_tt(module, (1, 1, 1), [torch.zeros(4, dtype=torch.int32)])


@pytest.mark.parametrize(
    ("subgrid", "message"),
    [
        ((60, 4, 2), r"pe_subgrid \(60, 4, 2\): 2 rows of 4 PEs from PE 60 \(row 7, column 4\) leave the 8 x 8"),
        ((0, 0, 2), "tile width and height must be at least 1"),
        ((0, 4), "pe_subgrid must be three integers"),
        ("18,4,2", r"pe_subgrid must be three integers .* got '18,4,2'"),  # was "got ('1', '8', ',', ...)"
    ],
)
def test_subgrid_off_the_chip_is_refused(subgrid, message):
    with pytest.raises(ValueError, match=message):
        MtiaOptions(pe_subgrid=subgrid)


@triton.jit
def _per_pe_tally(scratch_ptr, BLOCK: tl.constexpr):
    """Adds its program id into its PE's row of `scratch` with a plain load and store (no atomics)."""
    row = scratch_ptr + mtl.get_pe_id() * BLOCK + tl.arange(0, BLOCK)
    tl.store(row, tl.load(row) + tl.program_id(0))


@pytest.mark.parametrize(("grid", "subgrid", "mapping"), [(200, (0, 8, 8), "linear"), (37, (9, 2, 3), "zigzag")])
def test_a_pe_runs_its_programs_one_after_the_other(grid, subgrid, mapping):
    # the programs of a PE see each other's stores in program-id order, so PE-private state needs no atomics
    n_pes = subgrid[1] * subgrid[2]
    scratch = torch.zeros(n_pes, 16, dtype=torch.int32)
    _per_pe_tally[(grid,)](scratch, BLOCK=16, pe_subgrid=subgrid, pe_mapping=mapping)
    pes = mtia_xdsl.last_run().timeline.pe_of_program
    base, width = subgrid[0], subgrid[1]
    local = [(p // MTIA2I.pe_cols - base // MTIA2I.pe_cols) * width + p % MTIA2I.pe_cols - base % MTIA2I.pe_cols
             for p in pes]  # fmt: skip
    expected = torch.zeros(n_pes, dtype=torch.int32)
    for pid, pe in enumerate(local):
        expected[pe] += pid
    assert torch.equal(scratch, expected[:, None].expand(n_pes, 16))
    reference = torch.zeros(n_pes, 16, dtype=torch.int32)
    module = build_tt_module(_per_pe_tally, {"scratch_ptr": "*i32"}, {"BLOCK": 16})
    run_tt(module, (grid, 1, 1), [reference], options=MtiaOptions(pe_subgrid=subgrid, pe_mapping=mapping))
    assert torch.equal(reference, scratch)


@pytest.mark.parametrize("variant", ["per_pe", "atomic", "persistent"])
def test_column_sums_example(variant):
    from examples.column_sums import col_sums

    x = torch.randn(2000, 100, generator=torch.Generator().manual_seed(6))  # 125 programs of 16 rows on 64 PEs
    torch.testing.assert_close(col_sums(x, variant, BLOCK_M=16), x.sum(0), rtol=1e-5, atol=1e-4)

"""Calibrate the timing model against the two GEMMs docs/machine.md quotes from S1.

Builds synthetic engine-command traces (no compiler involved) for:

1. BF16 GEMM 2048 x 2048 x 2048 with operands and result in SRAM: one 256 x 256 output block per PE
   (8 x 8 PEs), K in steps of 32, A and B tiles double buffered, f32 accumulator in LS, SE converts to
   BF16 and DMA stores in 32-row chunks (LS: 64 KiB tiles + 256 KiB accumulator + 32 KiB output).
   Target (S1, hand-tuned): above 92 % of 177 TFLOP/s.
2. DRAM-bound BF16 GEMM M x N x K = 512 x 26592 x 2048: weights (K x N, pre-packed tile-major so a
   128 x 128 tile is one contiguous run) streamed from DRAM behind the LLC; PE row r owns rows
   [64 r, 64 r + 64) of M and keeps its A slab in LS, PE column c owns an eighth of N, so the eight PEs
   of a column read the same weight tiles: the first read misses to DRAM, the others hit the SRAM, which
   stands in for the NoC's broadcast read. Output written through to DRAM. Target (S1): above 95 % of
   DRAM bandwidth.

3. The roofline invariant on real kernels: every example kernel (examples/run_all.py launches, --small
   sizes unless --full) with its achieved fraction of the roofline; none may exceed 100 %
   (`build_report` refuses such a run as an internal model error, so every test run checks it too).

Example: python3 benchmarks/calibrate.py [--trace gemm.json] [--full] [--no-examples]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's package and examples/

from mtia_xdsl.machine.commands import Command, Engine, ProgramTrace, SlotRef
from mtia_xdsl.machine.config import MTIA2I, MachineConfig
from mtia_xdsl.machine.report import Report
from mtia_xdsl.machine.timing import Timeline, simulate
from mtia_xdsl.machine.trace import write_chrome_trace

BF16_BYTES = 2
F32_BYTES = 4
SCALAR_INSTRS_PER_COMMAND = 8  # address arithmetic and loop control per issued command


def _load(loc: str, slot: SlotRef, nbytes: int, rows: int, ranges: tuple[tuple[int, int], ...] = ()) -> Command:
    return Command(
        Engine.DMA,
        "dma_load",
        loc,
        (),
        (slot,),
        scalar_instrs=SCALAR_INSTRS_PER_COMMAND,
        global_read_bytes=nbytes,
        descriptors=rows,
        global_ranges=ranges,
        ls_bytes=nbytes,
    )


def sram_gemm_program(
    pm: int, pn: int, size: int = 2048, block: int = 256, block_k: int = 32, out_chunks: int = 8
) -> ProgramTrace:
    """Commands of one PE computing a `block x block` output tile of a BF16 `size`^3 GEMM."""
    a_tile, b_tile = block * block_k * BF16_BYTES, block_k * block * BF16_BYTES
    steps = size // block_k
    cmds: list[Command] = []

    def loads(k: int) -> None:
        cmds.append(_load("gemm.py:20:16", SlotRef(0, k), a_tile, rows=block))
        cmds.append(_load("gemm.py:21:16", SlotRef(1, k), b_tile, rows=block_k))

    loads(0)
    loads(1)
    for k in range(steps):
        last = k == steps - 1
        cmds.append(
            Command(
                Engine.DPE,
                "dpe_matmul",
                "gemm.py:22:23",
                (SlotRef(0, k), SlotRef(1, k)),
                (SlotRef(2, 0),) if last else (),
                scalar_instrs=SCALAR_INSTRS_PER_COMMAND,
                macs=block * block * block_k,
                dtype="bf16",
                ls_bytes=a_tile + b_tile,
            )
        )
        if k + 2 < steps:
            loads(k + 2)
    chunk_rows = block // out_chunks
    chunk_elems = chunk_rows * block
    for c in range(out_chunks):
        cmds.append(
            Command(
                Engine.SE,
                "se_convert",
                "gemm.py:24:20",
                (SlotRef(2, 0),),
                (SlotRef(3, c),),
                scalar_instrs=SCALAR_INSTRS_PER_COMMAND,
                elems=chunk_elems,
                dtype="bf16",
                ls_bytes=chunk_elems * (F32_BYTES + BF16_BYTES),
            )
        )
        cmds.append(
            Command(
                Engine.DMA,
                "dma_store",
                "gemm.py:25:4",
                (SlotRef(3, c),),
                (),
                scalar_instrs=SCALAR_INSTRS_PER_COMMAND,
                global_write_bytes=chunk_elems * BF16_BYTES,
                descriptors=chunk_rows,
                ls_bytes=chunk_elems * BF16_BYTES,
            )
        )
    return ProgramTrace(
        (pn, pm, 0),
        cmds,
        cb_depth={0: 2, 1: 2, 2: 1, 3: 2},
        cb_tile_bytes={0: a_tile, 1: b_tile, 2: block * block * F32_BYTES, 3: chunk_elems * BF16_BYTES},
        tail_scalar_instrs=20,
    )


def sram_gemm(config: MachineConfig) -> tuple[Timeline, Report]:
    """Simulate the BF16 2048^3 GEMM with operands in SRAM on all PEs."""
    cfg = config.replace(global_placement="sram")
    programs = [sram_gemm_program(pm, pn) for pm in range(cfg.pe_rows) for pn in range(cfg.pe_cols)]
    timeline = simulate(programs, cfg, grid=(cfg.pe_cols, cfg.pe_rows, 1))
    return timeline, Report.from_timeline(timeline, "bf16 gemm 2048^3 (SRAM)")


def dram_gemm_program(
    pm: int,
    pn: int,
    m: int = 512,
    n: int = 26592,
    k: int = 2048,
    rows: int = 8,
    cols: int = 8,
    tile: int = 128,
) -> ProgramTrace:
    """Commands of PE (pm, pn) for the DRAM-bound GEMM: A slab in LS, weight tiles streamed."""
    m_rows = m // rows
    n_lo, n_hi = pn * n // cols, (pn + 1) * n // cols
    k_steps = k // tile
    a_base, w_base = 0, 1 << 30
    a_bytes = m_rows * k * BF16_BYTES
    cmds: list[Command] = [
        _load("gemv.py:30:12", SlotRef(0, 0), a_bytes, rows=1, ranges=((a_base + pm * a_bytes, a_bytes),))
    ]
    n_tiles = [(n0, min(tile, n_hi - n0)) for n0 in range(n_lo, n_hi, tile)]

    def w_load(n0: int, width: int, kk: int, seq: int) -> Command:
        nbytes = tile * width * BF16_BYTES
        addr = w_base + (n0 * k + kk * tile * width) * BF16_BYTES  # tile-major packing, contiguous
        return _load("gemv.py:33:16", SlotRef(1, seq), nbytes, rows=1, ranges=((addr, nbytes),))

    schedule = [(n0, width, kk) for n0, width in n_tiles for kk in range(k_steps)]
    for seq in range(min(2, len(schedule))):
        cmds.append(w_load(*schedule[seq], seq))
    w_seq = 0
    for t_index, (n0, width) in enumerate(n_tiles):
        for kk in range(k_steps):
            last = kk == k_steps - 1
            cmds.append(
                Command(
                    Engine.DPE,
                    "dpe_matmul",
                    "gemv.py:34:23",
                    (SlotRef(0, 0), SlotRef(1, w_seq)),
                    (SlotRef(2, t_index),) if last else (),
                    scalar_instrs=SCALAR_INSTRS_PER_COMMAND,
                    macs=m_rows * width * tile,
                    dtype="bf16",
                )
            )
            if w_seq + 2 < len(schedule):
                cmds.append(w_load(*schedule[w_seq + 2], w_seq + 2))
            w_seq += 1
        out_elems = m_rows * width
        cmds.append(
            Command(
                Engine.SE,
                "se_convert",
                "gemv.py:36:20",
                (SlotRef(2, t_index),),
                (SlotRef(3, t_index),),
                elems=out_elems,
                dtype="bf16",
            )
        )
        cmds.append(
            Command(
                Engine.DMA,
                "dma_store",
                "gemv.py:37:4",
                (SlotRef(3, t_index),),
                (),
                global_write_bytes=out_elems * BF16_BYTES,
                descriptors=m_rows,
            )
        )
    return ProgramTrace(
        (pn, pm, 0),
        cmds,
        cb_depth={0: 1, 1: 2, 2: 1, 3: 1},
        cb_tile_bytes={
            0: a_bytes,
            1: tile * tile * BF16_BYTES,
            2: m_rows * tile * F32_BYTES,
            3: m_rows * tile * BF16_BYTES,
        },
    )


def dram_gemm(config: MachineConfig, n: int = 26592) -> tuple[Timeline, Report]:
    """Simulate the DRAM-bound 512 x n x 2048 GEMM (weights streamed from DRAM through the LLC)."""
    cfg = config.replace(global_placement="llc")
    programs = [
        dram_gemm_program(pm, pn, n=n, rows=cfg.pe_rows, cols=cfg.pe_cols)
        for pm in range(cfg.pe_rows)
        for pn in range(cfg.pe_cols)
    ]
    timeline = simulate(programs, cfg, grid=(cfg.pe_cols, cfg.pe_rows, 1))
    return timeline, Report.from_timeline(timeline, f"bf16 gemm 512x{n}x2048 (DRAM)")


def example_fractions(full: bool = False) -> list[tuple[str, Report]]:
    """Run the example kernels (run_all's launches) and return (label, report) for each."""
    import mtia_xdsl
    from examples.run_all import cases

    out = []
    for case in cases(small=not full):
        case.run()
        out.append((f"{case.name} {case.shape}", mtia_xdsl.last_report()))
    return out


def print_example_fractions(full: bool) -> None:
    """Print each example kernel's roofline fraction and check that none exceeds 100 %."""
    rows = example_fractions(full)
    print(f"\n{'example kernel':<40} {'cycles':>10} {'bound':>6} {'roofline':>9}")
    for label, report in rows:
        print(f"{label:<40} {report.total_cycles:10,} {report.roofline_limiter:>6} {report.achieved_fraction:9.1%}")
    worst = max(report.achieved_fraction for _, report in rows)
    print(f"\n==> Roofline invariant: max {100 * worst:.1f} % (must be <= 100 %: {'PASS' if worst <= 1.0 else 'FAIL'})")


def main() -> None:
    """Run both calibration GEMMs and print achieved fractions against the S1 targets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", help="write the Chrome trace of the SRAM GEMM here")
    parser.add_argument("--full", action="store_true", help="example kernels at the main job's sizes")
    parser.add_argument("--no-examples", action="store_true", help="skip the example kernels' roofline check")
    args = parser.parse_args()
    cfg = MTIA2I
    peak_tflops = cfg.gemm_bf16_peak_flops_per_s / 1e12
    peak_dram_gbs = cfg.dram_peak_bytes_per_cycle * cfg.clock_hz / 1e9
    sustained_dram_gbs = cfg.dram_bytes_per_cycle * cfg.clock_hz / 1e9

    start = time.perf_counter()
    timeline, report = sram_gemm(cfg)
    wall = time.perf_counter() - start
    print(report.format())
    frac = report.achieved_tflops / peak_tflops
    print(
        f"\n==> SRAM GEMM: {report.achieved_tflops:.1f} TFLOP/s = {100 * frac:.1f} % "
        f"of {peak_tflops:.0f} TFLOP/s "
        f"(target > 92 %: {'PASS' if frac > 0.92 else 'MISS'}); simulated in {wall:.2f} s\n"
    )
    if args.trace:
        write_chrome_trace(timeline, args.trace)

    start = time.perf_counter()
    _, report = dram_gemm(cfg)
    wall = time.perf_counter() - start
    print(report.format())
    gbs = report.achieved_dram_gb_per_s
    verdict = "PASS" if gbs / sustained_dram_gbs > 0.95 else "MISS"
    print(
        f"\n==> DRAM GEMM: {gbs:.1f} GB/s = {100 * gbs / sustained_dram_gbs:.1f} % of the sustained "
        f"{sustained_dram_gbs:.1f} GB/s (target > 95 %: {verdict}), "
        f"{100 * gbs / peak_dram_gbs:.1f} % of the nominal {peak_dram_gbs:.1f} GB/s "
        f"(at most {100 * cfg.dram_ecc_efficiency:.0f} % by the ECC assumption); simulated in {wall:.2f} s"
    )

    if not args.no_examples:
        print_example_fractions(args.full)


if __name__ == "__main__":
    main()

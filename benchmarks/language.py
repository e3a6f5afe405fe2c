"""The language extensions (mtia_xdsl.language), each against the plain-Triton way, on the MTIA-2i model.

- re_reduce (with get_pe_id): row sums of a 2048 x 2048 fp32 matrix, one program per PE, the PEs of a row
  splitting the columns (examples/row_sums.py): partial sums combined over the RE network against
  `tl.atomic_add` into the output; tensors in DRAM behind the LLC, and in SRAM. Also the re_reduce kernel
  on a 2 x 8 sub-grid (pe_subgrid=(16, 8, 2)): 16 of the 64 PEs.
- get_pe_id on its own: column sums of a 16384 x 256 fp32 matrix, one program per 64 rows
  (examples/column_sums.py): partial sums added into the PE's own scratch row with a plain load and store
  (get_pe_id), then one small launch combining the 64 rows, against `tl.atomic_add` per program; also the
  hand-written persistent kernel (one program per PE, no get_pe_id).
- extract_slice: an 8-tap FIR filter over 1,000,003 fp32 samples (examples/sliding_window.py): each
  program's window loaded once and sliced in LS against one load per tap; bytes moved by DMA and time.
- ctypes.Structure arguments: x * s + b over a strided 2000 x 1000 fp32 view (examples/tensor_view.py),
  passed as one TensorView against seven scalar arguments.

Every figure is the model's (`mtia_xdsl.last_report()`); results are checked against torch first.
Example: python3 benchmarks/language.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mtia_xdsl
from examples import column_sums, row_sums, sliding_window, tensor_view

PLACEMENTS = ("llc", "sram")


def _report(check: bool) -> object:
    if not check:
        raise AssertionError("result differs from torch")
    return mtia_xdsl.last_report()


def bench_re_reduce() -> None:
    x = torch.randn(2048, 2048, generator=torch.Generator().manual_seed(0))
    expected = x.double().sum(1).float()
    print("re_reduce: row sums of 2048 x 2048 fp32, one program per PE (get_pe_id), BLOCK_M 64, BLOCK_N 256")
    print(f"{'tensors in':<11}{'re_reduce us':>14}{'atomics us':>12}{'speedup':>9}{'scalar busy re / atomics':>27}")
    for placement in PLACEMENTS:
        overrides = {"machine_overrides": {"global_placement": placement}}
        runs = {}
        for kind in ("re", "atomic"):
            out = row_sums.row_sums(x, kind, **overrides)
            runs[kind] = _report(torch.allclose(out, expected, rtol=1e-4, atol=1e-3))
        re, at = runs["re"], runs["atomic"]
        busy = f"{re.engine_busy_used['scalar']:.1%} / {at.engine_busy_used['scalar']:.1%}"
        print(f"{placement:<11}{re.time_us:>14.2f}{at.time_us:>12.2f}{at.time_us / re.time_us:>8.2f}x{busy:>27}")
    out = row_sums.row_sums(x, "re", pe_subgrid=(16, 8, 2))
    sub = _report(torch.allclose(out, expected, rtol=1e-4, atol=1e-3))
    print(f"sub-grid (16, 8, 2): re_reduce on {sub.pes_used} PEs, {sub.time_us:.2f} us (tensors in llc)\n")


def bench_pe_id() -> None:
    x = torch.randn(16384, 256, generator=torch.Generator().manual_seed(3))
    expected = x.double().sum(0).float()
    print("get_pe_id: column sums of 16384 x 256 fp32, one program per 64 rows (256 programs on 64 PEs)")
    print(f"{'tensors in':<11}{'variant':<32}{'launches':>9}{'time us':>9}{'+ launch us':>13}")
    variants = (
        ("per_pe", "per-PE rows (get_pe_id) + combine"),
        ("atomic", "tl.atomic_add per program"),
        ("persistent", "persistent, no get_pe_id"),
    )
    for placement in PLACEMENTS:
        totals = {}
        for variant, name in variants:
            reports: list = []
            out = column_sums.col_sums(x, variant, reports=reports, machine_overrides={"global_placement": placement})
            _report(torch.allclose(out, expected, rtol=1e-4, atol=1e-3))
            time_us = sum(r.time_us for r in reports)
            with_launch = time_us + sum(r.launch_us for r in reports)
            totals[variant] = with_launch
            print(f"{placement:<11}{name:<32}{len(reports):>9}{time_us:>9.2f}{with_launch:>13.2f}")
        print(f"{'':<11}per-PE rows vs atomics {totals['atomic'] / totals['per_pe']:.2f}x (launches included)")
    print()


def bench_extract_slice() -> None:
    g = torch.Generator().manual_seed(1)
    x, w = torch.randn(1_000_003, generator=g), torch.randn(8, generator=g)
    expected = sliding_window.fir_reference(x, w)
    out = torch.empty_like(x)
    grid = (-(-x.numel() // 1024),)
    print("extract_slice: 8-tap FIR filter over 1,000,003 fp32 samples, BLOCK 1024 (window 2048 per program)")
    print(f"{'tensors in':<11}{'variant':<15}{'DMA MB':>9}{'time us':>10}")
    for placement in PLACEMENTS:
        times = {}
        for name, kernel in (("extract_slice", sliding_window.fir_slices), ("load per tap", sliding_window.fir_loads)):
            kernel[grid](x, w, out, x.numel(), BLOCK=1024, TAPS=8, machine_overrides={"global_placement": placement})
            r = _report(torch.allclose(out, expected, rtol=1e-4, atol=1e-4))
            moved = (r.dma_dram_bytes + r.dma_sram_bytes) / 1e6
            times[name] = r.time_us
            print(f"{placement:<11}{name:<15}{moved:>9.1f}{r.time_us:>10.2f}")
        print(f"{'':<11}speedup {times['load per tap'] / times['extract_slice']:.2f}x")
    print()


def bench_structs() -> None:
    x = torch.randn(1000, 2000, generator=torch.Generator().manual_seed(2)).t()  # strides (1, 2000)
    expected = x * 1.5 + 0.25
    print("ctypes.Structure: x * 1.5 + 0.25 over a strided 2000 x 1000 fp32 view, 32 x 32 blocks")
    for by_struct, name in ((True, "TensorView argument"), (False, "seven scalar arguments")):
        out = tensor_view.scale(x, 1.5, 0.25, by_struct=by_struct)
        r = _report(torch.allclose(out, expected))
        print(f"{name:<24}{r.total_cycles:>10,} cycles {r.time_us:>9.2f} us")


def main() -> None:
    bench_re_reduce()
    bench_pe_id()
    bench_extract_slice()
    bench_structs()


if __name__ == "__main__":
    main()

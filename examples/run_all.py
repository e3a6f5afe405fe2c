"""The main job: compile the example kernels, run them on the MTIA-2i machine model, report.

Each kernel is launched exactly as on a GPU (`kernel[grid](...)` on CPU torch tensors); the `cpu`
Triton backend of mtia_xdsl compiles it through xDSL and runs it on the machine model. Per kernel this
prints the max error against torch, the simulated time and the achieved fraction of the roofline.

Example: python examples/run_all.py [--verbose] [--small]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mtia_xdsl
from examples import attention, layer_norm, matmul, softmax, vector_add
from mtia_xdsl.machine.report import Report


@dataclass
class Case:
    """One example launch and its torch reference."""

    name: str
    shape: str
    run: Callable[[], tuple[torch.Tensor, torch.Tensor]]
    """Returns (ours, reference)."""
    tolerance: float


def cases(small: bool) -> list[Case]:
    """The example launches at realistic, ragged sizes (or small ones with --small)."""
    g = torch.Generator().manual_seed(0)
    n = 98_432 if small else 1_000_003
    sm = (183, 781) if small else (1823, 781)
    mm = [(133, 117, 71)] if small else [(333, 517, 271), (512, 512, 512)]
    ln = (151, 4096) if small else (1151, 4096)
    at = (1, 2, 200, 64) if small else (2, 4, 1000, 64)

    def add() -> tuple[torch.Tensor, torch.Tensor]:
        x, y = torch.rand(n, generator=g), torch.rand(n, generator=g)
        return vector_add.add(x, y), x + y

    def soft() -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.randn(*sm, generator=g)
        return softmax.softmax(x), torch.softmax(x, dim=1)

    def mat(m: int, nn: int, k: int) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
        def run() -> tuple[torch.Tensor, torch.Tensor]:
            a = torch.randn(m, k, generator=g).half()
            b = torch.randn(k, nn, generator=g).half()
            return matmul.matmul(a, b).float(), (a.float() @ b.float())

        return run

    def norm() -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.randn(*ln, generator=g)
        w, b = torch.rand(ln[1], generator=g), torch.randn(ln[1], generator=g)
        y, _, _ = layer_norm.layer_norm(x, w, b, 1e-5)
        return y, torch.nn.functional.layer_norm(x, (ln[1],), w, b, 1e-5)

    def attn() -> tuple[torch.Tensor, torch.Tensor]:
        q, k, v = (torch.randn(*at, generator=g).half() for _ in range(3))
        return attention.attention(q, k, v, causal=True), attention.reference(q, k, v, causal=True)

    out = [
        Case("vector_add", f"{n} fp32", add, 0.0),
        Case("softmax", f"{sm[0]}x{sm[1]} fp32", soft, 1e-6),
    ]
    out += [Case("matmul", f"{m}x{nn}x{k} fp16->fp32 acc", mat(m, nn, k), 0.0) for m, nn, k in mm]
    out.append(Case("layer_norm", f"{ln[0]}x{ln[1]} fp32", norm, 1e-4))
    out.append(Case("attention", f"causal {at[0]}x{at[1]}x{at[2]}x{at[3]} fp16", attn, 2e-3))
    return out


def main() -> int:
    """Run every case, print the table (and each full report with --verbose); exit 1 on a mismatch."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="print each kernel's full report")
    parser.add_argument("--small", action="store_true", help="smaller sizes, for a quick look")
    args = parser.parse_args()
    header = (
        f"{'kernel':<11} {'shape':<28} {'max err':>9} {'cycles':>10} {'time us':>9} {'roofline':>9} "
        f"{'bound':>6} {'busiest':>10} {'LS':>4} {'wall s':>7}"
    )
    failed = False
    for k, case in enumerate(cases(args.small)):
        start = time.perf_counter()
        ours, ref = case.run()
        wall = time.perf_counter() - start
        report = mtia_xdsl.last_report()
        if k == 0:
            print(_machine_line(report))
            print(header)
            print("-" * len(header))
        err = (ours.float() - ref.float()).abs().max().item()
        tol = case.tolerance or _fp16_tolerance(ref)
        ok = err <= tol
        failed |= not ok
        engine, busy = max(report.engine_busy_used.items(), key=lambda kv: kv[1])
        ls = report.ls_high_water_bytes / report.ls_capacity_bytes
        print(
            f"{case.name:<11} {case.shape:<28} {err:9.2e} {report.total_cycles:10,} {report.time_us:9.2f} "
            f"{report.achieved_fraction:9.1%} {report.roofline_limiter:>6} {engine:>5} {busy:4.0%} {ls:4.0%} "
            f"{wall:7.1f}{'' if ok else '  MISMATCH'}"
        )
        if args.verbose:
            print(report.format())
    print(LEGEND)
    return 1 if failed else 0


LEGEND = """
max err: largest |ours - torch|. cycles, time us: simulated on the machine model (kernel launch excluded).
roofline: the roofline's lower bound on the cycles / the simulated cycles; bound: the term setting it (dram, sram:
DMA bytes at that level's chip bandwidth; dpe, se, vec: engine work at chip peak). busiest: the engine with the
highest busy share on the PEs used. LS: high-water mark of local storage as a share of its capacity per PE.
wall s: host time of compile + simulation. --verbose prints each kernel's full report."""


def _machine_line(report: Report) -> str:
    """Name the chip, its placement and any overridden MachineConfig fields."""
    overrides = ", ".join(f"{k}={v!r}" for k, v in report.config_overrides.items()) or "none"
    return (
        f"machine: {report.chip} ({report.n_pes} PEs at {report.clock_hz / 1e9:.2f} GHz), "
        f"tensors in {report.placement}, config overrides: {overrides}"
    )


def _fp16_tolerance(ref: torch.Tensor) -> float:
    """Half an fp16 ulp of the largest result, plus fp32 accumulation slack."""
    return float(ref.abs().max()) * 2.0**-11 * 1.01 + 1e-3


if __name__ == "__main__":
    sys.exit(main())

"""The paper's four optimizations, each measured on the MTIA-2i machine model: one table and the goals.

Each kernel is launched through `kernel[grid](...)` with the compile options as keyword arguments, once with
every optimization on and once with each turned off in turn:

  all on        the defaults: num_stages=3, cb_sizing="greedy", effective_shapes, vector_codegen, zigzag
  no pipeline   num_stages=1 (software pipelining off; CBs stay single-slot)
  no eff.shape  effective_shapes=False
  no vec.cg     vector_codegen=False
  linear map    pe_mapping="linear" (round_robin is measured too for attention, or for all with
                --all-mappings, and shows in the goal lines)
  all off       all of the above off

A cell shows the simulated time (us) and the achieved fraction of the roofline of the memory level the data
lives in (`Report.achieved_fraction`); the all-on run also shows its CB IDs and the LS bytes per PE up to the
end of its highest CB, as mtia-cb-allocate placed them (`cb_summary`). A second table compares greedy CB sizing
with uniform triple buffering (cb_sizing="uniform", num_stages=3): time and a program's LS as allocated (the
goal's measure), and the model's LS high-water per PE, which counts two programs' CBs when both fit
(`MachineConfig.pe_programs_in_flight`), so LS greedy frees can hold the next program. The goal lines follow,
each PASS or MISS with its figures. An option whose pass has not landed yet changes nothing (pipeline_for
leaves the pass out); options that give the same buffer-level program as a run before are not rerun (the
cell is marked '='); a configuration that fails (e.g. LS overflow) shows its error instead of a time.

Kernels: the Triton matmul (examples/matmul.py) BF16 2048^3 with operands in SRAM (S1's calibration GEMM),
BF16 512 x 26592 x 2048 and 2048^3 from DRAM behind the LLC, all 128 x 128 x 64 blocks; softmax 1823 x 781 fp32;
layer norm 1151 x 4096 fp32; vector add 1,000,003 fp32; causal flash attention forward 1 x 16 x 1000 x 64
fp16 (16 query blocks per head, 4 programs per PE).

`--kernels` and `--columns` run a subset ('all on' always runs; a cell left out reads "not run" and counts in no
goal line). Launches keep only their totals (`timeline="totals"`), the figures the tables show.

Example: python3 benchmarks/optimizations.py [--markdown] [--kernels attention,softmax]
    [--columns "no pipeline,all off"] [--all-mappings]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="mtia-opt-bench-"))  # fresh per run

import torch  # noqa: E402
import triton  # noqa: E402

import mtia_xdsl  # noqa: E402
from examples import attention, layer_norm, matmul, softmax, vector_add  # noqa: E402
from mtia_xdsl.machine.report import cb_summary  # noqa: E402

ALL_ON: dict[str, Any] = {
    "num_stages": 3,
    "cb_sizing": "greedy",
    "effective_shapes": True,
    "vector_codegen": True,
    "pe_mapping": "zigzag",
}
COLUMNS: dict[str, dict[str, Any]] = {
    "no pipeline": {"num_stages": 1},
    "no eff.shape": {"effective_shapes": False},
    "no vec.cg": {"vector_codegen": False},
    "linear map": {"pe_mapping": "linear"},
    "all off": {"num_stages": 1, "effective_shapes": False, "vector_codegen": False, "pe_mapping": "linear"},
}
UNIFORM: dict[str, Any] = {"num_stages": 3, "cb_sizing": "uniform"}
MAPPINGS = ("linear", "round_robin", "zigzag")
IN_SRAM = {"machine_overrides": {"global_placement": "sram"}}
GEMM_GOAL, MEMORY_GOAL, ZIGZAG_GOAL = 0.90, 0.85, 1.3
GREEDY_SLOWDOWN_MAX, GREEDY_LS_MAX = 0.02, 0.60
SAME = 0.001
"""Times within this fraction count as equal in 'no optimization makes a kernel slower'."""


@dataclass
class Kernel:
    """One benchmark launch."""

    name: str
    shape: str
    kind: str
    """"gemm", "memory" (memory-bound) or "attention": which goal line applies."""
    make: Callable[[], Launch]
    """Builds the inputs and returns the launch."""


@dataclass
class Cell:
    """One run: the report's figures, or the error that stopped it."""

    time_us: float = math.nan
    fraction: float = math.nan
    ls_bytes: int = 0
    mapping: str = ""
    cb_ids: int = 0
    """CB IDs the program uses (`cb_summary`: the most CBs alive at once, after mtia-cb-allocate)."""
    cb_ls_bytes: int = 0
    """End of its highest CB in LS as mtia-cb-allocate placed them (`cb_summary`), bytes per PE."""
    error: str = ""
    reused: bool = False
    """The options gave a program that already ran with other options: not rerun."""

    def text(self) -> str:
        """Return 'time (fraction)' ('=' when the program is one already run) or a short error."""
        if self.error == NOT_RUN:
            return NOT_RUN
        if self.error:
            return f"error: {self.error[:28]}"
        return f"{self.time_us:9.1f} ({self.fraction * 100:4.1f}%){'=' if self.reused else ' '}"


NOT_RUN = "not run"
"""The error text of a cell --columns left out."""


@dataclass
class Row:
    """A kernel's cells: "all on", each column, "uniform"; and the all-on run of each mapping."""

    kernel: Kernel
    cells: dict[str, Cell] = field(default_factory=dict)
    by_mapping: dict[str, Cell] = field(default_factory=dict)


@dataclass
class Launch:
    """A kernel launch without its compile options: `fn[grid](*args, **kwargs, **options)`."""

    fn: Any
    grid: tuple[int, ...]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    seen: dict[str, Cell] = field(default_factory=dict)
    """Buffer-level program text -> its cell: options that give the same program are not rerun."""

    def run(self, options: dict[str, Any]) -> Cell:
        """Compile with `options`; run unless the same program already ran; return its figures or error."""
        try:
            compiled = self.fn.warmup(*self.args, grid=self.grid, **self.kwargs, **options)
            program = str(compiled.asm["mtia"])
            if program in self.seen:
                return replace(self.seen[program], reused=True)
            self.fn[self.grid](*self.args, **self.kwargs, **options, timeline="totals")  # the report's figures only
        except Exception as e:  # a configuration the compiler or the model refuses is a table entry
            text = str(e).strip()
            return Cell(error=text.splitlines()[0] if text else type(e).__name__)
        report = mtia_xdsl.last_report()
        cbs = cb_summary(report.cbs)
        cell = Cell(report.time_us, report.achieved_fraction, report.ls_high_water_bytes, report.mapping,
                    cbs.ids_in_use, cbs.ls_high_water_bytes)  # fmt: skip
        self.seen[program] = cell
        return cell


def _matmul(m: int, n: int, k: int, overrides: dict[str, Any]) -> Launch:
    g = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=g).to(torch.bfloat16)
    b = torch.randn(k, n, generator=g).to(torch.bfloat16)
    c = torch.empty(m, n, dtype=torch.bfloat16)
    blocks = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8}
    args = (a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    grid = (triton.cdiv(m, 128) * triton.cdiv(n, 128),)
    return Launch(matmul.matmul_kernel, grid, args, {**blocks, **overrides})


def _softmax(rows: int, cols: int) -> Launch:
    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(0))
    y = torch.empty_like(x)
    args = (y, x, x.stride(0), y.stride(0), cols)
    return Launch(softmax.softmax_kernel, (rows,), args, {"BLOCK_SIZE": triton.next_power_of_2(cols)})


def _layer_norm(rows: int, cols: int) -> Launch:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(rows, cols, generator=g)
    w, b = torch.rand(cols, generator=g), torch.randn(cols, generator=g)
    y, mean, rstd = torch.empty_like(x), torch.empty(rows), torch.empty(rows)
    args = (x, y, w, b, mean, rstd, x.stride(0), cols, 1e-5)
    block = min(1024, triton.next_power_of_2(cols))
    return Launch(layer_norm._layer_norm_fwd_fused, (rows,), args, {"BLOCK_SIZE": block})


def _vector_add(n: int) -> Launch:
    g = torch.Generator().manual_seed(0)
    x, y = torch.rand(n, generator=g), torch.rand(n, generator=g)
    out = torch.empty_like(x)
    return Launch(vector_add.add_kernel, (triton.cdiv(n, 1024),), (x, y, out, n), {"BLOCK_SIZE": 1024})


def _attention(z: int, h: int, n_ctx: int, head_dim: int) -> Launch:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(z, h, n_ctx, head_dim, generator=g).half() for _ in range(3))
    o = torch.empty_like(q)
    strides = (*q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *o.stride()[:3])
    args = (q, k, v, o, 1.0 / math.sqrt(head_dim), *strides, h, n_ctx)
    meta = {"HEAD_DIM": head_dim, "BLOCK_M": 64, "BLOCK_N": 64, "CAUSAL": True}
    return Launch(attention.attn_fwd, (triton.cdiv(n_ctx, 64), z * h), args, meta)


def kernels() -> list[Kernel]:
    """The kernels of the table, in order."""
    return [
        Kernel("matmul_sram", "2048^3 bf16, SRAM", "gemm", lambda: _matmul(2048, 2048, 2048, IN_SRAM)),
        Kernel("matmul_dram", "512x26592x2048 bf16", "gemm", lambda: _matmul(512, 26592, 2048, {})),
        Kernel("matmul_2048_dram", "2048^3 bf16, DRAM", "gemm", lambda: _matmul(2048, 2048, 2048, {})),
        Kernel("softmax", "1823x781 fp32", "memory", lambda: _softmax(1823, 781)),
        Kernel("layer_norm", "1151x4096 fp32", "memory", lambda: _layer_norm(1151, 4096)),
        Kernel("vector_add", "1000003 fp32", "memory", lambda: _vector_add(1_000_003)),
        Kernel("attention", "causal 1x16x1000x64 fp16", "attention", lambda: _attention(1, 16, 1000, 64)),
    ]


CHOICES = ("round_robin", "uniform", *COLUMNS)
"""What --columns may select; 'all on' (zigzag) always runs, as every goal compares against it."""


def measure(selected: list[Kernel], search_mapping: bool, columns: tuple[str, ...] = CHOICES) -> list[Row]:
    """Run every configuration of every kernel (of `columns` only, besides 'all on'), with a tqdm progress bar."""
    from tqdm import tqdm

    plan: list[tuple[Row, str, dict[str, Any]]] = []
    rows = [Row(k) for k in selected]
    for row in rows:
        mappings = MAPPINGS if search_mapping or row.kernel.kind == "attention" else ("linear", "zigzag")
        mappings = tuple(m for m in mappings if m == ALL_ON["pe_mapping"] or m in columns or
                         (m == "linear" and "linear map" in columns))  # fmt: skip
        plan += [(row, f"map:{m}", {**ALL_ON, "pe_mapping": m}) for m in mappings]
        plan += [(row, "uniform", {**ALL_ON, **UNIFORM})] if "uniform" in columns else []
        plan += [(row, name, dict(change)) for name, change in COLUMNS.items() if name in columns]
    best: dict[int, str] = {}
    launches: dict[int, Launch] = {}
    for row, name, opts in tqdm(plan, desc="runs", unit="run", file=sys.stderr):
        if id(row) not in launches:
            launches.clear()  # one kernel's inputs alive at a time
            launches[id(row)] = row.kernel.make()
        launch = launches[id(row)]
        if name.startswith("map:"):
            cell = row.by_mapping[name[4:]] = launch.run(opts)
        else:
            if id(row) not in best:
                best[id(row)] = ALL_ON["pe_mapping"]
                row.cells["all on"] = row.by_mapping[best[id(row)]]
            full = {**ALL_ON, "pe_mapping": best[id(row)], **opts}
            if name == "linear map" and "linear" in row.by_mapping:
                cell = row.cells[name] = row.by_mapping["linear"]
            else:
                cell = row.cells[name] = launch.run(full)
        tqdm.write(f"{row.kernel.name} {name}: {cell.text().strip()}", file=sys.stderr)  # figures as they come
    return rows


def format_tables(rows: list[Row], markdown: bool) -> str:
    """Return the two tables and the goal lines as text (or markdown)."""
    heads = ["kernel", "shape", "all on", "CB IDs", "LS KiB", *COLUMNS]
    body = []
    for r in rows:
        on = r.cells["all on"]
        body.append([r.kernel.name, r.kernel.shape, on.text() + (f" {on.mapping}" if not on.error else ""),
                     str(on.cb_ids) if not on.error else "", f"{on.cb_ls_bytes / 1024:.0f}" if not on.error else "",
                     *(r.cells.get(c, Cell(error=NOT_RUN)).text() for c in COLUMNS)])  # fmt: skip
    legend = (
        "time us (fraction of roofline); 'all on' names its PE mapping, then its CB IDs and LS KiB per PE as"
        " mtia-cb-allocate placed its CBs; '=': same program as a run before"
    )
    out = [legend, _table(heads, body, markdown), ""]
    heads2 = ["kernel", "greedy us", "greedy LS KiB", "uniform us", "uniform LS KiB", "slowdown", "LS ratio",
              "in flight KiB"]  # fmt: skip
    body2 = []
    for r in rows:
        g, u = r.cells["all on"], r.cells.get("uniform", Cell(error=NOT_RUN))
        if g.error or u.error:
            body2.append([r.kernel.name, g.text(), "", u.text(), "", "", "", ""])
            continue
        slow, ratio = g.time_us / u.time_us - 1, g.cb_ls_bytes / max(u.cb_ls_bytes, 1)
        times = [f"{g.time_us:.1f}", f"{g.cb_ls_bytes / 1024:.0f}", f"{u.time_us:.1f}", f"{u.cb_ls_bytes / 1024:.0f}"]
        flight = f"{g.ls_bytes / 1024:.0f} / {u.ls_bytes / 1024:.0f}"
        body2.append([r.kernel.name, *times, f"{slow * 100:+.1f}%", f"{ratio * 100:.0f}%", flight])
    legend2 = (
        "greedy CB sizing vs uniform triple buffering (num_stages=3); LS KiB: one program's CBs as"
        " mtia-cb-allocate placed them; in flight KiB (greedy / uniform): the model's LS high-water per PE, two"
        " programs' CBs when both fit (pe_programs_in_flight)"
    )
    out += [legend2, _table(heads2, body2, markdown), ""]
    out += goal_lines(rows)
    return "\n".join(out)


def _table(heads: list[str], body: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
        return "\n".join(lines + ["| " + " | ".join(c.strip() for c in row) + " |" for row in body])
    widths = [max(len(h), *(len(row[i]) for row in body)) for i, h in enumerate(heads)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in body]
    return "\n".join(lines)


def slower_line(rows: list[Row]) -> str:
    """Return the goal line 'no optimization makes a kernel slower': all on no slower than any column."""
    slower = []
    for r in rows:
        on = r.cells["all on"]
        for name in COLUMNS:
            cell = r.cells.get(name)
            if not on.error and cell is not None and not cell.error and cell.time_us < on.time_us * (1 - SAME):
                slower.append(f"{r.kernel.name} {name} {cell.time_us:.2f} < all on {on.time_us:.2f} us")
    verdict = "MISS" if slower else "PASS"
    what = f"all on within {SAME * 100:.1f} % of or faster than each column"
    return f"{verdict}  no optimization makes a kernel slower ({what})" + (": " + ", ".join(slower) if slower else "")


def goal_lines(rows: list[Row]) -> list[str]:
    """Return the issue's goals, each PASS or MISS with the figures behind it."""
    lines = []
    for kind, goal, what in (("gemm", GEMM_GOAL, "Triton GEMM"), ("memory", MEMORY_GOAL, "memory-bound")):
        cells = {r.kernel.name: r.cells["all on"] for r in rows if r.kernel.kind == kind}
        if cells:
            ok = all(not c.error and c.fraction >= goal for c in cells.values())
            figs = ", ".join(f"{n} {c.fraction * 100:.1f}%" if not c.error else f"{n} error" for n, c in cells.items())
            lines.append(f"{'PASS' if ok else 'MISS'}  {what} >= {goal * 100:.0f}% of roofline: {figs}")
    for r in rows:
        if r.kernel.kind != "attention":
            continue
        lin, zig = r.by_mapping.get("linear", Cell(error=NOT_RUN)), r.by_mapping.get("zigzag", Cell(error=NOT_RUN))
        if lin.error == NOT_RUN:
            continue
        if lin.error or zig.error:
            lines.append(f"MISS  zigzag >= {ZIGZAG_GOAL}x linear on {r.kernel.name}: {lin.error or zig.error}")
            continue
        speedup = lin.time_us / zig.time_us
        verdict = "PASS" if speedup >= ZIGZAG_GOAL else "MISS"
        lines.append(
            f"{verdict}  zigzag >= {ZIGZAG_GOAL}x linear on {r.kernel.name}: {speedup:.2f}x "
            f"({lin.time_us:.1f} -> {zig.time_us:.1f} us)"
        )
    lines.append(slower_line(rows))
    figs, ok = [], True
    for r in rows:
        g, u = r.cells["all on"], r.cells.get("uniform", Cell(error=NOT_RUN))
        if g.error or u.error:
            figs.append(f"{r.kernel.name} {'greedy error' if g.error else 'uniform ' + u.text().strip()}")
            ok = ok and not g.error
            continue
        slow, ratio = g.time_us / u.time_us - 1, g.cb_ls_bytes / max(u.cb_ls_bytes, 1)
        ok = ok and slow <= GREEDY_SLOWDOWN_MAX and ratio <= GREEDY_LS_MAX
        figs.append(f"{r.kernel.name} {slow * 100:+.1f}% at {ratio * 100:.0f}% LS")
    lines.append(
        f"{'PASS' if ok else 'MISS'}  greedy within {GREEDY_SLOWDOWN_MAX * 100:.0f}% of uniform at <= "
        f"{GREEDY_LS_MAX * 100:.0f}% of its LS: {', '.join(figs)}"
    )
    return lines


def main() -> int:
    """Measure and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print markdown tables")
    parser.add_argument("--kernels", help="comma-separated subset of: " + ", ".join(k.name for k in kernels()))
    parser.add_argument("--columns", help="comma-separated subset of: " + ", ".join(CHOICES) +
                        " ('all on' always runs; default: all)")  # fmt: skip
    parser.add_argument("--all-mappings", action="store_true",
                        help="'all on' tries round_robin too for every kernel (default: attention only)")  # fmt: skip
    args = parser.parse_args()
    selected = kernels()
    if args.kernels:
        wanted = args.kernels.split(",")
        unknown = sorted(set(wanted) - {k.name for k in selected})
        if unknown:
            parser.error(f"unknown kernel(s) {unknown}")
        selected = [k for k in selected if k.name in wanted]
    columns = CHOICES
    if args.columns:
        columns = tuple(args.columns.split(","))
        unknown = sorted(set(columns) - set(CHOICES))
        if unknown:
            parser.error(f"unknown column(s) {unknown}")
    rows = measure(selected, args.all_mappings, columns)
    print(format_tables(rows, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())

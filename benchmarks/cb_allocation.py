"""CB IDs and LS bytes per kernel, before and after mtia-cb-allocate shares them between CBs never alive together.

Compiles (no run) each example kernel (examples/*.py, with the kernel, signature and constexprs of its
`# mtia-opt:` header) with the default options and with vector_codegen=False, the kernels of issue 10 that ran
out of CB IDs or LS elsewhere (`fit_rows`), and, with --corpus, every
kernel of the conformance corpus (tests/conformance) at its first drawn launch. Per kernel it prints:

  CBs        the kernel's circular buffers: the CB IDs it needs if every CB has its own (before)
  bytes      their depth x tile bytes summed: the LS it needs if none shares bytes (before)
  IDs        CB IDs the allocation uses: the most CBs alive at once (after); limit MachineConfig.cb_ids
  LS         LS high-water mark of the allocation (after); limit MachineConfig.ls_bytes
  result     "fits", or the first line of the compile error (a kernel refused for CB IDs or LS)

`cb_columns(program)` gives the CBs / IDs / LS figures of a compiled program, for other benchmark tables.

Example: python3 benchmarks/cb_allocation.py [--corpus] [--markdown]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mtia_xdsl.machine.report import CbSummary, cb_report, cb_summary  # noqa: E402

EXAMPLES = ("vector_add", "softmax", "layer_norm", "matmul", "attention", "flash_attention")
VARIANTS: dict[str, dict[str, Any]] = {"default": {}, "vector_codegen=False": {"vector_codegen": False}}


def cb_columns(program: Any) -> CbSummary:
    """The CB figures of a compiled buffer-level program (e.g. `CompiledKernel`'s `.program`)."""
    return cb_summary(cb_report(program))


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    line = text[0] if text else type(e).__name__
    return line.split(": error: ", 1)[-1][:110]


def _measure(build: Any, options: dict[str, Any]) -> tuple[CbSummary | None, str]:
    from mtia_xdsl.pipeline import lower

    try:
        module = build()
    except Exception as e:  # a kernel the frontend refuses is reported, not measured
        return None, f"frontend: {_first_line(e)}"
    try:
        lower(module, options)
    except Exception as e:
        return None, _first_line(e)
    return cb_columns(module), "fits"


def example_rows() -> list[tuple[str, str, CbSummary | None, str]]:
    """(kernel, variant, figures, result) for every example and variant."""
    from mtia_xdsl.frontend.pyfile import module_from_python_file

    rows = []
    for name in EXAMPLES:
        path = str(ROOT / "examples" / f"{name}.py")
        for variant, options in VARIANTS.items():
            figures, result = _measure(lambda p=path: module_from_python_file(p), options)
            rows.append((name, variant, figures, result))
    return rows


def fit_rows() -> list[tuple[str, str, CbSummary | None, str]]:
    """Kernels that ran out of CB IDs or LS elsewhere: FlashAttention at tutorial 06's blocks (HEAD_DIM 64 and
    128, causal and not), a two-pass layer norm over 8 chunks, tl.sort of 512 (tests/transforms/cb_fit_kernels.py)."""
    import mtia_xdsl
    from examples import flash_attention
    from tests.transforms.cb_fit_kernels import layer_norm_8_chunks, sort_rows

    fa_sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32", "Z": "i32", "H": "i32",
              "N_CTX": "i32"}  # fmt: skip
    ln_sig = {"X": "*fp32", "W": "*fp32", "B": "*fp32", "Y": "*fp32", "M": "i32", "eps": "fp32"}
    cases: list[tuple[str, str, Any, dict[str, str], dict[str, Any]]] = [
        (f"flash_attention d{d}", "causal" if stage == 3 else "not causal", flash_attention.attn_fwd, fa_sig,
         {"HEAD_DIM": d, "BLOCK_M": 128, "BLOCK_N": 64, "STAGE": stage})
        for d in (64, 128) for stage in (1, 3)
    ]  # fmt: skip
    cases.append(("layer_norm 8 chunks", "4x4096 rows", layer_norm_8_chunks, ln_sig,
                  {"N": 4096, "BLOCK_M": 4, "CHUNK": 512}))  # fmt: skip
    cases.append(("tl.sort", "512 fp32", sort_rows, {"X": "*fp32", "Y": "*fp32"}, {"N": 512}))
    rows = []
    for name, variant, fn, sig, consts in cases:
        try:
            program = mtia_xdsl.compile(fn, sig, consts).fixed.program  # type: ignore[union-attr]
        except Exception as e:
            rows.append((name, variant, None, _first_line(e)))
            continue
        rows.append((name, variant, cb_columns(program), "fits"))
    return rows


def corpus_rows() -> list[tuple[str, str, CbSummary | None, str]]:
    """(kernel, "default", figures, result) for every conformance corpus kernel (first drawn launch)."""
    sys.path.insert(0, str(ROOT / "tests" / "conformance"))
    import random

    from corpus import all_cases  # type: ignore[import-not-found]
    from runners import build_for  # type: ignore[import-not-found]
    from spec import RandomDraw  # type: ignore[import-not-found]

    rows = []
    for name, case in sorted(all_cases().items()):
        try:
            launch = case.build(RandomDraw(random.Random(0)))
        except Exception as e:
            rows.append((name, "default", None, f"draw: {_first_line(e)}"))
            continue
        figures, result = _measure(lambda c=case, la=launch: build_for(c, la).clone(), {})
        rows.append((name, "default", figures, result))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="store_true", help="also every conformance corpus kernel")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args()
    rows = example_rows() + fit_rows() + (corpus_rows() if args.corpus else [])
    head = ("kernel", "options", "CBs", "bytes", "IDs", "LS", "result")
    sep = " | " if args.markdown else "  "
    fmt = ["{:<28}", "{:<22}", "{:>4}", "{:>9}", "{:>4}", "{:>9}", "{}"]
    lines = [sep.join(f.format(h) for f, h in zip(fmt, head, strict=True))]
    if args.markdown:
        lines = ["| " + lines[0] + " |", "|" + "---|" * len(head)]
    for kernel, variant, s, result in rows:
        cells = (kernel, variant, *(("-",) * 4 if s is None else (s.count, s.total_bytes, s.ids_in_use,
                 s.ls_high_water_bytes)), result)  # fmt: skip
        text = sep.join(f.format(c) for f, c in zip(fmt, cells, strict=True))
        lines.append("| " + text + " |" if args.markdown else text)
    print("\n".join(lines))


if __name__ == "__main__":
    main()

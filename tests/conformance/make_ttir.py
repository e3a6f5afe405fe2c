"""Upstream Triton's TTIR passes (`make_ttir`: inliner, canonicalizer, combine, reorder-broadcast, cse, licm,
symbol-dce, loop-unroll) on a libtriton module: the one copy of the list, used by the TTIR comparison
(ttir_compare.py) and the compile-time benchmark (benchmarks/compile_time.py, in its fresh child processes
too). Imports only libtriton, so a process timing a cold compile imports no mtia_xdsl through it.
"""

from __future__ import annotations

from typing import Any

from triton._C.libtriton import ir, passes


def run_make_ttir(mod: Any) -> None:
    """Run `make_ttir`'s passes on libtriton module `mod` in place."""
    pm = ir.pass_manager(mod.context)
    passes.common.add_inliner(pm)
    passes.common.add_canonicalizer(pm)
    passes.ttir.add_combine(pm)
    passes.ttir.add_reorder_broadcast(pm)
    passes.common.add_cse(pm)
    passes.common.add_licm(pm)
    passes.common.add_symbol_dce(pm)
    passes.ttir.add_loop_unroll(pm)
    pm.run(mod, "make_ttir")

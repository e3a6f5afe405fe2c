"""Kernels an executor other than the model cannot run like the model yet: executor -> name -> reason.

Names are corpus kernels (CORPUS_GAPS) and example launches of examples/launches.py (EXAMPLE_GAPS). The
harness (test_executors.py) marks a listed pair xfail(strict=True), so a fix shows up as XPASS and the entry
must go: the lists only shrink. Print the current state of every pair with `python scripts/executor_matrix.py`.
"""

CORPUS_GAPS: dict[str, dict[str, str]] = {
    "llvm": {},
}

EXAMPLE_GAPS: dict[str, dict[str, str]] = {
    "llvm": {},
}

"""Corpus kernels our compiler or model cannot handle yet: kernel -> check -> (stage, error's first line).

Checks: "ttir" (op for op against libtriton), "tt" (tt reference interpreter), "machine" (kernel[grid] on the
machine model). Stages: frontend, tt-interpreter, lowering, machine. The harness marks each listed check
xfail(strict=True), so a fix shows up as XPASS: then delete the entry (or regenerate this file with
`python3 tests/conformance/refresh_gaps.py`).
"""

GAPS: dict[str, dict[str, tuple[str, str]]] = {}

#!/usr/bin/env bash
# Sets up, then runs the whole test suite: ruff and pyright, the docs build, pytest, then the lit/FileCheck tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PY=${PYTHON:-python3}
# Lint and types first (seconds for ruff; pyright strict over mtia_xdsl/ minus its exclusion list, a few minutes).
"$PY" -m ruff check mtia_xdsl tests benchmarks examples scripts
"$PY" -m ruff format --check mtia_xdsl tests benchmarks examples scripts
"$PY" -m pyright
# Reference docs (mkdocs.yml): README sections, docs/*.md and the public modules' docstrings; warnings are errors.
"$PY" -m mkdocs build --strict  # not --quiet: it hides the warnings that --strict counts
"$PY" -m pytest tests
lit -v tests/filecheck

#!/usr/bin/env bash
# Sets up, then runs the whole test suite: pytest, then the lit/FileCheck tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PY=${PYTHON:-python3}
"$PY" -m pytest tests
lit -v tests/filecheck

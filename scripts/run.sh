#!/usr/bin/env bash
# Sets up, then compiles the example kernels, runs them on the MTIA-2i machine model and prints a report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PY=${PYTHON:-python3}
"$PY" examples/run_all.py "$@"

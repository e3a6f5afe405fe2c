#!/usr/bin/env bash
# Installs everything mtia_xdsl needs on a fresh machine (idempotent).
# torch is installed first, pinned, so pip takes the CPU build that lies on the machine's disk
# instead of resolving a bare `torch` requirement to a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if ! "$PY" -c "import torch, sys; sys.exit(0 if torch.__version__.startswith('2.13.0') else 1)" 2>/dev/null; then
  "$PY" -m pip install -q torch==2.13.0
fi
"$PY" -m pip install -q -e '.[test]'

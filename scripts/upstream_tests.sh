#!/usr/bin/env bash
# Runs upstream Triton's interpreter-marked unit tests from a checkout with mtia_xdsl active, then the
# same tests under Triton's interpreter (TRITON_INTERPRET=1), and prints the counts side by side.
#
# usage: scripts/upstream_tests.sh DIR [pytest arguments...]
#   DIR: the python/ directory of a checkout of Triton's release/3.8.x branch (README, "Upstream tests")
#   e.g. scripts/upstream_tests.sh ~/triton/python --mtia-sample 300
#        scripts/upstream_tests.sh ~/triton/python -k "test_bin_op" test/unit/language/test_core.py
# Test files default to test_core.py, test_standard.py and test_random.py; naming files replaces them.
# MTIA_UPSTREAM_OUT=dir keeps the two JSON outcome files there; MTIA_UPSTREAM_TIMEOUT (s, default 300).
# pytest runs with python -P (Python >= 3.11): DIR is not put on sys.path, so `import triton` is the installed
# triton, not the checkout's python/triton/ sources (which have no compiled libtriton).
set -euo pipefail
DIR=$(cd "${1:?usage: scripts/upstream_tests.sh DIR [pytest arguments...]}" && pwd)
shift
if [ ! -d "$DIR/test/unit" ]; then
  hint=""
  if [ -d "$DIR/python/test/unit" ]; then hint="; did you mean $DIR/python?"; fi
  echo "scripts/upstream_tests.sh: $DIR has no test/unit/ directory: give the python/ directory of a Triton checkout$hint" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
OUT=${MTIA_UPSTREAM_OUT:-$(mktemp -d)}
mkdir -p "$OUT"
FILES=()
ARGS=()
for a in "$@"; do
  if [[ "$a" == *.py || "$a" == *.py::* ]]; then FILES+=("$a"); else ARGS+=("$a"); fi
done
if [ ${#FILES[@]} -eq 0 ]; then
  FILES=(test/unit/language/test_core.py test/unit/language/test_standard.py test/unit/language/test_random.py)
fi
run() {  # $1: outcome file; then environment assignments
  local results=$1
  shift
  (cd "$DIR" && env "$@" PYTHONPATH="$ROOT:$ROOT/scripts${PYTHONPATH:+:$PYTHONPATH}" \
    "$PY" -P -m pytest -p no:cacheprovider -p upstream_plugin --rootdir "$DIR" -q --no-header -rN \
    -m interpreter --device cpu --mtia-timeout "${MTIA_UPSTREAM_TIMEOUT:-300}" --mtia-results "$results" \
    "${FILES[@]}" ${ARGS[@]+"${ARGS[@]}"} | tail -n 3) || true
}
echo "== mtia_xdsl (machine model)"
run "$OUT/mtia_xdsl.json" -u TRITON_INTERPRET
echo "== Triton's interpreter (TRITON_INTERPRET=1)"
run "$OUT/interpreter.json" TRITON_INTERPRET=1
echo
"$PY" "$ROOT/scripts/upstream_compare.py" "$OUT/mtia_xdsl.json" "$OUT/interpreter.json" ${MTIA_UPSTREAM_LIST:+--list}
echo "(outcomes: $OUT)"

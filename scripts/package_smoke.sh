#!/usr/bin/env bash
# Packaging smoke test: `python -m build` makes the wheel and the sdist; each is installed in a fresh venv
# (with --system-site-packages, so torch, xdsl and triton come from this machine instead of a download) and
# compiles and runs one kernel there, from outside the repository, on the machine model (and through the
# C++ executor when a C++ compiler is present, which needs the runtime sources shipped in the package).
# Also checks that the wheel holds py.typed and backend/runtime/*.h, *.cpp.
# usage: bash scripts/package_smoke.sh   (prints one line per check; exit status 1 on any failure)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# --no-isolation: build with this machine's setuptools (no download); the backend is setuptools either way.
"$PY" -m build --no-isolation --outdir "$OUT/dist" . >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
WHEEL=$(ls "$OUT"/dist/*.whl)
SDIST=$(ls "$OUT"/dist/*.tar.gz)
echo "built $(basename "$WHEEL") and $(basename "$SDIST")"
"$PY" - "$WHEEL" "$SDIST" <<'PYEOF'
import sys, tarfile, zipfile
wheel = set(zipfile.ZipFile(sys.argv[1]).namelist())
sdist = {n.split("/", 1)[1] for n in tarfile.open(sys.argv[2]).getnames() if "/" in n}
runtime = sorted(n for n in wheel if n.startswith("mtia_xdsl/backend/runtime/"))
missing = [n for n in ("mtia_xdsl/py.typed", "mtia_xdsl/backend/runtime/mtia_runtime.h") if n not in wheel]
missing += [f"sdist: {n}" for n in runtime + ["mtia_xdsl/py.typed", "pyproject.toml"] if n not in sdist]
if missing or not any(n.endswith(".cpp") for n in runtime):
    sys.exit(f"package contents: missing {missing or 'backend/runtime/*.cpp'}")
print(f"wheel holds py.typed and {len(runtime)} runtime sources: {', '.join(n.rsplit('/', 1)[1] for n in runtime)}")
PYEOF
cat >"$OUT/smoke.py" <<'PYEOF'
import importlib.metadata, sys
import torch, triton, triton.language as tl
import mtia_xdsl
from mtia_xdsl.errors import ExecutorUnavailableError

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

assert mtia_xdsl.__file__.startswith(sys.prefix), f"mtia_xdsl imported from {mtia_xdsl.__file__}, not the venv"
assert importlib.metadata.version("mtia-xdsl") == mtia_xdsl.__version__
x, y = torch.rand(5000), torch.rand(5000)
out = torch.zeros(5000)
kernel = mtia_xdsl.compile(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024})
run = kernel[(5,)](x, y, out, 5000)
assert torch.equal(out, x + y), "wrong result"
line = f"compile + run: correct, {run.report.total_cycles} cycles"
out.zero_()
add_kernel[(5,)](x, y, out, 5000, BLOCK=1024)  # a plain launch: the installed Triton backend `cpu`
assert torch.equal(out, x + y) and mtia_xdsl.last_report() is not None, "plain launch"
line += "; plain kernel[grid] launch: correct"
try:
    out.zero_()
    mtia_xdsl.compile(add_kernel, options={"executor": "cpp"})[(5,)](x, y, out, 5000, 1024)
    assert torch.equal(out, x + y), "wrong C++ result"
    line += "; executor cpp: correct"
except ExecutorUnavailableError as e:
    line += f"; executor cpp: unavailable ({e})"
print(f"{mtia_xdsl.__version__} from {mtia_xdsl.__file__.removeprefix(sys.prefix)}: {line}")
PYEOF
for DIST in "$WHEEL" "$SDIST"; do
  VENV="$OUT/venv-$(basename "$DIST")"
  "$PY" -m venv --system-site-packages "$VENV"
  # Python 3.11's venv brings setuptools 65, which needs the `wheel` package to build the sdist; drop it so
  # the sdist builds with this machine's setuptools (>= 70.1, pyproject's build requirement), offline.
  "$VENV/bin/python" -m pip uninstall -q -y setuptools >/dev/null 2>&1 || true
  "$VENV/bin/python" -m pip install -q --no-build-isolation "$DIST" >"$OUT/pip.log" 2>&1 || { cat "$OUT/pip.log"; exit 1; }
  printf '%s: ' "$(basename "$DIST")"
  (cd "$OUT" && "$VENV/bin/python" smoke.py)
done

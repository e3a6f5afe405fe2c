"""RVV loops of backend/rvv.py, cross-built for rv64gcv and run under qemu-riscv64 with 512-bit vectors.

Skipped only when the toolchain is absent outside CI (in CI, scripts/setup.sh installs it: the test runs).
"""

import os
from pathlib import Path

import numpy as np
import pytest

from mtia_xdsl.backend import riscv, rvv
from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.config import DEFAULT_CHIP, MachineConfig

if not riscv.toolchain_available() and not os.environ.get("CI"):
    pytest.skip(f"RISC-V toolchain absent: {riscv.INSTALL_COMMAND}", allow_module_level=True)


def _body(kernel, signature, constexprs):
    """Return the first SE command of `kernel` compiled for `signature` (the buffer-level program)."""
    import mtia_xdsl

    program = mtia_xdsl.compile(kernel, signature, constexprs).specialize(signature).program
    return next(op for op in program.walk() if isinstance(op, mtia.SeComputeOp))


MAIN = """
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#ifdef __riscv_vector
#include <riscv_vector.h>
#endif
static void body(const float* in0, const float* in1, float* out0, int64_t valid0) {{
#ifdef __riscv_vector
{rvv}
#else
#error "built without the vector extension"
#endif
}}
int main(int argc, char** argv) {{
  (void)argc;
  static float a[{n}], b[{n}], c[{n}];
  FILE* f = fopen(argv[1], "rb");
  if (fread(a, 4, {n}, f) != {n} || fread(b, 4, {n}, f) != {n}) return 2;
  fclose(f);
  for (int k = 0; k < {n}; ++k) c[k] = -1.0f;
  body(a, b, c, {valid});
  f = fopen(argv[2], "wb");
  fwrite(c, 4, {n}, f);
  fclose(f);
  printf("%zu\\n", vsetvlmax_e32m1());
  return 0;
}}
"""


def test_vector_add_body_runs_as_rvv_under_qemu_with_512_bit_vectors(tmp_path: Path) -> None:
    """vector_add's SE body as RVV: the valid lanes get a + b bit for bit, the others stay unwritten, and
    one vector register holds vec_register_bits / 32 f32 lanes."""
    from examples.vector_add import add_kernel

    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"}
    op = _body(add_kernel, sig, {"BLOCK_SIZE": 1024})
    lines = rvv.rvv_body_loop(op, ["in0", "in1"], ["out0"], ["valid0"])
    assert lines is not None
    assert any("vfadd_vv_f32m1" in x for x in lines)
    n, valid = 1024, 1000
    src = tmp_path / "k.cpp"
    src.write_text(MAIN.format(rvv="\n".join(lines), n=n, valid=valid))
    exe = riscv.cross_compile([src], tmp_path / "k").exe
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    (tmp_path / "in.bin").write_bytes(a.tobytes() + b.tobytes())
    done = riscv.run_qemu(exe, [str(tmp_path / "in.bin"), str(tmp_path / "out.bin")])
    c = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.float32)
    np.testing.assert_array_equal(c[:valid], a[:valid] + b[:valid])
    assert (c[valid:] == -1.0).all()
    assert int(done.stdout) == MachineConfig.preset(DEFAULT_CHIP).vec_register_bits // 32

// RUN: printf '# mtia-opt: kernel=k\nimport triton\n@triton.jit\ndef k(X):\n    tl.store(X, 1.0\n' > %t.syntax.py
// RUN: not mtia-opt %t.syntax.py 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not mtia-run %t.syntax.py --grid 1 --arg f32:1 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: printf '# mtia-opt: kernel=k\nimport triton\nraise RuntimeError("boom")\n' > %t.raises.py
// RUN: not mtia-opt %t.raises.py 2>&1 | filecheck %s --check-prefix=RAISES
// RUN: not mtia-run %s --grid 1 --arg f32:1 2>&1 | filecheck %s --check-prefix=TWO
// RUN: not mtia-opt %s -o %t.no-such-dir/out.mlir 2>&1 | filecheck %s --check-prefix=OUT

// A kernel file that does not import (a typo, an exception at import time) is one diagnostic at the
// file's line, not a traceback through mtia-opt.
// SYNTAX:     {{.*}}syntax.py:5:{{[0-9]+}}: error: the file does not import: SyntaxError: '(' was never closed
// SYNTAX-NOT: Traceback
// RAISES:     {{.*}}raises.py:3:1: error: the file does not import: RuntimeError: boom
// RAISES-NOT: Traceback

// A module with several kernels: the error names mtia-run's option, not the Python API's argument.
// An output file that cannot be written is named as such, not as an input that cannot be read.
// OUT:     mtia-opt: cannot write {{.*}}no-such-dir/out.mlir: No such file or directory
// OUT-NOT: cannot read

// TWO: the module has 2 public tt.func ops (a, b); choose one with --kernel NAME
tt.func public @a(%x: !tt.ptr<f32>) {
  tt.return
}
tt.func public @b(%x: !tt.ptr<f32>) {
  tt.return
}

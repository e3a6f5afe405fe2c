// RUN: not mtia-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not mtia-opt %s 2>&1 | filecheck %s --check-prefix=PARSE

// Unknown passes and malformed IR are reported as one diagnostic, not a Python traceback.
// PASS: mtia-opt: Unrecognized passes: ['no-such-pass']; `mtia-opt --help` lists the passes
// PASS-NOT: Traceback
// PARSE: mtia-opt-errors.mlir:{{[0-9]+}}:{{[0-9]+}}
// PARSE: operand expected
// PARSE-NOT: Traceback
%x = arith.addi

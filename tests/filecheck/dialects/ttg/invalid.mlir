// RUN: mtia-opt %s --verify-diagnostics --split-input-file | filecheck %s
// RUN: not mtia-opt < %S/invalid-syntax.mlir.txt 2>&1 | filecheck %s --check-prefix=SYNTAX

"ttg.barrier"() <{addrSpace = 32 : i32}> : () -> ()
// CHECK: addrSpace 32 is not a set of local|global_read|global_write|tensor_*

// SYNTAX: unknown barrier address space 'shared'

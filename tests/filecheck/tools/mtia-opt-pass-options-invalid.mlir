// A pass option the pass does not have, or a value of the wrong type, is a one-line usage error.
// RUN: not mtia-opt %s -p 'mtia-software-pipeline{stages=3}' 2>&1 | filecheck %s --check-prefix=NAME
// RUN: not mtia-opt %s -p 'mtia-software-pipeline{num-stages=abc}' 2>&1 | filecheck %s --check-prefix=TYPE
// RUN: not mtia-opt %s -p 'mtia-vector-codegen{fuse=maybe}' 2>&1 | filecheck %s --check-prefix=BOOL

// NAME: mtia-opt: bad pass option in -p: Provided arguments ["stages"] not found in expected arguments ["num_stages"]
// NAME-NOT: Traceback
// TYPE: mtia-opt: bad pass option in -p: Incompatible types: given ('abc',), expected <class 'int'>
// BOOL: mtia-opt: bad pass option in -p: Incompatible types: given ('maybe',), expected <class 'bool'>
builtin.module {
}

// RUN: mtia-opt %s -p 'mtia-cb-sizing{strategy=best}' --verify-diagnostics | filecheck %s
// RUN: mtia-opt %s -p 'mtia-cb-sizing{max-depth=0}' --verify-diagnostics | filecheck %s --check-prefix=DEPTH
// RUN: mtia-opt %s -p 'mtia-cb-sizing' --verify-diagnostics | filecheck %s --check-prefix=TARGET

// CHECK: mtia-cb-sizing: unknown strategy 'best'; expected one of greedy, uniform
// DEPTH: mtia-cb-sizing: max-depth must be at least 1, got 0
// TARGET: mtia-cb-sizing needs the module attribute mtia.target
builtin.module {
}

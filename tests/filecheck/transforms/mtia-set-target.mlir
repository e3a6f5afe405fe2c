// RUN: mtia-opt %s -p mtia-set-target | filecheck %s
// RUN: mtia-opt %s -p 'mtia-set-target{chip=small_test}' | filecheck %s --check-prefix=SMALL

// CHECK: builtin.module attributes {mtia.target = #mtia.target<"mtia2i">}
// SMALL: builtin.module attributes {mtia.target = #mtia.target<"small_test">}
builtin.module {
}

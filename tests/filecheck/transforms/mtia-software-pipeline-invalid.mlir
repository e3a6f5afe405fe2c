// RUN: mtia-opt %s -p 'mtia-software-pipeline{num-stages=0}' --verify-diagnostics | filecheck %s

// CHECK: mtia-software-pipeline: num-stages must be at least 1 (1 turns pipelining off), got 0
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
}

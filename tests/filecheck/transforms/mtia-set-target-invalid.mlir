// RUN: mtia-opt %s -p 'mtia-set-target{chip=tpu}' --verify-diagnostics | filecheck %s
// RUN: mtia-opt %s -p mtia-cb-bufferize --verify-diagnostics | filecheck %s --check-prefix=MISSING

// CHECK: mtia-set-target: unknown machine preset 'tpu'; known presets: mtia2i, small_test
// MISSING: mtia-cb-bufferize needs the module attribute mtia.target (e.g. #mtia.target<"mtia2i">); run mtia-set-target{chip=mtia2i} first
builtin.module {
}

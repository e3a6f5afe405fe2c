// RUN: mtia-opt %s --split-input-file -p 'mtia-sub-tile{sub-block=24}' --verify-diagnostics | filecheck %s
// RUN: mtia-opt %s --split-input-file -p 'mtia-sub-tile{sub-block=16 form=rolled}' --verify-diagnostics | filecheck %s --check-prefix=FORM

// CHECK: mtia-sub-tile: sub-block=24 is not a power of two
// FORM: mtia-sub-tile: unknown form 'rolled'; expected one of unrolled, loop
builtin.module {
  tt.func public @kernel() {
    tt.return
  }
}

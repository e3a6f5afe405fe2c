// RUN: mtia-opt %s -p 'mtia-sub-tile{sub-block=24}' --verify-diagnostics | filecheck %s

// CHECK: mtia-sub-tile: sub-block=24 is not a power of two
builtin.module {
  tt.func public @kernel() {
    tt.return
  }
}

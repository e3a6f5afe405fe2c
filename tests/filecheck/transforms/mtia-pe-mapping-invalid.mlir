// RUN: mtia-opt %s -p 'mtia-pe-mapping{strategy=diagonal}' --verify-diagnostics | filecheck %s

// CHECK: kernel.py:3:1: error: mtia-pe-mapping: unknown strategy 'diagonal'; expected one of linear, round_robin, zigzag (compile option pe_mapping)
builtin.module {
  tt.func public @kernel() {
    tt.return
  } loc("kernel.py":3:1)
}

// The optimization passes refuse a program at the wrong level instead of silently doing nothing.
// RUN: mtia-opt %s -p 'mtia-software-pipeline' --verify-diagnostics | filecheck %s --check-prefix=PIPE
// RUN: mtia-opt %s -p 'mtia-cb-sizing' --verify-diagnostics | filecheck %s --check-prefix=SIZE
// RUN: mtia-opt %s -p 'mtia-cb-bufferize,mtia-vector-codegen' --verify-diagnostics | filecheck %s --check-prefix=VEC
// RUN: mtia-opt %s -p 'mtia-cb-bufferize,mtia-effective-shape' --verify-diagnostics | filecheck %s --check-prefix=EFF
// RUN: mtia-opt %s -p 'mtia-cb-bufferize,mtia-cb-sizing,mtia-software-pipeline' --verify-diagnostics | filecheck %s --check-prefix=LATE

// RUN: mtia-opt %s -p 'mtia-cb-bufferize,mtia-cb-bufferize' --verify-diagnostics | filecheck %s --check-prefix=TWICE

// TWICE: mtia-cb-bufferize: the module is already bufferized (it allocates CBs)
// PIPE: mtia-software-pipeline works on the buffer-level mtia program: run mtia-cb-bufferize first
// SIZE: mtia-cb-sizing works on the buffer-level mtia program: run mtia-cb-bufferize first
// VEC: mtia-vector-codegen works on the tensor-level mtia program: run it after convert-tt-to-mtia and before mtia-cb-bufferize
// EFF: mtia-effective-shape works on the tensor-level mtia program
// LATE: mtia-software-pipeline must run before mtia-cb-sizing
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @k(%p: !tt.ptr<f32>, %s: i64, %n: i64) {
    %x = mtia.dma_load %p[%s] bounds[%n] : !tt.ptr<f32> -> tensor<64xf32>
    mtia.dma_store %x, %p[%s] bounds[%n] : tensor<64xf32>, !tt.ptr<f32>
    tt.return
  }
}

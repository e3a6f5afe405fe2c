// RUN: not mtia-opt %s 2>&1 | filecheck %s --check-prefix=OPT
// RUN: not mtia-run %s --arg zeros:f32:16 2>&1 | filecheck %s --check-prefix=EXEC

// Invalid ops are reported at their line with the reason (xDSL's own messages name no position), and
// mtia-run checks its input before lowering instead of calling it an internal compiler error.
// OPT: invalid-ir-located.mlir:{{[0-9]+}}: error: invalid tt.dot: 'tt.dot' expected operands to be 2d or 3d tensors
// OPT-NOT: Traceback
// EXEC: mtia-run: {{.*}}invalid-ir-located.mlir:{{[0-9]+}}: error: invalid tt.dot
// EXEC-NOT: internal compiler error
builtin.module {
  tt.func public @k(%x: !tt.ptr<f32>) {
    %r = tt.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %q = tt.addptr %p, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %v = tt.load %q : tensor<16x!tt.ptr<f32>>
    %d = tt.dot %v, %v, %v : tensor<16xf32> * tensor<16xf32> -> tensor<16xf32>
    tt.store %q, %d : tensor<16x!tt.ptr<f32>>
    tt.return
  }
}

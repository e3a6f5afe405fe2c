// RUN: not mtia-run %s --arg f16:64 --arg 4 2>&1 | filecheck %s --check-prefix=DTYPE
// RUN: not mtia-run %s --arg 3 --arg 4 2>&1 | filecheck %s --check-prefix=SCALAR
// RUN: not mtia-run %s --arg f32:abc --arg 4 2>&1 | filecheck %s --check-prefix=SHAPE
// RUN: not mtia-run %s --arg f32:64 2>&1 | filecheck %s --check-prefix=COUNT
// RUN: not mtia-run %s --arg f32:64 --arg 4 --trace /nonexistent/dir/t.json 2>&1 | filecheck %s --check-prefix=TRACE

// DTYPE: mtia-run: --arg #1: parameter 'x' is !tt.ptr<f32> but the tensor is f16
// SCALAR: mtia-run: --arg #1: parameter 'x' is !tt.ptr<f32>; give a tensor such as f32:1024
// SHAPE: mtia-run: error: --arg #1 'f32:abc': shape 'abc' must be sizes >= 0 separated by x, e.g. 64x128
// COUNT: mtia-run: the kernel takes 2 arguments but 1 --arg was given
// TRACE: mtia-run: cannot write the trace: {{.*}}No such file or directory
tt.func public @scale(%x: !tt.ptr<f32>, %n: i32) {
  %v = tt.load %x : !tt.ptr<f32>
  %w = arith.addf %v, %v : f32
  tt.store %x, %w : !tt.ptr<f32>
  tt.return
}

// RUN: not mtia-run %s --arg f32:100 --arg zeros:f32:100 2>&1 | filecheck %s

// An unmasked 128-element load from a 100-element tensor is an error at the kernel line, and
// nothing is written.
// CHECK: mtia-run: oob.py:5:8: error: out-of-bounds f32 access
// CHECK-SAME: 1 element(s) past the end of 'x' (float32[100]); mask the access or fix the offsets
tt.func public @oob(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
  %range = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32> loc("oob.py":4:12)
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>> loc("oob.py":5:8)
  %xp = tt.addptr %xs, %range : tensor<128x!tt.ptr<f32>>, tensor<128xi32> loc("oob.py":5:8)
  %v = tt.load %xp : tensor<128x!tt.ptr<f32>> loc("oob.py":5:8)
  %os = tt.splat %out : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>> loc("oob.py":6:4)
  %op = tt.addptr %os, %range : tensor<128x!tt.ptr<f32>>, tensor<128xi32> loc("oob.py":6:4)
  tt.store %op, %v : tensor<128x!tt.ptr<f32>> loc("oob.py":6:4)
  tt.return
}

// RUN: mtia-run %s --grid 4 --arg arange:f32:4000 --arg ones:f32:4000 --arg zeros:f32:4000 --arg 4000 | filecheck %s
// RUN: mtia-run %s --grid 4 --machine small_test --arg arange:f32:4000 --arg ones:f32:4000 --arg zeros:f32:4000 --arg 4000 | filecheck %s --check-prefix=SMALL
// RUN: mtia-run %s --grid 4 --arg arange:f32:4000 --arg ones:f32:4000 --arg zeros:f32:4000 --arg 4000 --trace %t.json && python3 -c "import json,sys; d=json.load(open('%t.json')); assert any(e.get('ph') == 'X' for e in d['traceEvents'])"

// A tt-level vector add (lowered by mtia-run): the 4 programs cover 4000 = 3 * 1024 + 928 elements,
// the last block masked; out = arange + 1 sums to 4000 * 4001 / 2.
// CHECK: add_kernel on mtia2i (64 PEs at 1.35 GHz)
// CHECK: programs 4 on 4 of 64 PEs
// CHECK: arg 2: sum = 8.002e+06
// SMALL: add_kernel on small_test (4 PEs at
// SMALL: arg 2: sum = 8.002e+06
tt.func public @add_kernel(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %out: !tt.ptr<f32>, %n: i32) {
  %c1024 = arith.constant 1024 : i32
  %pid = tt.get_program_id x : i32
  %start = arith.muli %pid, %c1024 : i32
  %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %s = tt.splat %start : i32 -> tensor<1024xi32>
  %offs = arith.addi %s, %range : tensor<1024xi32>
  %ns = tt.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %xp = tt.addptr %xs, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  %xv = tt.load %xp, %mask : tensor<1024x!tt.ptr<f32>>
  %ys = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %yp = tt.addptr %ys, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  %yv = tt.load %yp, %mask : tensor<1024x!tt.ptr<f32>>
  %sum = arith.addf %xv, %yv : tensor<1024xf32>
  %os = tt.splat %out : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %op = tt.addptr %os, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  tt.store %op, %sum, %mask : tensor<1024x!tt.ptr<f32>>
  tt.return
}

// RUN: mtia-run %s --grid 4 --arg arange:f32:4000 --arg ones:f32:4000 --arg zeros:f32:4000 --arg 4000 | filecheck %s --check-prefix=DEFAULT
// RUN: mtia-run %s --grid 4 --set global_placement=sram --set sram_latency_cycles=1_000 --arg arange:f32:4000 --arg ones:f32:4000 --arg zeros:f32:4000 --arg 4000 | filecheck %s --check-prefix=SET
// RUN: mtia-run %s --grid 4 --machine small_test --set pe_rows=1 --arg arange:f32:4000 --arg ones:f32:4000 --arg zeros:f32:4000 --arg 4000 | filecheck %s --check-prefix=PRESET
// RUN: mtia-run %s --grid 4 --machine small_test --arg arange:f32:4000 --arg ones:f32:4000 --arg zeros:f32:4000 --arg 4000 | filecheck %s --check-prefix=SMALL
// RUN: mtia-run %s --grid 4 --set ls_bytes=8192 --arg arange:f32:4000 --arg ones:f32:4000 --arg zeros:f32:4000 --arg 4000 2>&1 | filecheck %s --check-prefix=SMALL-LS
// RUN: not mtia-run %s --grid 4 --set cb_ids=2 --arg arange:f32:4000 --arg ones:f32:4000 --arg zeros:f32:4000 --arg 4000 2>&1 | filecheck %s --check-prefix=CB-IDS

// `--set FIELD=VALUE` overrides MachineConfig fields of the `--machine` preset; the report names them.
// DEFAULT:     add_kernel on mtia2i (64 PEs at 1.35 GHz), mapping zigzag, tensors in llc
// DEFAULT-NEXT: preset mtia2i, overridden fields: none
// DEFAULT:     arg 2: sum = 8.002e+06
// SET:         add_kernel on mtia2i (64 PEs at 1.35 GHz), mapping zigzag, tensors in sram (SRAM scratch)
// SET-NEXT:    overridden fields: sram_latency_cycles=1000, global_placement='sram'
// SET:         DRAM {{ +}}0 B {{ +}}0 B
// SET:         arg 2: sum = 8.002e+06
// PRESET:      add_kernel on small_test (2 PEs
// PRESET-NEXT: overridden fields: pe_rows=1
// PRESET:      arg 2: sum = 8.002e+06
// SMALL:      add_kernel on small_test (4 PEs
// SMALL-NEXT: preset small_test, overridden fields: none
// SMALL:      arg 2: sum = 8.002e+06
// The lowering sizes CBs for the machine the kernel runs on: a too-small LS is made to fit by sub-tiling, and
// the report says so (before, mtia-run lowered for the preset's LS and the run then overflowed the overridden one).
// SMALL-LS-NOT: local storage overflow
// SMALL-LS:    overridden fields: ls_bytes=8192
// SMALL-LS:    made to fit (the CBs did not fit as written):
// SMALL-LS-NEXT: as written: the CBs need 12,288 B of LS, a PE has 8,192
// SMALL-LS:    applied sub-tiling: 2 sub-tiles of 512 rows
// SMALL-LS:    arg 2: sum = 8.002e+06
// SMALL-LS-NOT: local storage overflow: program
// Too few CB IDs for the elementwise chain: nothing can fit, a one-line error naming the lines of the .mlir file.
// CB-IDS:      mtia-run: {{.*}}mtia-run-set.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 3 circular buffers are alive at once at {{.*}}mtia-run-set.mlir:{{[0-9]+}}:3, but the CP of a PE tracks 2 CB IDs
// CB-IDS:      tried, in order:
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

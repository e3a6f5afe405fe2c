// RUN: not mtia-run %s --grid x --arg f32:64 --arg 4 2>&1 | filecheck %s --check-prefix=GRID
// RUN: not mtia-run %s --grid 4,x --arg f32:64 --arg 4 2>&1 | filecheck %s --check-prefix=GRID-COMMA
// RUN: not mtia-run %s --arg f32:-3 --arg 4 2>&1 | filecheck %s --check-prefix=SHAPE
// RUN: not mtia-opt %t.does-not-exist.py 2>&1 | filecheck %s --check-prefix=MISSING

// Bad command-line values are one argparse-style line naming the option and the expected form, not a traceback.
// GRID:       mtia-run: error: --grid 'x': expected 1 to 3 program counts >= 1 joined by x, e.g. 4 or 4x2
// GRID-NOT:   Traceback
// GRID-COMMA: mtia-run: error: --grid '4,x': expected 1 to 3 program counts >= 1 joined by x
// SHAPE:      mtia-run: error: --arg #1 'f32:-3': shape '-3' must be sizes >= 0 separated by x, e.g. 64x128
// SHAPE-NOT:  Traceback
// MISSING:    mtia-opt: cannot read {{.*}}does-not-exist.py: No such file or directory
// MISSING-NOT: Traceback
tt.func public @scale(%x: !tt.ptr<f32>, %n: i32) {
  %v = tt.load %x : !tt.ptr<f32>
  %w = arith.addf %v, %v : f32
  tt.store %x, %w : !tt.ptr<f32>
  tt.return
}

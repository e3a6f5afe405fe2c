// RUN: not mtia-run %s --grid x --arg f32:64 --arg 4 2>&1 | filecheck %s --check-prefix=GRID
// RUN: not mtia-run %s --grid 4,x --arg f32:64 --arg 4 2>&1 | filecheck %s --check-prefix=GRID-COMMA
// RUN: not mtia-run %s --arg f32:-3 --arg 4 2>&1 | filecheck %s --check-prefix=SHAPE
// RUN: not mtia-opt %t.does-not-exist.py 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not mtia-run %t.does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=RUN-MISSING
// RUN: not mtia-run %t.does-not-exist.cpp --grid 1 2>&1 | filecheck %s --check-prefix=RUN-MISSING
// RUN: not mtia-run %s --pe-subgrid x --arg f32:64 --arg 4 2>&1 | filecheck %s --check-prefix=SUBGRID
// RUN: echo '# not a kernel' > %t.txt && not mtia-run %t.txt 2>&1 | filecheck %s --check-prefix=NOT-MLIR
// RUN: echo '# not a kernel' > %t.mlir && not mtia-run %t.mlir 2>&1 | filecheck %s --check-prefix=BAD-MLIR

// Bad command-line values are one argparse-style line naming the option and the expected form, not a traceback.
// GRID:       mtia-run: error: --grid 'x': expected 1 to 3 program counts >= 1 joined by x, e.g. 4 or 4x2
// GRID-NOT:   Traceback
// GRID-COMMA: mtia-run: error: --grid '4,x': expected 1 to 3 program counts >= 1 joined by x
// SHAPE:      mtia-run: error: --arg #1 'f32:-3': shape '-3' must be sizes >= 0 separated by x, e.g. 64x128
// SHAPE-NOT:  Traceback
// MISSING:    mtia-opt: cannot read {{.*}}does-not-exist.py: No such file or directory
// MISSING-NOT: Traceback
// RUN-MISSING:    mtia-run: cannot read {{.*}}does-not-exist.{{mlir|cpp}}: No such file or directory
// RUN-MISSING-NOT: Errno
// SUBGRID:    mtia-run: error: --pe-subgrid 'x': expected BASE,WIDTH,HEIGHT (the first PE and the rectangle's width and height in PEs), e.g. 18,4,2
// SUBGRID-NOT: int()

// A file that is neither a Triton .py nor MLIR: one line naming it and what mtia-run takes; xDSL's parse
// error keeps its position and gets its placeholder filled.
// NOT-MLIR:   mtia-run: {{.*}}.txt:1:1: error: not an MLIR module (Expected suffix identifier after '#'); give a Triton kernel .py with a '# mtia-opt:' comment, or an .mlir file such as `mtia-opt kernel.py -p tt-inline -o kernel.mlir` writes
// BAD-MLIR:   Expected suffix identifier after '#'
// BAD-MLIR-NOT: {first_char}
tt.func public @scale(%x: !tt.ptr<f32>, %n: i32) {
  %v = tt.load %x : !tt.ptr<f32>
  %w = arith.addf %v, %v : f32
  tt.store %x, %w : !tt.ptr<f32>
  tt.return
}

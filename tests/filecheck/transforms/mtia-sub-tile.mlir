// RUN: mtia-opt %s --split-input-file -p 'mtia-sub-tile{sub-block=16}' | filecheck %s
// RUN: mtia-opt %s --split-input-file -p 'mtia-sub-tile{sub-block=0}' | filecheck %s --check-prefix=OFF
// RUN: mtia-opt %s --split-input-file -p 'mtia-sub-tile{sub-block=16 form=loop}' | filecheck %s --check-prefix=LOOP

// Rows pid * 32 + [0, 32) of a row-wise loop: the row values split into 2 sub-tiles of 16 rows, each
// with its own carried accumulator; the column load of each iteration (no row dimension) stays one load
// shared by both sub-tiles; the rows' load, the row max and the store are made per sub-tile, sub-tile 0's
// before sub-tile 1's.
// CHECK-LABEL: tt.func public @rows
// CHECK-SAME:    mtia.sub_tiles = "2 x 16 of the 32 rows at
// CHECK-DAG:     tt.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
// CHECK-DAG:     tt.make_range {start = 16 : i32, end = 32 : i32} : tensor<16xi32>
// CHECK:         scf.for {{.*}} iter_args(%[[A0:[^ ]*]] = %{{[^,]*}}, %[[A1:[^ ]*]] = %{{[^)]*}}) -> (tensor<16x8xf32>, tensor<16x8xf32>)
// CHECK:           %[[COL:.*]] = tt.load %{{.*}} : tensor<1x8x!tt.ptr<f32>>
// CHECK-NOT:       tt.load %{{.*}} : tensor<1x8x!tt.ptr<f32>>
// CHECK:           tt.load %{{.*}} : tensor<16x8x!tt.ptr<f32>>
// CHECK:           tt.broadcast %[[COL]] : tensor<1x8xf32> -> tensor<16x8xf32>
// CHECK:           arith.addf %[[A0]]
// CHECK:           tt.load %{{.*}} : tensor<16x8x!tt.ptr<f32>>
// CHECK:           tt.broadcast %[[COL]] : tensor<1x8xf32> -> tensor<16x8xf32>
// CHECK:           arith.addf %[[A1]]
// CHECK:           scf.yield %{{.*}}, %{{.*}} : tensor<16x8xf32>, tensor<16x8xf32>
// CHECK:         "tt.reduce"(%{{.*}}) <{axis = 1 : i32}>
// CHECK:         tt.store %{{.*}} : tensor<16x!tt.ptr<f32>>
// CHECK:         "tt.reduce"(%{{.*}}) <{axis = 1 : i32}>
// CHECK:         tt.store %{{.*}} : tensor<16x!tt.ptr<f32>>
// The loop form: one scf.for over the 2 sub-tiles around the rows' work, every row value at 16 rows, the
// rows' range offset by s * 16; the column load stays in the inner loop (once per sub-tile).
// LOOP-LABEL: tt.func public @rows
// LOOP-SAME:    mtia.sub_tiles = "2 x 16 of the 32 rows at {{.*}}, loop"
// LOOP:         arith.constant 2 : i32
// LOOP:         %[[SIXTEEN:[0-9a-z_]+]] = arith.constant 16 : i32
// LOOP:         scf.for %[[IV:[0-9a-z_]+]] = %{{[0-9a-z_]+}} to %{{[0-9a-z_]+}} step
// LOOP:           %[[SHIFT:[0-9a-z_]+]] = arith.muli %[[IV]], %[[SIXTEEN]] : i32
// LOOP:           %[[R:[0-9a-z_]+]] = tt.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
// LOOP:           %[[SH:[0-9a-z_]+]] = tt.splat %[[SHIFT]] : i32 -> tensor<16xi32>
// LOOP:           arith.addi %[[R]], %[[SH]] : tensor<16xi32>
// LOOP:           scf.for {{.*}} -> (tensor<16x8xf32>)
// LOOP:             tt.load %{{.*}} : tensor<1x8x!tt.ptr<f32>>
// LOOP:             tt.load %{{.*}} : tensor<16x8x!tt.ptr<f32>>
// LOOP:           tt.store %{{.*}} : tensor<16x!tt.ptr<f32>>
// LOOP-NOT:       tt.store
// LOOP:         tt.return
// OFF-LABEL: tt.func public @rows
// OFF-NOT:     mtia.sub_tiles
// OFF:         tensor<32x8xf32>
builtin.module {
  tt.func public @rows(%x: !tt.ptr<f32>, %c: !tt.ptr<f32>, %out: !tt.ptr<f32>, %n: i32) {
    %zero = arith.constant dense<0.000000e+00> : tensor<32x8xf32>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %pid = tt.get_program_id x : i32
    %base = arith.muli %pid, %c32 : i32
    %r = tt.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
    %bs = tt.splat %base : i32 -> tensor<32xi32>
    %rows = arith.addi %bs, %r : tensor<32xi32>
    %rows2 = tt.expand_dims %rows {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
    %cols = tt.make_range {start = 0 : i32, end = 8 : i32} : tensor<8xi32>
    %cols2 = tt.expand_dims %cols {axis = 0 : i32} : tensor<8xi32> -> tensor<1x8xi32>
    %cp = tt.splat %c : !tt.ptr<f32> -> tensor<1x8x!tt.ptr<f32>>
    %cptr = tt.addptr %cp, %cols2 : tensor<1x8x!tt.ptr<f32>>, tensor<1x8xi32>
    %rb = tt.broadcast %rows2 : tensor<32x1xi32> -> tensor<32x8xi32>
    %cb = tt.broadcast %cols2 : tensor<1x8xi32> -> tensor<32x8xi32>
    %off = arith.addi %rb, %cb : tensor<32x8xi32>
    %xp = tt.splat %x : !tt.ptr<f32> -> tensor<32x8x!tt.ptr<f32>>
    %xptr = tt.addptr %xp, %off : tensor<32x8x!tt.ptr<f32>>, tensor<32x8xi32>
    %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero) -> (tensor<32x8xf32>) : i32 {
      %col = tt.load %cptr : tensor<1x8x!tt.ptr<f32>>
      %v = tt.load %xptr : tensor<32x8x!tt.ptr<f32>>
      %colb = tt.broadcast %col : tensor<1x8xf32> -> tensor<32x8xf32>
      %p = arith.mulf %v, %colb : tensor<32x8xf32>
      %s = arith.addf %a, %p : tensor<32x8xf32>
      scf.yield %s : tensor<32x8xf32>
    }
    %m = "tt.reduce"(%acc) <{axis = 1 : i32}> ({
    ^bb0(%l: f32, %rr: f32):
      %mx = arith.maxnumf %l, %rr : f32
      tt.reduce.return %mx : f32
    }) : (tensor<32x8xf32>) -> tensor<32xf32>
    %op = tt.splat %out : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
    %optr = tt.addptr %op, %rows : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
    tt.store %optr, %m : tensor<32x!tt.ptr<f32>>
    tt.return
  }
}

// -----

// A dot whose rows are the program's rows splits (its B operand is shared); one that contracts over
// them would not (next case).
// CHECK-LABEL: tt.func public @dot_rows
// CHECK-SAME:    mtia.sub_tiles
// CHECK:         tt.dot %{{.*}}, %[[B:.*]], %{{.*}} : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
// CHECK:         tt.dot %{{.*}}, %[[B]], %{{.*}} : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
builtin.module {
  tt.func public @dot_rows(%a: !tt.ptr<f16>, %b: tensor<16x16xf16>, %out: !tt.ptr<f32>) {
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<32x16xf32>
    %pid = tt.get_program_id x : i32
    %base = arith.muli %pid, %c32 : i32
    %r = tt.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
    %bs = tt.splat %base : i32 -> tensor<32xi32>
    %rows = arith.addi %bs, %r : tensor<32xi32>
    %rows2 = tt.expand_dims %rows {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
    %rb = tt.broadcast %rows2 : tensor<32x1xi32> -> tensor<32x16xi32>
    %ap = tt.splat %a : !tt.ptr<f16> -> tensor<32x16x!tt.ptr<f16>>
    %aptr = tt.addptr %ap, %rb : tensor<32x16x!tt.ptr<f16>>, tensor<32x16xi32>
    %av = tt.load %aptr : tensor<32x16x!tt.ptr<f16>>
    %d = tt.dot %av, %b, %zero, inputPrecision = ieee : tensor<32x16xf16> * tensor<16x16xf16> -> tensor<32x16xf32>
    %op = tt.splat %out : !tt.ptr<f32> -> tensor<32x16x!tt.ptr<f32>>
    %optr = tt.addptr %op, %rb : tensor<32x16x!tt.ptr<f32>>, tensor<32x16xi32>
    tt.store %optr, %d : tensor<32x16x!tt.ptr<f32>>
    tt.return
  }
}

// -----

// Not split: the rows are summed (a reduction across the split dimension); the kernel is unchanged.
// CHECK-LABEL: tt.func public @row_sum
// CHECK-NOT:     mtia.sub_tiles
// CHECK:         tt.load %{{.*}} : tensor<32x!tt.ptr<f32>>
// CHECK:         "tt.reduce"(%{{.*}}) <{axis = 0 : i32}>
builtin.module {
  tt.func public @row_sum(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %c32 = arith.constant 32 : i32
    %pid = tt.get_program_id x : i32
    %base = arith.muli %pid, %c32 : i32
    %r = tt.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
    %bs = tt.splat %base : i32 -> tensor<32xi32>
    %rows = arith.addi %bs, %r : tensor<32xi32>
    %xp = tt.splat %x : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
    %xptr = tt.addptr %xp, %rows : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
    %v = tt.load %xptr : tensor<32x!tt.ptr<f32>>
    %s = "tt.reduce"(%v) <{axis = 0 : i32}> ({
    ^bb0(%l: f32, %rr: f32):
      %t = arith.addf %l, %rr : f32
      tt.reduce.return %t : f32
    }) : (tensor<32xf32>) -> f32
    tt.store %out, %s : !tt.ptr<f32>
    tt.return
  }
}

// -----

// Not split: a dot contracts over the program's rows (x^T x).
// CHECK-LABEL: tt.func public @contract_rows
// CHECK-NOT:     mtia.sub_tiles
// CHECK:         tt.dot {{.*}} : tensor<16x32xf16> * tensor<32x16xf16> -> tensor<16x16xf32>
builtin.module {
  tt.func public @contract_rows(%a: !tt.ptr<f16>, %out: tensor<16x16xf32>) {
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
    %pid = tt.get_program_id x : i32
    %base = arith.muli %pid, %c32 : i32
    %r = tt.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
    %bs = tt.splat %base : i32 -> tensor<32xi32>
    %rows = arith.addi %bs, %r : tensor<32xi32>
    %rows2 = tt.expand_dims %rows {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
    %rb = tt.broadcast %rows2 : tensor<32x1xi32> -> tensor<32x16xi32>
    %ap = tt.splat %a : !tt.ptr<f16> -> tensor<32x16x!tt.ptr<f16>>
    %aptr = tt.addptr %ap, %rb : tensor<32x16x!tt.ptr<f16>>, tensor<32x16xi32>
    %av = tt.load %aptr : tensor<32x16x!tt.ptr<f16>>
    %at = tt.trans %av {order = array<i32: 1, 0>} : tensor<32x16xf16> -> tensor<16x32xf16>
    %d = tt.dot %at, %av, %zero, inputPrecision = ieee : tensor<16x32xf16> * tensor<32x16xf16> -> tensor<16x16xf32>
    tt.return
  }
}

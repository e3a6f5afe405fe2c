// RUN: mtia-opt %s -p test-mtia-memory-access | filecheck %s

// CHECK-LABEL: tt.func public @accesses
tt.func public @accesses(%x: !tt.ptr<f32>, %stride: i32, %m: i32, %n: i32) {
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %rows = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %st = tt.splat %stride : i32 -> tensor<16x1xi32>
  %rowoff = arith.muli %rows, %st : tensor<16x1xi32>
  %cols = tt.expand_dims %r {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %rb = tt.broadcast %rowoff : tensor<16x1xi32> -> tensor<16x16xi32>
  %cb = tt.broadcast %cols : tensor<1x16xi32> -> tensor<16x16xi32>
  %offs = arith.addi %rb, %cb : tensor<16x16xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %ptrs = tt.addptr %xs, %offs : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  %ms = tt.splat %m : i32 -> tensor<16x1xi32>
  %mrow = arith.cmpi slt, %rows, %ms : tensor<16x1xi32>
  %ns = tt.splat %n : i32 -> tensor<1x16xi32>
  %mcol = arith.cmpi slt, %cols, %ns : tensor<1x16xi32>
  %mrb = tt.broadcast %mrow : tensor<16x1xi1> -> tensor<16x16xi1>
  %mcb = tt.broadcast %mcol : tensor<1x16xi1> -> tensor<16x16xi1>
  %mask = arith.andi %mrb, %mcb : tensor<16x16xi1>
  // A 2-d tile with a row stride and a box mask: one DMA, bounds = effective shape.
  // CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+0 strides=[%stride, 1] bounds=[%m, %n] shape=[16, 16]"}
  %v = tt.load %ptrs, %mask : tensor<16x16x!tt.ptr<f32>>
  // Unmasked: the bounds are the block shape.
  // CHECK: tt.store {{.*}} {mtia.access = "dma base=%x+0 strides=[%stride, 1] bounds=[16, 16] shape=[16, 16]"}
  tt.store %ptrs, %v : tensor<16x16x!tt.ptr<f32>>
  // The same tile through its transpose-like broadcast of rows only: a mask that is not a prefix.
  %gt = arith.cmpi sgt, %offs, %offs : tensor<16x16xi32>
  // CHECK: tt.load {{.*}} {mtia.access = "scalar: mask is not a box"}
  %w = tt.load %ptrs, %gt : tensor<16x16x!tt.ptr<f32>>
  // Offsets squared are not affine.
  %sq = arith.muli %offs, %offs : tensor<16x16xi32>
  %qp = tt.addptr %xs, %sq : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  // CHECK: tt.load {{.*}} {mtia.access = "scalar: pointer is not an affine block"}
  %q = tt.load %qp : tensor<16x16x!tt.ptr<f32>>
  // A scalar pointer is a scalar-core access.
  // CHECK: tt.load {{.*}} {mtia.access = "scalar: scalar pointer"}
  %s = tt.load %x : !tt.ptr<f32>
  tt.return
}

// Unnamed values are shown by the names the printer gives them.
// CHECK-LABEL: tt.func public @unnamed
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%arg0+%[[START:[0-9]+]] strides=[1] bounds=[(%arg1 - %[[START]])] shape=[64]"}
tt.func public @unnamed(%arg0: !tt.ptr<f32>, %arg1: i32) {
  %0 = tt.get_program_id x : i32
  %1 = arith.constant 64 : i32
  %2 = arith.muli %0, %1 : i32
  %3 = tt.splat %2 : i32 -> tensor<64xi32>
  %4 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %5 = arith.addi %3, %4 : tensor<64xi32>
  %6 = tt.splat %arg1 : i32 -> tensor<64xi32>
  %7 = arith.cmpi slt, %5, %6 : tensor<64xi32>
  %8 = tt.splat %arg0 : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %9 = tt.addptr %8, %5 : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %10 = tt.load %9, %7 : tensor<64x!tt.ptr<f32>>
  tt.return
}

// Lower bounds: `i + lo >= 0` and `0 <= i + lo` (sge and sle) skip leading lanes: one DMA with starts,
// the larger start where a dimension has two; broadcasting the mask along a new dimension keeps them.
// CHECK-LABEL: tt.func public @lower_bounds
tt.func public @lower_bounds(%x: !tt.ptr<f32>, %lo: i32, %lo2: i32, %n: i32) {
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %los = tt.splat %lo : i32 -> tensor<16xi32>
  %idx = arith.addi %los, %r : tensor<16xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %ptrs = tt.addptr %xs, %idx : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
  %zero = arith.constant dense<0> : tensor<16xi32>
  %ns = tt.splat %n : i32 -> tensor<16xi32>
  %up = arith.cmpi slt, %idx, %ns : tensor<16xi32>
  %ge = arith.cmpi sge, %idx, %zero : tensor<16xi32>
  %le = arith.cmpi sle, %zero, %idx : tensor<16xi32>
  %lo2s = tt.splat %lo2 : i32 -> tensor<16xi32>
  %ge2 = arith.cmpi sge, %r, %lo2s : tensor<16xi32>
  %m1 = arith.andi %up, %ge : tensor<16xi1>
  // CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+%lo strides=[1] bounds=[(%n - %lo)] shape=[16] starts=[-(%lo)]"}
  %a = tt.load %ptrs, %m1 : tensor<16x!tt.ptr<f32>>
  %m2 = arith.andi %le, %ge2 : tensor<16xi1>
  // CHECK: tt.store {{.*}} {mtia.access = "dma base=%x+%lo strides=[1] bounds=[16] shape=[16] starts=[max(-(%lo), %lo2)]"}
  tt.store %ptrs, %a, %m2 : tensor<16x!tt.ptr<f32>>
  %row = tt.expand_dims %ge {axis = 0 : i32} : tensor<16xi1> -> tensor<1x16xi1>
  %bm = tt.broadcast %row : tensor<1x16xi1> -> tensor<8x16xi1>
  %cbase = tt.expand_dims %ptrs {axis = 0 : i32} : tensor<16x!tt.ptr<f32>> -> tensor<1x16x!tt.ptr<f32>>
  %bp = tt.broadcast %cbase : tensor<1x16x!tt.ptr<f32>> -> tensor<8x16x!tt.ptr<f32>>
  // CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+%lo strides=[0, 1] bounds=[8, 16] shape=[8, 16] starts=[0, -(%lo)]"}
  %c = tt.load %bp, %bm : tensor<8x16x!tt.ptr<f32>>
  tt.return
}

// Inductor's decomposition of a flat index into (x0, x1) = (xindex % 64, xindex // 64): with XBLOCK = 16
// and xoffset = pid * 16, a block stays inside one row of 64, so both are affine and the load is a DMA.
// CHECK-LABEL: tt.func public @flat_index_decomposition
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+((%off % 64) + ((%off // 64) * 128)) strides=[1] bounds=[16] shape=[16]"}
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%b+(%off % 64) strides=[1] bounds=[16] shape=[16]"}
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%c+(%off // 64) strides=[0] bounds=[16] shape=[16]"}
tt.func public @flat_index_decomposition(%x: !tt.ptr<f32>, %b: !tt.ptr<f32>, %c: !tt.ptr<f32>) {
  %pid = tt.get_program_id x : i32
  %c16 = arith.constant 16 : i32
  %off = arith.muli %pid, %c16 : i32
  %offs = tt.splat %off : i32 -> tensor<16xi32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %xindex = arith.addi %offs, %r : tensor<16xi32>
  %c64 = arith.constant dense<64> : tensor<16xi32>
  %c128 = arith.constant dense<128> : tensor<16xi32>
  %x0 = arith.remsi %xindex, %c64 : tensor<16xi32>
  %x1 = arith.divsi %xindex, %c64 : tensor<16xi32>
  %row = arith.muli %x1, %c128 : tensor<16xi32>
  %idx = arith.addi %x0, %row : tensor<16xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %p = tt.addptr %xs, %idx : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
  %v = tt.load %p : tensor<16x!tt.ptr<f32>>
  // a broadcast bias indexed by x0, and a per-row scale indexed by x1 (stride 0: one element, broadcast)
  %bs = tt.splat %b : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %pb = tt.addptr %bs, %x0 : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
  %vb = tt.load %pb : tensor<16x!tt.ptr<f32>>
  %cs = tt.splat %c : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %pc = tt.addptr %cs, %x1 : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
  %vc = tt.load %pc : tensor<16x!tt.ptr<f32>>
  tt.return
}

// A block of 128 at an aligned offset (pid * 128) spans two whole rows of 64: `x0 = xindex % 64` and
// `x1 = xindex // 64` are the digits of a 2x64 box (the tensor is its reshape, view=[128]). The row mask
// `xindex < 768` becomes a bound on the rows, as 768 - pid * 128 is a multiple of 64. A row bias
// indexed by x0 is the same row twice (stride 0); the flat store stays a plain block.
// CHECK-LABEL: tt.func public @flat_index_rows
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+((%off // 64) * 128) strides=[128, 1] bounds=[((768 - %off) // 64), 64] shape=[2, 64] view=[128]"}
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%b+0 strides=[0, 1] bounds=[((768 - %off) // 64), 64] shape=[2, 64] view=[128]"}
// CHECK: tt.store {{.*}} {mtia.access = "dma base=%x+%off strides=[1] bounds=[(768 - %off)] shape=[128]"}
tt.func public @flat_index_rows(%x: !tt.ptr<f32>, %b: !tt.ptr<f32>) {
  %pid = tt.get_program_id x : i32
  %c128 = arith.constant 128 : i32
  %off = arith.muli %pid, %c128 : i32
  %offs = tt.splat %off : i32 -> tensor<128xi32>
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %xindex = arith.addi %offs, %r : tensor<128xi32>
  %n = arith.constant dense<768> : tensor<128xi32>
  %mask = arith.cmpi slt, %xindex, %n : tensor<128xi32>
  %c64 = arith.constant dense<64> : tensor<128xi32>
  %s128 = arith.constant dense<128> : tensor<128xi32>
  %x0 = arith.remsi %xindex, %c64 : tensor<128xi32>
  %x1 = arith.divsi %xindex, %c64 : tensor<128xi32>
  %row = arith.muli %x1, %s128 : tensor<128xi32>
  %idx = arith.addi %x0, %row : tensor<128xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %p = tt.addptr %xs, %idx : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %v = tt.load %p, %mask : tensor<128x!tt.ptr<f32>>
  %bs = tt.splat %b : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %pb = tt.addptr %bs, %x0 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %vb = tt.load %pb, %mask : tensor<128x!tt.ptr<f32>>
  %pf = tt.addptr %xs, %xindex : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  tt.store %pf, %v, %mask : tensor<128x!tt.ptr<f32>>
  tt.return
}

// Three digits: `x0 = xindex % 8`, `x1 = (xindex // 8) % 4`, `x2 = xindex // 32` of a block of 64 read a
// permuted view (x1 is the outer stride): a 2x4x8 box. `x0 + 8 * x1 + 32 * x2` folds back to the flat index.
// CHECK-LABEL: tt.func public @flat_index_three_digits
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+((%off // 32) * 32) strides=[32, 1024, 1] bounds=[2, 4, 8] shape=[2, 4, 8] view=[64]"}
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+((%off // 32) * 32) strides=[1] bounds=[64] shape=[64]"}
tt.func public @flat_index_three_digits(%x: !tt.ptr<f32>) {
  %pid = tt.get_program_id x : i32
  %c64 = arith.constant 64 : i32
  %off = arith.muli %pid, %c64 : i32
  %offs = tt.splat %off : i32 -> tensor<64xi32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %xindex = arith.addi %offs, %r : tensor<64xi32>
  %c8 = arith.constant dense<8> : tensor<64xi32>
  %c4 = arith.constant dense<4> : tensor<64xi32>
  %c32 = arith.constant dense<32> : tensor<64xi32>
  %c1024 = arith.constant dense<1024> : tensor<64xi32>
  %x0 = arith.remsi %xindex, %c8 : tensor<64xi32>
  %q = arith.divsi %xindex, %c8 : tensor<64xi32>
  %x1 = arith.remsi %q, %c4 : tensor<64xi32>
  %x2 = arith.divsi %xindex, %c32 : tensor<64xi32>
  %t1 = arith.muli %x1, %c1024 : tensor<64xi32>
  %t2 = arith.muli %x2, %c32 : tensor<64xi32>
  %a = arith.addi %x0, %t1 : tensor<64xi32>
  %idx = arith.addi %a, %t2 : tensor<64xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %p = tt.addptr %xs, %idx : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %v = tt.load %p : tensor<64x!tt.ptr<f32>>
  %u1 = arith.muli %x1, %c8 : tensor<64xi32>
  %b = arith.addi %x0, %u1 : tensor<64xi32>
  %flat = arith.addi %b, %t2 : tensor<64xi32>
  %pf = tt.addptr %xs, %flat : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %w = tt.load %pf : tensor<64x!tt.ptr<f32>>
  tt.return
}

// Not provably whole rows: an offset pid * 96 is not a multiple of 64 (the block starts inside a row): a
// wrapped box of the rows the block touches (at most 3: it starts at most 64 - 32 into its first row), sliced
// from the block's start; a mask bound %n (divisibility 16) may end inside a row.
// CHECK-LABEL: tt.func public @flat_index_not_rows
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+0 strides=[0, 1] bounds=[(((%off % 64) + 191) // 64), 64] shape=[3, 64] view=[128] window=(%off % 64)"}
// CHECK: tt.load {{.*}} {mtia.access = "scalar: mask bound ends inside a row of a flat index split across rows"}
tt.func public @flat_index_not_rows(%x: !tt.ptr<f32>, %n: i32 {tt.divisibility = 16 : i32}) {
  %pid = tt.get_program_id x : i32
  %c96 = arith.constant 96 : i32
  %off = arith.muli %pid, %c96 : i32
  %offs = tt.splat %off : i32 -> tensor<128xi32>
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %xindex = arith.addi %offs, %r : tensor<128xi32>
  %c64 = arith.constant dense<64> : tensor<128xi32>
  %x0 = arith.remsi %xindex, %c64 : tensor<128xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %p = tt.addptr %xs, %x0 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %v = tt.load %p : tensor<128x!tt.ptr<f32>>
  %c128 = arith.constant 128 : i32
  %off2 = arith.muli %pid, %c128 : i32
  %offs2 = tt.splat %off2 : i32 -> tensor<128xi32>
  %xindex2 = arith.addi %offs2, %r : tensor<128xi32>
  %ns = tt.splat %n : i32 -> tensor<128xi32>
  %mask = arith.cmpi slt, %xindex2, %ns : tensor<128xi32>
  %y0 = arith.remsi %xindex2, %c64 : tensor<128xi32>
  %p2 = tt.addptr %xs, %y0 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %w = tt.load %p2, %mask : tensor<128x!tt.ptr<f32>>
  tt.return
}

// Inductor's GEMM template: `rm % M` under tl.multiple_of / tl.max_contiguous hints. M is not known to be a
// multiple of 32, so the hint is taken at its word up to the wrap point: the rows past M - rm0 % M read 0.
// A store through the same index would write the wrapped rows: it stays on the scalar core.
// CHECK-LABEL: tt.func public @gemm_rows_mod_m
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%a+((%rm0 % %m) * %lda) strides=[%lda, 1] bounds=[(%m - (%rm0 % %m)), 16] shape=[32, 16]"}
// CHECK: tt.store {{.*}} {mtia.access = "scalar: store through an index that may wrap around"}
tt.func public @gemm_rows_mod_m(%a: !tt.ptr<f32>, %m: i32 {tt.divisibility = 16 : i32}, %lda: i32) {
  %pid = tt.get_program_id x : i32
  %c32 = arith.constant 32 : i32
  %rm0 = arith.muli %pid, %c32 : i32
  %rms = tt.splat %rm0 : i32 -> tensor<32xi32>
  %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %rm = arith.addi %rms, %r : tensor<32xi32>
  %ms = tt.splat %m : i32 -> tensor<32xi32>
  %ram = arith.remsi %rm, %ms {tt.divisibility = dense<32> : tensor<1xi32>, tt.contiguity = dense<32> : tensor<1xi32>} : tensor<32xi32>
  %rows = tt.expand_dims %ram {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %ldas = tt.splat %lda : i32 -> tensor<32x1xi32>
  %rowoff = arith.muli %rows, %ldas : tensor<32x1xi32>
  %k = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %cols = tt.expand_dims %k {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %rb = tt.broadcast %rowoff : tensor<32x1xi32> -> tensor<32x16xi32>
  %cb = tt.broadcast %cols : tensor<1x16xi32> -> tensor<32x16xi32>
  %offs = arith.addi %rb, %cb : tensor<32x16xi32>
  %as = tt.splat %a : !tt.ptr<f32> -> tensor<32x16x!tt.ptr<f32>>
  %p = tt.addptr %as, %offs : tensor<32x16x!tt.ptr<f32>>, tensor<32x16xi32>
  %v = tt.load %p : tensor<32x16x!tt.ptr<f32>>
  tt.store %p, %v : tensor<32x16x!tt.ptr<f32>>
  tt.return
}

// Without the hints nothing proves `rm % M` stays in one period: the remainder is an index tile, and over a
// 1-D block it picks single elements (an element gather on the scalar core).
// CHECK-LABEL: tt.func public @rows_mod_m_unhinted
// CHECK: tt.load {{.*}} {mtia.access = "scalar: index tile varies along the last dimension (an element gather, not rows)"}
tt.func public @rows_mod_m_unhinted(%a: !tt.ptr<f32>, %m: i32) {
  %pid = tt.get_program_id x : i32
  %c32 = arith.constant 32 : i32
  %rm0 = arith.muli %pid, %c32 : i32
  %rms = tt.splat %rm0 : i32 -> tensor<32xi32>
  %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %rm = arith.addi %rms, %r : tensor<32xi32>
  %ms = tt.splat %m : i32 -> tensor<32xi32>
  %ram = arith.remsi %rm, %ms : tensor<32xi32>
  %as = tt.splat %a : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
  %p = tt.addptr %as, %ram : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
  %v = tt.load %p : tensor<32x!tt.ptr<f32>>
  tt.return
}

// Inductor's bmm template with M = 5 < BLOCK_M = 16: `rm % 5` wraps inside the block, so no box holds it; the
// remainder is an index tile [16, 1] and every row of the A tile is one row of memory: rows gathered by it.
// B = z^T reads column `rn % 5` of a [K, N] view with strides [1, K]: the index tile [1, 16] is constant
// along the contiguous dimension 0, so it is rows of memory too (moved in memory order, then transposed).
// CHECK-LABEL: tt.func public @wrapping_rows_mod_m
// CHECK: tt.load {{.*}} {mtia.access = "dma_gather_rows base=%a+0 index=%rows*16 strides=[0, 1] bounds=[16, 16] shape=[16, 16]"}
// CHECK: tt.load {{.*}} {mtia.access = "dma_gather_rows base=%a+0 index=%cols*16 strides=[1, 0] bounds=[16, 16] shape=[16, 16]"}
tt.func public @wrapping_rows_mod_m(%a: !tt.ptr<f32>) {
  %c5 = arith.constant dense<5> : tensor<16xi32>
  %c16 = arith.constant dense<16> : tensor<16x1xi32>
  %c16t = arith.constant dense<16> : tensor<1x16xi32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %ram = arith.remsi %r, %c5 : tensor<16xi32>
  %rows = tt.expand_dims %ram {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %rowoff = arith.muli %rows, %c16 : tensor<16x1xi32>
  %k = tt.expand_dims %r {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %rb = tt.broadcast %rowoff : tensor<16x1xi32> -> tensor<16x16xi32>
  %kb = tt.broadcast %k : tensor<1x16xi32> -> tensor<16x16xi32>
  %offs = arith.addi %rb, %kb : tensor<16x16xi32>
  %as = tt.splat %a : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %p = tt.addptr %as, %offs : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  %v = tt.load %p : tensor<16x16x!tt.ptr<f32>>
  %cols = tt.expand_dims %ram {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %coloff = arith.muli %cols, %c16t : tensor<1x16xi32>
  %kc = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %cb = tt.broadcast %coloff : tensor<1x16xi32> -> tensor<16x16xi32>
  %kcb = tt.broadcast %kc : tensor<16x1xi32> -> tensor<16x16xi32>
  %offs2 = arith.addi %kcb, %cb : tensor<16x16xi32>
  %p2 = tt.addptr %as, %offs2 : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  %w = tt.load %p2 : tensor<16x16x!tt.ptr<f32>>
  tt.return
}

// The template picks hinted or plain `rm % M` by a condition of its constants (M = 5 >= 16 is false): the
// taken branch's wrapping remainder is the index tile.
// CHECK-LABEL: tt.func public @wrapping_rows_through_if
// CHECK: tt.load {{.*}} {mtia.access = "dma_gather_rows base=%a+0 index=%rows*16 strides=[0, 1] bounds=[16, 16] shape=[16, 16]"}
tt.func public @wrapping_rows_through_if(%a: !tt.ptr<f32>) {
  %c5 = arith.constant 5 : i32
  %c16i = arith.constant 16 : i32
  %c5t = arith.constant dense<5> : tensor<16xi32>
  %c16 = arith.constant dense<16> : tensor<16x1xi32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %hinted = arith.cmpi sge, %c5, %c16i : i32
  %ram = scf.if %hinted -> (tensor<16xi32>) {
    %h = arith.remsi %r, %c5t {tt.contiguity = dense<16> : tensor<1xi32>} : tensor<16xi32>
    scf.yield %h : tensor<16xi32>
  } else {
    %p = arith.remsi %r, %c5t : tensor<16xi32>
    scf.yield %p : tensor<16xi32>
  }
  %rows = tt.expand_dims %ram {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %rowoff = arith.muli %rows, %c16 : tensor<16x1xi32>
  %k = tt.expand_dims %r {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %rb = tt.broadcast %rowoff : tensor<16x1xi32> -> tensor<16x16xi32>
  %kb = tt.broadcast %k : tensor<1x16xi32> -> tensor<16x16xi32>
  %offs = arith.addi %rb, %kb : tensor<16x16xi32>
  %as = tt.splat %a : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %p2 = tt.addptr %as, %offs : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  %v = tt.load %p2 : tensor<16x16x!tt.ptr<f32>>
  tt.return
}

// Under `torch.compile(dynamic=True)` M is an argument: the template's condition `M >= 16` is known only at run
// time, and either branch yields the remainder `rm % M`: the index tile, rows gathered by it (whatever M is).
// CHECK-LABEL: tt.func public @wrapping_rows_through_runtime_if
// CHECK: tt.load {{.*}} {mtia.access = "dma_gather_rows base=%a+0 index=%rows*24 strides=[0, 1] bounds=[16, 16] shape=[16, 16]"}
tt.func public @wrapping_rows_through_runtime_if(%a: !tt.ptr<f32>, %m: i32) {
  %c16i = arith.constant 16 : i32
  %c24 = arith.constant dense<24> : tensor<16x1xi32>
  %pid = tt.get_program_id x : i32
  %rm0 = arith.muli %pid, %c16i : i32
  %rms = tt.splat %rm0 : i32 -> tensor<16xi32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %rm = arith.addi %rms, %r : tensor<16xi32>
  %ms = tt.splat %m : i32 -> tensor<16xi32>
  %hinted = arith.cmpi sge, %m, %c16i : i32
  %ram = scf.if %hinted -> (tensor<16xi32>) {
    %h = arith.remsi %rm, %ms {tt.divisibility = dense<16> : tensor<1xi32>, tt.contiguity = dense<16> : tensor<1xi32>} : tensor<16xi32>
    scf.yield %h : tensor<16xi32>
  } else {
    %p = arith.remsi %rm, %ms : tensor<16xi32>
    scf.yield %p : tensor<16xi32>
  }
  %rows = tt.expand_dims %ram {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %rowoff = arith.muli %rows, %c24 : tensor<16x1xi32>
  %k = tt.expand_dims %r {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %rb = tt.broadcast %rowoff : tensor<16x1xi32> -> tensor<16x16xi32>
  %kb = tt.broadcast %k : tensor<1x16xi32> -> tensor<16x16xi32>
  %offs = arith.addi %rb, %kb : tensor<16x16xi32>
  %as = tt.splat %a : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %p2 = tt.addptr %as, %offs : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  %v = tt.load %p2 : tensor<16x16x!tt.ptr<f32>>
  tt.return
}

// Inductor's embedding lookup: ids loaded as a [XBLOCK, 1] tile (negative ids wrapped by `where`), rows of 64
// picked by them: an indexed DMA. A store of rows through the ids stays on the scalar core (a repeated id would
// leave the last writer to the DMA's order), and so does a load of single elements picked by ids that vary along
// the last dimension (an element gather), and a store of them (an element scatter).
// CHECK-LABEL: tt.func public @embedding_rows
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%ids+%off strides=[1, 0] bounds=[(%n - %off), 1] shape=[8, 1]"}
// CHECK: tt.load {{.*}} {mtia.access = "dma_gather_rows base=%table+0 index=%id*64 strides=[0, 1] bounds=[(%n - %off), 64] shape=[8, 64]"}
// CHECK: tt.store {{.*}} {mtia.access = "scalar: store of rows through an index tile (a repeated id would leave the last writer to the DMA's order)"}
// CHECK: tt.load {{.*}} {mtia.access = "scalar: index tile varies along the last dimension (an element gather, not rows)"}
// CHECK: tt.store {{.*}} {mtia.access = "scalar: store through an index tile that varies along the last dimension (an element scatter, not rows)"}
tt.func public @embedding_rows(%ids: !tt.ptr<i64>, %table: !tt.ptr<f32>, %n: i32) {
  %pid = tt.get_program_id x : i32
  %c8 = arith.constant 8 : i32
  %off = arith.muli %pid, %c8 : i32
  %offs = tt.splat %off : i32 -> tensor<8x1xi32>
  %r8 = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %rx = tt.expand_dims %r8 {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
  %x = arith.addi %offs, %rx : tensor<8x1xi32>
  %ns = tt.splat %n : i32 -> tensor<8x1xi32>
  %xmask = arith.cmpi slt, %x, %ns : tensor<8x1xi32>
  %idss = tt.splat %ids : !tt.ptr<i64> -> tensor<8x1x!tt.ptr<i64>>
  %idp = tt.addptr %idss, %x : tensor<8x1x!tt.ptr<i64>>, tensor<8x1xi32>
  %xmaskb = tt.broadcast %xmask : tensor<8x1xi1> -> tensor<8x64xi1>
  %raw1 = tt.load %idp, %xmask : tensor<8x1x!tt.ptr<i64>>
  %c1000 = arith.constant dense<1000> : tensor<8x1xi64>
  %c0 = arith.constant dense<0> : tensor<8x1xi64>
  %wrapped = arith.addi %raw1, %c1000 : tensor<8x1xi64>
  %neg = arith.cmpi slt, %raw1, %c0 : tensor<8x1xi64>
  %id = arith.select %neg, %wrapped, %raw1 : tensor<8x1xi1>, tensor<8x1xi64>
  %c64 = arith.constant dense<64> : tensor<8x1xi64>
  %rowoff = arith.muli %id, %c64 : tensor<8x1xi64>
  %rowb = tt.broadcast %rowoff : tensor<8x1xi64> -> tensor<8x64xi64>
  %r64 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %rc = tt.expand_dims %r64 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rc64 = arith.extsi %rc : tensor<1x64xi32> to tensor<1x64xi64>
  %rcb = tt.broadcast %rc64 : tensor<1x64xi64> -> tensor<8x64xi64>
  %offs2 = arith.addi %rcb, %rowb : tensor<8x64xi64>
  %ts = tt.splat %table : !tt.ptr<f32> -> tensor<8x64x!tt.ptr<f32>>
  %rows = tt.addptr %ts, %offs2 : tensor<8x64x!tt.ptr<f32>>, tensor<8x64xi64>
  %v = tt.load %rows, %xmaskb : tensor<8x64x!tt.ptr<f32>>
  tt.store %rows, %v, %xmaskb : tensor<8x64x!tt.ptr<f32>>
  %idr = tt.splat %ids : !tt.ptr<i64> -> tensor<64x!tt.ptr<i64>>
  %idrp = tt.addptr %idr, %r64 : tensor<64x!tt.ptr<i64>>, tensor<64xi32>
  %elem_ids = tt.load %idrp : tensor<64x!tt.ptr<i64>>
  %t1 = tt.splat %table : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %elems = tt.addptr %t1, %elem_ids : tensor<64x!tt.ptr<f32>>, tensor<64xi64>
  %e = tt.load %elems : tensor<64x!tt.ptr<f32>>
  tt.store %elems, %e : tensor<64x!tt.ptr<f32>>
  tt.return
}

// Inductor's GEMM template: pid_m is computed through divisions the analysis cannot bound, but the kernel
// assumes pid_m >= 0 (tl.assume); `rm % 64` is picked by an scf.if between the hinted and the plain form,
// whose condition the canonicalizer leaves in place. Both branches have the same form: one DMA.
// CHECK-LABEL: tt.func public @template_rows
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%a+(%rm0 % 64) strides=[1] bounds=[16] shape=[16]"}
tt.func public @template_rows(%a: !tt.ptr<f32>, %n: i32, %cond: i1) {
  %pid = tt.get_program_id x : i32
  %pid_m = arith.divsi %pid, %n : i32
  %c0 = arith.constant 0 : i32
  %nonneg = arith.cmpi sge, %pid_m, %c0 : i32
  llvm.intr.assume %nonneg : i1
  %c16 = arith.constant 16 : i32
  %rm0 = arith.muli %pid_m, %c16 : i32
  %rms = tt.splat %rm0 : i32 -> tensor<16xi32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %rm = arith.addi %rms, %r : tensor<16xi32>
  %ram = scf.if %cond -> (tensor<16xi32>) {
    %c64 = arith.constant dense<64> : tensor<16xi32>
    %h = arith.remsi %rm, %c64 {tt.divisibility = dense<16> : tensor<1xi32>, tt.contiguity = dense<16> : tensor<1xi32>} : tensor<16xi32>
    scf.yield %h : tensor<16xi32>
  } else {
    %c64 = arith.constant dense<64> : tensor<16xi32>
    %p = arith.remsi %rm, %c64 : tensor<16xi32>
    scf.yield %p : tensor<16xi32>
  }
  %as = tt.splat %a : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %ptrs = tt.addptr %as, %ram : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
  %v = tt.load %ptrs : tensor<16x!tt.ptr<f32>>
  tt.return
}

// Embedding rows in a flat kernel: the ids are read by x1 (a box with stride 0 along the row), the table by
// `x0 + 16 * id`: an indexed DMA over a 4x16 box, the id tile reshaped to it (one id per row of the box).
// CHECK-LABEL: tt.func public @flat_index_embedding
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%ids+(%off // 16) strides=[1, 0] bounds=[4, 16] shape=[4, 16] view=[64]"}
// CHECK: tt.load {{.*}} {mtia.access = "dma_gather_rows base=%w+0 index=%id*16 strides=[0, 1] bounds=[4, 16] shape=[4, 16] view=[64]"}
tt.func public @flat_index_embedding(%ids: !tt.ptr<i64>, %w: !tt.ptr<f32>) {
  %pid = tt.get_program_id x : i32
  %c64 = arith.constant 64 : i32
  %off = arith.muli %pid, %c64 : i32
  %offs = tt.splat %off : i32 -> tensor<64xi32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %xindex = arith.addi %offs, %r : tensor<64xi32>
  %c16 = arith.constant dense<16> : tensor<64xi32>
  %x0 = arith.remsi %xindex, %c16 : tensor<64xi32>
  %x1 = arith.divsi %xindex, %c16 : tensor<64xi32>
  %is = tt.splat %ids : !tt.ptr<i64> -> tensor<64x!tt.ptr<i64>>
  %ip = tt.addptr %is, %x1 : tensor<64x!tt.ptr<i64>>, tensor<64xi32>
  %id = tt.load %ip : tensor<64x!tt.ptr<i64>>
  %c16l = arith.constant dense<16> : tensor<64xi64>
  %row = arith.muli %id, %c16l : tensor<64xi64>
  %x0l = arith.extsi %x0 : tensor<64xi32> to tensor<64xi64>
  %o = arith.addi %x0l, %row : tensor<64xi64>
  %ws = tt.splat %w : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %wp = tt.addptr %ws, %o : tensor<64x!tt.ptr<f32>>, tensor<64xi64>
  %v = tt.load %wp : tensor<64x!tt.ptr<f32>>
  tt.return
}

// Triton stores bools through `!tt.ptr<i1>` recast to `!tt.ptr<i8>` (one byte each): the same block.
// CHECK-LABEL: tt.func public @bool_store
// CHECK: tt.store {{.*}} {mtia.access = "dma base=%b+%off strides=[1] bounds=[64] shape=[64]"}
tt.func public @bool_store(%b: !tt.ptr<i1>, %v: tensor<64xi8>) {
  %pid = tt.get_program_id x : i32
  %c64 = arith.constant 64 : i32
  %off = arith.muli %pid, %c64 : i32
  %offs = tt.splat %off : i32 -> tensor<64xi32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %xindex = arith.addi %offs, %r : tensor<64xi32>
  %bs = tt.splat %b : !tt.ptr<i1> -> tensor<64x!tt.ptr<i1>>
  %p = tt.addptr %bs, %xindex : tensor<64x!tt.ptr<i1>>, tensor<64xi32>
  %q = tt.bitcast %p : tensor<64x!tt.ptr<i1>> -> tensor<64x!tt.ptr<i8>>
  tt.store %q, %v : tensor<64x!tt.ptr<i8>>
  tt.return
}

// The bmm template's store mask `(idx_m < M) & (idx_q < BATCH)`: the scalar `idx_q < BATCH` splat to the tile
// is all or nothing, a bound (BATCH - idx_q) * 16 on the rows (clamped to [0, 16] by the DMA).
// CHECK-LABEL: tt.func public @uniform_mask
// CHECK: tt.store {{.*}} {mtia.access = "dma base=%x+0 strides=[1] bounds=[min(%m, ((%batch - %q) * 16))] shape=[16]"}
tt.func public @uniform_mask(%x: !tt.ptr<f32>, %v: tensor<16xf32>, %m: i32, %batch: i32) {
  %q = tt.get_program_id y : i32
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %ms = tt.splat %m : i32 -> tensor<16xi32>
  %rows = arith.cmpi slt, %r, %ms : tensor<16xi32>
  %inb = arith.cmpi slt, %q, %batch : i32
  %all = tt.splat %inb : i1 -> tensor<16xi1>
  %mask = arith.andi %rows, %all : tensor<16xi1>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %p = tt.addptr %xs, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
  tt.store %p, %v, %mask : tensor<16x!tt.ptr<f32>>
  tt.return
}

// A bool load with `other=0.0` (Inductor's masked-fill mask): Triton's `other` is `fptosi` of 0.0 to i8, an
// integer 0 (a falsy IntegerAttr, still a constant).
// CHECK-LABEL: tt.func public @bool_load_other
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%b+0 strides=[1] bounds=[%n] shape=[64]"}
tt.func public @bool_load_other(%b: !tt.ptr<i1>, %n: i32) {
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ns = tt.splat %n : i32 -> tensor<64xi32>
  %mask = arith.cmpi slt, %r, %ns : tensor<64xi32>
  %bs = tt.splat %b : !tt.ptr<i1> -> tensor<64x!tt.ptr<i1>>
  %p = tt.addptr %bs, %r : tensor<64x!tt.ptr<i1>>, tensor<64xi32>
  %q = tt.bitcast %p : tensor<64x!tt.ptr<i1>> -> tensor<64x!tt.ptr<i8>>
  %zf = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %zi = arith.fptosi %zf : tensor<64xf32> to tensor<64xi8>
  %v = tt.load %q, %mask, %zi : tensor<64x!tt.ptr<i8>>
  tt.return
}

// Inductor's flat index split by a row that XBLOCK = 64 is not a multiple of (dlrm's `x0 = xindex % 48`,
// `x1 = xindex // 48` under `xindex < 768`): loads through x1 (a value per row) and x0 (a value per column)
// are wrapped boxes of the rows the block touches, at most ceil((48 - 16 + 64) / 48) = 2, bounded by the
// mask's 768 // 48 = 16 rows; `x0 + 48 * x1` is the flat index itself (a plain block, a store too); a
// padded row (`x0 + 50 * x1`) stored would write other elements of the rows: the scalar core.
// CHECK-LABEL: tt.func public @flat_index_wrapped_rows
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+(%off // 48) strides=[1, 0] bounds=[min((((%off % 48) + 111) // 48), (16 - (%off // 48))), 48] shape=[2, 48] view=[64] window=(%off % 48)"}
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+0 strides=[0, 1] bounds=[min((((%off % 48) + 111) // 48), (16 - (%off // 48))), 48] shape=[2, 48] view=[64] window=(%off % 48)"}
// CHECK: tt.store {{.*}} {mtia.access = "dma base=%x+%off strides=[1] bounds=[(768 - %off)] shape=[64]"}
// CHECK: tt.store {{.*}} {mtia.access = "scalar: store through a flat index split across rows, not starting at a row or not whole rows"}
tt.func public @flat_index_wrapped_rows(%x: !tt.ptr<f32>) {
  %pid = tt.get_program_id x : i32
  %c64 = arith.constant 64 : i32
  %off = arith.muli %pid, %c64 : i32
  %offs = tt.splat %off : i32 -> tensor<64xi32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %xindex = arith.addi %offs, %r : tensor<64xi32>
  %c768 = arith.constant dense<768> : tensor<64xi32>
  %mask = arith.cmpi slt, %xindex, %c768 : tensor<64xi32>
  %c48 = arith.constant dense<48> : tensor<64xi32>
  %c50 = arith.constant dense<50> : tensor<64xi32>
  %x0 = arith.remsi %xindex, %c48 : tensor<64xi32>
  %x1 = arith.divsi %xindex, %c48 : tensor<64xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %p1 = tt.addptr %xs, %x1 : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %v1 = tt.load %p1, %mask : tensor<64x!tt.ptr<f32>>
  %p0 = tt.addptr %xs, %x0 : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %v0 = tt.load %p0, %mask : tensor<64x!tt.ptr<f32>>
  %row = arith.muli %x1, %c48 : tensor<64xi32>
  %flat = arith.addi %x0, %row : tensor<64xi32>
  %pf = tt.addptr %xs, %flat : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  tt.store %pf, %v0, %mask : tensor<64x!tt.ptr<f32>>
  %prow = arith.muli %x1, %c50 : tensor<64xi32>
  %padded = arith.addi %x0, %prow : tensor<64xi32>
  %pp = tt.addptr %xs, %padded : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  tt.store %pp, %v1, %mask : tensor<64x!tt.ptr<f32>>
  tt.return
}

// A `%` by a constant row under the kernel's `tl.max_contiguous` hint is taken at its word (a block up to the
// wrap point, as for `rm % M` above), not a wrapped box.
// CHECK-LABEL: tt.func public @hinted_rem_by_constant
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+(%off % 48) strides=[1] bounds=[(48 - (%off % 48))] shape=[64]"}
tt.func public @hinted_rem_by_constant(%x: !tt.ptr<f32>) {
  %pid = tt.get_program_id x : i32
  %c64 = arith.constant 64 : i32
  %off = arith.muli %pid, %c64 : i32
  %offs = tt.splat %off : i32 -> tensor<64xi32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %rm = arith.addi %offs, %r : tensor<64xi32>
  %c48 = arith.constant dense<48> : tensor<64xi32>
  %ram = arith.remsi %rm, %c48 {tt.contiguity = dense<64> : tensor<1xi32>} : tensor<64xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %p = tt.addptr %xs, %ram : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %v = tt.load %p : tensor<64x!tt.ptr<f32>>
  tt.return
}

// Inductor's GEMM template with N = 172 not a multiple of BLOCK_N = 16: the branches' forms differ (the hinted
// `rn % 172` is a block up to its wrap point, the plain one a wrapped box), but the condition is computed from
// the kernel's static sizes (here 172 >= 16): the taken branch's form, one DMA up to the wrap point.
// CHECK-LABEL: tt.func public @template_constant_condition
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%b+(%rn0 % 172) strides=[1] bounds=[(172 - (%rn0 % 172))] shape=[16]"}
tt.func public @template_constant_condition(%b: !tt.ptr<f32>, %n: i32) {
  %pid = tt.get_program_id x : i32
  %pid_n = arith.divsi %pid, %n : i32
  %c0 = arith.constant 0 : i32
  %nonneg = arith.cmpi sge, %pid_n, %c0 : i32
  llvm.intr.assume %nonneg : i1
  %c16 = arith.constant 16 : i32
  %c1 = arith.constant 1 : i32
  %c172 = arith.constant 172 : i32
  %wide = arith.cmpi sge, %c172, %c16 : i32
  %unit = arith.cmpi eq, %c1, %c1 : i32
  %cond = arith.andi %wide, %unit : i1
  %rn0 = arith.muli %pid_n, %c16 : i32
  %rns = tt.splat %rn0 : i32 -> tensor<16xi32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %rn = arith.addi %rns, %r : tensor<16xi32>
  %rbn = scf.if %cond -> (tensor<16xi32>) {
    %cn = arith.constant dense<172> : tensor<16xi32>
    %h = arith.remsi %rn, %cn {tt.divisibility = dense<16> : tensor<1xi32>, tt.contiguity = dense<16> : tensor<1xi32>} : tensor<16xi32>
    scf.yield %h : tensor<16xi32>
  } else {
    %cn = arith.constant dense<172> : tensor<16xi32>
    %p = arith.remsi %rn, %cn : tensor<16xi32>
    scf.yield %p : tensor<16xi32>
  }
  %bs = tt.splat %b : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %ptrs = tt.addptr %bs, %rbn : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
  %v = tt.load %ptrs : tensor<16x!tt.ptr<f32>>
  tt.return
}

// The epilogue of Inductor's GEMM template: `xindex = rn + 32 * rm` over a 16 x 16 tile whose column base
// `16 * pid_n` is not a multiple of 32, read through `(xindex // 32) % 16` and `xindex // 512` (a permuted
// [2, 32, 16] input). The split holds only where `rn < 32`: the load masked by it is one strided DMA (rows of
// stride 1, columns of stride 16); the load masked on rows alone stays on the scalar core.
// CHECK-LABEL: tt.func public @template_split_below_mask
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+(((%rm0 % 16) + (%rn0 * 16)) + ((%rm0 // 16) * 512)) strides=[1, 16] bounds=[(32 - %rm0), (32 - %rn0)] shape=[16, 16]"}
// CHECK: tt.load {{.*}} {mtia.access = "scalar: a split index holds only below a limit the mask does not imply (it may carry into the next row)"}
tt.func public @template_split_below_mask(%x: !tt.ptr<f32>) {
  %pid_m = tt.get_program_id x : i32
  %pid_n = tt.get_program_id y : i32
  %c16 = arith.constant 16 : i32
  %c32 = arith.constant 32 : i32
  %rm0 = arith.muli %pid_m, %c16 : i32
  %rn0 = arith.muli %pid_n, %c16 : i32
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %rms = tt.splat %rm0 : i32 -> tensor<16xi32>
  %rns = tt.splat %rn0 : i32 -> tensor<16xi32>
  %rm = arith.addi %rms, %r : tensor<16xi32>
  %rn = arith.addi %rns, %r : tensor<16xi32>
  %m1 = tt.expand_dims %rm {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %n1 = tt.expand_dims %rn {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %im = tt.broadcast %m1 : tensor<16x1xi32> -> tensor<16x16xi32>
  %in = tt.broadcast %n1 : tensor<1x16xi32> -> tensor<16x16xi32>
  %k32 = arith.constant dense<32> : tensor<16x16xi32>
  %k16 = arith.constant dense<16> : tensor<16x16xi32>
  %k512 = arith.constant dense<512> : tensor<16x16xi32>
  %mrow = arith.cmpi slt, %im, %k32 : tensor<16x16xi32>
  %mcol = arith.cmpi slt, %in, %k32 : tensor<16x16xi32>
  %mask = arith.andi %mrow, %mcol : tensor<16x16xi1>
  %xrow = arith.muli %im, %k32 : tensor<16x16xi32>
  %xindex = arith.addi %in, %xrow : tensor<16x16xi32>
  %x10 = arith.divsi %xindex, %k512 : tensor<16x16xi32>
  %q = arith.divsi %xindex, %k32 : tensor<16x16xi32>
  %x9 = arith.remsi %q, %k16 : tensor<16x16xi32>
  %ncol = arith.muli %in, %k16 : tensor<16x16xi32>
  %nplane = arith.muli %x10, %k512 : tensor<16x16xi32>
  %o1 = arith.addi %x9, %ncol : tensor<16x16xi32>
  %off = arith.addi %o1, %nplane : tensor<16x16xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %p = tt.addptr %xs, %off : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  %v = tt.load %p, %mask : tensor<16x16x!tt.ptr<f32>>
  %w = tt.load %p, %mrow : tensor<16x16x!tt.ptr<f32>>
  tt.return
}

// Inductor's conv template: output pixels `nhw` split into h = (nhw // 8) % 8 and w = nhw % 8, the input
// read at `h + i - 1`, `w + j - 1` (one run of stride 1 over nhw) under a mask that bounds those digits (the
// zero padding), and a uniform `n < 2` (the block lies in one image). The box is [h, w] with a start and a
// bound on each digit, viewed as the flat block; the uniform condition bounds the outer digit all or nothing.
// CHECK-LABEL: tt.func public @conv_digit_bounds
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%x+(((((%off // 8) % 8) + %i1) * 8) + %j1) strides=[8, 1] bounds=[min((((2 - (%off // 64)) * 64) // 8), (8 - (((%off // 8) % 8) + %i1))), (8 - %j1)] shape=[8, 8] starts=[-((((%off // 8) % 8) + %i1)), -(%j1)] view=[64]"}
tt.func public @conv_digit_bounds(%x: !tt.ptr<f32>, %i: i32, %j: i32) {
  %pid = tt.get_program_id x : i32
  %c64 = arith.constant 64 : i32
  %c1 = arith.constant 1 : i32
  %off = arith.muli %pid, %c64 : i32
  %offs = tt.splat %off : i32 -> tensor<64xi32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %nhw = arith.addi %offs, %r : tensor<64xi32>
  %k8 = arith.constant dense<8> : tensor<64xi32>
  %k64 = arith.constant dense<64> : tensor<64xi32>
  %k0 = arith.constant dense<0> : tensor<64xi32>
  %k2 = arith.constant dense<2> : tensor<64xi32>
  %w = arith.remsi %nhw, %k8 : tensor<64xi32>
  %nh = arith.divsi %nhw, %k8 : tensor<64xi32>
  %h = arith.remsi %nh, %k8 : tensor<64xi32>
  %n = arith.divsi %nhw, %k64 : tensor<64xi32>
  %i1 = arith.subi %i, %c1 : i32
  %j1 = arith.subi %j, %c1 : i32
  %is = tt.splat %i1 : i32 -> tensor<64xi32>
  %js = tt.splat %j1 : i32 -> tensor<64xi32>
  %hin = arith.addi %h, %is : tensor<64xi32>
  %win = arith.addi %w, %js : tensor<64xi32>
  %m0 = arith.cmpi sge, %hin, %k0 : tensor<64xi32>
  %m1 = arith.cmpi slt, %hin, %k8 : tensor<64xi32>
  %m2 = arith.cmpi sge, %win, %k0 : tensor<64xi32>
  %m3 = arith.cmpi slt, %win, %k8 : tensor<64xi32>
  %m4 = arith.cmpi slt, %n, %k2 : tensor<64xi32>
  %a0 = arith.andi %m0, %m1 : tensor<64xi1>
  %a1 = arith.andi %a0, %m2 : tensor<64xi1>
  %a2 = arith.andi %a1, %m3 : tensor<64xi1>
  %mask = arith.andi %a2, %m4 : tensor<64xi1>
  %row = arith.muli %hin, %k8 : tensor<64xi32>
  %pix = arith.addi %row, %win : tensor<64xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %p = tt.addptr %xs, %pix : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %v = tt.load %p, %mask : tensor<64x!tt.ptr<f32>>
  tt.return
}

// dlrm's padded store of rows of 10 into rows of 26 from a block of 256 >= xnumel = 160: a block with any
// valid element starts at 0 (its start is a multiple of 256), so its first 160 elements are 16 whole rows: a
// box sliced from the block (window 0), bound (160 - start) // 10 rows. With a block of 64 it stays scalar.
// CHECK-LABEL: tt.func public @padded_store_one_block
// CHECK: tt.store {{.*}} {mtia.access = "dma base=%out+((%off // 10) * 26) strides=[26, 1] bounds=[((160 - %off) // 10), 10] shape=[16, 10] view=[256] window=0"}
// CHECK: tt.store {{.*}} {mtia.access = "scalar: store through a flat index split across rows, not starting at a row or not whole rows"}
tt.func public @padded_store_one_block(%out: !tt.ptr<f32>, %v: tensor<256xf32>, %w: tensor<64xf32>) {
  %pid = tt.get_program_id x : i32
  %c256 = arith.constant 256 : i32
  %c64 = arith.constant 64 : i32
  %off = arith.muli %pid, %c256 : i32
  %offs = tt.splat %off : i32 -> tensor<256xi32>
  %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %x = arith.addi %offs, %r : tensor<256xi32>
  %n = arith.constant dense<160> : tensor<256xi32>
  %mask = arith.cmpi slt, %x, %n : tensor<256xi32>
  %k10 = arith.constant dense<10> : tensor<256xi32>
  %k26 = arith.constant dense<26> : tensor<256xi32>
  %x0 = arith.remsi %x, %k10 : tensor<256xi32>
  %x1 = arith.divsi %x, %k10 : tensor<256xi32>
  %row = arith.muli %x1, %k26 : tensor<256xi32>
  %o = arith.addi %x0, %row : tensor<256xi32>
  %outs = tt.splat %out : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
  %p = tt.addptr %outs, %o : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
  tt.store %p, %v, %mask : tensor<256x!tt.ptr<f32>>
  %off64 = arith.muli %pid, %c64 : i32
  %offs64 = tt.splat %off64 : i32 -> tensor<64xi32>
  %r64 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %y = arith.addi %offs64, %r64 : tensor<64xi32>
  %n64 = arith.constant dense<160> : tensor<64xi32>
  %mask64 = arith.cmpi slt, %y, %n64 : tensor<64xi32>
  %j10 = arith.constant dense<10> : tensor<64xi32>
  %j26 = arith.constant dense<26> : tensor<64xi32>
  %y0 = arith.remsi %y, %j10 : tensor<64xi32>
  %y1 = arith.divsi %y, %j10 : tensor<64xi32>
  %yrow = arith.muli %y1, %j26 : tensor<64xi32>
  %yo = arith.addi %y0, %yrow : tensor<64xi32>
  %outs64 = tt.splat %out : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %q = tt.addptr %outs64, %yo : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  tt.store %q, %w, %mask64 : tensor<64x!tt.ptr<f32>>
  tt.return
}

// cnn's channels-last copy out[y1, x, y0] = v[3 * y1 + y0, x] from an [8, 16] tile: `y % 3` and `y // 3` over
// the tile's rows, which a block of 8 does not hold whole, split that dimension in the third pass (a wrapped
// box along it). Under `y < 6` with the block's start a multiple of 8 >= 6, a block with any valid row starts
// at 0 and its first 6 rows are 2 x 3 whole rows: the box [2, 3, 16] of strides [48, 1, 3], sliced from the
// tile (window 0). From a block of 4 rows (< 6) the valid rows span several blocks: it stays scalar.
// CHECK-LABEL: tt.func public @channels_last_copy
// CHECK: tt.store {{.*}} {mtia.access = "dma base=%out+((%yoff // 3) * 48) strides=[48, 1, 3] bounds=[((6 - %yoff) // 3), 3, 16] shape=[2, 3, 16] view=[8, 16] window=0"}
// CHECK: tt.store {{.*}} {mtia.access = "scalar: store through a flat index split across rows, not starting at a row or not whole rows"}
tt.func public @channels_last_copy(%out: !tt.ptr<f32>, %v: tensor<8x16xf32>, %w: tensor<4x16xf32>) {
  %pidy = tt.get_program_id y : i32
  %c8 = arith.constant 8 : i32
  %yoff = arith.muli %pidy, %c8 : i32
  %ry = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %ry2 = tt.expand_dims %ry {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
  %yoffs = tt.splat %yoff : i32 -> tensor<8x1xi32>
  %y = arith.addi %yoffs, %ry2 : tensor<8x1xi32>
  %n6 = arith.constant dense<6> : tensor<8x1xi32>
  %ymask = arith.cmpi slt, %y, %n6 : tensor<8x1xi32>
  %rx = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %x = tt.expand_dims %rx {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %k3 = arith.constant dense<3> : tensor<8x1xi32>
  %y0 = arith.remsi %y, %k3 : tensor<8x1xi32>
  %y1 = arith.divsi %y, %k3 : tensor<8x1xi32>
  %kx = arith.constant dense<3> : tensor<1x16xi32>
  %x3 = arith.muli %kx, %x : tensor<1x16xi32>
  %y0b = tt.broadcast %y0 : tensor<8x1xi32> -> tensor<8x16xi32>
  %x3b = tt.broadcast %x3 : tensor<1x16xi32> -> tensor<8x16xi32>
  %s = arith.addi %y0b, %x3b : tensor<8x16xi32>
  %k48 = arith.constant dense<48> : tensor<8x1xi32>
  %y1r = arith.muli %k48, %y1 : tensor<8x1xi32>
  %y1b = tt.broadcast %y1r : tensor<8x1xi32> -> tensor<8x16xi32>
  %o = arith.addi %s, %y1b : tensor<8x16xi32>
  %outs = tt.splat %out : !tt.ptr<f32> -> tensor<8x16x!tt.ptr<f32>>
  %p = tt.addptr %outs, %o : tensor<8x16x!tt.ptr<f32>>, tensor<8x16xi32>
  %mask = tt.broadcast %ymask : tensor<8x1xi1> -> tensor<8x16xi1>
  tt.store %p, %v, %mask : tensor<8x16x!tt.ptr<f32>>
  %c4 = arith.constant 4 : i32
  %zoff = arith.muli %pidy, %c4 : i32
  %rz = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %rz2 = tt.expand_dims %rz {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
  %zoffs = tt.splat %zoff : i32 -> tensor<4x1xi32>
  %z = arith.addi %zoffs, %rz2 : tensor<4x1xi32>
  %m6 = arith.constant dense<6> : tensor<4x1xi32>
  %zmask = arith.cmpi slt, %z, %m6 : tensor<4x1xi32>
  %j3 = arith.constant dense<3> : tensor<4x1xi32>
  %z0 = arith.remsi %z, %j3 : tensor<4x1xi32>
  %z1 = arith.divsi %z, %j3 : tensor<4x1xi32>
  %z0b = tt.broadcast %z0 : tensor<4x1xi32> -> tensor<4x16xi32>
  %x3c = tt.broadcast %x3 : tensor<1x16xi32> -> tensor<4x16xi32>
  %t = arith.addi %z0b, %x3c : tensor<4x16xi32>
  %j48 = arith.constant dense<48> : tensor<4x1xi32>
  %z1r = arith.muli %j48, %z1 : tensor<4x1xi32>
  %z1b = tt.broadcast %z1r : tensor<4x1xi32> -> tensor<4x16xi32>
  %oz = arith.addi %t, %z1b : tensor<4x16xi32>
  %outz = tt.splat %out : !tt.ptr<f32> -> tensor<4x16x!tt.ptr<f32>>
  %q = tt.addptr %outz, %oz : tensor<4x16x!tt.ptr<f32>>, tensor<4x16xi32>
  %maskz = tt.broadcast %zmask : tensor<4x1xi1> -> tensor<4x16xi1>
  tt.store %q, %w, %maskz : tensor<4x16x!tt.ptr<f32>>
  tt.return
}

// The same split with only `y // 3` in the address (`out[48 * y1 + 3 * x]`): three rows of the tile write each
// address, a box stride of 0, so the store stays on the scalar core (its element order picks the last writer).
// CHECK-LABEL: tt.func public @channels_last_repeated
// CHECK: tt.store {{.*}} {mtia.access = "scalar: store writes several elements of the block to one address (a stride of 0)"}
tt.func public @channels_last_repeated(%out: !tt.ptr<f32>, %v: tensor<8x16xf32>) {
  %pidy = tt.get_program_id y : i32
  %c8 = arith.constant 8 : i32
  %yoff = arith.muli %pidy, %c8 : i32
  %ry = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %ry2 = tt.expand_dims %ry {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
  %yoffs = tt.splat %yoff : i32 -> tensor<8x1xi32>
  %y = arith.addi %yoffs, %ry2 : tensor<8x1xi32>
  %n6 = arith.constant dense<6> : tensor<8x1xi32>
  %ymask = arith.cmpi slt, %y, %n6 : tensor<8x1xi32>
  %rx = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %x = tt.expand_dims %rx {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %k3 = arith.constant dense<3> : tensor<8x1xi32>
  %y1 = arith.divsi %y, %k3 : tensor<8x1xi32>
  %kx = arith.constant dense<3> : tensor<1x16xi32>
  %x3 = arith.muli %kx, %x : tensor<1x16xi32>
  %x3b = tt.broadcast %x3 : tensor<1x16xi32> -> tensor<8x16xi32>
  %k48 = arith.constant dense<48> : tensor<8x1xi32>
  %y1r = arith.muli %k48, %y1 : tensor<8x1xi32>
  %y1b = tt.broadcast %y1r : tensor<8x1xi32> -> tensor<8x16xi32>
  %o = arith.addi %x3b, %y1b : tensor<8x16xi32>
  %outs = tt.splat %out : !tt.ptr<f32> -> tensor<8x16x!tt.ptr<f32>>
  %p = tt.addptr %outs, %o : tensor<8x16x!tt.ptr<f32>>, tensor<8x16xi32>
  %mask = tt.broadcast %ymask : tensor<8x1xi1> -> tensor<8x16xi1>
  tt.store %p, %v, %mask : tensor<8x16x!tt.ptr<f32>>
  tt.return
}

// moe_top2's flat scatter `out[tmp3 + 4 * x1]`, x1 = xindex // 2, tmp3 loaded at xindex: each element has its own
// id, an element scatter. With the id loaded at x1 (one per run of 2) it is a store of rows through ids.
// CHECK-LABEL: tt.func public @flat_scatter
// CHECK: tt.store {{.*}} {mtia.access = "scalar: store through an index tile that varies along the last dimension (an element scatter, not rows)"}
// CHECK: tt.store {{.*}} {mtia.access = "scalar: store of rows through an index tile (a repeated id would leave the last writer to the DMA's order)"}
tt.func public @flat_scatter(%ids: !tt.ptr<i32>, %out: !tt.ptr<f32>, %v: tensor<32xf32>) {
  %pid = tt.get_program_id x : i32
  %c32 = arith.constant 32 : i32
  %off = arith.muli %pid, %c32 : i32
  %offs = tt.splat %off : i32 -> tensor<32xi32>
  %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %x = arith.addi %offs, %r : tensor<32xi32>
  %k2 = arith.constant dense<2> : tensor<32xi32>
  %x1 = arith.divsi %x, %k2 : tensor<32xi32>
  %k4 = arith.constant dense<4> : tensor<32xi32>
  %row = arith.muli %x1, %k4 : tensor<32xi32>
  %idss = tt.splat %ids : !tt.ptr<i32> -> tensor<32x!tt.ptr<i32>>
  %idp = tt.addptr %idss, %x : tensor<32x!tt.ptr<i32>>, tensor<32xi32>
  %id = tt.load %idp : tensor<32x!tt.ptr<i32>>
  %o = arith.addi %id, %row : tensor<32xi32>
  %outs = tt.splat %out : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
  %p = tt.addptr %outs, %o : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
  tt.store %p, %v : tensor<32x!tt.ptr<f32>>
  %idq = tt.addptr %idss, %x1 : tensor<32x!tt.ptr<i32>>, tensor<32xi32>
  %rid = tt.load %idq : tensor<32x!tt.ptr<i32>>
  %k64 = arith.constant dense<64> : tensor<32xi32>
  %rrow = arith.muli %rid, %k64 : tensor<32xi32>
  %x0 = arith.remsi %x, %k2 : tensor<32xi32>
  %ro = arith.addi %rrow, %x0 : tensor<32xi32>
  %q = tt.addptr %outs, %ro : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
  tt.store %q, %v : tensor<32x!tt.ptr<f32>>
  tt.return
}

// A mask bound on the digit `nhw % 8` while the block's own digits split at 4 (`nhw % 4`, rows of 100): the
// condition spans two digits of the block, not a box; the load stays on the scalar core.
// CHECK-LABEL: tt.func public @digit_bound_not_refined
// CHECK: tt.load {{.*}} {mtia.access = "scalar: mask bounds digits of a split index that the block's digits do not refine"}
tt.func public @digit_bound_not_refined(%x: !tt.ptr<f32>) {
  %pid = tt.get_program_id x : i32
  %c64 = arith.constant 64 : i32
  %off = arith.muli %pid, %c64 : i32
  %offs = tt.splat %off : i32 -> tensor<64xi32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %nhw = arith.addi %offs, %r : tensor<64xi32>
  %k8 = arith.constant dense<8> : tensor<64xi32>
  %k4 = arith.constant dense<4> : tensor<64xi32>
  %k5 = arith.constant dense<5> : tensor<64xi32>
  %k100 = arith.constant dense<100> : tensor<64xi32>
  %w = arith.remsi %nhw, %k8 : tensor<64xi32>
  %mask = arith.cmpi slt, %w, %k5 : tensor<64xi32>
  %lo = arith.remsi %nhw, %k4 : tensor<64xi32>
  %hi = arith.divsi %nhw, %k4 : tensor<64xi32>
  %rows = arith.muli %hi, %k100 : tensor<64xi32>
  %o = arith.addi %lo, %rows : tensor<64xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %p = tt.addptr %xs, %o : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %v = tt.load %p, %mask : tensor<64x!tt.ptr<f32>>
  tt.return
}

// A GEMM template's B tile with N < BLOCK_N: column `rn % 13` of rows `rk < K`. The remainder is an index
// tile varying along the contiguous dimension (an element gather), but it is provably a column of the rows
// the tile touches: the DMA moves those rows [16, 13] and the tile is gathered from them in LS, exactly.
// Scaled by 2, the index could leave its row: an element gather on the scalar core.
// CHECK-LABEL: tt.func public @columns_mod_n
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%b+0 strides=[13, 1] bounds=[%k, 13] shape=[16, 13] ls_gather=exact"}
// CHECK: tt.load {{.*}} {mtia.access = "scalar: index tile varies along the last dimension (an element gather, not rows)"}
tt.func public @columns_mod_n(%b: !tt.ptr<f32>, %k: i32) {
  %pid = tt.get_program_id x : i32
  %c0 = arith.constant 0 : i32
  %nonneg = arith.cmpi sge, %pid, %c0 : i32
  llvm.intr.assume %nonneg : i1
  %c16 = arith.constant 16 : i32
  %off = arith.muli %pid, %c16 : i32
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %offs = tt.splat %off : i32 -> tensor<16xi32>
  %rn = arith.addi %offs, %r : tensor<16xi32>
  %k13 = arith.constant dense<13> : tensor<16xi32>
  %rbn = arith.remsi %rn, %k13 : tensor<16xi32>
  %rk = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %ks = tt.splat %k : i32 -> tensor<16x1xi32>
  %m1 = arith.cmpi slt, %rk, %ks : tensor<16x1xi32>
  %mask = tt.broadcast %m1 : tensor<16x1xi1> -> tensor<16x16xi1>
  %c13 = arith.constant dense<13> : tensor<16x1xi32>
  %rows = arith.muli %rk, %c13 : tensor<16x1xi32>
  %cols = tt.expand_dims %rbn {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %rowsb = tt.broadcast %rows : tensor<16x1xi32> -> tensor<16x16xi32>
  %colsb = tt.broadcast %cols : tensor<1x16xi32> -> tensor<16x16xi32>
  %o = arith.addi %rowsb, %colsb : tensor<16x16xi32>
  %bs = tt.splat %b : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %p = tt.addptr %bs, %o : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
  %v = tt.load %p, %mask, %zero : tensor<16x16x!tt.ptr<f32>>
  %two = arith.constant dense<2> : tensor<16x16xi32>
  %colsb2 = arith.muli %colsb, %two : tensor<16x16xi32>
  %o2 = arith.addi %rowsb, %colsb2 : tensor<16x16xi32>
  %p2 = tt.addptr %bs, %o2 : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  %v2 = tt.load %p2, %mask, %zero : tensor<16x16x!tt.ptr<f32>>
  tt.return
}

// dlrm's tril gather `z[b, li[k], lj[k]]` as Inductor writes it, `idx + 25 * (xindex // 10)` with idx from
// loaded tril indices: the DMA moves the rows z[b] the block touches (a wrapped box of rows of 25, bound by
// the mask's rows) and the tile is gathered from them in LS; the index is not provably inside a row, so
// lanes outside the box are checked (the scalar core gathers those).
// CHECK-LABEL: tt.func public @tril_gather
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%z+((%off // 10) * 25) strides=[25, 1] bounds=[min((((%off % 10) + 265) // 10), (16 - (%off // 10))), 25] shape=[27, 25] ls_gather=checked"}
tt.func public @tril_gather(%ids: !tt.ptr<i64>, %z: !tt.ptr<f32>) {
  %pid = tt.get_program_id x : i32
  %c256 = arith.constant 256 : i32
  %off = arith.muli %pid, %c256 : i32
  %offs = tt.splat %off : i32 -> tensor<256xi32>
  %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %x = arith.addi %offs, %r : tensor<256xi32>
  %n = arith.constant dense<160> : tensor<256xi32>
  %mask = arith.cmpi slt, %x, %n : tensor<256xi32>
  %k10 = arith.constant dense<10> : tensor<256xi32>
  %x0 = arith.remsi %x, %k10 : tensor<256xi32>
  %x1 = arith.divsi %x, %k10 : tensor<256xi32>
  %idss = tt.splat %ids : !tt.ptr<i64> -> tensor<256x!tt.ptr<i64>>
  %ip = tt.addptr %idss, %x0 : tensor<256x!tt.ptr<i64>>, tensor<256xi32>
  %idx = tt.load %ip, %mask : tensor<256x!tt.ptr<i64>>
  %k25 = arith.constant dense<25> : tensor<256xi32>
  %row = arith.muli %k25, %x1 : tensor<256xi32>
  %row64 = arith.extsi %row : tensor<256xi32> to tensor<256xi64>
  %o = arith.addi %idx, %row64 : tensor<256xi64>
  %zs = tt.splat %z : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
  %p = tt.addptr %zs, %o : tensor<256x!tt.ptr<f32>>, tensor<256xi64>
  %v = tt.load %p, %mask : tensor<256x!tt.ptr<f32>>
  tt.return
}

// A target gather `logp[r, t[r]]` over rows of 8 reads a box 8 times its tile: an LS gather. Over rows of
// 100 the box would be 100 times the tile (moving it costs more than the scalar core's gather: the module has
// no mtia.target, so the default chip's `cost.ls_gather_box_ratio`, 17 for f32): an element gather on the scalar core.
// CHECK-LABEL: tt.func public @target_gather
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%logp+0 strides=[8, 1] bounds=[16, 8] shape=[16, 8] ls_gather=checked"}
// CHECK: tt.load {{.*}} {mtia.access = "scalar: index tile varies along the last dimension (an element gather, not rows)"}
tt.func public @target_gather(%t: !tt.ptr<i64>, %logp: !tt.ptr<f32>) {
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %ts = tt.splat %t : !tt.ptr<i64> -> tensor<16x!tt.ptr<i64>>
  %tp = tt.addptr %ts, %r : tensor<16x!tt.ptr<i64>>, tensor<16xi32>
  %idx = tt.load %tp : tensor<16x!tt.ptr<i64>>
  %k8 = arith.constant dense<8> : tensor<16xi32>
  %row = arith.muli %r, %k8 : tensor<16xi32>
  %row64 = arith.extsi %row : tensor<16xi32> to tensor<16xi64>
  %o = arith.addi %idx, %row64 : tensor<16xi64>
  %ls = tt.splat %logp : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %p = tt.addptr %ls, %o : tensor<16x!tt.ptr<f32>>, tensor<16xi64>
  %v = tt.load %p : tensor<16x!tt.ptr<f32>>
  %k100 = arith.constant dense<100> : tensor<16xi32>
  %wide = arith.muli %r, %k100 : tensor<16xi32>
  %wide64 = arith.extsi %wide : tensor<16xi32> to tensor<16xi64>
  %o2 = arith.addi %idx, %wide64 : tensor<16xi64>
  %p2 = tt.addptr %ls, %o2 : tensor<16x!tt.ptr<f32>>, tensor<16xi64>
  %v2 = tt.load %p2 : tensor<16x!tt.ptr<f32>>
  tt.return
}

// The embedding-bag kernel's step over a tile of all ids: a bag's ids are picked from the loaded ids in LS
// (`tt.gather`), and the rows they name are an indexed DMA too, as rows picked by loaded ids are.
// CHECK-LABEL: tt.func public @rows_by_gathered_ids
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%ids+0 strides=[1] bounds=[64] shape=[64]"}
// CHECK: tt.load {{.*}} {mtia.access = "dma_gather_rows base=%table+0 index=%rowx*1 strides=[0, 1] bounds=[16, 16] shape=[16, 16]"}
tt.func public @rows_by_gathered_ids(%ids: !tt.ptr<i64>, %table: !tt.ptr<f32>, %start: i32) {
  %r64 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %idsp = tt.splat %ids : !tt.ptr<i64> -> tensor<64x!tt.ptr<i64>>
  %idp = tt.addptr %idsp, %r64 : tensor<64x!tt.ptr<i64>>, tensor<64xi32>
  %all = tt.load %idp : tensor<64x!tt.ptr<i64>>
  %r16 = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %s = tt.splat %start : i32 -> tensor<16xi32>
  %pick = arith.addi %s, %r16 : tensor<16xi32>
  %bag_ids = tt.gather %all[%pick] {axis = 0 : i32} : (tensor<64xi64>, tensor<16xi32>) -> tensor<16xi64>
  %c16 = arith.constant dense<16> : tensor<16xi64>
  %rowoff = arith.muli %bag_ids, %c16 : tensor<16xi64>
  %rowx = tt.expand_dims %rowoff {axis = 1 : i32} : tensor<16xi64> -> tensor<16x1xi64>
  %rowb = tt.broadcast %rowx : tensor<16x1xi64> -> tensor<16x16xi64>
  %rc = tt.expand_dims %r16 {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %rc64 = arith.extsi %rc : tensor<1x16xi32> to tensor<1x16xi64>
  %rcb = tt.broadcast %rc64 : tensor<1x16xi64> -> tensor<16x16xi64>
  %offs = arith.addi %rcb, %rowb : tensor<16x16xi64>
  %ts = tt.splat %table : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %rows = tt.addptr %ts, %offs : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi64>
  %v = tt.load %rows : tensor<16x16x!tt.ptr<f32>>
  tt.return
}

// A transposing copy Inductor fused into a GEMM template's A load (a prologue): the [16, 64] tile's flat
// index `xindex = k + 64 * (rm % 64)` of `y.transpose(1, 2).reshape(64, 64)`, y [2, 4, 32, 16], split into
// x9 = xindex % 16, x10 = (xindex // 16) % 4, x11 = (xindex // 64) % 32 and x12 = xindex // 2048 across
// both dimensions (the K offset's digits straddle 16; `k_idx` of the one-iteration K loop is bounded). The
// split holds by place value (fourth pass): rows of stride 16, the K offset as digits [4 of 512, 16 of 1],
// one 3-d box viewed as the tile, a store too; a store through `512 * x10` alone writes 256 elements to each
// of its 4 addresses (strides of 0): the scalar core. With a K loop of two iterations, `k_idx + rm % 32` may
// wrap at 32: the scalar core.
// CHECK-LABEL: tt.func public @template_prologue_digits
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%y+(((((%kb // 64) + (%rm0 % 64)) % 32) * 16) + (((%kb + ((%rm0 % 64) * 64)) // 2048) * 2048)) strides=[16, 512, 1] bounds=[16, 4, 16] shape=[16, 4, 16] view=[16, 64]"}
// CHECK: tt.store {{.*}} {mtia.access = "dma base=%y+(((((%kb // 64) + (%rm0 % 64)) % 32) * 16) + (((%kb + ((%rm0 % 64) * 64)) // 2048) * 2048)) strides=[16, 512, 1] bounds=[16, 4, 16] shape=[16, 4, 16] view=[16, 64]"}
// CHECK: tt.store {{.*}} {mtia.access = "scalar: store writes several elements of the block to one address (a stride of 0)"}
// CHECK: tt.load {{.*}} {mtia.access = "scalar: index tile varies along the last dimension (an element gather, not rows)"}
tt.func public @template_prologue_digits(%y: !tt.ptr<f32>) {
  %pid = tt.get_program_id x : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c16 = arith.constant 16 : i32
  %c64 = arith.constant 64 : i32
  %rm0 = arith.muli %pid, %c16 : i32
  %rms = tt.splat %rm0 : i32 -> tensor<16xi32>
  %r16 = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %rm = arith.addi %rms, %r16 : tensor<16xi32>
  %k64m = arith.constant dense<64> : tensor<16xi32>
  %am = arith.remsi %rm, %k64m : tensor<16xi32>
  %m1 = tt.expand_dims %am {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %r64 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %k1 = tt.expand_dims %r64 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %ys = tt.splat %y : !tt.ptr<f32> -> tensor<16x64x!tt.ptr<f32>>
  %k4 = arith.constant dense<4> : tensor<16x64xi32>
  %k16 = arith.constant dense<16> : tensor<16x64xi32>
  %k32 = arith.constant dense<32> : tensor<16x64xi32>
  %k64 = arith.constant dense<64> : tensor<16x64xi32>
  %k512 = arith.constant dense<512> : tensor<16x64xi32>
  %k2048 = arith.constant dense<2048> : tensor<16x64xi32>
  %im = tt.broadcast %m1 : tensor<16x1xi32> -> tensor<16x64xi32>
  %xrow = arith.muli %im, %k64 : tensor<16x64xi32>
  scf.for %k_idx = %c0 to %c1 step %c1 : i32 {
    %kb = arith.muli %k_idx, %c64 : i32
    %kbs = tt.splat %kb : i32 -> tensor<1x64xi32>
    %kk = arith.addi %k1, %kbs : tensor<1x64xi32>
    %in = tt.broadcast %kk : tensor<1x64xi32> -> tensor<16x64xi32>
    %xindex = arith.addi %in, %xrow : tensor<16x64xi32>
    %q16 = arith.divsi %xindex, %k16 : tensor<16x64xi32>
    %x10 = arith.remsi %q16, %k4 : tensor<16x64xi32>
    %q64 = arith.divsi %xindex, %k64 : tensor<16x64xi32>
    %x11 = arith.remsi %q64, %k32 : tensor<16x64xi32>
    %x12 = arith.divsi %xindex, %k2048 : tensor<16x64xi32>
    %x9 = arith.remsi %xindex, %k16 : tensor<16x64xi32>
    %o11 = arith.muli %x11, %k16 : tensor<16x64xi32>
    %o10 = arith.muli %x10, %k512 : tensor<16x64xi32>
    %o12 = arith.muli %x12, %k2048 : tensor<16x64xi32>
    %s1 = arith.addi %x9, %o11 : tensor<16x64xi32>
    %s2 = arith.addi %s1, %o10 : tensor<16x64xi32>
    %off = arith.addi %s2, %o12 : tensor<16x64xi32>
    %p = tt.addptr %ys, %off : tensor<16x64x!tt.ptr<f32>>, tensor<16x64xi32>
    %v = tt.load %p : tensor<16x64x!tt.ptr<f32>>
    tt.store %p, %v : tensor<16x64x!tt.ptr<f32>>
    %p10 = tt.addptr %ys, %o10 : tensor<16x64x!tt.ptr<f32>>, tensor<16x64xi32>
    tt.store %p10, %v : tensor<16x64x!tt.ptr<f32>>
    scf.yield
  }
  scf.for %k_idx = %c0 to %c2 step %c1 : i32 {
    %kb = arith.muli %k_idx, %c64 : i32
    %kbs = tt.splat %kb : i32 -> tensor<1x64xi32>
    %kk = arith.addi %k1, %kbs : tensor<1x64xi32>
    %in = tt.broadcast %kk : tensor<1x64xi32> -> tensor<16x64xi32>
    %xindex = arith.addi %in, %xrow : tensor<16x64xi32>
    %q64 = arith.divsi %xindex, %k64 : tensor<16x64xi32>
    %x11 = arith.remsi %q64, %k32 : tensor<16x64xi32>
    %x9 = arith.remsi %xindex, %k64 : tensor<16x64xi32>
    %o11 = arith.muli %x11, %k64 : tensor<16x64xi32>
    %off = arith.addi %x9, %o11 : tensor<16x64xi32>
    %p = tt.addptr %ys, %off : tensor<16x64x!tt.ptr<f32>>, tensor<16x64xi32>
    %v = tt.load %p : tensor<16x64x!tt.ptr<f32>>
    scf.yield
  }
  tt.return
}

// The same prologue with K = 40 < BLOCK_K = 64 (a batch-first attention's [2, 16, 40] output, transposed):
// `x10 = xindex // 80`, `x9 = (xindex // 40) % 2` over `xindex = k + 40 * (rm % 32)`. The K offset is one
// remainder term only below 40, which the template's `a_mask` (`k < 40 - k_idx * 64`) implies: rows as
// digits [8 of 40, 2 of 640], one 3-d box. Unmasked, the K offset may carry into the next row: the scalar core.
// CHECK-LABEL: tt.func public @template_prologue_masked_k
// CHECK: tt.load {{.*}} {mtia.access = "dma base=%y+(%kb + (((%rm0 % 32) // 2) * 40)) strides=[40, 640, 1] bounds=[8, 2, %kr] shape=[8, 2, 64] view=[16, 64]"}
// CHECK: tt.load {{.*}} {mtia.access = "scalar: index tile varies along the last dimension (an element gather, not rows)"}
tt.func public @template_prologue_masked_k(%y: !tt.ptr<f32>) {
  %pid = tt.get_program_id x : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %c40 = arith.constant 40 : i32
  %c64 = arith.constant 64 : i32
  %rm0 = arith.muli %pid, %c16 : i32
  %rms = tt.splat %rm0 : i32 -> tensor<16xi32>
  %r16 = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %rm = arith.addi %rms, %r16 : tensor<16xi32>
  %k32m = arith.constant dense<32> : tensor<16xi32>
  %am = arith.remsi %rm, %k32m : tensor<16xi32>
  %m1 = tt.expand_dims %am {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %r64 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %k1 = tt.expand_dims %r64 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %ys = tt.splat %y : !tt.ptr<f32> -> tensor<16x64x!tt.ptr<f32>>
  %k2 = arith.constant dense<2> : tensor<16x64xi32>
  %k40 = arith.constant dense<40> : tensor<16x64xi32>
  %k80 = arith.constant dense<80> : tensor<16x64xi32>
  %k640 = arith.constant dense<640> : tensor<16x64xi32>
  %im = tt.broadcast %m1 : tensor<16x1xi32> -> tensor<16x64xi32>
  %xrow = arith.muli %im, %k40 : tensor<16x64xi32>
  scf.for %k_idx = %c0 to %c1 step %c1 : i32 {
    %kb = arith.muli %k_idx, %c64 : i32
    %kr = arith.subi %c40, %kb : i32
    %krs = tt.splat %kr : i32 -> tensor<1x64xi32>
    %amask1 = arith.cmpi slt, %k1, %krs : tensor<1x64xi32>
    %amask = tt.broadcast %amask1 : tensor<1x64xi1> -> tensor<16x64xi1>
    %kbs = tt.splat %kb : i32 -> tensor<1x64xi32>
    %kk = arith.addi %k1, %kbs : tensor<1x64xi32>
    %in = tt.broadcast %kk : tensor<1x64xi32> -> tensor<16x64xi32>
    %xindex = arith.addi %in, %xrow : tensor<16x64xi32>
    %x10 = arith.divsi %xindex, %k80 : tensor<16x64xi32>
    %q40 = arith.divsi %xindex, %k40 : tensor<16x64xi32>
    %x9 = arith.remsi %q40, %k2 : tensor<16x64xi32>
    %o10 = arith.muli %x10, %k40 : tensor<16x64xi32>
    %o9 = arith.muli %x9, %k640 : tensor<16x64xi32>
    %s1 = arith.addi %in, %o10 : tensor<16x64xi32>
    %off = arith.addi %s1, %o9 : tensor<16x64xi32>
    %p = tt.addptr %ys, %off : tensor<16x64x!tt.ptr<f32>>, tensor<16x64xi32>
    %v = tt.load %p, %amask : tensor<16x64x!tt.ptr<f32>>
    %w = tt.load %p : tensor<16x64x!tt.ptr<f32>>
    scf.yield
  }
  tt.return
}

// `torch.compile(dynamic=True)` of llama_mlp at batch 16: `in1 + (x0 + 64*x1*((ks1*ks1)//ks1))` with
// `x0 = xindex % ks0`, `x1 = xindex // ks0` and ks0 a run-time scalar (a multiple of 16 by its hint). Over
// aligned runs of 16 lanes (the block's start and ks0 multiples of 16) x0 steps by 1 and x1 is constant: the
// offset tile is rows of 16 contiguous elements, each starting at the tile's value at the row's first lane.
// An indexed DMA of those rows (the tile sampled at row starts); the mask `xindex < xnumel` bounds whole rows.
// Without the divisor's hint a run may cross a multiple of ks0; from `xindex + 4` the aligned runs are of 4
// lanes, 16 bytes, less than a DMA granule: an element gather on the scalar core.
// CHECK-LABEL: tt.func public @split_by_runtime_scalar
// CHECK: tt.load {{.*}} {mtia.access = "dma_gather_rows base=%in1+0 index=%off*1 strides=[0, 1] bounds=[((%xnumel - %xoffset) // 16), 16] shape=[16, 16] view=[256] index_at_row_starts"}
// CHECK: tt.load {{.*}} {mtia.access = "scalar: index tile varies along the last dimension (an element gather, not rows)"}
// CHECK: tt.load {{.*}} {mtia.access = "scalar: index tile varies along the last dimension (an element gather, not rows)"}
// `(2 * xindex) % ks0` steps by 2 and may wrap inside a run (ks0 = 16: every 8 lanes): an element gather. A
// store through the rows stays on the scalar core (an indexed DMA only reads).
// CHECK: tt.load {{.*}} {mtia.access = "scalar: index tile varies along the last dimension (an element gather, not rows)"}
// CHECK: tt.store {{.*}} {mtia.access = "scalar: store through an index tile that varies along the last dimension (an element scatter, not rows)"}
tt.func public @split_by_runtime_scalar(%in1: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %ks0: i64 {tt.divisibility = 16 : i32}, %ks1: i64, %ks2: i64, %xnumel: i32 {tt.divisibility = 16 : i32}) {
  %pid = tt.get_program_id x : i32
  %c256 = arith.constant 256 : i32
  %xoffset = arith.muli %pid, %c256 : i32
  %r = tt.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %xo = tt.splat %xoffset : i32 -> tensor<256xi32>
  %xindex = arith.addi %xo, %r : tensor<256xi32>
  %xn = tt.splat %xnumel : i32 -> tensor<256xi32>
  %xmask = arith.cmpi slt, %xindex, %xn : tensor<256xi32>
  %xi = arith.extsi %xindex : tensor<256xi32> to tensor<256xi64>
  %ks0s = tt.splat %ks0 : i64 -> tensor<256xi64>
  %x0 = arith.remsi %xi, %ks0s : tensor<256xi64>
  %x1 = arith.divsi %xi, %ks0s : tensor<256xi64>
  %c64 = arith.constant dense<64> : tensor<256xi64>
  %m = arith.muli %c64, %x1 : tensor<256xi64>
  %sq = arith.muli %ks1, %ks1 : i64
  %s = arith.divsi %sq, %ks1 : i64
  %ss = tt.splat %s : i64 -> tensor<256xi64>
  %row = arith.muli %m, %ss : tensor<256xi64>
  %off = arith.addi %x0, %row : tensor<256xi64>
  %ins = tt.splat %in1 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
  %p = tt.addptr %ins, %off : tensor<256x!tt.ptr<f32>>, tensor<256xi64>
  %v = tt.load %p, %xmask : tensor<256x!tt.ptr<f32>>
  %ks2s = tt.splat %ks2 : i64 -> tensor<256xi64>
  %y0 = arith.remsi %xi, %ks2s : tensor<256xi64>
  %y1 = arith.divsi %xi, %ks2s : tensor<256xi64>
  %ym = arith.muli %c64, %y1 : tensor<256xi64>
  %yoff = arith.addi %y0, %ym : tensor<256xi64>
  %q = tt.addptr %ins, %yoff : tensor<256x!tt.ptr<f32>>, tensor<256xi64>
  %w = tt.load %q, %xmask : tensor<256x!tt.ptr<f32>>
  %c4 = arith.constant dense<4> : tensor<256xi64>
  %zi = arith.addi %xi, %c4 : tensor<256xi64>
  %z0 = arith.remsi %zi, %ks0s : tensor<256xi64>
  %z1 = arith.divsi %zi, %ks0s : tensor<256xi64>
  %zm = arith.muli %c64, %z1 : tensor<256xi64>
  %zoff = arith.addi %z0, %zm : tensor<256xi64>
  %t = tt.addptr %ins, %zoff : tensor<256x!tt.ptr<f32>>, tensor<256xi64>
  %u = tt.load %t, %xmask : tensor<256x!tt.ptr<f32>>
  %c2 = arith.constant dense<2> : tensor<256xi64>
  %di = arith.muli %xi, %c2 : tensor<256xi64>
  %d0 = arith.remsi %di, %ks0s : tensor<256xi64>
  %dp = tt.addptr %ins, %d0 : tensor<256x!tt.ptr<f32>>, tensor<256xi64>
  %dv = tt.load %dp, %xmask : tensor<256x!tt.ptr<f32>>
  tt.store %p, %v, %xmask : tensor<256x!tt.ptr<f32>>
  tt.return
}

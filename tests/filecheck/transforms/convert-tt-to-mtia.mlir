// RUN: mtia-opt %s --split-input-file -p convert-tt-to-mtia,canonicalize,cse | filecheck %s

// A masked 1-d block: one DMA each way with the mask turned into a bound, the add on the SE.
// CHECK-LABEL: tt.func public @vector_add
// CHECK-NOT:     tt.load
// CHECK:         %[[X:.*]] = mtia.dma_load %{{.*}}[%{{.*}}] bounds[%[[BOUND:.*]]] : !tt.ptr<f32> -> tensor<128xf32>
// CHECK:         %[[Y:.*]] = mtia.dma_load %{{.*}}[%{{.*}}] bounds[%[[BOUND]]] : !tt.ptr<f32> -> tensor<128xf32>
// CHECK:         %[[S:.*]] = mtia.se_compute ins(%[[X]], %[[Y]] : tensor<128xf32>, tensor<128xf32>) {
// CHECK:           arith.addf
// CHECK:         mtia.dma_store %[[S]], %{{.*}}[%{{.*}}] bounds[%[[BOUND]]] : tensor<128xf32>, !tt.ptr<f32>
// CHECK-NOT:     tt.store
tt.func public @vector_add(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %out: !tt.ptr<f32>, %n: i32) {
  %c128 = arith.constant 128 : i32
  %pid = tt.get_program_id x : i32
  %start = arith.muli %pid, %c128 : i32
  %range = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %s = tt.splat %start : i32 -> tensor<128xi32>
  %offs = arith.addi %s, %range : tensor<128xi32>
  %ns = tt.splat %n : i32 -> tensor<128xi32>
  %mask = arith.cmpi slt, %offs, %ns : tensor<128xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %xp = tt.addptr %xs, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %xv = tt.load %xp, %mask : tensor<128x!tt.ptr<f32>>
  %ys = tt.splat %y : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %yp = tt.addptr %ys, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %yv = tt.load %yp, %mask : tensor<128x!tt.ptr<f32>>
  %sum = arith.addf %xv, %yv : tensor<128xf32>
  %os = tt.splat %out : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %op = tt.addptr %os, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  tt.store %op, %sum, %mask : tensor<128x!tt.ptr<f32>>
  tt.return
}

// -----

// Offsets through a modulo are not an affine block: scalar gather, with the mask kept.
// CHECK-LABEL: tt.func public @wrapped
// CHECK:         arith.remsi
// CHECK:         %[[P:.*]] = mtia.vec_compute ins(%{{.*}}, %{{.*}} : tensor<64x!tt.ptr<f32>>, tensor<64xi32>) {
// CHECK:           tt.addptr
// CHECK:         "mtia.gather"(%[[P]], %{{.*}}, %{{.*}})
// CHECK-NOT:     tt.load
tt.func public @wrapped(%x: !tt.ptr<f32>, %n: i32) -> tensor<64xf32> {
  %range = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ns = tt.splat %n : i32 -> tensor<64xi32>
  %offs = arith.remsi %range, %ns : tensor<64xi32>
  %mask = arith.cmpi slt, %range, %ns : tensor<64xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %xp = tt.addptr %xs, %offs : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %v = tt.load %xp, %mask, %zero : tensor<64x!tt.ptr<f32>>
  tt.return %v : tensor<64xf32>
}

// -----

// A tensor of pointers advanced by a uniform step each iteration becomes a scalar base pointer,
// the 2-d masked tiles become DMAs, tl.dot the DPE.
// CHECK-LABEL: tt.func public @k_loop
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[BASE:.*]] = %{{.*}}) -> (tensor<16x16xf32>, !tt.ptr<f16>)
// CHECK:           %[[A:.*]] = mtia.dma_load %[[BASE]][%{{.*}}, %{{.*}}] bounds[%{{.*}}, %{{.*}}] other(%{{.*}} : f16) : !tt.ptr<f16> -> tensor<16x16xf16>
// CHECK:           %[[D:.*]] = mtia.dpe_matmul %[[A]], %[[A]], %[[ACC]] {input_precision = 2 : i32}
// CHECK:           %[[NEXT:.*]] = tt.addptr %[[BASE]], %{{.*}} : !tt.ptr<f16>, i64
// CHECK:           scf.yield %[[D]], %[[NEXT]] : tensor<16x16xf32>, !tt.ptr<f16>
tt.func public @k_loop(%a: !tt.ptr<f16>, %k: i32, %stride: i32) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %rows = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %st = tt.splat %stride : i32 -> tensor<16x1xi32>
  %rowoff = arith.muli %rows, %st : tensor<16x1xi32>
  %cols = tt.expand_dims %r {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %rb = tt.broadcast %rowoff : tensor<16x1xi32> -> tensor<16x16xi32>
  %cb = tt.broadcast %cols : tensor<1x16xi32> -> tensor<16x16xi32>
  %offs = arith.addi %rb, %cb : tensor<16x16xi32>
  %as = tt.splat %a : !tt.ptr<f16> -> tensor<16x16x!tt.ptr<f16>>
  %ptrs = tt.addptr %as, %offs : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
  %step = tt.splat %c16 : i32 -> tensor<16x16xi32>
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %other = arith.constant dense<0.0> : tensor<16x16xf16>
  %res:2 = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %zero, %p = %ptrs) -> (tensor<16x16xf32>, tensor<16x16x!tt.ptr<f16>>) : i32 {
    %left = arith.subi %k, %i : i32
    %ls = tt.splat %left : i32 -> tensor<1x16xi32>
    %m1 = arith.cmpi slt, %cols, %ls : tensor<1x16xi32>
    %mask = tt.broadcast %m1 : tensor<1x16xi1> -> tensor<16x16xi1>
    %tile = tt.load %p, %mask, %other : tensor<16x16x!tt.ptr<f16>>
    %d = tt.dot %tile, %tile, %acc : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
    %next = tt.addptr %p, %step : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
    scf.yield %d, %next : tensor<16x16xf32>, tensor<16x16x!tt.ptr<f16>>
  }
  tt.return %res#0 : tensor<16x16xf32>
}

// -----

// Reductions with a plain combiner go to the RE; scalar math on their result stays on an engine;
// scalar accesses are scalar-core loads and stores.
// CHECK-LABEL: tt.func public @reduce
// CHECK:         %[[V:.*]] = mtia.scalar_load %{{.*}} : !tt.ptr<f32> -> f32
// CHECK:         %[[R:.*]] = mtia.re_reduce %{{.*}} {axis = 0 : i32, kind = "maxnumf"} : tensor<32xf32> -> f32
// CHECK:         %[[M:.*]] = mtia.se_compute ins(%[[R]], %[[V]] : f32, f32) {
// CHECK:           arith.mulf
// CHECK:         mtia.scalar_store %{{.*}}, %[[M]] : !tt.ptr<f32>, f32
tt.func public @reduce(%x: tensor<32xf32>, %p: !tt.ptr<f32>) {
  %v = tt.load %p : !tt.ptr<f32>
  %r = "tt.reduce"(%x) <{axis = 0 : i32}> ({
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tt.reduce.return %m : f32
  }) : (tensor<32xf32>) -> f32
  %s = arith.mulf %r, %v : f32
  tt.store %p, %s : !tt.ptr<f32>
  tt.return
}

// -----

// A masked scalar access runs on the scalar core under an scf.if; the masked-off load yields `other`.
// CHECK-LABEL: tt.func public @masked_scalar
// CHECK:         %[[V:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK-NEXT:      %[[L:.*]] = mtia.scalar_load %{{.*}} : !tt.ptr<f32> -> f32
// CHECK-NEXT:      scf.yield %[[L]] : f32
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %{{.*}} : f32
// CHECK-NEXT:    }
// CHECK:         scf.if %{{.*}} {
// CHECK-NEXT:      mtia.scalar_store %{{.*}}, %[[V]] : !tt.ptr<f32>, f32
// CHECK-NEXT:    }
tt.func public @masked_scalar(%p: !tt.ptr<f32>, %q: !tt.ptr<f32>, %c: i1) {
  %other = arith.constant 2.0 : f32
  %v = tt.load %p, %c, %other : !tt.ptr<f32>
  tt.store %q, %v, %c : !tt.ptr<f32>
  tt.return
}

// -----

// A flat index split across rows (`x0 = xindex % 64`, `x1 = xindex // 64`, a block of 128 at pid * 128): a
// 2x64 box read by one DMA and reshaped to the flat block; a store of a box reshapes the flat value back.
// CHECK-LABEL: tt.func public @flat_index_rows
// CHECK:         %[[BOX:.*]] = mtia.dma_load %{{.*}}[%{{.*}}, %{{.*}}] bounds[%{{.*}}, %{{.*}}] : !tt.ptr<f32> -> tensor<2x64xf32>
// CHECK:         mtia.mlu_compute ins(%[[BOX]] : tensor<2x64xf32>)
// CHECK:           tt.reshape %{{.*}} : tensor<2x64xf32> -> tensor<128xf32>
// CHECK:         %[[BACK:.*]] = mtia.mlu_compute ins(%{{.*}} : tensor<128xf32>)
// CHECK:           tt.reshape %{{.*}} : tensor<128xf32> -> tensor<2x64xf32>
// CHECK:         mtia.dma_store %[[BACK]], %{{.*}}[%{{.*}}, %{{.*}}] bounds[%{{.*}}, %{{.*}}] : tensor<2x64xf32>, !tt.ptr<f32>
// CHECK-NOT:     mtia.gather
// CHECK-NOT:     mtia.scatter
tt.func public @flat_index_rows(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
  %pid = tt.get_program_id x : i32
  %c128 = arith.constant 128 : i32
  %off = arith.muli %pid, %c128 : i32
  %offs = tt.splat %off : i32 -> tensor<128xi32>
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %xindex = arith.addi %offs, %r : tensor<128xi32>
  %c64 = arith.constant dense<64> : tensor<128xi32>
  %s128 = arith.constant dense<128> : tensor<128xi32>
  %x0 = arith.remsi %xindex, %c64 : tensor<128xi32>
  %x1 = arith.divsi %xindex, %c64 : tensor<128xi32>
  %row = arith.muli %x1, %s128 : tensor<128xi32>
  %idx = arith.addi %x0, %row : tensor<128xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %p = tt.addptr %xs, %idx : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %v = tt.load %p : tensor<128x!tt.ptr<f32>>
  %w = arith.addf %v, %v : tensor<128xf32>
  %os = tt.splat %out : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %q = tt.addptr %os, %idx : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  tt.store %q, %w : tensor<128x!tt.ptr<f32>>
  tt.return
}

// -----

// Rows picked by a computed index (`rm % 5` over 16 rows, the bmm template's A and B = A^T) through a K loop:
// the loop carries the scalar distance advanced and adds it to the loop-invariant pointer tile; each load is
// an indexed DMA, B's in memory order (its index tile transposed, the gathered rows transposed back).
// CHECK-LABEL: tt.func public @wrapping_rows_in_k_loop
// CHECK-NOT:     mtia.gather
// CHECK:         scf.for {{.*}} -> (tensor<16x16xf32>, i64, i64)
// CHECK:           mtia.dma_gather_rows %{{.*}}[%rows * %{{.*}}] [%{{.*}}, %{{.*}}] bounds
// CHECK:             tt.trans {{.*}} : tensor<1x16xi32> -> tensor<16x1xi32>
// CHECK:           mtia.dma_gather_rows {{.*}} : !tt.ptr<f32>, tensor<16x1xi32> -> tensor<16x16xf32>
// CHECK:             tt.trans {{.*}} {order = array<i32: 1, 0>} : tensor<16x16xf32> -> tensor<16x16xf32>
// CHECK:           mtia.dpe_matmul
// CHECK-NOT:     mtia.gather
tt.func public @wrapping_rows_in_k_loop(%a: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
  %c0 = arith.constant 0 : i32
  %c16i = arith.constant 16 : i32
  %c32i = arith.constant 32 : i32
  %c5 = arith.constant dense<5> : tensor<16xi32>
  %c32 = arith.constant dense<32> : tensor<16x1xi32>
  %c32t = arith.constant dense<32> : tensor<1x16xi32>
  %step = arith.constant dense<16> : tensor<16x16xi32>
  %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %ram = arith.remsi %r, %c5 : tensor<16xi32>
  %rows = tt.expand_dims %ram {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %rowoff = arith.muli %rows, %c32 : tensor<16x1xi32>
  %k = tt.expand_dims %r {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %rb = tt.broadcast %rowoff : tensor<16x1xi32> -> tensor<16x16xi32>
  %kb = tt.broadcast %k : tensor<1x16xi32> -> tensor<16x16xi32>
  %offs = arith.addi %rb, %kb : tensor<16x16xi32>
  %as = tt.splat %a : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %pa = tt.addptr %as, %offs : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  %cols = tt.expand_dims %ram {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %coloff = arith.muli %cols, %c32t : tensor<1x16xi32>
  %kc = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %cb = tt.broadcast %coloff : tensor<1x16xi32> -> tensor<16x16xi32>
  %kcb = tt.broadcast %kc : tensor<16x1xi32> -> tensor<16x16xi32>
  %offs2 = arith.addi %kcb, %cb : tensor<16x16xi32>
  %pb = tt.addptr %as, %offs2 : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  %acc, %pa2, %pb2 = scf.for %i = %c0 to %c32i step %c16i iter_args(%s = %zero, %x = %pa, %y = %pb) -> (tensor<16x16xf32>, tensor<16x16x!tt.ptr<f32>>, tensor<16x16x!tt.ptr<f32>>) : i32 {
    %va = tt.load %x : tensor<16x16x!tt.ptr<f32>>
    %vb = tt.load %y : tensor<16x16x!tt.ptr<f32>>
    %d = tt.dot %va, %vb, %s : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
    %x2 = tt.addptr %x, %step : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
    %y2 = tt.addptr %y, %step : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
    scf.yield %d, %x2, %y2 : tensor<16x16xf32>, tensor<16x16x!tt.ptr<f32>>, tensor<16x16x!tt.ptr<f32>>
  }
  %os = tt.splat %out : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %po = tt.addptr %os, %offs : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  tt.store %po, %acc : tensor<16x16x!tt.ptr<f32>>
  tt.return
}

// -----

// An element gather from a small box (the template's B column `rn % 13` of rows `rk < K`): one DMA of the
// rows [16, 13] flat, no further than the end of b's storage, each lane's position in them from its address,
// a gather inside LS on the vector core, masked-off rows `other`. Exact (no lane can fall outside the box):
// the scalar core gathers lanes past the moved elements only when the box was clipped at b's end (`scf.if`).
// CHECK-LABEL: tt.func public @columns_mod_n
// CHECK:         %[[ROWS:.*]] = arith.muli %{{.*}}, %{{.*}} : i64
// CHECK:         %[[EXTENT:.*]] = mtia.storage_extent %b : !tt.ptr<f32>
// CHECK:         %[[MOVED:.*]] = arith.minsi %[[ROWS]], %[[EXTENT]] : i64
// CHECK:         mtia.dma_load %b[%{{.*}}] bounds[%[[MOVED]]] {{.*}} -> tensor<208xf32>
// CHECK:         tt.ptr_to_int {{.*}} : tensor<16x16x!tt.ptr<f32>> -> tensor<16x16xi64>
// CHECK:         mtia.vec_compute
// CHECK:           tt.gather {{.*}} {axis = 0 : i32} : (tensor<208xf32>, tensor<256xi64>) -> tensor<256xf32>
// CHECK:         %[[CLIPPED:.*]] = arith.cmpi slt, %[[MOVED]], %[[ROWS]] : i64
// CHECK:         scf.if %[[CLIPPED]] -> (tensor<16x16xf32>) {
// CHECK:           "mtia.gather"(%p, %{{.*}}) {{.*}} {mtia.outside_box}
// CHECK:         } else {
// CHECK-NOT:     mtia.gather
// CHECK-NOT:     tt.load
tt.func public @columns_mod_n(%b: !tt.ptr<f32>, %k: i32, %out: !tt.ptr<f32>) {
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
  %os = tt.splat %out : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  tt.store %os, %v : tensor<16x16x!tt.ptr<f32>>
  tt.return
}

// -----

// A checked element gather `x[t[r] + 8 * r]`, rows r < 32: the box of 32 rows of 8 moved flat, no further
// than the end of x's storage (a valid kernel's box may span past its tensor), lanes past what the DMA moved
// gathered by the scalar core (which raises for a lane outside every tensor).
// CHECK-LABEL: tt.func public @gather_rows_of_8
// CHECK:         %[[EXTENT:.*]] = mtia.storage_extent %x : !tt.ptr<f32>
// CHECK:         %[[MOVED:.*]] = arith.minsi %{{.*}}, %[[EXTENT]] : i64
// CHECK:         mtia.dma_load %x[%{{.*}}] bounds[%[[MOVED]]] : !tt.ptr<f32> -> tensor<256xf32>
// CHECK:         arith.cmpi slt, %{{.*}}, %{{.*}} : tensor<32xi64>
// CHECK:           tt.gather {{.*}} {axis = 0 : i32} : (tensor<256xf32>, tensor<32xi64>) -> tensor<32xf32>
// CHECK:         "mtia.gather"(%p, %{{.*}}) {{.*}} {mtia.outside_box}
// CHECK-NOT:     tt.load
tt.func public @gather_rows_of_8(%x: !tt.ptr<f32>, %t: !tt.ptr<i64>, %out: !tt.ptr<f32>) {
  %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %ts = tt.splat %t : !tt.ptr<i64> -> tensor<32x!tt.ptr<i64>>
  %tp = tt.addptr %ts, %r : tensor<32x!tt.ptr<i64>>, tensor<32xi32>
  %tv = tt.load %tp : tensor<32x!tt.ptr<i64>>
  %r64 = arith.extsi %r : tensor<32xi32> to tensor<32xi64>
  %c8 = arith.constant dense<8> : tensor<32xi64>
  %row = arith.muli %r64, %c8 : tensor<32xi64>
  %off = arith.addi %tv, %row : tensor<32xi64>
  %c32 = arith.constant dense<32> : tensor<32xi32>
  %mask = arith.cmpi slt, %r, %c32 : tensor<32xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
  %p = tt.addptr %xs, %off : tensor<32x!tt.ptr<f32>>, tensor<32xi64>
  %v = tt.load %p, %mask : tensor<32x!tt.ptr<f32>>
  %os = tt.splat %out : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
  %po = tt.addptr %os, %r : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
  tt.store %po, %v : tensor<32x!tt.ptr<f32>>
  tt.return
}

// -----

// cnn's channels-last copy (see test-mtia-memory-access.mlir @channels_last_copy): the tile's first 6 rows
// (an MLU slice), reshaped to the box [2, 3, 16] and transposed by the MLU into memory order [2, 16, 3]
// (contiguous runs of 3 elements, each box row 48 contiguous elements), stored by one DMA.
// CHECK-LABEL: tt.func public @channels_last_copy
// CHECK:         mtia.extract_slice %{{.*}} {static_offsets = array<i64: 0, 0>} : tensor<8x16xf32> -> tensor<6x16xf32>
// CHECK:         tt.reshape %{{.*}} : tensor<6x16xf32> -> tensor<2x3x16xf32>
// CHECK:         tt.trans %{{.*}} {order = array<i32: 0, 2, 1>} : tensor<2x3x16xf32> -> tensor<2x16x3xf32>
// CHECK:         mtia.dma_store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] bounds[%{{.*}}, %{{.*}}, %{{.*}}] : tensor<2x16x3xf32>, !tt.ptr<f32>
// CHECK-NOT:     mtia.scatter
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
  tt.return
}

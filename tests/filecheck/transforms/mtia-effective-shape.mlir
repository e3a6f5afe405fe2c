// RUN: mtia-opt %s -p mtia-effective-shape --split-input-file | filecheck %s

// A softmax row: the -inf fill reaches max (its identity), so the max runs over [0, %n). Through
// x - max and exp the fill is 0 only if max is finite, and a scalar may be inf or NaN at run time, so
// exp keeps the whole tile, the sum runs over all lanes and the load keeps its fill. The division is
// only stored with bounds %n: it computes [0, %n) only.
// CHECK-LABEL: func.func @softmax_row
// CHECK:       %[[N:.*]] = arith.extsi
// CHECK:       %[[X:.*]] = mtia.dma_load %{{.*}}[%{{.*}}] bounds[%[[N]]] other(%{{.*}} : f32) : !tt.ptr<f32> -> tensor<1024xf32>
// CHECK:       mtia.re_reduce %[[X]] valid[%[[N]]] {axis = 0 : i32, kind = "maxnumf"}
// CHECK:       mtia.se_compute ins({{.*}}) {
// CHECK:       math.exp
// CHECK:       mtia.re_reduce %{{.*}} {axis = 0 : i32, kind = "addf"}
// CHECK:       mtia.se_compute ins({{.*}}) valid[%[[N]]] {
// CHECK:       arith.divf
// CHECK:       mtia.dma_store
func.func @softmax_row(%p: !tt.ptr<f32>, %q: !tt.ptr<f32>, %n32: i32) {
  %one = arith.constant 1 : i64
  %n = arith.extsi %n32 : i32 to i64
  %ninf = arith.constant 0xff800000 : f32
  %x = mtia.dma_load %p[%one] bounds[%n] other(%ninf : f32) : !tt.ptr<f32> -> tensor<1024xf32>
  %m = mtia.re_reduce %x {axis = 0 : i32, kind = "maxnumf"} : tensor<1024xf32> -> f32
  %e = mtia.se_compute ins(%x, %m : tensor<1024xf32>, f32) {
  ^bb0(%a: tensor<1024xf32>, %s: f32):
    %ms = tt.splat %s : f32 -> tensor<1024xf32>
    %d = arith.subf %a, %ms : tensor<1024xf32>
    %ex = math.exp %d : tensor<1024xf32>
    mtia.yield %ex : tensor<1024xf32>
  } -> tensor<1024xf32>
  %sum = mtia.re_reduce %e {axis = 0 : i32, kind = "addf"} : tensor<1024xf32> -> f32
  %y = mtia.se_compute ins(%e, %sum : tensor<1024xf32>, f32) {
  ^bb0(%a: tensor<1024xf32>, %s: f32):
    %ss = tt.splat %s : f32 -> tensor<1024xf32>
    %r = arith.divf %a, %ss : tensor<1024xf32>
    mtia.yield %r : tensor<1024xf32>
  } -> tensor<1024xf32>
  mtia.dma_store %y, %q[%one] bounds[%n] : tensor<1024xf32>, !tt.ptr<f32>
  func.return
}

// -----

// A sum over a -inf fill is not its identity: the reduction reads the whole tile, so the load keeps its
// fill and the elementwise op feeding the reduction computes every lane.
// CHECK-LABEL: func.func @fill_not_identity
// CHECK:       mtia.dma_load %{{.*}} other(%{{.*}} : f32)
// CHECK:       mtia.se_compute ins(%{{.*}} : tensor<256xf32>) {
// CHECK:       mtia.re_reduce %{{.*}} {axis = 0 : i32, kind = "addf"}
// CHECK-NOT:   valid
func.func @fill_not_identity(%p: !tt.ptr<f32>, %n: i64) -> f32 {
  %one = arith.constant 1 : i64
  %ninf = arith.constant 0xff800000 : f32
  %x = mtia.dma_load %p[%one] bounds[%n] other(%ninf : f32) : !tt.ptr<f32> -> tensor<256xf32>
  %h = mtia.se_compute ins(%x : tensor<256xf32>) {
  ^bb0(%a: tensor<256xf32>):
    %t = arith.mulf %a, %a : tensor<256xf32>
    mtia.yield %t : tensor<256xf32>
  } -> tensor<256xf32>
  %s = mtia.re_reduce %h {axis = 0 : i32, kind = "addf"} : tensor<256xf32> -> f32
  func.return %s : f32
}

// -----

// Operands with different extents: the result's extent is unknown, so a reduction of it reads the
// whole tile and both loads keep their fills (conservative).
// CHECK-LABEL: func.func @different_extents
// CHECK:       mtia.dma_load %{{.*}} other(%{{.*}} : f32)
// CHECK:       mtia.dma_load %{{.*}} other(%{{.*}} : f32)
// CHECK:       mtia.se_compute ins(%{{.*}}, %{{.*}} : tensor<256xf32>, tensor<256xf32>) {
// CHECK:       mtia.re_reduce %{{.*}} {axis = 0 : i32, kind = "addf"}
// CHECK-NOT:   valid
func.func @different_extents(%p: !tt.ptr<f32>, %n: i64, %k: i64) -> f32 {
  %one = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f32
  %x = mtia.dma_load %p[%one] bounds[%n] other(%zero : f32) : !tt.ptr<f32> -> tensor<256xf32>
  %y = mtia.dma_load %p[%one] bounds[%k] other(%zero : f32) : !tt.ptr<f32> -> tensor<256xf32>
  %z = mtia.se_compute ins(%x, %y : tensor<256xf32>, tensor<256xf32>) {
  ^bb0(%a: tensor<256xf32>, %b: tensor<256xf32>):
    %t = arith.addf %a, %b : tensor<256xf32>
    mtia.yield %t : tensor<256xf32>
  } -> tensor<256xf32>
  %s = mtia.re_reduce %z {axis = 0 : i32, kind = "addf"} : tensor<256xf32> -> f32
  func.return %s : f32
}

// -----

// Demand alone: a result stored with bounds %n needs only [0, %n), whatever its operands' extents; the
// operand whose extent is %n loses its fill, the one with extent %k (observed below %n) keeps it.
// CHECK-LABEL: func.func @demanded_by_store
// CHECK:       mtia.dma_load %{{.*}} bounds[%[[N:[a-z0-9]+]]] : !tt.ptr<f32> -> tensor<256xf32>
// CHECK:       mtia.dma_load %{{.*}} bounds[%{{.*}}] other(%{{.*}} : f32)
// CHECK:       mtia.se_compute ins(%{{.*}}, %{{.*}} : tensor<256xf32>, tensor<256xf32>) valid[%[[N]]] {
func.func @demanded_by_store(%p: !tt.ptr<f32>, %q: !tt.ptr<f32>, %n: i64, %k: i64) {
  %one = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f32
  %x = mtia.dma_load %p[%one] bounds[%n] other(%zero : f32) : !tt.ptr<f32> -> tensor<256xf32>
  %y = mtia.dma_load %p[%one] bounds[%k] other(%zero : f32) : !tt.ptr<f32> -> tensor<256xf32>
  %z = mtia.se_compute ins(%x, %y : tensor<256xf32>, tensor<256xf32>) {
  ^bb0(%a: tensor<256xf32>, %b: tensor<256xf32>):
    %t = arith.addf %a, %b : tensor<256xf32>
    mtia.yield %t : tensor<256xf32>
  } -> tensor<256xf32>
  mtia.dma_store %z, %q[%one] bounds[%n] : tensor<256xf32>, !tt.ptr<f32>
  func.return
}

// -----

// Stored with other bounds than its extent: the masked lanes are observed; nothing changes.
// CHECK-LABEL: func.func @store_other_bounds
// CHECK:       mtia.dma_load %{{.*}} other(%{{.*}} : f32)
// CHECK-NOT:   valid
func.func @store_other_bounds(%p: !tt.ptr<f32>, %q: !tt.ptr<f32>, %n: i64, %k: i64) {
  %one = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f32
  %x = mtia.dma_load %p[%one] bounds[%n] other(%zero : f32) : !tt.ptr<f32> -> tensor<256xf32>
  %z = mtia.se_compute ins(%x : tensor<256xf32>) {
  ^bb0(%a: tensor<256xf32>):
    %t = arith.addf %a, %a : tensor<256xf32>
    mtia.yield %t : tensor<256xf32>
  } -> tensor<256xf32>
  mtia.dma_store %z, %q[%one] bounds[%k] : tensor<256xf32>, !tt.ptr<f32>
  func.return
}

// -----

// Extents computed twice (outside and inside a loop) agree when they are the same pure computation.
// CHECK-LABEL: func.func @equal_computations
// CHECK:       mtia.dma_load %{{.*}} bounds[%[[N:.*]]] : !tt.ptr<f32> -> tensor<256xf32>
// CHECK:       mtia.se_compute ins(%{{.*}} : tensor<256xf32>) valid[%[[N]]] {
func.func @equal_computations(%p: !tt.ptr<f32>, %q: !tt.ptr<f32>, %n32: i32) {
  %one = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f32
  %n = arith.extsi %n32 : i32 to i64
  %x = mtia.dma_load %p[%one] bounds[%n] other(%zero : f32) : !tt.ptr<f32> -> tensor<256xf32>
  %z = mtia.se_compute ins(%x : tensor<256xf32>) {
  ^bb0(%a: tensor<256xf32>):
    %t = arith.addf %a, %a : tensor<256xf32>
    mtia.yield %t : tensor<256xf32>
  } -> tensor<256xf32>
  %n2 = arith.extsi %n32 : i32 to i64
  mtia.dma_store %z, %q[%one] bounds[%n2] : tensor<256xf32>, !tt.ptr<f32>
  func.return
}

// -----

// A K loop tile of a matmul: a and b hold 0 past the same K extent, so the DPE runs over [0, %k) of K
// and never reads b's masked lanes (b loses its fill); it reads a's rows past %m (the result is not
// shrunk, so a keeps its fill).
// CHECK-LABEL: func.func @dot_k_tail
// CHECK:       mtia.dma_load %{{.*}} bounds[%{{.*}}, %[[K:[a-z0-9]+]]] other
// CHECK:       mtia.dma_load %{{.*}} bounds[%[[K]], %{{.*}}] : !tt.ptr<f16> -> tensor<32x64xf16>
// CHECK:       %[[C64:.*]] = arith.constant 64 : i64
// CHECK:       mtia.dpe_matmul %{{.*}}, %{{.*}}, %{{.*}} valid[%[[C64]], %[[C64]], %[[K]]] {input_precision = 0 : i32}
func.func @dot_k_tail(%pa: !tt.ptr<f16>, %pb: !tt.ptr<f16>, %m: i64, %k: i64, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %one = arith.constant 1 : i64
  %s = arith.constant 32 : i64
  %zero = arith.constant 0.0 : f16
  %full = arith.constant 64 : i64
  %a = mtia.dma_load %pa[%s, %one] bounds[%m, %k] other(%zero : f16) : !tt.ptr<f16> -> tensor<64x32xf16>
  %b = mtia.dma_load %pb[%full, %one] bounds[%k, %full] other(%zero : f16) : !tt.ptr<f16> -> tensor<32x64xf16>
  %d = mtia.dpe_matmul %a, %b, %acc {input_precision = 0 : i32} : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  func.return %d : tensor<64x64xf32>
}

// -----

// A K tail whose b is filled with 1, not 0: the DPE keeps the whole K.
// CHECK-LABEL: func.func @dot_fill_not_zero
// CHECK:       mtia.dpe_matmul %{{.*}}, %{{.*}}, %{{.*}} {input_precision = 0 : i32}
func.func @dot_fill_not_zero(%pa: !tt.ptr<f16>, %pb: !tt.ptr<f16>, %k: i64, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %one = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f16
  %onef = arith.constant 1.0 : f16
  %full = arith.constant 64 : i64
  %a = mtia.dma_load %pa[%full, %one] bounds[%full, %k] other(%zero : f16) : !tt.ptr<f16> -> tensor<64x32xf16>
  %b = mtia.dma_load %pb[%full, %one] bounds[%k, %full] other(%onef : f16) : !tt.ptr<f16> -> tensor<32x64xf16>
  %d = mtia.dpe_matmul %a, %b, %acc {input_precision = 0 : i32} : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  func.return %d : tensor<64x64xf32>
}

// -----

// A K loop carrying the accumulator: its rows past %m and columns past %n are only stored with the
// same (loop-invariant) bounds after the loop, so the DPE computes [0, %m) x [0, %n) over [0, %k) and
// the loads need no fill; the conversion after the loop gets the extents, recomputed outside the loop.
// CHECK-LABEL: func.func @carried_accumulator
// CHECK:       scf.for
// CHECK:         %[[M:.*]] = arith.subi %{{.*}}, %{{.*}} : i64
// CHECK:         mtia.dma_load %{{.*}} bounds[%[[M]], %[[K:.*]]] : !tt.ptr<f16> -> tensor<64x32xf16>
// CHECK:         mtia.dma_load %{{.*}} bounds[%[[K]], %[[N:.*]]] : !tt.ptr<f16> -> tensor<32x64xf16>
// CHECK:         mtia.dpe_matmul %{{.*}}, %{{.*}}, %{{.*}} valid[%[[M]], %[[N]], %[[K]]]
// CHECK:       %[[M2:.*]] = arith.subi %{{.*}}, %{{.*}} : i64
// CHECK:       mtia.se_compute ins(%{{.*}} : tensor<64x64xf32>) valid[%[[M2]], %{{.*}}] {
func.func @carried_accumulator(%pa: !tt.ptr<f16>, %pb: !tt.ptr<f16>, %pc: !tt.ptr<f16>, %mm: i64, %off: i64, %n: i64, %k: i64, %steps: i32) {
  %one = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f16
  %full = arith.constant 64 : i64
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %init = mtia.se_compute {
    %z = arith.constant dense<0.0> : tensor<64x64xf32>
    mtia.yield %z : tensor<64x64xf32>
  } -> tensor<64x64xf32>
  %acc = scf.for %i = %c0 to %steps step %c1 iter_args(%c = %init) -> (tensor<64x64xf32>) : i32 {
    %m = arith.subi %mm, %off : i64
    %a = mtia.dma_load %pa[%full, %one] bounds[%m, %k] other(%zero : f16) : !tt.ptr<f16> -> tensor<64x32xf16>
    %b = mtia.dma_load %pb[%full, %one] bounds[%k, %n] other(%zero : f16) : !tt.ptr<f16> -> tensor<32x64xf16>
    %d = mtia.dpe_matmul %a, %b, %c {input_precision = 0 : i32} : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %h = mtia.se_compute ins(%acc : tensor<64x64xf32>) {
  ^bb0(%x: tensor<64x64xf32>):
    %t = arith.truncf %x : tensor<64x64xf32> to tensor<64x64xf16>
    mtia.yield %t : tensor<64x64xf16>
  } -> tensor<64x64xf16>
  %m_out = arith.subi %mm, %off : i64
  mtia.dma_store %h, %pc[%full, %one] bounds[%m_out, %n] : tensor<64x64xf16>, !tt.ptr<f16>
  func.return
}

// -----

// The row extent changes from one iteration to the next: lanes the DPE skipped in one iteration would be
// read in a later one, so only K shrinks and the rows keep their fill.
// CHECK-LABEL: func.func @extent_varies_per_iteration
// CHECK:       mtia.dma_load %{{.*}} bounds[%[[M:.*]], %[[K:.*]]] other
// CHECK:       mtia.dpe_matmul %{{.*}}, %{{.*}}, %{{.*}} valid[%[[C64:.*]], %[[C64]], %[[K]]]
func.func @extent_varies_per_iteration(%pa: !tt.ptr<f16>, %pb: !tt.ptr<f16>, %pc: !tt.ptr<f32>, %k: i64, %steps: i32, %init: tensor<64x64xf32>) {
  %one = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f16
  %full = arith.constant 64 : i64
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %acc = scf.for %i = %c0 to %steps step %c1 iter_args(%c = %init) -> (tensor<64x64xf32>) : i32 {
    %i64 = arith.extsi %i : i32 to i64
    %a = mtia.dma_load %pa[%full, %one] bounds[%i64, %k] other(%zero : f16) : !tt.ptr<f16> -> tensor<64x32xf16>
    %b = mtia.dma_load %pb[%full, %one] bounds[%k, %full] other(%zero : f16) : !tt.ptr<f16> -> tensor<32x64xf16>
    %d = mtia.dpe_matmul %a, %b, %c {input_precision = 0 : i32} : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  mtia.dma_store %acc, %pc[%full, %one] bounds[%full, %full] : tensor<64x64xf32>, !tt.ptr<f32>
  func.return
}

// -----

// The 0 fill times a scalar is 0 for finite scalars only (0 * inf = NaN): the sum keeps every lane.
// CHECK-LABEL: func.func @fill_times_scalar
// CHECK:       mtia.dma_load %{{.*}} other(%{{.*}} : f32)
// CHECK:       mtia.se_compute ins({{.*}}) {
// CHECK:       mtia.re_reduce %{{.*}} {axis = 0 : i32, kind = "addf"}
func.func @fill_times_scalar(%p: !tt.ptr<f32>, %n: i64, %s: f32) -> f32 {
  %one = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f32
  %x = mtia.dma_load %p[%one] bounds[%n] other(%zero : f32) : !tt.ptr<f32> -> tensor<1024xf32>
  %y = mtia.se_compute ins(%x, %s : tensor<1024xf32>, f32) {
  ^bb0(%a: tensor<1024xf32>, %b: f32):
    %bs = tt.splat %b : f32 -> tensor<1024xf32>
    %m = arith.mulf %a, %bs : tensor<1024xf32>
    mtia.yield %m : tensor<1024xf32>
  } -> tensor<1024xf32>
  %r = mtia.re_reduce %y {axis = 0 : i32, kind = "addf"} : tensor<1024xf32> -> f32
  func.return %r : f32
}

// -----

// exp of the -inf fill is 0 whatever the data: the sum runs over [0, %n) and the load needs no fill.
// CHECK-LABEL: func.func @exp_of_fill
// CHECK:       %[[X:.*]] = mtia.dma_load %{{.*}}[%{{.*}}] bounds[%[[N:.*]]] : !tt.ptr<f32> -> tensor<1024xf32>
// CHECK:       mtia.se_compute ins(%[[X]] : tensor<1024xf32>) valid[%[[N]]] {
// CHECK:       mtia.re_reduce %{{.*}} valid[%[[N]]] {axis = 0 : i32, kind = "addf"}
func.func @exp_of_fill(%p: !tt.ptr<f32>, %n: i64) -> f32 {
  %one = arith.constant 1 : i64
  %ninf = arith.constant 0xff800000 : f32
  %x = mtia.dma_load %p[%one] bounds[%n] other(%ninf : f32) : !tt.ptr<f32> -> tensor<1024xf32>
  %e = mtia.se_compute ins(%x : tensor<1024xf32>) {
  ^bb0(%a: tensor<1024xf32>):
    %ex = math.exp %a : tensor<1024xf32>
    mtia.yield %ex : tensor<1024xf32>
  } -> tensor<1024xf32>
  %r = mtia.re_reduce %e {axis = 0 : i32, kind = "addf"} : tensor<1024xf32> -> f32
  func.return %r : f32
}

// RUN: mtia-opt %s --split-input-file -p mtia-cb-bufferize,mtia-software-pipeline,mtia-cb-sizing,test-mtia-cb-liveness | filecheck %s
// RUN: mtia-opt %s --split-input-file -p mtia-cb-bufferize,mtia-cb-sizing,test-mtia-cb-liveness | filecheck %s --check-prefix=ONE

// CB liveness (transforms/analysis/cb_liveness.py): each cb_alloc gets its live range [first, last program
// point] and why it covers whole loops; each kernel its peak (most CBs, most bytes alive at once).

// CHECK-LABEL: tt.func public @straight
// CHECK-SAME:    mtia.cb_peak = "3 CBs alive at point 14 (k.py:3:1); 1024 bytes alive at point 26 (k.py:6:1)"
// CHECK:         mtia.liveness = "[5, 18] 256 bytes, value at k.py:1:1"
// CHECK-NEXT:    mtia.liveness = "[9, 17] 4 bytes, value at k.py:2:1"
// CHECK-NEXT:    mtia.liveness = "[14, 21] 256 bytes, value at k.py:3:1"
// CHECK-NEXT:    mtia.liveness = "[22, 29] 512 bytes, value at k.py:5:1"
// CHECK-NEXT:    mtia.liveness = "[26, 32] 512 bytes, value at k.py:6:1"
// Straight line: %x (row), %m (its max) and %y are alive together; %w and %v are made after %y is
// stored, so they are alive after the others.
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @straight(%p: !tt.ptr<f32>, %s: i64, %n: i64) {
    %x = mtia.dma_load %p[%s] bounds[%n] : !tt.ptr<f32> -> tensor<64xf32> loc("k.py":1:1)
    %m = mtia.re_reduce %x {axis = 0 : i32, kind = "maxnumf"} : tensor<64xf32> -> f32 loc("k.py":2:1)
    %y = mtia.se_compute ins(%x, %m : tensor<64xf32>, f32) {
    ^bb0(%a: tensor<64xf32>, %b: f32):
      %bs = tt.splat %b : f32 -> tensor<64xf32>
      %d = arith.subf %a, %bs : tensor<64xf32>
      mtia.yield %d : tensor<64xf32>
    } -> tensor<64xf32> loc("k.py":3:1)
    mtia.dma_store %y, %p[%s] bounds[%n] : tensor<64xf32>, !tt.ptr<f32> loc("k.py":4:1)
    %w = mtia.dma_load %p[%s] bounds[%n] : !tt.ptr<f32> -> tensor<128xf32> loc("k.py":5:1)
    %v = mtia.se_compute ins(%w : tensor<128xf32>) {
    ^bb0(%a: tensor<128xf32>):
      %d = arith.addf %a, %a : tensor<128xf32>
      mtia.yield %d : tensor<128xf32>
    } -> tensor<128xf32> loc("k.py":6:1)
    mtia.dma_store %v, %p[%s] bounds[%n] : tensor<128xf32>, !tt.ptr<f32> loc("k.py":7:1)
    tt.return
  }
}

// -----

// CHECK-LABEL: tt.func public @loop
// CHECK-SAME:    mtia.cb_peak = "4 CBs alive at point 20 (k.py:14:1); 20480 bytes alive at point 20 (k.py:14:1)"
// CHECK:         mtia.liveness = "[7, 29] 4096 bytes, value at k.py:10:1"
// CHECK-NEXT:    mtia.liveness = "[10, 34] 4096 bytes, value at k.py:11:1"
// CHECK-NEXT:    mtia.liveness = "[14, 28] 8192 bytes, value at k.py:13:1; pipelined (the next iteration's load fills a slot while this one reads) at k.py:12:1"
// CHECK-NEXT:    mtia.liveness = "[20, 27] 4096 bytes, value at k.py:14:1"
// CHECK-NEXT:    mtia.liveness = "[31, 37] 4096 bytes, value at k.py:16:1"
// Without pipelining the load's CB has one slot and lives from its reserve to its pop in the iteration.
// ONE-LABEL:     tt.func public @loop
// ONE:           mtia.liveness = "[15, 23] 4096 bytes, value at k.py:13:1"
// A K loop: %q is loaded before the loop and read in every iteration (alive across the loop), the
// accumulator is updated in place (carried: alive from its zero before the loop to its store after it),
// the streamed load %a is pipelined (two slots: alive around the back edge), the product %t lives
// within one iteration and %o after the loop.
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @loop(%pa: !tt.ptr<f32>, %s: i64, %n: i64, %k: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %q = mtia.dma_load %pa[%s] bounds[%n] : !tt.ptr<f32> -> tensor<1024xf32> loc("k.py":10:1)
    %zero = mtia.se_compute {
      %z = arith.constant dense<0.0> : tensor<1024xf32>
      mtia.yield %z : tensor<1024xf32>
    } -> tensor<1024xf32> loc("k.py":11:1)
    %acc = scf.for %i = %c0 to %k step %c1 iter_args(%c = %zero) -> (tensor<1024xf32>) : i32 {
      %a = mtia.dma_load %pa[%s] bounds[%n] : !tt.ptr<f32> -> tensor<1024xf32> loc("k.py":13:1)
      %t = mtia.se_compute ins(%a, %q : tensor<1024xf32>, tensor<1024xf32>) {
      ^bb0(%u: tensor<1024xf32>, %v: tensor<1024xf32>):
        %w = arith.mulf %u, %v : tensor<1024xf32>
        mtia.yield %w : tensor<1024xf32>
      } -> tensor<1024xf32> loc("k.py":14:1)
      %d = mtia.se_compute ins(%c, %t : tensor<1024xf32>, tensor<1024xf32>) {
      ^bb0(%u: tensor<1024xf32>, %v: tensor<1024xf32>):
        %w = arith.addf %u, %v : tensor<1024xf32>
        mtia.yield %w : tensor<1024xf32>
      } -> tensor<1024xf32> loc("k.py":15:1)
      scf.yield %d : tensor<1024xf32>
    } loc("k.py":12:1)
    %o = mtia.se_compute ins(%acc : tensor<1024xf32>) {
    ^bb0(%u: tensor<1024xf32>):
      %w = arith.addf %u, %u : tensor<1024xf32>
      mtia.yield %w : tensor<1024xf32>
    } -> tensor<1024xf32> loc("k.py":16:1)
    mtia.dma_store %o, %pa[%s] bounds[%n] : tensor<1024xf32>, !tt.ptr<f32> loc("k.py":17:1)
    tt.return
  }
}

// -----

// CHECK-LABEL: tt.func public @branch
// CHECK-SAME:    mtia.cb_peak = "1 CBs alive at point 3 (k.py:20:1); 256 bytes alive at point 3 (k.py:20:1)"
// CHECK:         mtia.liveness = "[3, 8] 256 bytes, value at k.py:20:1"
// CHECK-NEXT:    mtia.liveness = "[10, 15] 256 bytes, value at k.py:22:1"
// Branches: %a is used only in the then branch, %b only in the else branch: they never overlap.
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @branch(%p: !tt.ptr<f32>, %s: i64, %n: i64, %cond: i1) {
    scf.if %cond {
      %a = mtia.dma_load %p[%s] bounds[%n] : !tt.ptr<f32> -> tensor<64xf32> loc("k.py":20:1)
      mtia.dma_store %a, %p[%s] bounds[%n] : tensor<64xf32>, !tt.ptr<f32> loc("k.py":21:1)
    } else {
      %b = mtia.dma_load %p[%s] bounds[%n] : !tt.ptr<f32> -> tensor<64xf32> loc("k.py":22:1)
      mtia.dma_store %b, %p[%s] bounds[%n] : tensor<64xf32>, !tt.ptr<f32> loc("k.py":23:1)
    }
    tt.return
  }
}

// -----

// CHECK-LABEL: tt.func public @while
// CHECK-SAME:    mtia.cb_peak = "2 CBs alive at point 9 (k.py:32:1); 512 bytes alive at point 26 (k.py:35:1)"
// CHECK:         mtia.liveness = "[3, 31] 256 bytes, value at k.py:30:1"
// CHECK-NEXT:    mtia.liveness = "[9, 15] 4 bytes, value at k.py:32:1"
// CHECK-NEXT:    mtia.liveness = "[26, 30] 256 bytes, value at k.py:35:1"
// scf.while: the carried tile (init %zero, updated in place in the after region) is alive across the
// whole loop; the reduction %m lives within the before region of one iteration.
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @while(%n: i32) {
    %zero = mtia.se_compute {
      %z = arith.constant dense<0.0> : tensor<64xf32>
      mtia.yield %z : tensor<64xf32>
    } -> tensor<64xf32> loc("k.py":30:1)
    %c0 = arith.constant 0 : i32
    %r:2 = scf.while (%i = %c0, %acc = %zero) : (i32, tensor<64xf32>) -> (i32, tensor<64xf32>) {
      %m = mtia.re_reduce %acc {axis = 0 : i32, kind = "maxnumf"} : tensor<64xf32> -> f32 loc("k.py":32:1)
      %lim = arith.constant 1.0 : f32
      %c = arith.cmpf olt, %m, %lim : f32
      %cond = arith.cmpi slt, %i, %n : i32
      %both = arith.andi %c, %cond : i1
      scf.condition(%both) %i, %acc : i32, tensor<64xf32>
    } do {
    ^bb0(%j: i32, %a: tensor<64xf32>):
      %c1 = arith.constant 1 : i32
      %k = arith.addi %j, %c1 : i32
      %next = mtia.se_compute ins(%a : tensor<64xf32>) {
      ^bb0(%t: tensor<64xf32>):
        %s = arith.addf %t, %t : tensor<64xf32>
        mtia.yield %s : tensor<64xf32>
      } -> tensor<64xf32> loc("k.py":34:1)
      scf.yield %k, %next : i32, tensor<64xf32>
    } loc("k.py":31:1)
    %out = mtia.se_compute ins(%r#1 : tensor<64xf32>) {
    ^bb0(%t: tensor<64xf32>):
      mtia.yield %t : tensor<64xf32>
    } -> tensor<64xf32> loc("k.py":35:1)
    tt.return
  }
}

// RUN: mtia-opt %s --split-input-file -p mtia-cb-bufferize | filecheck %s
// RUN: mtia-opt %s --split-input-file -p mtia-cb-bufferize --print-op-generic | mtia-opt --split-input-file | filecheck %s

// Straight-line code: one CB per engine value; wait before each consumer, pop after the last one.
// CHECK-LABEL: tt.func public @straight
// CHECK-DAG:     %[[X:.*]] = mtia.cb_alloc : !mtia.cb<1, tensor<64xf32>>
// CHECK-DAG:     %[[M:.*]] = mtia.cb_alloc : !mtia.cb<1, f32>
// CHECK-DAG:     %[[Y:.*]] = mtia.cb_alloc : !mtia.cb<1, tensor<64xf32>>
// CHECK:         mtia.cb_reserve %[[X]], 1
// CHECK-NEXT:    mtia.dma_load %{{.*}}[%{{.*}}] bounds[%{{.*}}] : !tt.ptr<f32> into %[[X]]
// CHECK-NEXT:    mtia.cb_push %[[X]], 1
// CHECK-NEXT:    mtia.cb_wait %[[X]], 1
// CHECK-NEXT:    mtia.cb_reserve %[[M]], 1
// CHECK-NEXT:    mtia.re_reduce %[[X]] {{.*}} into %[[M]]
// CHECK-NEXT:    mtia.cb_push %[[M]], 1
// CHECK-NEXT:    mtia.cb_wait %[[X]], 1
// CHECK-NEXT:    mtia.cb_wait %[[M]], 1
// CHECK-NEXT:    mtia.cb_reserve %[[Y]], 1
// CHECK-NEXT:    mtia.se_compute ins(%[[X]], %[[M]] : !mtia.cb<1, tensor<64xf32>>, !mtia.cb<1, f32>) outs(%[[Y]] : !mtia.cb<1, tensor<64xf32>>)
// CHECK:         mtia.cb_push %[[Y]], 1
// CHECK-NEXT:    mtia.cb_pop %[[M]], 1
// CHECK-NEXT:    mtia.cb_pop %[[X]], 1
// CHECK-NEXT:    mtia.cb_wait %[[Y]], 1
// CHECK-NEXT:    mtia.dma_store %[[Y]], %{{.*}}
// CHECK-NEXT:    mtia.cb_pop %[[Y]], 1
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @straight(%p: !tt.ptr<f32>, %s: i64, %n: i64) {
    %x = mtia.dma_load %p[%s] bounds[%n] : !tt.ptr<f32> -> tensor<64xf32>
    %m = mtia.re_reduce %x {axis = 0 : i32, kind = "maxnumf"} : tensor<64xf32> -> f32
    %y = mtia.se_compute ins(%x, %m : tensor<64xf32>, f32) {
    ^bb0(%a: tensor<64xf32>, %b: f32):
      %bs = tt.splat %b : f32 -> tensor<64xf32>
      %d = arith.subf %a, %bs : tensor<64xf32>
      mtia.yield %d : tensor<64xf32>
    } -> tensor<64xf32>
    mtia.dma_store %y, %p[%s] bounds[%n] : tensor<64xf32>, !tt.ptr<f32>
    tt.return
  }
}

// -----

// A loop-carried accumulator: one CB for init, iter_arg, yield and result; it leaves the loop's SSA
// values. The command making the new value is the old one's only reader: it updates the tile in place
// (one slot; a wait, no reserve/push/pop around it).
// CHECK-LABEL: tt.func public @accumulate
// CHECK:         %[[ACC:.*]] = mtia.cb_alloc : !mtia.cb<1, tensor<64xf32>>
// CHECK:         mtia.cb_reserve %[[ACC]], 1
// CHECK:         mtia.se_compute outs(%[[ACC]] : !mtia.cb<1, tensor<64xf32>>)
// CHECK:         mtia.cb_push %[[ACC]], 1
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
// CHECK-NOT:       mtia.cb_reserve %[[ACC]]
// CHECK:           mtia.cb_wait %[[ACC]], 1
// CHECK:           mtia.se_compute ins(%[[ACC]], %[[X:.*]] : !mtia.cb<1, tensor<64xf32>>, !mtia.cb<1, tensor<64xf32>>) outs(%[[ACC]] : !mtia.cb<1, tensor<64xf32>>) inplace {
// CHECK-NOT:       %[[ACC]]
// CHECK:           mtia.cb_pop %[[X]], 1
// CHECK-NEXT:    }
// CHECK:         mtia.cb_wait %[[ACC]], 1
// CHECK:         mtia.re_reduce %[[ACC]]
// CHECK:         mtia.cb_pop %[[ACC]], 1
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @accumulate(%p: !tt.ptr<f32>, %s: i64, %n: i64, %k: i32) -> f32 {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = mtia.se_compute {
      %z = arith.constant dense<0.0> : tensor<64xf32>
      mtia.yield %z : tensor<64xf32>
    } -> tensor<64xf32>
    %acc = scf.for %i = %c0 to %k step %c1 iter_args(%a = %zero) -> (tensor<64xf32>) : i32 {
      %x = mtia.dma_load %p[%s] bounds[%n] : !tt.ptr<f32> -> tensor<64xf32>
      %b = mtia.se_compute ins(%a, %x : tensor<64xf32>, tensor<64xf32>) {
      ^bb0(%u: tensor<64xf32>, %v: tensor<64xf32>):
        %w = arith.addf %u, %v : tensor<64xf32>
        mtia.yield %w : tensor<64xf32>
      } -> tensor<64xf32>
      scf.yield %b : tensor<64xf32>
    }
    %r = mtia.re_reduce %acc {axis = 0 : i32, kind = "addf"} : tensor<64xf32> -> f32
    tt.return %r : f32
  }
}

// -----

// The DPE accumulates into the carried tile in place: the matmul names the CB as `c` and `into`.
// CHECK-LABEL: tt.func public @accumulate_dpe
// CHECK:         %[[ACC:.*]] = mtia.cb_alloc : !mtia.cb<1, tensor<16x16xf32>>
// CHECK:         scf.for
// CHECK:           mtia.cb_wait %[[ACC]], 1
// CHECK-NEXT:      mtia.dpe_matmul %{{.*}}, %{{.*}}, %[[ACC]] inplace {input_precision = 0 : i32} : {{.*}} into %[[ACC]] :
// CHECK-NEXT:      mtia.cb_pop %{{.*}}, 1
// CHECK-NEXT:      mtia.cb_pop %{{.*}}, 1
// CHECK-NEXT:    }
// CHECK-NEXT:    mtia.cb_wait %[[ACC]], 1
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @accumulate_dpe(%pa: !tt.ptr<f16>, %pb: !tt.ptr<f16>, %s: i64, %n: i64, %k: i32) -> f32 {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = mtia.se_compute {
      %z = arith.constant dense<0.0> : tensor<16x16xf32>
      mtia.yield %z : tensor<16x16xf32>
    } -> tensor<16x16xf32>
    %acc = scf.for %i = %c0 to %k step %c1 iter_args(%c = %zero) -> (tensor<16x16xf32>) : i32 {
      %a = mtia.dma_load %pa[%s, %s] bounds[%n, %n] : !tt.ptr<f16> -> tensor<16x16xf16>
      %b = mtia.dma_load %pb[%s, %s] bounds[%n, %n] : !tt.ptr<f16> -> tensor<16x16xf16>
      %d = mtia.dpe_matmul %a, %b, %c {input_precision = 0 : i32} : tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
      scf.yield %d : tensor<16x16xf32>
    }
    %r = mtia.re_reduce %acc {axis = 0 : i32, kind = "addf"} : tensor<16x16xf32> -> tensor<16xf32>
    %r2 = mtia.re_reduce %r {axis = 0 : i32, kind = "addf"} : tensor<16xf32> -> f32
    tt.return %r2 : f32
  }
}

// -----

// A chain of commands, each the only reader of the value before it, makes the next accumulator
// (`acc = tl.dot(a, b, acc * 2)`): both update the carried CB in place, and the scaled value gets no CB
// of its own.
// CHECK-LABEL: tt.func public @accumulate_chain
// CHECK-COUNT-1: mtia.cb_alloc : !mtia.cb<{{.*}}, tensor<16x16xf32>>
// CHECK-NOT:     mtia.cb_alloc : !mtia.cb<{{.*}}, tensor<16x16xf32>>
// CHECK:         scf.for
// CHECK:           mtia.cb_wait %[[ACC:.*]], 1 : !mtia.cb<1, tensor<16x16xf32>>
// CHECK-NEXT:      mtia.se_compute ins(%[[ACC]] : {{.*}}) outs(%[[ACC]] : {{.*}}) inplace {
// CHECK:           mtia.cb_wait %[[ACC]], 1
// CHECK-NEXT:      mtia.dpe_matmul %{{.*}}, %{{.*}}, %[[ACC]] inplace {{.*}} into %[[ACC]] :
// CHECK-NOT:       %[[ACC]]
// CHECK:         }
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @accumulate_chain(%pa: !tt.ptr<f16>, %s: i64, %n: i64, %k: i32, %po: !tt.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = mtia.se_compute {
      %z = arith.constant dense<0.0> : tensor<16x16xf32>
      mtia.yield %z : tensor<16x16xf32>
    } -> tensor<16x16xf32>
    %acc = scf.for %i = %c0 to %k step %c1 iter_args(%c = %zero) -> (tensor<16x16xf32>) : i32 {
      %a = mtia.dma_load %pa[%s, %s] bounds[%n, %n] : !tt.ptr<f16> -> tensor<16x16xf16>
      %scaled = mtia.se_compute ins(%c : tensor<16x16xf32>) {
      ^bb0(%t: tensor<16x16xf32>):
        %u = arith.addf %t, %t : tensor<16x16xf32>
        mtia.yield %u : tensor<16x16xf32>
      } -> tensor<16x16xf32>
      %d = mtia.dpe_matmul %a, %a, %scaled {input_precision = 0 : i32} : tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
      scf.yield %d : tensor<16x16xf32>
    }
    mtia.dma_store %acc, %po[%s, %s] bounds[%n, %n] : tensor<16x16xf32>, !tt.ptr<f32>
    tt.return
  }
}

// -----

// The old accumulator has another reader in the iteration: no in-place update; the new value is made
// in a second slot while the old one is still read (depth 2).
// CHECK-LABEL: tt.func public @accumulate_other_reader
// CHECK:         %[[ACC:.*]] = mtia.cb_alloc : !mtia.cb<2, tensor<64xf32>>
// CHECK:         scf.for
// CHECK-NOT:       inplace
// CHECK:           mtia.cb_reserve %[[ACC]], 1
// CHECK-NEXT:      mtia.se_compute ins(%[[ACC]], %{{.*}}) outs(%[[ACC]] : !mtia.cb<2, tensor<64xf32>>) {
// CHECK:           mtia.cb_push %[[ACC]], 1
// CHECK:           mtia.cb_pop %[[ACC]], 1
// CHECK-NEXT:    }
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @accumulate_other_reader(%p: !tt.ptr<f32>, %s: i64, %n: i64, %k: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = mtia.se_compute {
      %z = arith.constant dense<0.0> : tensor<64xf32>
      mtia.yield %z : tensor<64xf32>
    } -> tensor<64xf32>
    %acc = scf.for %i = %c0 to %k step %c1 iter_args(%a = %zero) -> (tensor<64xf32>) : i32 {
      mtia.dma_store %a, %p[%s] bounds[%n] : tensor<64xf32>, !tt.ptr<f32>
      %x = mtia.dma_load %p[%s] bounds[%n] : !tt.ptr<f32> -> tensor<64xf32>
      %b = mtia.se_compute ins(%a, %x : tensor<64xf32>, tensor<64xf32>) {
      ^bb0(%u: tensor<64xf32>, %v: tensor<64xf32>):
        %w = arith.addf %u, %v : tensor<64xf32>
        mtia.yield %w : tensor<64xf32>
      } -> tensor<64xf32>
      scf.yield %b : tensor<64xf32>
    }
    tt.return
  }
}

// -----

// The scalar core reads an engine-produced scalar with a blocking cb_read, then releases it.
// CHECK-LABEL: tt.func public @scalar_use
// CHECK:         mtia.cb_wait %[[CB:.*]], 1 : !mtia.cb<1, f32>
// CHECK-NEXT:    %[[R:.*]] = mtia.cb_read %[[CB]] : !mtia.cb<1, f32> -> f32
// CHECK-NEXT:    mtia.cb_pop %[[CB]], 1
// CHECK-NEXT:    %{{.*}} = arith.fptosi %[[R]] : f32 to i32
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @scalar_use(%x: !tt.ptr<f32>) -> i32 {
    %v = mtia.scalar_load %x : !tt.ptr<f32> -> f32
    %m = mtia.se_compute ins(%v : f32) {
    ^bb0(%a: f32):
      %b = arith.mulf %a, %a : f32
      mtia.yield %b : f32
    } -> f32
    %i = arith.fptosi %m : f32 to i32
    tt.return %i : i32
  }
}

// -----

// A value feeding two loops is copied so that each loop owns the CB it carries.
// CHECK-LABEL: tt.func public @shared_init
// CHECK-COUNT-3: mtia.cb_alloc : !mtia.cb<{{.*}}, tensor<64xf32>>
// CHECK:         mtia.se_compute outs
// CHECK:         mtia.se_compute ins(%[[Z:.*]] : !mtia.cb<1, tensor<64xf32>>) outs
// CHECK:         scf.for
// CHECK:         mtia.se_compute ins(%[[Z]] : !mtia.cb<1, tensor<64xf32>>) outs
// CHECK:         scf.for
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @shared_init(%p: !tt.ptr<f32>, %s: i64, %n: i64, %k: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = mtia.se_compute {
      %z = arith.constant dense<0.0> : tensor<64xf32>
      mtia.yield %z : tensor<64xf32>
    } -> tensor<64xf32>
    %r1 = scf.for %i = %c0 to %k step %c1 iter_args(%a = %zero) -> (tensor<64xf32>) : i32 {
      %b = mtia.se_compute ins(%a : tensor<64xf32>) {
      ^bb0(%u: tensor<64xf32>):
        %w = arith.addf %u, %u : tensor<64xf32>
        mtia.yield %w : tensor<64xf32>
      } -> tensor<64xf32>
      scf.yield %b : tensor<64xf32>
    }
    %r2 = scf.for %i = %c0 to %k step %c1 iter_args(%a = %zero) -> (tensor<64xf32>) : i32 {
      %b = mtia.se_compute ins(%a : tensor<64xf32>) {
      ^bb0(%u: tensor<64xf32>):
        %w = arith.mulf %u, %u : tensor<64xf32>
        mtia.yield %w : tensor<64xf32>
      } -> tensor<64xf32>
      scf.yield %b : tensor<64xf32>
    }
    mtia.dma_store %r1, %p[%s] bounds[%n] : tensor<64xf32>, !tt.ptr<f32>
    mtia.dma_store %r2, %p[%s] bounds[%n] : tensor<64xf32>, !tt.ptr<f32>
    tt.return
  }
}

// -----

// An engine value nobody reads is still produced, then waited for and released.
// CHECK-LABEL: tt.func public @unused
// CHECK:         mtia.dma_load %{{.*}} into %[[CB:.*]] :
// CHECK-NEXT:    mtia.cb_push %[[CB]], 1
// CHECK-NEXT:    mtia.cb_wait %[[CB]], 1
// CHECK-NEXT:    mtia.cb_pop %[[CB]], 1
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @unused(%p: !tt.ptr<f32>, %s: i64, %n: i64) {
    %x = mtia.dma_load %p[%s] bounds[%n] : !tt.ptr<f32> -> tensor<64xf32>
    tt.return
  }
}

// -----

// A tile read only inside a branch is waited for before the branch too, so the pop after it is
// preceded by a wait on every path.
// CHECK-LABEL: tt.func public @read_in_one_branch
// CHECK:         mtia.cb_push %[[X:.*]], 1
// CHECK:         mtia.cb_wait %[[X]], 1
// CHECK-NEXT:    scf.if
// CHECK:           mtia.cb_wait %[[X]], 1
// CHECK:           mtia.se_compute ins(%[[X]]
// CHECK:           mtia.dma_store
// CHECK:         }
// CHECK-NEXT:    mtia.cb_pop %[[X]], 1
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @read_in_one_branch(%p: !tt.ptr<f32>, %s: i64, %n: i64, %c: i1) {
    %x = mtia.dma_load %p[%s] bounds[%n] : !tt.ptr<f32> -> tensor<64xf32>
    scf.if %c {
      %y = mtia.se_compute ins(%x : tensor<64xf32>) {
      ^bb0(%a: tensor<64xf32>):
        %d = arith.addf %a, %a : tensor<64xf32>
        mtia.yield %d : tensor<64xf32>
      } -> tensor<64xf32>
      mtia.dma_store %y, %p[%s] bounds[%n] : tensor<64xf32>, !tt.ptr<f32>
    }
    tt.return
  }
}

// RUN: mtia-opt %s --split-input-file -p mtia-vector-codegen | filecheck %s
// RUN: mtia-opt %s --split-input-file -p "mtia-vector-codegen{fuse=false}" | filecheck %s --check-prefix=NOFUSE
// RUN: mtia-opt %s --split-input-file -p "mtia-vector-codegen{vector-scalar=false}" | filecheck %s --check-prefix=NOVS
// RUN: mtia-opt %s --split-input-file -p "mtia-vector-codegen{vector-scalar=false fuse=false}" | filecheck %s --check-prefix=NONE

// A splat command read by two elementwise commands: each takes the scalar and splats it in its body
// (the instruction's scalar operand); the splat command and its tile disappear. Without vector-scalar,
// fusion cannot take the splat either (its result has two readers).
// CHECK-LABEL: tt.func @scalar_operand
// CHECK-SAME:    (%[[X:.*]]: tensor<64xf32>, %[[Y:.*]]: tensor<64xf32>, %[[M:.*]]: f32)
// CHECK-NOT:     mtia.se_compute ins(%[[M]] : f32)
// CHECK:         mtia.se_compute ins(%[[X]], %[[M]] : tensor<64xf32>, f32) {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: tensor<64xf32>, %[[S:.*]]: f32):
// CHECK-NEXT:      %[[B:.*]] = tt.splat %[[S]] : f32 -> tensor<64xf32>
// CHECK-NEXT:      arith.subf %[[A]], %[[B]] : tensor<64xf32>
// CHECK:         mtia.se_compute ins(%[[Y]], %[[M]] : tensor<64xf32>, f32) {
// CHECK:           tt.splat
// CHECK-NEXT:      arith.mulf
// NOFUSE-LABEL: tt.func @scalar_operand
// NOFUSE-NOT:     mtia.se_compute ins(%{{.*}} : f32)
// NOFUSE-COUNT-2: tt.splat
// NOVS-LABEL:   tt.func @scalar_operand
// NOVS:           mtia.se_compute ins(%{{.*}} : f32)
// NOVS-COUNT-2:   ins(%{{.*}}, %{{.*}} : tensor<64xf32>, tensor<64xf32>)
tt.func @scalar_operand(%x: tensor<64xf32>, %y: tensor<64xf32>, %m: f32) {
  %s = mtia.se_compute ins(%m : f32) {
  ^bb0(%a: f32):
    %t = tt.splat %a : f32 -> tensor<64xf32>
    mtia.yield %t : tensor<64xf32>
  } -> tensor<64xf32>
  %d = mtia.se_compute ins(%x, %s : tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
    %r = arith.subf %a, %b : tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } -> tensor<64xf32>
  %e = mtia.se_compute ins(%y, %s : tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
    %r = arith.mulf %a, %b : tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } -> tensor<64xf32>
  "test.op"(%d, %e) : (tensor<64xf32>, tensor<64xf32>) -> ()
  tt.return
}

// -----

// A splat also read by something that is not an elementwise command (a DMA store) stays for it.
// CHECK-LABEL: tt.func @splat_kept_for_other_reader
// CHECK:         %[[S:.*]] = mtia.se_compute ins(%{{.*}} : f32)
// CHECK:         mtia.se_compute ins(%{{.*}}, %{{.*}} : tensor<64xf32>, f32)
// CHECK:         "test.op"(%[[S]], %{{.*}})
tt.func @splat_kept_for_other_reader(%x: tensor<64xf32>, %m: f32) {
  %s = mtia.se_compute ins(%m : f32) {
  ^bb0(%a: f32):
    %t = tt.splat %a : f32 -> tensor<64xf32>
    mtia.yield %t : tensor<64xf32>
  } -> tensor<64xf32>
  %d = mtia.se_compute ins(%x, %s : tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
    %r = arith.addf %a, %b : tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } -> tensor<64xf32>
  "test.op"(%s, %d) : (tensor<64xf32>, tensor<64xf32>) -> ()
  tt.return
}

// -----

// A rank-reduced column broadcast by two MLU commands (expand_dims, broadcast) is read as an operand:
// the consumer takes the column and broadcasts it in its body; both MLU commands disappear.
// CHECK-LABEL: tt.func @column_operand
// CHECK-SAME:    (%[[X:.*]]: tensor<64x64xf32>, %[[C:.*]]: tensor<64xf32>)
// CHECK-NOT:     mtia.mlu_compute
// CHECK:         mtia.se_compute ins(%[[X]], %[[C]] : tensor<64x64xf32>, tensor<64xf32>) {
// CHECK:           %[[E:.*]] = tt.expand_dims %{{.*}} {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
// CHECK-NEXT:      %[[B:.*]] = tt.broadcast %[[E]] : tensor<64x1xf32> -> tensor<64x64xf32>
// CHECK-NEXT:      arith.mulf %{{.*}}, %[[B]]
// NOVS-LABEL:   tt.func @column_operand
// NOVS-COUNT-2:   mtia.mlu_compute
tt.func @column_operand(%x: tensor<64x64xf32>, %c: tensor<64xf32>) {
  %e = mtia.mlu_compute ins(%c : tensor<64xf32>) {
  ^bb0(%a: tensor<64xf32>):
    %t = tt.expand_dims %a {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
    mtia.yield %t : tensor<64x1xf32>
  } -> tensor<64x1xf32>
  %b = mtia.mlu_compute ins(%e : tensor<64x1xf32>) {
  ^bb0(%a: tensor<64x1xf32>):
    %t = tt.broadcast %a : tensor<64x1xf32> -> tensor<64x64xf32>
    mtia.yield %t : tensor<64x64xf32>
  } -> tensor<64x64xf32>
  %d = mtia.se_compute ins(%x, %b : tensor<64x64xf32>, tensor<64x64xf32>) {
  ^bb0(%a: tensor<64x64xf32>, %w: tensor<64x64xf32>):
    %r = arith.mulf %a, %w : tensor<64x64xf32>
    mtia.yield %r : tensor<64x64xf32>
  } -> tensor<64x64xf32>
  "test.op"(%d) : (tensor<64x64xf32>) -> ()
  tt.return
}

// -----

// A chain of three SE commands, each read only by the next: one command, both intermediates in
// registers, the bodies in order, locations kept.
// CHECK-LABEL: tt.func @chain
// CHECK-SAME:    (%[[X:.*]]: tensor<64xf32>, %[[Y:.*]]: tensor<64xf32>)
// CHECK:         %[[F:.*]] = mtia.se_compute ins(%[[X]], %[[Y]] : tensor<64xf32>, tensor<64xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xf32>):
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[A]], %[[B]] : tensor<64xf32>
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[D]] : tensor<64xf32>
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[E]], %[[B]] : tensor<64xf32>
// CHECK-NEXT:      mtia.yield %[[M]] : tensor<64xf32>
// CHECK-NEXT:    } -> tensor<64xf32>
// CHECK-NEXT:    "test.op"(%[[F]])
// NOFUSE-LABEL: tt.func @chain
// NOFUSE-COUNT-3: mtia.se_compute
// NOVS-LABEL:   tt.func @chain
// NOVS-COUNT-1:   mtia.se_compute
// NOVS-NOT:       mtia.se_compute
// NOVS:           "test.op"
// NONE-LABEL:   tt.func @chain
// NONE-COUNT-3:   mtia.se_compute
tt.func @chain(%x: tensor<64xf32>, %y: tensor<64xf32>) {
  %d = mtia.se_compute ins(%x, %y : tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
    %r = arith.subf %a, %b : tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } -> tensor<64xf32>
  %e = mtia.se_compute ins(%d : tensor<64xf32>) {
  ^bb0(%a: tensor<64xf32>):
    %r = math.exp %a : tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } -> tensor<64xf32>
  %m = mtia.se_compute ins(%e, %y : tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
    %r = arith.mulf %a, %b : tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } -> tensor<64xf32>
  "test.op"(%m) : (tensor<64xf32>) -> ()
  tt.return
}

// -----

// The intermediate has a second reader: no fusion.
// CHECK-LABEL: tt.func @two_uses
// CHECK-COUNT-2: mtia.se_compute
tt.func @two_uses(%x: tensor<64xf32>) {
  %e = mtia.se_compute ins(%x : tensor<64xf32>) {
  ^bb0(%a: tensor<64xf32>):
    %r = math.exp %a : tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } -> tensor<64xf32>
  %m = mtia.se_compute ins(%e : tensor<64xf32>) {
  ^bb0(%a: tensor<64xf32>):
    %r = arith.mulf %a, %a : tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } -> tensor<64xf32>
  "test.op"(%e, %m) : (tensor<64xf32>, tensor<64xf32>) -> ()
  tt.return
}

// -----

// Different engines (vector core then SE): no fusion.
// CHECK-LABEL: tt.func @different_engines
// CHECK:         mtia.vec_compute
// CHECK:         mtia.se_compute
tt.func @different_engines(%x: tensor<64xi32>) {
  %i = mtia.vec_compute ins(%x : tensor<64xi32>) {
  ^bb0(%a: tensor<64xi32>):
    %r = arith.addi %a, %a : tensor<64xi32>
    mtia.yield %r : tensor<64xi32>
  } -> tensor<64xi32>
  %f = mtia.se_compute ins(%i : tensor<64xi32>) {
  ^bb0(%a: tensor<64xi32>):
    %r = arith.sitofp %a : tensor<64xi32> to tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } -> tensor<64xf32>
  "test.op"(%f) : (tensor<64xf32>) -> ()
  tt.return
}

// -----

// A reduction between two SE commands: nothing to fuse across it.
// CHECK-LABEL: tt.func @reduction_between
// CHECK:         mtia.se_compute
// CHECK:         mtia.re_reduce
// CHECK:         mtia.se_compute
tt.func @reduction_between(%x: tensor<64x64xf32>) {
  %e = mtia.se_compute ins(%x : tensor<64x64xf32>) {
  ^bb0(%a: tensor<64x64xf32>):
    %r = math.exp %a : tensor<64x64xf32>
    mtia.yield %r : tensor<64x64xf32>
  } -> tensor<64x64xf32>
  %s = mtia.re_reduce %e {axis = 1 : i32, kind = "addf"} : tensor<64x64xf32> -> tensor<64xf32>
  %l = mtia.se_compute ins(%s : tensor<64xf32>) {
  ^bb0(%a: tensor<64xf32>):
    %r = math.log %a : tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } -> tensor<64xf32>
  "test.op"(%l) : (tensor<64xf32>) -> ()
  tt.return
}

// -----

// A command whose body is a reduction (a custom combiner) is not a vector loop: no fusion into it.
// CHECK-LABEL: tt.func @reduce_body
// CHECK-COUNT-2: mtia.se_compute
tt.func @reduce_body(%x: tensor<64xf32>) {
  %e = mtia.se_compute ins(%x : tensor<64xf32>) {
  ^bb0(%a: tensor<64xf32>):
    %r = math.exp %a : tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } -> tensor<64xf32>
  %p = mtia.se_compute ins(%e : tensor<64xf32>) {
  ^bb0(%a: tensor<64xf32>):
    %r = "tt.reduce"(%a) <{axis = 0 : i32}> ({
    ^bb1(%u: f32, %v: f32):
      %w = arith.mulf %u, %v : f32
      tt.reduce.return %w : f32
    }) : (tensor<64xf32>) -> f32
    mtia.yield %r : f32
  } -> f32
  "test.op"(%p) : (f32) -> ()
  tt.return
}

// -----

// The producer is outside a loop and its reader inside: no fusion across the region boundary.
// CHECK-LABEL: tt.func @across_loop
// CHECK:         mtia.se_compute
// CHECK:         scf.for
// CHECK:           mtia.se_compute
tt.func @across_loop(%x: tensor<64xf32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %e = mtia.se_compute ins(%x : tensor<64xf32>) {
  ^bb0(%a: tensor<64xf32>):
    %r = math.exp %a : tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } -> tensor<64xf32>
  scf.for %i = %c0 to %n step %c1 : i32 {
    %m = mtia.se_compute ins(%e : tensor<64xf32>) {
    ^bb0(%a: tensor<64xf32>):
      %r = arith.mulf %a, %a : tensor<64xf32>
      mtia.yield %r : tensor<64xf32>
    } -> tensor<64xf32>
    "test.op"(%m) : (tensor<64xf32>) -> ()
  }
  tt.return
}

// -----

// Vector-core commands whose widest elements differ (i32 compare, i1 and) keep their own rates: no
// fusion. A row-shaped loop read (broadcast) by a full-tile loop is not the same loop either.
// CHECK-LABEL: tt.func @vector_rates_and_shapes
// CHECK-COUNT-4: mtia.vec_compute
tt.func @vector_rates_and_shapes(%x: tensor<64x64xi32>, %y: tensor<64x64xi32>, %m: tensor<64x64xi1>, %r: tensor<1x64xi32>) {
  %c = mtia.vec_compute ins(%x, %y : tensor<64x64xi32>, tensor<64x64xi32>) {
  ^bb0(%a: tensor<64x64xi32>, %b: tensor<64x64xi32>):
    %t = arith.cmpi slt, %a, %b : tensor<64x64xi32>
    mtia.yield %t : tensor<64x64xi1>
  } -> tensor<64x64xi1>
  %d = mtia.vec_compute ins(%c, %m : tensor<64x64xi1>, tensor<64x64xi1>) {
  ^bb0(%a: tensor<64x64xi1>, %b: tensor<64x64xi1>):
    %t = arith.andi %a, %b : tensor<64x64xi1>
    mtia.yield %t : tensor<64x64xi1>
  } -> tensor<64x64xi1>
  %e = mtia.vec_compute ins(%r : tensor<1x64xi32>) {
  ^bb0(%a: tensor<1x64xi32>):
    %t = arith.addi %a, %a : tensor<1x64xi32>
    mtia.yield %t : tensor<1x64xi32>
  } -> tensor<1x64xi32>
  %f = mtia.vec_compute ins(%e, %x : tensor<1x64xi32>, tensor<64x64xi32>) {
  ^bb0(%a: tensor<1x64xi32>, %b: tensor<64x64xi32>):
    %w = tt.broadcast %a : tensor<1x64xi32> -> tensor<64x64xi32>
    %t = arith.addi %w, %b : tensor<64x64xi32>
    mtia.yield %t : tensor<64x64xi32>
  } -> tensor<64x64xi32>
  "test.op"(%d, %f) : (tensor<64x64xi1>, tensor<64x64xi32>) -> ()
  tt.return
}

// -----

// An MLU expand_dims alone (a row given a unit dimension) is an operand form too.
// CHECK-LABEL: tt.func @row_operand
// CHECK-SAME:    (%[[R:.*]]: tensor<64xi32>, %[[N:.*]]: tensor<1x64xi32>)
// CHECK-NOT:     mtia.mlu_compute
// CHECK:         mtia.vec_compute ins(%[[N]], %[[R]] : tensor<1x64xi32>, tensor<64xi32>) {
// CHECK:           %[[E:.*]] = tt.expand_dims %{{.*}} {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
// CHECK-NEXT:      arith.cmpi slt, %[[E]], %{{.*}}
tt.func @row_operand(%r: tensor<64xi32>, %n: tensor<1x64xi32>) {
  %e = mtia.mlu_compute ins(%r : tensor<64xi32>) {
  ^bb0(%a: tensor<64xi32>):
    %t = tt.expand_dims %a {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    mtia.yield %t : tensor<1x64xi32>
  } -> tensor<1x64xi32>
  %c = mtia.vec_compute ins(%e, %n : tensor<1x64xi32>, tensor<1x64xi32>) {
  ^bb0(%a: tensor<1x64xi32>, %b: tensor<1x64xi32>):
    %t = arith.cmpi slt, %a, %b : tensor<1x64xi32>
    mtia.yield %t : tensor<1x64xi1>
  } -> tensor<1x64xi1>
  "test.op"(%c) : (tensor<1x64xi1>) -> ()
  tt.return
}

// -----

// A chain of scalar SE commands (1 / sqrt(var + eps)) becomes one command; a scalar command read by a
// tensor loop is not fused into it (different loops).
// CHECK-LABEL: tt.func @scalar_chain
// CHECK:         %[[R:.*]] = mtia.se_compute ins(%{{.*}}, %{{.*}} : f32, f32) {
// CHECK:           arith.addf
// CHECK-NEXT:      math.sqrt
// CHECK-NEXT:      mtia.yield
// CHECK-NOT:     mtia.se_compute ins(%{{.*}} : f32) {
// CHECK:         mtia.se_compute ins(%{{.*}}, %[[R]] : tensor<64xf32>, f32)
tt.func @scalar_chain(%v: f32, %eps: f32, %x: tensor<64xf32>) {
  %a = mtia.se_compute ins(%v, %eps : f32, f32) {
  ^bb0(%p: f32, %q: f32):
    %t = arith.addf %p, %q : f32
    mtia.yield %t : f32
  } -> f32
  %s = mtia.se_compute ins(%a : f32) {
  ^bb0(%p: f32):
    %t = math.sqrt %p : f32
    mtia.yield %t : f32
  } -> f32
  %y = mtia.se_compute ins(%x, %s : tensor<64xf32>, f32) {
  ^bb0(%p: tensor<64xf32>, %q: f32):
    %b = tt.splat %q : f32 -> tensor<64xf32>
    %t = arith.divf %p, %b : tensor<64xf32>
    mtia.yield %t : tensor<64xf32>
  } -> tensor<64xf32>
  "test.op"(%y) : (tensor<64xf32>) -> ()
  tt.return
}

// -----

// Two producers read only by one command (a tree, not a chain) fuse into it; the fused command takes its
// inputs and runs its bodies in program order (x's add before y's mul), whatever order fusion met them in.
// CHECK-LABEL: tt.func @fuse_tree
// CHECK-SAME:    (%[[X:.*]]: tensor<64xf32>, %[[Y:.*]]: tensor<64xf32>)
// CHECK:         mtia.se_compute ins(%[[X]], %[[Y]] : tensor<64xf32>, tensor<64xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xf32>):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[A]]
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[B]], %[[B]]
// CHECK-NEXT:      arith.subf %[[S]], %[[P]]
// NOVS-LABEL:   tt.func @fuse_tree
// NOVS-COUNT-1:   mtia.se_compute
// NOVS-NOT:       mtia.se_compute
tt.func @fuse_tree(%x: tensor<64xf32>, %y: tensor<64xf32>) -> tensor<64xf32> {
  %a = mtia.se_compute ins(%x : tensor<64xf32>) {
  ^bb0(%t: tensor<64xf32>):
    %r = arith.addf %t, %t : tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } -> tensor<64xf32>
  %b = mtia.se_compute ins(%y : tensor<64xf32>) {
  ^bb0(%t: tensor<64xf32>):
    %r = arith.mulf %t, %t : tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } -> tensor<64xf32>
  %c = mtia.se_compute ins(%a, %b : tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%t: tensor<64xf32>, %u: tensor<64xf32>):
    %r = arith.subf %t, %u : tensor<64xf32>
    mtia.yield %r : tensor<64xf32>
  } -> tensor<64xf32>
  tt.return %c : tensor<64xf32>
}

// RUN: mtia-opt %s --split-input-file -p mtia-cb-bufferize | filecheck %s

// A tensor carried by scf.while: init, before argument, yield, after argument and result share one
// CB; the tensor leaves the loop's SSA values; the before region reads the tile without popping it (the
// condition hands it on). The after region's only reader of the tile makes the next one: it updates the
// tile in place (one slot, a wait and no reserve/push/pop).
// CHECK-LABEL: tt.func public @carried
// CHECK:         %[[CB:.*]] = mtia.cb_alloc : !mtia.cb<1, tensor<64xf32>>
// CHECK:         scf.while (%{{.*}} = %{{.*}}) : (i32) -> i32 {
// CHECK:           mtia.cb_wait %[[CB]], 1
// CHECK-NEXT:      mtia.cb_reserve %[[M:.*]], 1
// CHECK-NEXT:      mtia.re_reduce %[[CB]]
// CHECK-NOT:       mtia.cb_pop %[[CB]]
// CHECK:           scf.condition(%{{.*}}) %{{.*}} : i32
// CHECK:         } do {
// CHECK:           mtia.cb_wait %[[CB]], 1
// CHECK-NEXT:      mtia.se_compute ins(%[[CB]] : {{.*}}) outs(%[[CB]] : {{.*}}) inplace {
// CHECK-NOT:       mtia.cb_
// CHECK:           scf.yield %{{.*}} : i32
// CHECK:         mtia.cb_wait %[[CB]], 1
// CHECK-NEXT:    mtia.cb_reserve
// CHECK-NEXT:    mtia.se_compute ins(%[[CB]] : {{.*}})
// CHECK:         mtia.cb_pop %[[CB]], 1
// CHECK-NEXT:    tt.return
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @carried(%n: i32) {
    %zero = mtia.se_compute {
      %z = arith.constant dense<0.0> : tensor<64xf32>
      mtia.yield %z : tensor<64xf32>
    } -> tensor<64xf32>
    %c0 = arith.constant 0 : i32
    %r:2 = scf.while (%i = %c0, %acc = %zero) : (i32, tensor<64xf32>) -> (i32, tensor<64xf32>) {
      %m = mtia.re_reduce %acc {axis = 0 : i32, kind = "maxnumf"} : tensor<64xf32> -> f32
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
      } -> tensor<64xf32>
      scf.yield %k, %next : i32, tensor<64xf32>
    }
    %out = mtia.se_compute ins(%r#1 : tensor<64xf32>) {
    ^bb0(%t: tensor<64xf32>):
      mtia.yield %t : tensor<64xf32>
    } -> tensor<64xf32>
    tt.return
  }
}

// -----

// The condition forwards a value made in the before region (not its argument): the before argument's
// tile is popped there, and the forwarded value, the after argument and the result get a CB of their own.
// CHECK-LABEL: tt.func public @fresh
// CHECK-DAG:     %[[B:.*]] = mtia.cb_alloc : !mtia.cb<1, tensor<8xf32>>
// CHECK-DAG:     %[[C:.*]] = mtia.cb_alloc : !mtia.cb<1, tensor<8xf32>>
// CHECK:         scf.while () : () -> () {
// CHECK:           mtia.cb_reserve %[[C]], 1
// CHECK-NEXT:      mtia.se_compute ins(%[[B]] : {{.*}}) outs(%[[C]] : {{.*}})
// CHECK:           mtia.cb_pop %[[B]], 1
// CHECK:           scf.condition(%{{.*}})
// CHECK:         } do {
// CHECK:           mtia.se_compute ins(%[[C]] : {{.*}}) outs(%[[B]] : {{.*}})
// CHECK:           mtia.cb_pop %[[C]], 1
// CHECK:         mtia.cb_wait %[[C]], 1
// CHECK-NEXT:    mtia.cb_pop %[[C]], 1
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @fresh(%cond: i1) {
    %zero = mtia.se_compute {
      %z = arith.constant dense<0.0> : tensor<8xf32>
      mtia.yield %z : tensor<8xf32>
    } -> tensor<8xf32>
    %r = scf.while (%b = %zero) : (tensor<8xf32>) -> tensor<8xf32> {
      %f = mtia.se_compute ins(%b : tensor<8xf32>) {
      ^bb0(%t: tensor<8xf32>):
        %s = arith.addf %t, %t : tensor<8xf32>
        mtia.yield %s : tensor<8xf32>
      } -> tensor<8xf32>
      scf.condition(%cond) %f : tensor<8xf32>
    } do {
    ^bb0(%a: tensor<8xf32>):
      %next = mtia.se_compute ins(%a : tensor<8xf32>) {
      ^bb0(%t: tensor<8xf32>):
        mtia.yield %t : tensor<8xf32>
      } -> tensor<8xf32>
      scf.yield %next : tensor<8xf32>
    }
    tt.return
  }
}

// -----

// The after region reads the carried tile again after making the next one: no in-place update; the next
// tile goes to a CB of its own and is copied into the carried CB at the end of the iteration.
// CHECK-LABEL: tt.func public @carried_read_after_update
// CHECK-DAG:     %[[CB:.*]] = mtia.cb_alloc : !mtia.cb<1, tensor<64xf32>>
// CHECK-DAG:     %[[NEXT:.*]] = mtia.cb_alloc : !mtia.cb<1, tensor<64xf32>>
// CHECK:         } do {
// CHECK-NOT:       inplace
// CHECK:           mtia.se_compute ins(%[[CB]] : {{.*}}) outs(%[[NEXT]] : {{.*}}) {
// CHECK:           mtia.re_reduce %[[CB]]
// CHECK:           mtia.cb_pop %[[CB]], 1
// CHECK:           mtia.cb_reserve %[[CB]], 1
// CHECK-NEXT:      mtia.se_compute ins(%[[NEXT]] : {{.*}}) outs(%[[CB]] : {{.*}}) {
// CHECK:           mtia.cb_push %[[CB]], 1
// CHECK-NEXT:      mtia.cb_pop %[[NEXT]], 1
// CHECK-NEXT:      scf.yield
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @carried_read_after_update(%n: i32, %p: !tt.ptr<f32>) {
    %zero = mtia.se_compute {
      %z = arith.constant dense<0.0> : tensor<64xf32>
      mtia.yield %z : tensor<64xf32>
    } -> tensor<64xf32>
    %c0 = arith.constant 0 : i32
    %r:2 = scf.while (%i = %c0, %acc = %zero) : (i32, tensor<64xf32>) -> (i32, tensor<64xf32>) {
      %cond = arith.cmpi slt, %i, %n : i32
      scf.condition(%cond) %i, %acc : i32, tensor<64xf32>
    } do {
    ^bb0(%j: i32, %a: tensor<64xf32>):
      %c1 = arith.constant 1 : i32
      %k = arith.addi %j, %c1 : i32
      %next = mtia.se_compute ins(%a : tensor<64xf32>) {
      ^bb0(%t: tensor<64xf32>):
        %s = arith.addf %t, %t : tensor<64xf32>
        mtia.yield %s : tensor<64xf32>
      } -> tensor<64xf32>
      %m = mtia.re_reduce %a {axis = 0 : i32, kind = "maxnumf"} : tensor<64xf32> -> f32
      mtia.scalar_store %p, %m : !tt.ptr<f32>, f32
      scf.yield %k, %next : i32, tensor<64xf32>
    }
    tt.return
  }
}

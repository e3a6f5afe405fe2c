// RUN: mtia-opt %s -p convert-tt-to-mtia | filecheck %s
// RUN: mtia-opt %s -p 'convert-tt-to-mtia{scalar-core-atomics=false}' | filecheck %s --check-prefix=VEC

// By default atomics become scalar-core commands with the same kind, semantics, scope and mask.
// CHECK-LABEL: tt.func public @atomics
// CHECK:         %[[OLD:.*]] = "mtia.atomic_rmw"(%p, %v, %m) <{atomic_rmw_op = 6 : i32, sem = 4 : i32, scope = 1 : i32, {{.*}}}> : (tensor<16x!tt.ptr<i32>>, tensor<16xi32>, tensor<16xi1>) -> tensor<16xi32>
// CHECK:         %[[C:.*]] = "mtia.atomic_cas"(%p, %v, %[[OLD]]) <{sem = 4 : i32, scope = 1 : i32, {{.*}}}> : {{.*}} -> tensor<16xi32>
// CHECK:         "mtia.scatter"(%p, %[[C]])
// CHECK:         "mtia.atomic_rmw"(%q, %s) <{atomic_rmw_op = 5 : i32, sem = 1 : i32, scope = 1 : i32, {{.*}}}> : (!tt.ptr<f32>, f32) -> f32
// CHECK-NOT:     tt.atomic

// With scalar-core-atomics=false they stay inside vector-core commands.
// VEC-LABEL: tt.func public @atomics
// VEC:         mtia.vec_compute
// VEC-NEXT:    ^bb0
// VEC-NEXT:      tt.atomic_rmw max
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @atomics(%p: tensor<16x!tt.ptr<i32>>, %v: tensor<16xi32>, %m: tensor<16xi1>, %q: !tt.ptr<f32>, %s: f32) {
    %old = tt.atomic_rmw max, acq_rel, gpu, %p, %v, %m : (tensor<16x!tt.ptr<i32>>, tensor<16xi32>, tensor<16xi1>) -> tensor<16xi32>
    %c = tt.atomic_cas acq_rel, gpu, %p, %v, %old : (tensor<16x!tt.ptr<i32>>, tensor<16xi32>, tensor<16xi32>) -> tensor<16xi32>
    tt.store %p, %c : tensor<16x!tt.ptr<i32>>
    %f = tt.atomic_rmw fadd, relaxed, gpu, %q, %s : (!tt.ptr<f32>, f32) -> f32
    tt.return
  }
}

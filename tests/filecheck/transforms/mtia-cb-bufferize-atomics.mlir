// RUN: mtia-opt %s -p mtia-cb-bufferize | filecheck %s

// An atomic's old values go to a CB like a gather's; operands made by engines are read from their CBs;
// an atomic whose result nobody reads still runs (its CB is waited for and popped).
// CHECK-LABEL: tt.func public @atomics
// CHECK-DAG:     %[[OLD:.*]] = mtia.cb_alloc : !mtia.cb<1, tensor<16xi32>>
// CHECK-DAG:     %[[C:.*]] = mtia.cb_alloc : !mtia.cb<1, tensor<16xi32>>
// CHECK-DAG:     %[[F:.*]] = mtia.cb_alloc : !mtia.cb<1, f32>
// CHECK:         mtia.cb_reserve %[[OLD]], 1
// CHECK-NEXT:    "mtia.atomic_rmw"(%p, %v, %m, %[[OLD]])
// CHECK-NEXT:    mtia.cb_push %[[OLD]], 1
// CHECK-NEXT:    mtia.cb_wait %[[OLD]], 1
// CHECK-NEXT:    mtia.cb_reserve %[[C]], 1
// CHECK-NEXT:    "mtia.atomic_cas"(%p, %v, %[[OLD]], %[[C]])
// CHECK-NEXT:    mtia.cb_push %[[C]], 1
// CHECK-NEXT:    mtia.cb_pop %[[OLD]], 1
// CHECK:         mtia.cb_reserve %[[F]], 1
// CHECK-NEXT:    "mtia.atomic_rmw"(%q, %s, %[[F]])
// CHECK-NEXT:    mtia.cb_push %[[F]], 1
// CHECK-NEXT:    mtia.cb_wait %[[F]], 1
// CHECK-NEXT:    mtia.cb_pop %[[F]], 1
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @atomics(%p: tensor<16x!tt.ptr<i32>>, %v: tensor<16xi32>, %m: tensor<16xi1>, %q: !tt.ptr<f32>, %s: f32) {
    %old = "mtia.atomic_rmw"(%p, %v, %m) <{atomic_rmw_op = 6 : i32, sem = 4 : i32, scope = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<16x!tt.ptr<i32>>, tensor<16xi32>, tensor<16xi1>) -> tensor<16xi32>
    %c = "mtia.atomic_cas"(%p, %v, %old) <{sem = 4 : i32, scope = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<16x!tt.ptr<i32>>, tensor<16xi32>, tensor<16xi32>) -> tensor<16xi32>
    "mtia.scatter"(%p, %c) : (tensor<16x!tt.ptr<i32>>, tensor<16xi32>) -> ()
    %f = "mtia.atomic_rmw"(%q, %s) <{atomic_rmw_op = 5 : i32, sem = 1 : i32, scope = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0>}> : (!tt.ptr<f32>, f32) -> f32
    tt.return
  }
}

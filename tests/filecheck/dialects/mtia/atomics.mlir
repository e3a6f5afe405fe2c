// RUN: mtia-opt %s | mtia-opt | filecheck %s

// mtia.atomic_rmw / mtia.atomic_cas round-trip at tensor and buffer level.
// CHECK: "mtia.atomic_rmw"(%{{.*}}, %{{.*}}, %{{.*}}) <{atomic_rmw_op = 4 : i32, sem = 4 : i32, scope = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<8x!tt.ptr<i32>>, tensor<8xi32>, tensor<8xi1>) -> tensor<8xi32>
// CHECK: "mtia.atomic_cas"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{sem = 4 : i32, scope = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (!tt.ptr<i32>, i32, i32, !mtia.cb<1, i32>) -> ()
builtin.module {
  %p, %v, %m, %q, %s, %cb = "test.op"() : () -> (tensor<8x!tt.ptr<i32>>, tensor<8xi32>, tensor<8xi1>, !tt.ptr<i32>, i32, !mtia.cb<1, i32>)
  %old = "mtia.atomic_rmw"(%p, %v, %m) <{atomic_rmw_op = 4 : i32, sem = 4 : i32, scope = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<8x!tt.ptr<i32>>, tensor<8xi32>, tensor<8xi1>) -> tensor<8xi32>
  "mtia.atomic_cas"(%q, %s, %s, %cb) <{sem = 4 : i32, scope = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (!tt.ptr<i32>, i32, i32, !mtia.cb<1, i32>) -> ()
}

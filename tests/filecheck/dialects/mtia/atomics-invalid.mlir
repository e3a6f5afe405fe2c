// RUN: mtia-opt %s --verify-diagnostics | filecheck %s

// An atomic is either tensor level (a result) or buffer level (an out CB), not both.
// CHECK: mtia.atomic_rmw has both results (tensor level) and outs (buffer level)
builtin.module {
  %p, %s, %cb = "test.op"() : () -> (!tt.ptr<i32>, i32, !mtia.cb<1, i32>)
  %old = "mtia.atomic_rmw"(%p, %s, %cb) <{atomic_rmw_op = 4 : i32, sem = 4 : i32, scope = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 1>}> : (!tt.ptr<i32>, i32, !mtia.cb<1, i32>) -> i32
}

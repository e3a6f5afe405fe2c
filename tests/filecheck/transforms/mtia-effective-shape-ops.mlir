// RUN: mtia-opt %s --split-input-file | filecheck %s
// RUN: mtia-opt %s --split-input-file --print-op-generic | mtia-opt --split-input-file | filecheck %s

// The `valid[...]` extents the pass writes round-trip on every op that takes them (custom and generic).
// CHECK:      mtia.dpe_matmul %{{.*}}, %{{.*}}, %{{.*}} valid[%{{.*}}, %{{.*}}, %{{.*}}] {input_precision = 2 : i32}
// CHECK-NEXT: mtia.re_reduce %{{.*}} valid[%{{.*}}, %{{.*}}] {axis = 1 : i32, kind = "maxnumf"}
// CHECK-NEXT: mtia.se_compute ins(%{{.*}} : tensor<64x64xf32>) valid[%{{.*}}, %{{.*}}] {
// CHECK:      mtia.vec_compute ins(%{{.*}} : !mtia.cb<1, tensor<64x64xf32>>) outs(%{{.*}} : !mtia.cb<1, tensor<64x64xf32>>) valid[%{{.*}}, %{{.*}}] {
%a, %b, %acc, %n = "test.op"() : () -> (tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32>, i64)
%d = mtia.dpe_matmul %a, %b, %acc valid[%n, %n, %n] {input_precision = 2 : i32} : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
%m = mtia.re_reduce %d valid[%n, %n] {axis = 1 : i32, kind = "maxnumf"} : tensor<64x64xf32> -> tensor<64xf32>
%h = mtia.se_compute ins(%d : tensor<64x64xf32>) valid[%n, %n] {
^bb0(%x: tensor<64x64xf32>):
  mtia.yield %x : tensor<64x64xf32>
} -> tensor<64x64xf32>
%i, %o = "test.op"() : () -> (!mtia.cb<1, tensor<64x64xf32>>, !mtia.cb<1, tensor<64x64xf32>>)
mtia.vec_compute ins(%i : !mtia.cb<1, tensor<64x64xf32>>) outs(%o : !mtia.cb<1, tensor<64x64xf32>>) valid[%n, %n] {
^bb0(%x: tensor<64x64xf32>):
  mtia.yield %x : tensor<64x64xf32>
}

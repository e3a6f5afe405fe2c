// RUN: mtia-opt %s -p convert-tt-to-mtia | filecheck %s

// The SE takes fp16/bf16/fp32 (with int8..int32); f64 and i64 work goes to the RISC-V vector core, and
// so does a tl.dot of f64 operands (the DPE takes int8, fp16, bf16, fp32).
// CHECK-LABEL: tt.func public @dtypes
// CHECK:         mtia.se_compute ins(%x : tensor<8xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.addf {{.*}} : tensor<8xf32>
// CHECK:         mtia.vec_compute ins(%d : tensor<8xf64>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.addf {{.*}} : tensor<8xf64>
// CHECK:         mtia.vec_compute ins(%i : tensor<8xi64>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.sitofp {{.*}} : tensor<8xi64> to tensor<8xf32>
// CHECK:         mtia.vec_compute ins(%a, %c : tensor<8x8xf64>, tensor<8x8xf64>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      tt.dot
// CHECK-NOT:     mtia.dpe_matmul
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @dtypes(%x: tensor<8xf32>, %d: tensor<8xf64>, %i: tensor<8xi64>, %a: tensor<8x8xf64>, %c: tensor<8x8xf64>) -> (tensor<8xf32>, tensor<8xf64>, tensor<8xf32>, tensor<8x8xf64>) {
    %x2 = arith.addf %x, %x : tensor<8xf32>
    %d2 = arith.addf %d, %d : tensor<8xf64>
    %f = arith.sitofp %i : tensor<8xi64> to tensor<8xf32>
    %m = tt.dot %a, %a, %c : tensor<8x8xf64> * tensor<8x8xf64> -> tensor<8x8xf64>
    tt.return %x2, %d2, %f, %m : tensor<8xf32>, tensor<8xf64>, tensor<8xf32>, tensor<8x8xf64>
  }
}

// RUN: mtia-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The extents an op carries must match its tiles: one per result dimension, per input dimension of a
// reduction, and [M, N, K] for a 2-d matmul.
%t, %n = "test.op"() : () -> (tensor<64x64xf32>, i64)
// CHECK: valid needs one extent per dimension of the result tiles (all of one shape), got 1 for tensor<64x64xf32>
%h = mtia.se_compute ins(%t : tensor<64x64xf32>) valid[%n] {
^bb0(%x: tensor<64x64xf32>):
  mtia.yield %x : tensor<64x64xf32>
} -> tensor<64x64xf32>

// -----

%t, %n = "test.op"() : () -> (tensor<64x64xf32>, i64)
// CHECK: valid needs 2 extents (one per input dimension), got 1
%m = mtia.re_reduce %t valid[%n] {axis = 1 : i32, kind = "maxnumf"} : tensor<64x64xf32> -> tensor<64xf32>

// -----

%a, %b, %acc, %n = "test.op"() : () -> (tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32>, i64)
// CHECK: valid needs 3 extents [M, N, K] of a 2-d matmul, got 2
%d = mtia.dpe_matmul %a, %b, %acc valid[%n, %n] {input_precision = 2 : i32} : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>

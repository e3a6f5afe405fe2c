// RUN: mtia-opt %s --verify-diagnostics --split-input-file | filecheck %s

%x = "test.op"() : () -> tensor<16xf32>
%a = mtia.extract_slice %x {static_offsets = array<i64: 12>} : tensor<16xf32> -> tensor<8xf32>
// CHECK: dimension 0: offset 12 + size 8 leaves the source of extent 16

// -----

%x = "test.op"() : () -> tensor<16xf32>
%a = mtia.extract_slice %x {static_offsets = array<i64: 0>} : tensor<16xf32> -> tensor<32xf32>
// CHECK: dimension 0: a slice of 32 does not fit a source of 16

// -----

%x = "test.op"() : () -> tensor<16xf32>
%a = mtia.extract_slice %x {static_offsets = array<i64: 0>} : tensor<16xf32> -> tensor<8xf16>
// CHECK: a slice of tensor<16xf32> has its element type, not f16

// -----

%x = "test.op"() : () -> tensor<16x4xf32>
%a = mtia.extract_slice %x {static_offsets = array<i64: 0>} : tensor<16x4xf32> -> tensor<8x4xf32>
// CHECK: source rank 2, result rank 2 and 1 static offsets must agree

// -----

%x = "test.op"() : () -> tensor<16xf32>
%a = mtia.extract_slice %x {static_offsets = array<i64: -9223372036854775808>} : tensor<16xf32> -> tensor<8xf32>
// CHECK: 1 dynamic offsets in static_offsets but 0 operands

// RUN: mtia-opt %s --verify-diagnostics --split-input-file | filecheck %s

%0 = "tt.get_program_id"() <{axis = 3 : i32}> : () -> i32
// CHECK: 'tt.get_program_id' axis = 3 is not one of

// -----

%t = "test.op"() : () -> tensor<4xf32>
%0 = tt.bitcast %t : tensor<4xf32> -> tensor<8xi32>
// CHECK: 'tt.bitcast' operand and result: shapes [4] and [8] differ

// -----

%i = "test.op"() : () -> i32
%0 = tt.int_to_ptr %i : i32 -> !tt.ptr<f32>
// CHECK: 'tt.int_to_ptr' operand must be i64-like, got i32

// -----

%p = "test.op"() : () -> !tt.ptr<f32>
%0 = tt.ptr_to_int %p : !tt.ptr<f32> -> i32
// CHECK: 'tt.ptr_to_int' result must be i64-like, got i32

// -----

%i = "test.op"() : () -> i64
%0 = tt.int_to_ptr %i : i64 -> i64
// CHECK: expected a pointer or a tensor of pointers, got i64

// -----

%t = "test.op"() : () -> tensor<4xf32>
%0 = "tt.fp_to_fp"(%t) <{rounding = 7 : i32}> : (tensor<4xf32>) -> tensor<4xf16>
// CHECK: 'tt.fp_to_fp' rounding = 7 is not one of

// -----

%t = "test.op"() : () -> tensor<4xf32>
%0 = "tt.clampf"(%t, %t, %t) <{propagateNan = 1 : i32}> : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: 'tt.clampf' propagateNan = 1 is not one of

// -----

%p, %o = "test.op"() : () -> (tensor<4x!tt.ptr<f32>>, tensor<4xf32>)
%0 = tt.addptr %p, %o : tensor<4x!tt.ptr<f32>>, tensor<4xf32>
// CHECK: 'tt.addptr' offset must be integer-like, got tensor<4xf32>

// -----

%p, %o = "test.op"() : () -> (tensor<4x!tt.ptr<f32>>, tensor<8xi32>)
%0 = tt.addptr %p, %o : tensor<4x!tt.ptr<f32>>, tensor<8xi32>
// CHECK: 'tt.addptr' ptr and offset: shapes [4] and [8] differ

// -----

%p = "test.op"() : () -> tensor<4x!tt.ptr<f32>>
%0 = "tt.load"(%p) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<4x!tt.ptr<f32>>) -> tensor<4xf16>
// CHECK: 'tt.load' result must be tensor<4xf32>, got tensor<4xf16>

// -----

%p, %m = "test.op"() : () -> (tensor<4x!tt.ptr<f32>>, tensor<8xi1>)
%0 = "tt.load"(%p, %m) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<4x!tt.ptr<f32>>, tensor<8xi1>) -> tensor<4xf32>
// CHECK: 'tt.load' mask must be tensor<4xi1>, got tensor<8xi1>

// -----

%p, %m, %o = "test.op"() : () -> (tensor<4x!tt.ptr<f32>>, tensor<4xi1>, tensor<4xf16>)
%0 = "tt.load"(%p, %m, %o) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<4x!tt.ptr<f32>>, tensor<4xi1>, tensor<4xf16>) -> tensor<4xf32>
// CHECK: 'tt.load' other must be tensor<4xf32>, got tensor<4xf16>

// -----

%p, %v = "test.op"() : () -> (tensor<4x!tt.ptr<f32>>, tensor<4xf16>)
"tt.store"(%p, %v) : (tensor<4x!tt.ptr<f32>>, tensor<4xf16>) -> ()
// CHECK: 'tt.store' value must be tensor<4xf32>, got tensor<4xf16>

// -----

%p, %v, %m = "test.op"() : () -> (tensor<4x!tt.ptr<f32>>, tensor<4xf32>, tensor<4xi32>)
"tt.store"(%p, %v, %m) : (tensor<4x!tt.ptr<f32>>, tensor<4xf32>, tensor<4xi32>) -> ()
// CHECK: 'tt.store' mask must be tensor<4xi1>, got tensor<4xi32>

// -----

%p, %v = "test.op"() : () -> (!tt.ptr<f32>, f16)
%0 = "tt.atomic_rmw"(%p, %v) <{atomic_rmw_op = 5 : i32, sem = 4 : i32, scope = 1 : i32}> : (!tt.ptr<f32>, f16) -> f16
// CHECK: 'tt.atomic_rmw' val type f16 does not match ptr !tt.ptr<f32>

// -----

%p, %v = "test.op"() : () -> (!tt.ptr<f32>, f32)
%0 = "tt.atomic_rmw"(%p, %v) <{atomic_rmw_op = 11 : i32, sem = 4 : i32, scope = 1 : i32}> : (!tt.ptr<f32>, f32) -> f32
// CHECK: 'tt.atomic_rmw' atomic_rmw_op = 11 is not one of

// -----

%p, %v = "test.op"() : () -> (!tt.ptr<f32>, f16)
%0 = "tt.atomic_cas"(%p, %v, %v) <{sem = 4 : i32, scope = 1 : i32}> : (!tt.ptr<f32>, f16, f16) -> f16
// CHECK: 'tt.atomic_cas' cmp and val must be f32

// -----

%t = "test.op"() : () -> tensor<4xf32>
%0 = tt.splat %t : tensor<4xf32> -> tensor<4xf32>
// CHECK: 'tt.splat' operand must be a scalar, got tensor<4xf32>

// -----

%s = "test.op"() : () -> f32
%0 = tt.splat %s : f32 -> tensor<4xf16>
// CHECK: 'tt.splat' element types differ: f32 vs f16

// -----

%t = "test.op"() : () -> tensor<4xf32>
%0 = tt.unsplat %t : tensor<4xf32> -> f32
// CHECK: 'tt.unsplat' source tensor must have exactly one element, got tensor<4xf32>

// -----

%t = "test.op"() : () -> tensor<2x1xf32>
%0 = tt.broadcast %t : tensor<2x1xf32> -> tensor<4x4xf32>
// CHECK: 'tt.broadcast' cannot broadcast shape [2, 1] to [4, 4]

// -----

%t = "test.op"() : () -> tensor<4xf32>
%0 = tt.expand_dims %t {axis = 2 : i32} : tensor<4xf32> -> tensor<4x1xf32>
// CHECK: 'tt.expand_dims' axis 2 is out of range for rank 1

// -----

%t = "test.op"() : () -> tensor<4xf32>
%0 = tt.expand_dims %t {axis = 0 : i32} : tensor<4xf32> -> tensor<4x1xf32>
// CHECK: 'tt.expand_dims' result shape must be [1, 4]

// -----

%t = "test.op"() : () -> tensor<4xf32>
%0 = tt.reshape %t : tensor<4xf32> -> tensor<2x4xf32>
// CHECK: 'tt.reshape' element counts differ

// -----

%t = "test.op"() : () -> tensor<4x2xf32>
%0 = tt.trans %t {order = array<i32: 0, 0>} : tensor<4x2xf32> -> tensor<2x4xf32>
// CHECK: 'tt.trans' order [0, 0] is not a permutation of rank 2

// -----

%t = "test.op"() : () -> tensor<4x2xf32>
%0 = tt.trans %t {order = array<i32: 1, 0>} : tensor<4x2xf32> -> tensor<4x2xf32>
// CHECK: 'tt.trans' result shape must be [2, 4]

// -----

%t = "test.op"() : () -> tensor<4xf32>
%0 = tt.join %t, %t : tensor<4xf32> -> tensor<4x4xf32>
// CHECK: 'tt.join' result shape must be [4, 2]

// -----

%t = "test.op"() : () -> tensor<4x4xf32>
%0, %1 = tt.split %t : tensor<4x4xf32> -> tensor<4xf32>
// CHECK: 'tt.split' last dimension must be 2, got shape [4, 4]

// -----

%t, %i = "test.op"() : () -> (tensor<4x4xf32>, tensor<4xi32>)
%0 = tt.gather %t[%i] {axis = 0 : i32} : (tensor<4x4xf32>, tensor<4xi32>) -> tensor<4xf32>
// CHECK: 'tt.gather' indices must have rank 2

// -----

%t, %i = "test.op"() : () -> (tensor<4xf32>, tensor<4xi32>)
%0 = tt.gather %t[%i] {axis = 1 : i32} : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
// CHECK: 'tt.gather' axis 1 is out of range for rank 1

// -----

%0 = tt.make_range {start = 0 : i32, end = 8 : i32} : tensor<4xi32>
// CHECK: 'tt.make_range' result must be tensor<8xi32>, got tensor<4xi32>

// -----

%0 = tt.make_range {start = 10 : i32, end = 0 : i32} : tensor<10xi32>
// CHECK: 'tt.make_range' needs start < end, got start = 10 and end = 0

// -----

%a = "test.op"() : () -> tensor<4xf16>
%c = "test.op"() : () -> tensor<4xf32>
%0 = tt.dot %a, %a, %c : tensor<4xf16> * tensor<4xf16> -> tensor<4xf32>
// CHECK: 'tt.dot' expected operands to be 2d or 3d tensors of equal rank

// -----

%a = "test.op"() : () -> tensor<4x8xf16>
%c = "test.op"() : () -> tensor<4x4xf32>
%0 = tt.dot %a, %a, %c : tensor<4x8xf16> * tensor<4x8xf16> -> tensor<4x4xf32>
// CHECK: 'tt.dot' shapes [4, 8] x [4, 8] -> [4, 4] do not match

// -----

%a = "test.op"() : () -> tensor<4x4xf16>
%c = "test.op"() : () -> tensor<4x4xf32>
%0 = "tt.dot"(%a, %a, %c) : (tensor<4x4xf16>, tensor<4x4xf16>, tensor<4x4xf32>) -> tensor<4x4xf16>
// CHECK: 'tt.dot' result type must match the accumulator type

// -----

%t = "test.op"() : () -> tensor<4xf32>
%0 = "tt.reduce"(%t) <{axis = 1 : i32}> ({
^bb0(%a: f32, %b: f32):
  tt.reduce.return %a : f32
}) : (tensor<4xf32>) -> f32
// CHECK: 'tt.reduce' axis 1 is out of range for rank 1

// -----

%t = "test.op"() : () -> tensor<4xf32>
%0 = "tt.reduce"(%t) <{axis = 0 : i32}> ({
^bb0(%a: f16, %b: f16):
  tt.reduce.return %a : f16
}) : (tensor<4xf32>) -> f32
// CHECK: 'tt.reduce' combine block arguments must be [f32, f32]

// -----

%t = "test.op"() : () -> tensor<4xf32>
%0 = "tt.scan"(%t) <{axis = 3 : i32, reverse = false}> ({
^bb0(%a: f32, %b: f32):
  tt.scan.return %a : f32
}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: 'tt.scan' axis 3 is out of range for rank 1

// -----

%t = "test.op"() : () -> tensor<4xi32>
tt.assert %t, "x" : tensor<4xi32>
// CHECK: 'tt.assert' condition must be i1-like, got tensor<4xi32>

// -----

"tt.func"() <{sym_name = "f", function_type = (i32) -> ()}> ({
^bb0(%a: f32):
  tt.return
}) : () -> ()
// CHECK: 'tt.func' entry block arguments must match the function type inputs

// -----

tt.func @g(%a: i32) -> f32 {
  tt.return %a : i32
}
// CHECK: 'tt.return' types must match the function results [f32]

// -----

%p, %n, %s = "test.op"() : () -> (!tt.ptr<f32>, i32, i64)
%d = tt.make_tensor_descriptor %p, [%n], [%s, %s] : <f32>, <16x32xf32>
// CHECK: 'tt.make_tensor_descriptor' needs 2 sizes and strides, got 1 and 2

// -----

%d, %n = "test.op"() : () -> (!tt.tensordesc<16x32xf32>, i32)
%t = tt.descriptor_load %d[%n] : !tt.tensordesc<16x32xf32> -> tensor<16x32xf32>
// CHECK: 'tt.descriptor_load' needs 2 indices for !tt.tensordesc<16x32xf32>, got 1

// -----

%d, %n, %v = "test.op"() : () -> (!tt.tensordesc<16x32xf32>, i32, tensor<16x16xf32>)
tt.descriptor_store %d[%n, %n], %v : !tt.tensordesc<16x32xf32>, tensor<16x16xf32>
// CHECK: 'tt.descriptor_store' value tensor<16x16xf32> does not match !tt.tensordesc<16x32xf32>

// -----

%d, %n, %v = "test.op"() : () -> (!tt.tensordesc<16x32xf32>, i32, tensor<16x32xf32>)
"tt.descriptor_reduce"(%d, %v, %n, %n) <{kind = 12 : i32}> : (!tt.tensordesc<16x32xf32>, tensor<16x32xf32>, i32, i32) -> ()
// CHECK: 'tt.descriptor_reduce' kind = 12 is not one of

// -----

%d, %x, %n = "test.op"() : () -> (!tt.tensordesc<2x32xf32>, tensor<8xi32>, i32)
%g = tt.descriptor_gather %d[%x, %n] : (!tt.tensordesc<2x32xf32>, tensor<8xi32>, i32) -> tensor<8x32xf32>
// CHECK: 'tt.descriptor_gather' needs a descriptor with 1-row 2-d blocks, got !tt.tensordesc<2x32xf32>

// -----

%d, %x, %n = "test.op"() : () -> (!tt.tensordesc<1x32xf32>, tensor<8xi32>, i32)
%g = tt.descriptor_gather %d[%x, %n] : (!tt.tensordesc<1x32xf32>, tensor<8xi32>, i32) -> tensor<4x32xf32>
// CHECK: 'tt.descriptor_gather' tile must be 8x32, got tensor<4x32xf32>

// -----

%f = "test.op"() : () -> tensor<8xf32>
%me = "tt.map_elementwise"(%f) <{pack = 0 : i32}> ({
^bb0(%x: f32):
  tt.map_elementwise.return %x : f32
}) : (tensor<8xf32>) -> tensor<8xf32>
// CHECK: 'tt.map_elementwise' pack must be >= 1, got 0

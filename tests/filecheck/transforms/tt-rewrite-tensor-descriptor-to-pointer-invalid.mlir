// RUN: mtia-opt %s --split-input-file -p tt-rewrite-tensor-descriptor-to-pointer --verify-diagnostics | filecheck %s

// A descriptor carried through a loop has no tt.make_tensor_descriptor to read base, shape and strides from.
// CHECK: k.py:7:4: error: tt.descriptor_load uses a tensor descriptor that is not made by tl.make_tensor_descriptor in this kernel or passed as a kernel argument (it is carried through a loop or branch); create the descriptor with tl.make_tensor_descriptor where it is used
tt.func public @carried(%x: !tt.ptr<f32>, %n: i32) {
  %one = arith.constant 1 : i64
  %c0 = arith.constant 0 : i32
  %d = tt.make_tensor_descriptor %x, [%n], [%one] : <f32>, <8xf32>
  %r = scf.for %k = %c0 to %n step %n iter_args(%dd = %d) -> (!tt.tensordesc<8xf32>) : i32 {
    %t = tt.descriptor_load %dd[%k] : !tt.tensordesc<8xf32> -> tensor<8xf32> loc("k.py":7:4)
    scf.yield %dd : !tt.tensordesc<8xf32>
  }
  tt.return
}

// -----

// A descriptor argument without the shape and strides Triton's frontend passes after it.
// CHECK: k.py:3:1: error: the tensor descriptor argument 0 of bare is not followed by its shape (1 x i32) and strides (1 x i64) as Triton's frontend passes a host TensorDescriptor
tt.func public @bare(%d: !tt.tensordesc<8xf32>, %i: i32) {
  %t = tt.descriptor_load %d[%i] : !tt.tensordesc<8xf32> -> tensor<8xf32>
  tt.return
} loc("k.py":3:1)

// RUN: mtia-opt %s --verify-diagnostics --split-input-file | filecheck %s

%cb = "test.op"() : () -> !mtia.cb<2, tensor<64xf32>>
mtia.cb_reserve %cb, 3 : !mtia.cb<2, tensor<64xf32>>
// CHECK: claims 3 slots but the buffer has 2

// -----

%cb = "test.op"() : () -> !mtia.cb<2, tensor<64xf32>>
mtia.cb_pop %cb, 0 : !mtia.cb<2, tensor<64xf32>>
// CHECK: count must be positive, got 0

// -----

%cb = "test.op"() : () -> !mtia.cb<0, tensor<64xf32>>
// CHECK: a circular buffer needs at least one slot, got depth 0

// -----

%p, %s = "test.op"() : () -> (!tt.ptr<f32>, i64)
%t = mtia.dma_load %p[%s] bounds[%s] : !tt.ptr<f32> -> tensor<4x4xf32>
// CHECK: block of rank 2 needs 2 strides and bounds (and no or 2 starts), got 1 strides, 1 bounds and 0 starts

// -----

%p, %s = "test.op"() : () -> (!tt.ptr<f32>, i64)
mtia.dma_load %p[%s] bounds[%s] : !tt.ptr<f32>
// CHECK: mtia.dma_load needs a result or an `out` CB

// -----

%p, %s, %v = "test.op"() : () -> (!tt.ptr<f32>, i64, tensor<4x4xf32>)
mtia.dma_store %v, %p[%s] bounds[%s] : tensor<4x4xf32>, !tt.ptr<f32>
// CHECK: block of rank 2 needs 2 strides and bounds (and no or 2 starts), got 1 strides, 1 bounds and 0 starts

// -----

%p, %s = "test.op"() : () -> (!tt.ptr<f32>, i64)
%t = mtia.dma_load %p[%s, %s] bounds[%s, %s] starts[%s] : !tt.ptr<f32> -> tensor<4x4xf32>
// CHECK: block of rank 2 needs 2 strides and bounds (and no or 2 starts), got 2 strides, 2 bounds and 1 starts

// -----

%a, %b, %c = "test.op"() : () -> (tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf32>)
%d = mtia.dpe_matmul %a, %b, %c {input_precision = 2 : i32} : tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: inner dimensions differ: 4x8 @ 4x8

// -----

%x = "test.op"() : () -> tensor<4xf32>
%r = mtia.re_reduce %x {axis = 0 : i32, kind = "mulf"} : tensor<4xf32> -> f32
// CHECK: unknown reduction kind 'mulf'

// -----

%x = "test.op"() : () -> tensor<4xf32>
%cb = "test.op"() : () -> !mtia.cb<1, f32>
%r = mtia.re_reduce %x {axis = 0 : i32, kind = "addf"} : tensor<4xf32> into %cb : !mtia.cb<1, f32> -> f32
// CHECK: mtia.re_reduce has both results (tensor level) and outs (buffer level)

// -----

%x = "test.op"() : () -> tensor<4xf32>
%r = mtia.se_compute ins(%x : tensor<4xf32>) {
^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
  mtia.yield %a : tensor<4xf32>
} -> tensor<4xf32>
// CHECK: body has 2 arguments for 1 inputs

// -----

%x = "test.op"() : () -> tensor<4xf32>
%r = mtia.se_compute ins(%x : tensor<4xf32>) {
^bb0(%a: tensor<4xf16>):
  mtia.yield %a : tensor<4xf16>
} -> tensor<4xf16>
// CHECK: body argument type tensor<4xf16> does not match input tile type tensor<4xf32>

// -----

%x = "test.op"() : () -> tensor<4xf32>
%r = mtia.se_compute ins(%x : tensor<4xf32>) {
^bb0(%a: tensor<4xf32>):
  mtia.yield %a : tensor<4xf32>
} -> tensor<4xf16>
// CHECK: yielded types do not match the results or outs tiles

// -----

%p, %s = "test.op"() : () -> (!tt.ptr<f32>, i64)
%t = mtia.dma_load %p[] bounds[] : !tt.ptr<f32> -> f32
// CHECK: mtia.dma_load moves a tensor block, not f32; use mtia.scalar_load for one element

// -----

%a, %b, %c = "test.op"() : () -> (tensor<4x8xf16>, tensor<8x16xf16>, tensor<2x2xf32>)
%d = mtia.dpe_matmul %a, %b, %c {input_precision = 2 : i32} : tensor<4x8xf16>, tensor<8x16xf16>, tensor<2x2xf32> -> tensor<4x16xf32>
// CHECK: accumulator and result must be tensor<4x16x..>, got tensor<2x2xf32>

// -----

%x = "test.op"() : () -> tensor<4xf32>
%r = mtia.re_reduce %x {axis = 5 : i32, kind = "addf"} : tensor<4xf32> -> f32
// CHECK: axis 5 is out of range for an input of rank 1

// -----

%x = "test.op"() : () -> tensor<4x8xf32>
%r = mtia.re_reduce %x {axis = 1 : i32, kind = "addf"} : tensor<4x8xf32> -> tensor<8xf32>
// CHECK: reducing axis 1 of tensor<4x8xf32> gives shape [4], not tensor<8xf32>

// -----

%p, %s, %ids = "test.op"() : () -> (!tt.ptr<f32>, i64, tensor<3x1xi64>)
%t = mtia.dma_gather_rows %p[%ids * %s] [%s, %s] bounds[%s, %s] : !tt.ptr<f32>, tensor<3x1xi64> -> tensor<4x4xf32>
// CHECK: index tile of shape [3, 1] does not broadcast to the block [4, 4]

// -----

%cb = mtia.cb_alloc {cb_id = 1 : i32} : !mtia.cb<1, tensor<64xf32>>
// CHECK: an allocated CB has both a cb_id and an ls_offset (set by mtia-cb-allocate)

// -----

%cb = mtia.cb_alloc {cb_id = -1 : i32, ls_offset = 0 : i64} : !mtia.cb<1, tensor<64xf32>>
// CHECK: cb_id must be non-negative, got -1

// -----

%cb = mtia.cb_alloc {cb_id = 0 : i32, ls_offset = -32 : i64} : !mtia.cb<1, tensor<64xf32>>
// CHECK: ls_offset must be non-negative, got -32

// -----

// An engine command computes: memory ops are DMA commands, not part of a body (mtia.ENGINE_BODY_OPS).
%p = "test.op"() : () -> tensor<4x!tt.ptr<f32>>
%t = mtia.se_compute ins(%p : tensor<4x!tt.ptr<f32>>) {
^bb0(%q: tensor<4x!tt.ptr<f32>>):
  %v = tt.load %q : tensor<4x!tt.ptr<f32>>
  mtia.yield %v : tensor<4xf32>
} -> tensor<4xf32>
// CHECK: tt.load may not appear in the body of mtia.se_compute (mtia.ENGINE_BODY_OPS lists what an engine command computes)

// RUN: mtia-opt %s | mtia-opt | filecheck %s
// RUN: mtia-opt %s --print-op-generic | mtia-opt | filecheck %s

builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  // CHECK: builtin.module attributes {mtia.target = #mtia.target<"mtia2i">}
  %p, %q = "test.op"() : () -> (!tt.ptr<f16>, !tt.ptr<f32>)
  %s0, %s1, %b0, %b1 = "test.op"() : () -> (i64, i64, i64, i64)
  %zero = arith.constant 0.0 : f16

  // Tensor level.
  // CHECK: %[[A:.*]] = mtia.dma_load %{{.*}}[%{{.*}}, %{{.*}}] bounds[%{{.*}}, %{{.*}}] other(%{{.*}} : f16) : !tt.ptr<f16> -> tensor<64x32xf16>
  %a = mtia.dma_load %p[%s0, %s1] bounds[%b0, %b1] other(%zero : f16) : !tt.ptr<f16> -> tensor<64x32xf16>
  // CHECK: %[[B:.*]] = mtia.dma_load %{{.*}}[%{{.*}}, %{{.*}}] bounds[%{{.*}}, %{{.*}}] : !tt.ptr<f16> -> tensor<32x64xf16>
  %b = mtia.dma_load %p[%s0, %s1] bounds[%b0, %b1] : !tt.ptr<f16> -> tensor<32x64xf16>
  // A block beginning before its tensor: its leading lanes (below `starts`) are `other` too.
  // CHECK: mtia.dma_load %{{.*}}[%{{.*}}, %{{.*}}] bounds[%{{.*}}, %{{.*}}] starts[%{{.*}}, %{{.*}}] other(%{{.*}} : f16) : !tt.ptr<f16> -> tensor<8x8xf16>
  %lo = mtia.dma_load %p[%s0, %s1] bounds[%b0, %b1] starts[%s0, %s1] other(%zero : f16) : !tt.ptr<f16> -> tensor<8x8xf16>
  // CHECK: mtia.dma_store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] bounds[%{{.*}}, %{{.*}}] starts[%{{.*}}, %{{.*}}] : tensor<8x8xf16>, !tt.ptr<f16>
  mtia.dma_store %lo, %p[%s0, %s1] bounds[%b0, %b1] starts[%s0, %s1] : tensor<8x8xf16>, !tt.ptr<f16>
  // Elements from a pointer to the end of its tensor's storage (clips an LS gather's box DMA).
  // CHECK: %{{.*}} = mtia.storage_extent %{{.*}} : !tt.ptr<f32>
  %extent = mtia.storage_extent %q : !tt.ptr<f32>
  // Indexed DMA: rows of %p picked by an index tile (embedding lookups).
  %ids = "test.op"() : () -> tensor<64x1xi64>
  // CHECK: mtia.dma_gather_rows %{{.*}}[%{{.*}} * %{{.*}}] [%{{.*}}, %{{.*}}] bounds[%{{.*}}, %{{.*}}] other(%{{.*}} : f16) : !tt.ptr<f16>, tensor<64x1xi64> -> tensor<64x32xf16>
  %rows = mtia.dma_gather_rows %p[%ids * %s0] [%s0, %s1] bounds[%b0, %b1] other(%zero : f16) : !tt.ptr<f16>, tensor<64x1xi64> -> tensor<64x32xf16>
  %acc = "test.op"() : () -> tensor<64x64xf32>
  // CHECK: %[[D:.*]] = mtia.dpe_matmul %[[A]], %[[B]], %{{.*}} {input_precision = 2 : i32} : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %d = mtia.dpe_matmul %a, %b, %acc {input_precision = 2 : i32} : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  // CHECK: mtia.re_reduce %[[D]] {axis = 1 : i32, kind = "maxnumf"} : tensor<64x64xf32> -> tensor<64xf32>
  %m = mtia.re_reduce %d {axis = 1 : i32, kind = "maxnumf"} : tensor<64x64xf32> -> tensor<64xf32>
  // CHECK: mtia.se_compute ins(%[[D]] : tensor<64x64xf32>) {
  // CHECK:   arith.truncf
  // CHECK:   mtia.yield %{{.*}} : tensor<64x64xf16>
  // CHECK: } -> tensor<64x64xf16>
  %h = mtia.se_compute ins(%d : tensor<64x64xf32>) {
  ^bb0(%x: tensor<64x64xf32>):
    %y = arith.truncf %x : tensor<64x64xf32> to tensor<64x64xf16>
    mtia.yield %y : tensor<64x64xf16>
  } -> tensor<64x64xf16>
  // CHECK: mtia.vec_compute {
  %r = mtia.vec_compute {
    %y = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    mtia.yield %y : tensor<64xi32>
  } -> tensor<64xi32>
  // CHECK: mtia.mlu_compute ins
  %e = mtia.mlu_compute ins(%r : tensor<64xi32>) {
  ^bb0(%x: tensor<64xi32>):
    %y = tt.expand_dims %x {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    mtia.yield %y : tensor<1x64xi32>
  } -> tensor<1x64xi32>
  // CHECK: mtia.dma_store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] bounds[%{{.*}}, %{{.*}}] : tensor<64x64xf16>, !tt.ptr<f16>
  mtia.dma_store %h, %p[%s0, %s1] bounds[%b0, %b1] : tensor<64x64xf16>, !tt.ptr<f16>
  // CHECK: mtia.scalar_load %{{.*}} : !tt.ptr<f32> -> f32
  %v = mtia.scalar_load %q : !tt.ptr<f32> -> f32
  // CHECK: mtia.scalar_store %{{.*}}, %{{.*}} : !tt.ptr<f32>, f32
  mtia.scalar_store %q, %v : !tt.ptr<f32>, f32
  %ptrs, %mask = "test.op"() : () -> (tensor<16x!tt.ptr<f32>>, tensor<16xi1>)
  // CHECK: "mtia.gather"
  %g = "mtia.gather"(%ptrs, %mask) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>}> : (tensor<16x!tt.ptr<f32>>, tensor<16xi1>) -> tensor<16xf32>
  // CHECK: "mtia.scatter"
  "mtia.scatter"(%ptrs, %g, %mask) : (tensor<16x!tt.ptr<f32>>, tensor<16xf32>, tensor<16xi1>) -> ()

  // Buffer level.
  // CHECK: %[[CB:.*]] = mtia.cb_alloc : !mtia.cb<2, tensor<64x32xf16>>
  %cb = mtia.cb_alloc : !mtia.cb<2, tensor<64x32xf16>>
  %cs = mtia.cb_alloc : !mtia.cb<1, tensor<32xf16>>
  // A CB placed by mtia-cb-allocate: its CB ID and LS offset are properties.
  // CHECK: %{{.*}} = mtia.cb_alloc {cb_id = 5 : i32, ls_offset = 16384 : i64} : !mtia.cb<1, tensor<32xf16>>
  %placed = mtia.cb_alloc {cb_id = 5 : i32, ls_offset = 16384 : i64} : !mtia.cb<1, tensor<32xf16>>
  // CHECK: mtia.cb_reserve %[[CB]], 1 : !mtia.cb<2, tensor<64x32xf16>>
  mtia.cb_reserve %cb, 1 : !mtia.cb<2, tensor<64x32xf16>>
  // CHECK: mtia.dma_load %{{.*}} : !tt.ptr<f16> into %[[CB]] : !mtia.cb<2, tensor<64x32xf16>>
  mtia.dma_load %p[%s0, %s1] bounds[%b0, %b1] : !tt.ptr<f16> into %cb : !mtia.cb<2, tensor<64x32xf16>>
  // CHECK: mtia.cb_push %[[CB]], 1
  mtia.cb_push %cb, 1 : !mtia.cb<2, tensor<64x32xf16>>
  // CHECK: mtia.cb_wait %[[CB]], 1
  mtia.cb_wait %cb, 1 : !mtia.cb<2, tensor<64x32xf16>>
  mtia.cb_reserve %cs, 1 : !mtia.cb<1, tensor<32xf16>>
  // CHECK: mtia.re_reduce %[[CB]] {axis = 0 : i32, kind = "addf"} : !mtia.cb<2, tensor<64x32xf16>> into %{{.*}} : !mtia.cb<1, tensor<32xf16>>
  mtia.re_reduce %cb {axis = 0 : i32, kind = "addf"} : !mtia.cb<2, tensor<64x32xf16>> into %cs : !mtia.cb<1, tensor<32xf16>>
  // CHECK: mtia.cb_pop %[[CB]], 1
  mtia.cb_pop %cb, 1 : !mtia.cb<2, tensor<64x32xf16>>
  mtia.cb_push %cs, 1 : !mtia.cb<1, tensor<32xf16>>
  // CHECK: mtia.cb_read %{{.*}} : !mtia.cb<1, tensor<32xf16>> -> tensor<32xf16>
  %sv = mtia.cb_read %cs : !mtia.cb<1, tensor<32xf16>> -> tensor<32xf16>
  mtia.cb_pop %cs, 1 : !mtia.cb<1, tensor<32xf16>>
}

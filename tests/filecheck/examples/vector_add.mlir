// RUN: mtia-opt %S/../../../examples/vector_add.py -p tt-inline,mtia-set-target,convert-tt-to-mtia,canonicalize,cse,mtia-cb-bufferize | filecheck %s

// The tutorial's vector add: two masked loads and one masked store become DMAs whose bound is
// n_elements - pid * BLOCK_SIZE (the effective shape of the last block), the add one SE command.
// CHECK-LABEL: tt.func public @add_kernel(%x_ptr: !tt.ptr<f32>, %y_ptr: !tt.ptr<f32>, %output_ptr: !tt.ptr<f32>, %n_elements: i32)
// CHECK-COUNT-3: mtia.cb_alloc : !mtia.cb<1, tensor<1024xf32>>
// CHECK:         %[[BOUND:.*]] = arith.subi
// CHECK:         mtia.dma_load %{{.*}}[%{{.*}}] bounds[%[[BOUND]]] : !tt.ptr<f32> into %[[X:.*]] :
// CHECK:         mtia.dma_load %{{.*}}[%{{.*}}] bounds[%[[BOUND]]] : !tt.ptr<f32> into %[[Y:.*]] :
// CHECK:         mtia.se_compute ins(%[[X]], %[[Y]] : {{.*}}) outs(%[[OUT:.*]] : !mtia.cb<1, tensor<1024xf32>>)
// CHECK:           arith.addf
// CHECK:         mtia.dma_store %[[OUT]], %{{.*}}[%{{.*}}] bounds[%[[BOUND]]]
// CHECK-NOT:     tt.load
// CHECK-NOT:     tt.store

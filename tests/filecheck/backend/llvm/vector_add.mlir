// RUN: mtia-opt %S/../../../../examples/vector_add.py -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm | filecheck %s

// vector_add as LLVM IR: the kernel takes its parameters, then program id and grid; three CBs allocated by
// the runtime; each DMA a packed runtime command; the SE command's body one loop over the valid lanes of the
// tile (an fadd of the two front tiles into the reserved slot), then the call recording the command.
// CHECK-LABEL: define void @"add_kernel"(ptr %"x_ptr", ptr %"y_ptr", ptr %"output_ptr", i32 %"n_elements", i32 %"pid_x", i32 %"pid_y", i32 %"pid_z", i32 %"num_x", i32 %"num_y", i32 %"num_z")
// CHECK:         %"cb0" = call ccc i32 @"mtia_cb_alloc"(i32 {{[0-9]+}}, i32 0, i64 0, i32 1, i64 4096)
// CHECK:         call ccc void @"mtia_scalar_instrs"(i64 {{[0-9]+}})
// CHECK:         call ccc void @"mtia_cb_reserve"(i32 {{[0-9]+}}, i32 %"cb0", i32 1)
// CHECK:         call ccc void @"mtia_dma_load"(
// CHECK:         call ccc void @"mtia_cb_push"(i32 {{[0-9]+}}, i32 %"cb0", i32 1)
// CHECK:         %"in0" = call ccc ptr @"mtia_cb_front"(i32 [[SITE:[0-9]+]], i32 %"cb0")
// CHECK:         %"in1" = call ccc ptr @"mtia_cb_front"(i32 [[SITE]], i32 %"cb1")
// CHECK:         %"out0" = call ccc ptr @"mtia_cb_back"(i32 [[SITE]], i32 %"cb2")
// CHECK:         call i64 @"llvm.smin.i64"
// CHECK:       tile.d0:
// CHECK:         %"i0" = phi  i64
// CHECK:         icmp slt i64 %"i0"
// CHECK:       tile.d0.body:
// CHECK:         load float, ptr
// CHECK:         load float, ptr
// CHECK:         fadd float
// CHECK:         store float
// CHECK:       tile.d0.end:
// CHECK:         call ccc void @"mtia_se_compute"(i32 [[SITE]],
// CHECK:         call ccc void @"mtia_dma_store"(
// CHECK:         ret void

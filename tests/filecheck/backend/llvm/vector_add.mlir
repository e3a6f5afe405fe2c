// RUN: mtia-opt %S/../../../../examples/vector_add.py -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm | filecheck %s

// vector_add as LLVM IR against mtia_runtime.h: the entry takes the PE and the argument words; locations are
// constant strings named after the kernel line; each DMA fills an mtia_dma_desc on the stack; the SE command
// gets its tiles from mtia_cmd_in / mtia_cmd_out, adds them in one loop over the valid lanes of the tile and
// is recorded by mtia_compute_end with its static work. Values are named after the kernel's variables
// (`%"block_start"`, the CB of `x` is `%"x_cb"`, its tile `%"x.tile"`, the lane sum `%"output"`).
// CHECK-DAG:   @"vector_add.py:16:9" = internal constant [{{[0-9]+}} x i8] c"{{.*}}vector_add.py:16:9\00"
// CHECK-DAG:   @"kind.se_compute" = internal constant [11 x i8] c"se_compute\00"
// CHECK-DAG:   @"mtia_kernel_meta" = constant {{.*}}\22kernel\22: \22add_kernel\22
// CHECK-LABEL: define void @"add_kernel"(ptr %"pe", ptr %"args")
// CHECK:         %"x_ptr" = load i64, ptr %"args"
// CHECK:         %"x_cb" = call ccc i32 @"mtia_cb_alloc"(ptr %"pe", i32 0, i32 1, i64 4096, i64 0,
// CHECK:         %"pid" = call ccc i32 @"mtia_program_id"(ptr %"pe", i32 0)
// CHECK-NEXT:    %"block_start" = mul i32 %"pid", 1024
// CHECK:         call ccc void @"mtia_scalar_instrs"(ptr %"pe", i64 {{[0-9]+}})
// CHECK:         call ccc void @"mtia_cb_reserve"(ptr %"pe", i32 %"x_cb", i32 1, [{{[0-9]+}} x i8]* @"vector_add.py:16:9")
// CHECK:         call ccc void @"mtia_dma_load"(ptr %"pe", i32 %"x_cb", ptr %"dma{{.*}}", ptr null, [{{[0-9]+}} x i8]* @"vector_add.py:16:9")
// CHECK:         call ccc void @"mtia_cb_push"(ptr %"pe", i32 %"x_cb", i32 1,
// CHECK:         call ccc void @"mtia_cmd_begin"(ptr %"pe", i32 3, [11 x i8]* @"kind.se_compute", [{{[0-9]+}} x i8]* @"vector_add.py:18:14")
// CHECK:         %"x.tile" = call ccc ptr @"mtia_cmd_in"(ptr %"pe", i32 %"x_cb")
// CHECK:         %"y.tile" = call ccc ptr @"mtia_cmd_in"(ptr %"pe", i32 %"y_cb")
// CHECK:         %"out0" = call ccc ptr @"mtia_cmd_out"(ptr %"pe", i32 %"output_cb")
// CHECK:         call i64 @"llvm.smin.i64"
// CHECK:       tile.d0:
// CHECK:         %"i0" = phi  i64
// CHECK:         icmp slt i64 %"i0"
// CHECK:       tile.d0.body:
// CHECK:         %"x" = load float, ptr
// CHECK:         %"y" = load float, ptr
// CHECK:         %"output" = fadd float %"x", %"y"
// CHECK:         store float
// CHECK:       tile.d0.end:
// CHECK:         call ccc void @"mtia_compute_end"(ptr %"pe", ptr %"work")
// CHECK:         call ccc void @"mtia_dma_store"(ptr %"pe", i32 %"output_cb", ptr %"dma{{.*}}",
// CHECK:         call ccc void @"mtia_cb_pop"(ptr %"pe", i32 %"output_cb", i32 1,
// CHECK-NEXT:    call ccc void @"mtia_scalar_instrs"(ptr %"pe", i64 1)
// CHECK-NEXT:    ret void

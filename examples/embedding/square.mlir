builtin.module {
  tt.func public @add_kernel(%x_ptr: !tt.ptr<f32>, %y_ptr: !tt.ptr<f32>, %output_ptr: !tt.ptr<f32>, %n_elements: i32) attributes {noinline = false} {
    %0 = arith.constant 1024 : i32
    %1 = tt.get_program_id x : i32
    %2 = arith.muli %1, %0 : i32
    %3 = tt.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %4 = tt.splat %2 : i32 -> tensor<1024xi32>
    %5 = arith.addi %4, %3 : tensor<1024xi32>
    %6 = tt.splat %n_elements : i32 -> tensor<1024xi32>
    %7 = arith.cmpi slt, %5, %6 : tensor<1024xi32>
    %8 = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %9 = tt.addptr %8, %5 : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %10 = tt.load %9, %7 : tensor<1024x!tt.ptr<f32>>
    %11 = tt.splat %y_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %12 = tt.addptr %11, %5 : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %13 = tt.load %12, %7 : tensor<1024x!tt.ptr<f32>>
    %s = demo.square %10 : tensor<1024xf32>
    %14 = arith.addf %s, %13 : tensor<1024xf32>
    %15 = tt.splat %output_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %16 = tt.addptr %15, %5 : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    tt.store %16, %14, %7 : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}


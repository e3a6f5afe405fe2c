// RUN: mtia-opt %s | mtia-opt | filecheck %s
// RUN: mtia-opt %s --print-op-generic | mtia-opt | filecheck %s
// RUN: mtia-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

builtin.module {
  // CHECK-LABEL: tt.func public @all_ops
  // CHECK-SAME: (%{{.*}}: !tt.ptr<f32>, %{{.*}}: i32, %{{.*}}: i64) attributes {noinline = false}
  tt.func public @all_ops(%p: !tt.ptr<f32>, %n: i32, %w: i64) attributes {noinline = false} {
    // CHECK: tt.get_program_id x : i32
    // CHECK: tt.get_num_programs z : i32
    // GENERIC: "tt.get_program_id"() <{axis = 0 : i32}> : () -> i32
    // GENERIC: "tt.get_num_programs"() <{axis = 2 : i32}> : () -> i32
    %pid = tt.get_program_id x : i32
    %np = tt.get_num_programs z : i32
    // CHECK: tt.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
    %r = tt.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
    // CHECK: tt.splat %{{.*}} : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    // CHECK: tt.addptr %{{.*}}, %{{.*}} : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %pa = tt.addptr %ps, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %ns = tt.splat %n : i32 -> tensor<16xi32>
    %m = arith.cmpi slt, %r, %ns : tensor<16xi32>
    %other = arith.constant dense<0xFF800000> : tensor<16xf32>
    // CHECK: tt.load %{{.*}}, %{{.*}}, %{{.*}} {cachePolicy = #tt.cache_policy<cache_modifier = cg, eviction_policy = evict_last>} : tensor<16x!tt.ptr<f32>>
    // GENERIC: "tt.load"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1>, cachePolicy = #tt.cache_policy<cache_modifier = cg, eviction_policy = evict_last>}>
    %x = tt.load %pa, %m, %other {cachePolicy = #tt.cache_policy<cache_modifier = cg, eviction_policy = evict_last>} : tensor<16x!tt.ptr<f32>>
    // CHECK: tt.load %{{.*}} {isVolatile = true} : !tt.ptr<f32>
    %s = tt.load %p {isVolatile = true} : !tt.ptr<f32>
    // CHECK: tt.store %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x!tt.ptr<f32>>
    tt.store %pa, %x, %m : tensor<16x!tt.ptr<f32>>
    // CHECK: tt.store %{{.*}}, %{{.*}} {cachePolicy = #tt.cache_policy<cache_modifier = wb, eviction_policy = evict_first>} : !tt.ptr<f32>
    tt.store %p, %s {cachePolicy = #tt.cache_policy<cache_modifier = wb, eviction_policy = evict_first>} : !tt.ptr<f32>
    // CHECK: tt.expand_dims %{{.*}} {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %e = tt.expand_dims %x {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    // CHECK: tt.broadcast %{{.*}} : tensor<16x1xf32> -> tensor<16x16xf32>
    %b = tt.broadcast %e : tensor<16x1xf32> -> tensor<16x16xf32>
    // CHECK: tt.reshape %{{.*}} : tensor<16x16xf32> -> tensor<256xf32>
    %flat = tt.reshape %b : tensor<16x16xf32> -> tensor<256xf32>
    // CHECK: tt.reshape %{{.*}} allow_reorder : tensor<256xf32> -> tensor<16x16xf32>
    %sq = tt.reshape %flat allow_reorder : tensor<256xf32> -> tensor<16x16xf32>
    // CHECK: tt.trans %{{.*}} {order = array<i32: 1, 0>} : tensor<16x16xf32> -> tensor<16x16xf32>
    %t = tt.trans %sq {order = array<i32: 1, 0>} : tensor<16x16xf32> -> tensor<16x16xf32>
    %h = arith.truncf %t : tensor<16x16xf32> to tensor<16x16xf16>
    // CHECK: tt.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
    // GENERIC: "tt.dot"(%{{.*}}, %{{.*}}, %{{.*}}) <{inputPrecision = 2 : i32, maxNumImpreciseAcc = 0 : i32}>
    %d = tt.dot %h, %h, %t : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
    // CHECK: tt.dot %{{.*}}, %{{.*}}, %{{.*}}, inputPrecision = tf32 {maxNumImpreciseAcc = 4 : i32} : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
    %d2 = tt.dot %h, %h, %t, inputPrecision = tf32 {maxNumImpreciseAcc = 4 : i32} : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
    // CHECK: "tt.reduce"(%{{.*}}) <{axis = 1 : i32}> ({
    // CHECK:   tt.reduce.return %{{.*}} : f32
    // CHECK: }) : (tensor<16x16xf32>) -> tensor<16xf32>
    %red = "tt.reduce"(%d) <{axis = 1 : i32}> ({
    ^bb0(%a0: f32, %a1: f32):
      %mx = arith.maxnumf %a0, %a1 : f32
      tt.reduce.return %mx : f32
    }) : (tensor<16x16xf32>) -> tensor<16xf32>
    // CHECK: "tt.scan"(%{{.*}}) <{axis = 0 : i32, reverse = false}> ({
    // CHECK:   tt.scan.return %{{.*}} : f32
    %sc = "tt.scan"(%red) <{axis = 0 : i32, reverse = false}> ({
    ^bb0(%a0: f32, %a1: f32):
      %ad = arith.addf %a0, %a1 : f32
      tt.scan.return %ad : f32
    }) : (tensor<16xf32>) -> tensor<16xf32>
    // CHECK: tt.fp_to_fp %{{.*}}, rounding = rtne : tensor<16xf32> -> tensor<16xf16>
    // GENERIC: "tt.fp_to_fp"(%{{.*}}) <{rounding = 1 : i32}>
    %fp = tt.fp_to_fp %sc, rounding = rtne : tensor<16xf32> -> tensor<16xf16>
    // CHECK: tt.bitcast %{{.*}} : tensor<16xf32> -> tensor<16xi32>
    %bits = tt.bitcast %sc : tensor<16xf32> -> tensor<16xi32>
    // CHECK: tt.int_to_ptr %{{.*}} : i64 -> !tt.ptr<f32>
    %ip = tt.int_to_ptr %w : i64 -> !tt.ptr<f32>
    // CHECK: tt.ptr_to_int %{{.*}} : !tt.ptr<f32> -> i64
    %pi = tt.ptr_to_int %ip : !tt.ptr<f32> -> i64
    // CHECK: tt.clampf %{{.*}}, %{{.*}}, %{{.*}}, propagateNan = all : tensor<16xf32>
    // GENERIC: "tt.clampf"(%{{.*}}, %{{.*}}, %{{.*}}) <{propagateNan = 65535 : i32}>
    %cl = tt.clampf %sc, %red, %x, propagateNan = all : tensor<16xf32>
    // CHECK: tt.precise_sqrt %{{.*}} : tensor<16xf32>
    %sqrt = tt.precise_sqrt %cl : tensor<16xf32>
    // CHECK: tt.precise_divf %{{.*}}, %{{.*}} : tensor<16xf32>
    %div = tt.precise_divf %sqrt, %cl : tensor<16xf32>
    // CHECK: tt.mulhiui %{{.*}}, %{{.*}} : tensor<16xi32>
    %hi = tt.mulhiui %bits, %bits : tensor<16xi32>
    // CHECK: tt.extern_elementwise %{{.*}} {libname = "", libpath = "", pure = true, symbol = "__nv_expf"} : (tensor<16xf32>) -> tensor<16xf32>
    %ex = tt.extern_elementwise %div {libname = "", libpath = "", pure = true, symbol = "__nv_expf"} : (tensor<16xf32>) -> tensor<16xf32>
    // CHECK: tt.atomic_rmw fadd, acq_rel, gpu, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<16x!tt.ptr<f32>>, tensor<16xf32>, tensor<16xi1>) -> tensor<16xf32>
    // GENERIC: "tt.atomic_rmw"(%{{.*}}, %{{.*}}, %{{.*}}) <{atomic_rmw_op = 5 : i32, sem = 4 : i32, scope = 1 : i32}>
    %old = tt.atomic_rmw fadd, acq_rel, gpu, %pa, %ex, %m : (tensor<16x!tt.ptr<f32>>, tensor<16xf32>, tensor<16xi1>) -> tensor<16xf32>
    // CHECK: tt.atomic_cas relaxed, sys, %{{.*}}, %{{.*}}, %{{.*}} : (!tt.ptr<f32>, f32, f32) -> f32
    %cas = tt.atomic_cas relaxed, sys, %p, %s, %s : (!tt.ptr<f32>, f32, f32) -> f32
    // CHECK: tt.join %{{.*}}, %{{.*}} : tensor<16xf32> -> tensor<16x2xf32>
    %j = tt.join %ex, %old : tensor<16xf32> -> tensor<16x2xf32>
    // CHECK: %{{.*}}, %{{.*}} = tt.split %{{.*}} : tensor<16x2xf32> -> tensor<16xf32>
    %lo, %hi2 = tt.split %j : tensor<16x2xf32> -> tensor<16xf32>
    // CHECK: tt.cat %{{.*}}, %{{.*}} : tensor<16xf32> -> tensor<32xf32>
    %cat = tt.cat %lo, %hi2 : tensor<16xf32> -> tensor<32xf32>
    // CHECK: tt.histogram %{{.*}} : tensor<16xi32> -> tensor<8xi32>
    %hist = tt.histogram %r : tensor<16xi32> -> tensor<8xi32>
    // CHECK: tt.gather %{{.*}}[%{{.*}}] {axis = 0 : i32} : (tensor<16xf32>, tensor<16xi32>) -> tensor<16xf32>
    %g = tt.gather %lo[%r] {axis = 0 : i32} : (tensor<16xf32>, tensor<16xi32>) -> tensor<16xf32>
    %s2 = tt.splat %s : f32 -> tensor<1xf32>
    // CHECK: tt.unsplat %{{.*}} : tensor<1xf32> -> f32
    %u = tt.unsplat %s2 : tensor<1xf32> -> f32
    // CHECK: tt.print " x: " {hex = false, isSigned = array<i32: 1>} : %{{.*}} : i32
    tt.print " x: " {hex = false, isSigned = array<i32: 1>} : %n : i32
    // CHECK: tt.assert %{{.*}}, "mask" : tensor<16xi1>
    tt.assert %m, "mask" : tensor<16xi1>
    // CHECK: tt.call @helper(%{{.*}}) : (f32) -> f32
    %c = tt.call @helper(%u) : (f32) -> f32
    // CHECK: tt.return
    tt.return
  }
  // CHECK-LABEL: tt.func private @helper
  tt.func private @helper(%v: f32) -> f32 attributes {noinline = false} {
    // CHECK: tt.return %{{.*}} : f32
    tt.return %v : f32
  }
  // CHECK-LABEL: tt.func @ptr_spaces
  // CHECK-SAME: !tt.ptr<f16, "constant">
  tt.func @ptr_spaces(%q: !tt.ptr<f16, "constant">) {
    tt.return
  }
}

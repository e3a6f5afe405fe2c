// RUN: mtia-opt %s -p 'mtia-pe-mapping{subgrid=60,4,2}' --verify-diagnostics | filecheck %s
// RUN: mtia-opt %s -p 'mtia-pe-mapping{subgrid=0,4}' --verify-diagnostics | filecheck %s --check-prefix=ARITY
// RUN: sed 's/attributes {mtia.target = #mtia.target<"mtia2i">}//' %s | mtia-opt -p 'mtia-pe-mapping{subgrid=0,4,2}' --verify-diagnostics | filecheck %s --check-prefix=TARGET

// CHECK: kernel.py:3:1: error: mtia-pe-mapping: pe_subgrid (60, 4, 2): 2 rows of 4 PEs from PE 60 (row 7, column 4) leave the 8 x 8 PE grid; choose a base PE and tile size inside it
// ARITY: kernel.py:3:1: error: mtia-pe-mapping: pe_subgrid must be three integers (base_pe, tile_width, tile_height), got (0, 4)
// TARGET: mtia-pe-mapping needs the module attribute mtia.target
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  tt.func public @kernel() {
    tt.return
  } loc("kernel.py":3:1)
}

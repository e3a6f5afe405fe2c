// RUN: mtia-opt %s -p 'mtia-pe-mapping{subgrid=18,4,2}' | filecheck %s
// RUN: mtia-opt %s -p 'mtia-pe-mapping{strategy=linear}' | filecheck %s --check-prefix=WHOLE

// A launch sub-grid (base PE, tile width, tile height) is recorded next to the strategy; without one the
// kernel runs on the whole chip and carries no mtia.pe_subgrid.
builtin.module attributes {mtia.target = #mtia.target<"mtia2i">} {
  // CHECK-LABEL: tt.func public @kernel
  // CHECK-SAME:  mtia.pe_subgrid = array<i32: 18, 4, 2>
  // WHOLE-LABEL: tt.func public @kernel
  // WHOLE-NOT:   mtia.pe_subgrid
  tt.func public @kernel() {
    %x = mtia.pe_id {axis = 0 : i32} : i32
    tt.return
  }
}

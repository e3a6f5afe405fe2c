// RUN: mtia-run %s --grid 6 --arg zeros:i32:6 --pe-subgrid 18,4,2 --mapping linear | filecheck %s
// RUN: not mtia-run %s --grid 6 --arg zeros:i32:6 --pe-subgrid 60,4,2 2>&1 | filecheck %s --check-prefix=OFF

// A launch on a sub-grid (base PE 18 = row 2, column 2; 4 x 2 PEs) runs its programs there: with the linear
// mapping, 6 programs on 8 PEs are one per PE, and each stores its PE's row-major number in the sub-grid.
// CHECK: programs 6 on 6 of 64 PEs
// CHECK: arg 0: sum = 15
// OFF: mtia-run: pe_subgrid (60, 4, 2): 2 rows of 4 PEs from PE 60 (row 7, column 4) leave the 8 x 8 PE grid
builtin.module {
  tt.func public @kernel(%p : !tt.ptr<i32>) {
    %x = mtia.pe_id {axis = 0 : i32} : i32
    %y = mtia.pe_id {axis = 1 : i32} : i32
    %w = mtia.num_pes {axis = 0 : i32} : i32
    %yw = arith.muli %y, %w : i32
    %id = arith.addi %yw, %x : i32
    %pid = tt.get_program_id x : i32
    %q = tt.addptr %p, %pid : !tt.ptr<i32>, i32
    tt.store %q, %id : !tt.ptr<i32>
    tt.return
  } loc("kernel.py":3:1)
}

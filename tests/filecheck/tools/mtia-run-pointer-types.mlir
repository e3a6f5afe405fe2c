// mtia-run checks each tensor against its pointer by Triton's rule (`launch.pointer_fits`, as run_module):
// TTIR integers are signless, so a u8 tensor fits `!tt.ptr<i8>`; a bool (i1) tensor fits only `!tt.ptr<i1>`.
// RUN: mtia-run %s --kernel bytes --arg arange:u8:4 | filecheck %s --check-prefix=U8
// RUN: not mtia-run %s --kernel bytes --arg ones:i1:4 2>&1 | filecheck %s --check-prefix=BOOL
// RUN: mtia-run %s --kernel flags --arg ones:i1:4 | filecheck %s --check-prefix=I1
// RUN: not mtia-run %s --kernel flags --arg ones:i8:4 2>&1 | filecheck %s --check-prefix=I8

// U8: bytes on mtia2i
// U8: arg 0: sum = 6
// BOOL: mtia-run: --arg #1: parameter 'x' is !tt.ptr<i8> but the tensor is i1
// I1: flags on mtia2i
// I1: arg 0: sum = 3
// I8: mtia-run: --arg #1: parameter 'x' is !tt.ptr<i1> but the tensor is i8
tt.func public @bytes(%x: !tt.ptr<i8>) {
  %v = tt.load %x : !tt.ptr<i8>
  %w = arith.addi %v, %v : i8
  tt.store %x, %w : !tt.ptr<i8>
  tt.return
}
tt.func public @flags(%x: !tt.ptr<i1>) {
  %v = tt.load %x : !tt.ptr<i1>
  %t = arith.constant true
  %w = arith.xori %v, %t : i1
  tt.store %x, %w : !tt.ptr<i1>
  tt.return
}

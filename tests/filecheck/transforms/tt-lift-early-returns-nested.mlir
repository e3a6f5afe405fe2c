// RUN: mtia-opt %s -p tt-lift-early-returns | filecheck %s

// Upstream's test_nested_if_else_return: the inner `else: return` leaves the code after the outer if/else
// reached from two branches; the pass copies it into each (tail duplication), drops the block Triton
// leaves unreachable, and lifts the branches into nested scf.if.
// CHECK-LABEL: tt.func public @kernel
// CHECK:         scf.if %{{.*}} {
// CHECK:           scf.if %{{.*}} {
// CHECK-NEXT:        %[[V1:.*]] = tt.load %Val1
// CHECK-NEXT:        tt.store %Out, %[[V1]]
// CHECK-NEXT:      } else {
// CHECK-NEXT:      }
// CHECK-NEXT:    } else {
// CHECK:           %[[V:.*]] = scf.if %{{.*}} -> (i32) {
// CHECK:           tt.store %Out, %[[V]]
// CHECK-NEXT:    }
// CHECK-NEXT:    tt.return
// CHECK-NOT:     cf.
builtin.module {
  tt.func public @kernel(%Cond1: !tt.ptr<i32>, %Cond2: !tt.ptr<i32>, %Cond3: !tt.ptr<i32>, %Val1: !tt.ptr<i32>, %Val2: !tt.ptr<i32>, %Val3: !tt.ptr<i32>, %Out: !tt.ptr<i32>) {
    %0 = arith.constant 0 : i32
    %1 = tt.load %Cond1 : !tt.ptr<i32>
    %3 = arith.cmpi ne, %1, %0 : i32
    cf.cond_br %3, ^bb1, ^bb2
  ^bb1:
    %4 = tt.load %Cond2 : !tt.ptr<i32>
    %6 = arith.cmpi ne, %4, %0 : i32
    cf.cond_br %6, ^bb3, ^bb4
  ^bb2:
    %7 = tt.load %Cond3 : !tt.ptr<i32>
    %9 = arith.cmpi ne, %7, %0 : i32
    %10 = scf.if %9 -> (i32) {
      %11 = tt.load %Val2 : !tt.ptr<i32>
      scf.yield %11 : i32
    } else {
      %12 = tt.load %Val3 : !tt.ptr<i32>
      scf.yield %12 : i32
    }
    cf.br ^bb7(%10 : i32)
  ^bb3:
    %13 = tt.load %Val1 : !tt.ptr<i32>
    cf.br ^bb6(%13 : i32)
  ^bb4:
    tt.return
  ^bb5:
    cf.br ^bb6(%0 : i32)
  ^bb6(%14: i32):
    cf.br ^bb7(%14 : i32)
  ^bb7(%15: i32):
    tt.store %Out, %15 : !tt.ptr<i32>
    tt.return
  }
}

// RUN: mtia-opt %s --split-input-file -p tt-lift-early-returns | filecheck %s

// `if cond: return` then straight-line code: one scf.if whose else branch holds the rest.
// CHECK-LABEL: tt.func public @early
// CHECK:         %[[C:.*]] = arith.cmpi sge
// CHECK-NEXT:    scf.if %[[C]] {
// CHECK-NEXT:    } else {
// CHECK-NEXT:      tt.store
// CHECK-NEXT:    }
// CHECK-NEXT:    tt.return
// CHECK-NOT:     cf.
tt.func public @early(%p: !tt.ptr<f32>, %n: i32, %v: f32) {
  %pid = tt.get_program_id x : i32
  %c = arith.cmpi sge, %pid, %n : i32
  cf.cond_br %c, ^ret, ^go
^ret:
  tt.return
^go:
  cf.br ^body
^body:
  tt.store %p, %v : !tt.ptr<f32>
  tt.return
}

// -----

// Nested early returns become nested scf.if.
// CHECK-LABEL: tt.func public @nested
// CHECK:         scf.if %{{.*}} {
// CHECK-NEXT:    } else {
// CHECK:           scf.if %{{.*}} {
// CHECK-NEXT:        tt.store
// CHECK-NEXT:      } else {
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    tt.return
tt.func public @nested(%p: !tt.ptr<f32>, %n: i32, %v: f32) {
  %pid = tt.get_program_id x : i32
  %c = arith.cmpi sge, %pid, %n : i32
  cf.cond_br %c, ^ret, ^go
^ret:
  tt.return
^go:
  %d = arith.cmpi eq, %pid, %n : i32
  cf.cond_br %d, ^store, ^ret2
^store:
  tt.store %p, %v : !tt.ptr<f32>
  tt.return
^ret2:
  tt.return
}

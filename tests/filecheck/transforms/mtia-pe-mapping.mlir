// RUN: mtia-opt %s -p mtia-pe-mapping | filecheck %s
// RUN: mtia-opt %s -p 'mtia-pe-mapping{strategy=linear}' | filecheck %s --check-prefix=LINEAR
// RUN: mtia-opt %s -p 'mtia-pe-mapping{strategy=round_robin}' | filecheck %s --check-prefix=RR

// The strategy is recorded on every kernel function; the body is left as it was.
builtin.module {
  // CHECK-LABEL: tt.func public @kernel
  // CHECK-SAME:  attributes {mtia.pe_mapping = "zigzag"}
  // CHECK-NEXT:    %[[PID:.*]] = tt.get_program_id x : i32
  // LINEAR-LABEL: tt.func public @kernel
  // LINEAR-SAME:  attributes {mtia.pe_mapping = "linear"}
  // RR-LABEL: tt.func public @kernel
  // RR-SAME:  attributes {mtia.pe_mapping = "round_robin"}
  tt.func public @kernel(%p : !tt.ptr<i32>) {
    %pid = tt.get_program_id x : i32
    tt.store %p, %pid : !tt.ptr<i32>
    tt.return
  }
  // CHECK-LABEL: tt.func public @other
  // CHECK-SAME:  attributes {mtia.pe_mapping = "zigzag"}
  // LINEAR-LABEL: tt.func public @other
  // LINEAR-SAME:  attributes {mtia.pe_mapping = "linear"}
  tt.func public @other() attributes {mtia.pe_mapping = "round_robin"} {
    tt.return
  }
}

// RUN: mtia-opt %s -p mtia-pe-mapping | filecheck %s
// RUN: mtia-opt %s -p 'mtia-pe-mapping{strategy=zigzag}' | filecheck %s --check-prefix=ZIGZAG
// RUN: mtia-opt %s -p 'mtia-pe-mapping{strategy=round_robin}' | filecheck %s --check-prefix=RR

// The strategy is recorded on every kernel function; the body is left as it was.
builtin.module {
  // CHECK-LABEL: tt.func public @kernel
  // CHECK-SAME:  attributes {mtia.pe_mapping = "linear"}
  // CHECK-NEXT:    %[[PID:.*]] = tt.get_program_id x : i32
  // ZIGZAG-LABEL: tt.func public @kernel
  // ZIGZAG-SAME:  attributes {mtia.pe_mapping = "zigzag"}
  // RR-LABEL: tt.func public @kernel
  // RR-SAME:  attributes {mtia.pe_mapping = "round_robin"}
  tt.func public @kernel(%p : !tt.ptr<i32>) {
    %pid = tt.get_program_id x : i32
    tt.store %p, %pid : !tt.ptr<i32>
    tt.return
  }
  // CHECK-LABEL: tt.func public @other
  // CHECK-SAME:  attributes {mtia.pe_mapping = "linear"}
  // ZIGZAG-LABEL: tt.func public @other
  // ZIGZAG-SAME:  attributes {mtia.pe_mapping = "zigzag"}
  tt.func public @other() attributes {mtia.pe_mapping = "round_robin"} {
    tt.return
  }
}

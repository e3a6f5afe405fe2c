// RUN: python3 -m examples.embedding.driver %S/../../../examples/embedding/square.mlir -p tt-inline,demo-lower-square | filecheck %s --check-prefix=OWN
// RUN: python3 -m examples.embedding.driver %S/../../../examples/embedding/square.mlir --demo-pipeline | filecheck %s
// RUN: python3 -m examples.embedding.driver %S/../../../examples/embedding/square.mlir --demo-pipeline -t "demo-run{n=5000}" | filecheck %s --check-prefix=MODEL

// The embedding example (examples/embedding/): its own pass rewrites its own op between two of ours, then
// mtia_xdsl's pipeline lowers the result to the buffer level, and the model runs it.
// OWN-LABEL: tt.func public @add_kernel
// OWN:         %s = arith.mulf %{{.*}}, %{{.*}} : tensor<1024xf32>
// OWN-NOT:     demo.square

// CHECK-LABEL: tt.func public @add_kernel
// CHECK:         mtia.se_compute
// CHECK:           arith.mulf
// CHECK-NOT:     demo.square

// out = x * x + y with x = y = 0, 1, ..., 4999: sum = 4999 * 5000 * 9999 / 6 + 4999 * 5000 / 2
// MODEL: add_kernel on mtia2i
// MODEL: arg 0: sum = 1.24975e+07
// MODEL: arg 2: sum = 4.16667e+10

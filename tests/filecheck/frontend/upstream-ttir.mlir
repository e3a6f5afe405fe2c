// RUN: mtia-opt %S/Inputs/vector_add.ttir --print-debuginfo | filecheck %s
// RUN: mtia-opt %S/Inputs/vector_add.ttir -p tt-inline,mtia-set-target,convert-tt-to-mtia --print-debuginfo | filecheck %s --check-prefix=LOWERED

// Upstream TTIR as libtriton prints it, location aliases after the module included, parses into our tt
// dialect with every location kept; the lowering keeps the kernel line on the DMA.
// CHECK:  tt.func public @add_kernel(%x_ptr: !tt.ptr<f32> loc("x_ptr"("examples/vector_add.py":{{.*}})),
// CHECK:    tt.load {{.*}} loc("x"("examples/vector_add.py":14:9))
// LOWERED:  mtia.dma_load {{.*}} loc("x"("examples/vector_add.py":14:9))

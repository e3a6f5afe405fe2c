// RUN: mtia-opt %S/../../../examples/row_sums.py -p "tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}" -t mtia-cpp | filecheck %s

// row_sums_re: the scalar core reads the whole tile of partial sums, reduces it across its PE row
// (mtia_re_allreduce over the RE network) and PE x = 0 stores the result it holds (no CB, no command).

// CHECK:      // row_sums.py:37
// CHECK:      float [[PART:[a-z_0-9]+]][8];
// CHECK-NEXT: mtia_cb_read(pe, [[CB:[a-z_0-9]+]], [[PART]], sizeof [[PART]], MTIA_KERNEL_FILE ":37:17");
// CHECK-NEXT: mtia_cb_pop(pe, [[CB]], 1, MTIA_KERNEL_FILE ":37:17");
// CHECK:      float [[TOTAL:[a-z_0-9]+]][8];
// CHECK-NEXT: memcpy([[TOTAL]], [[PART]], sizeof [[TOTAL]]);
// CHECK-NEXT: mtia_re_allreduce(pe, [[TOTAL]], 8, sizeof [[TOTAL]][0], "f32", "addf", 0, MTIA_KERNEL_FILE ":37:17");
// CHECK:      // row_sums.py:39
// CHECK:      mtia_dma_store_value(pe, [[TOTAL]], &{{[a-z_0-9]+}}, MTIA_KERNEL_FILE ":39:13");
// CHECK:      } else {
// CHECK-NEXT:     mtia_scalar_instrs(pe, 1);
// CHECK-NEXT: }

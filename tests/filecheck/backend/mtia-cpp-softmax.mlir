// RUN: mtia-opt %S/../../../examples/softmax.py -p "tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}" -t mtia-cpp | filecheck %s

// softmax as C++: a DMA load with other = -inf, an RE max over the valid columns, exp(x - max) on the SE
// (a LUT function: lut 1), an RE sum, the divide, the store; CBs and lane values keep the kernel's names.
// CHECK-LABEL: static void softmax_kernel(
// CHECK:         mtia_dma_load(pe, row_cb, &{{dma[0-9]+}}, &{{other[0-9]+}}, MTIA_KERNEL_FILE ":17:11");
// CHECK:         // softmax.py:18
// CHECK:           mtia_cmd_begin(pe, MTIA_RE, "re_reduce",
// CHECK:           mtia_re_end(pe, 1, in_shape, "f32", /*LS bytes*/ 4100, /*nvalid*/ 1, valid);
// CHECK:         // softmax.py:19
// CHECK:           mtia_cmd_begin(pe, MTIA_SE, "se_compute",
// CHECK:           const float row_minus_max = (row[{{.*}}] - {{in[0-9]+}}[0]);
// CHECK-NEXT:      const float numerator = std::exp(row_minus_max);
// CHECK:           const mtia_work work = {/*elems*/ {{[0-9]+}}, /*dtype*/ "f32", /*lut*/ 1,
// CHECK:         // softmax.py:20
// CHECK:           mtia_cmd_begin(pe, MTIA_RE, "re_reduce",
// CHECK:         // softmax.py:21
// CHECK:           mtia_cmd_begin(pe, MTIA_SE, "se_compute",
// CHECK:           / {{.*}}
// CHECK:         // softmax.py:24
// CHECK:           mtia_dma_store(

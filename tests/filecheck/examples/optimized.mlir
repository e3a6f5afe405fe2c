// The default compile pipeline (pipeline_for() with the default options) on two examples: each of the
// paper's optimizations is visible in the buffer-level program.
// RUN: mtia-opt %S/../../../examples/softmax.py -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' | filecheck %s --check-prefix=SOFTMAX
// RUN: mtia-opt %S/../../../examples/matmul.py -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' | filecheck %s --check-prefix=MATMUL

// Softmax: the splats of max and sum are scalar operands of the SE commands that read them, x - max and
// exp are one command, the max and the division run on the row's valid lanes only, 5 CBs in all.
// SOFTMAX:      tt.func public @softmax_kernel{{.*}}mtia.pe_mapping = "zigzag"
// Five straight-line CBs, at most three alive at once: mtia-cb-allocate gives them three CB IDs and lets the
// later rows reuse the LS bytes of the earlier ones.
// SOFTMAX:      mtia.cb_alloc {mtia.depth_reason = "straight-line value: 1 slot", cb_id = 0 : i32, ls_offset = 0 : i64} : !mtia.cb<1, tensor<1024xf32>>
// SOFTMAX-NEXT: mtia.cb_alloc {mtia.depth_reason = "straight-line value: 1 slot", cb_id = 1 : i32, ls_offset = 8192 : i64} : !mtia.cb<1, f32>
// SOFTMAX-NEXT: mtia.cb_alloc {mtia.depth_reason = "straight-line value: 1 slot", cb_id = 2 : i32, ls_offset = 4096 : i64} : !mtia.cb<1, tensor<1024xf32>>
// SOFTMAX-NEXT: mtia.cb_alloc {mtia.depth_reason = "straight-line value: 1 slot", cb_id = 0 : i32, ls_offset = 8192 : i64} : !mtia.cb<1, f32>
// SOFTMAX-NEXT: mtia.cb_alloc {mtia.depth_reason = "straight-line value: 1 slot", cb_id = 1 : i32, ls_offset = 0 : i64} : !mtia.cb<1, tensor<1024xf32>>
// SOFTMAX-NOT:  mtia.cb_alloc
// SOFTMAX:      mtia.dma_load %{{.*}} bounds[%[[N:.*]]] other
// SOFTMAX:      mtia.re_reduce %{{.*}} valid[%[[N]]] {axis = 0 : i32, kind = "maxnumf"}
// SOFTMAX:      mtia.se_compute ins(%{{.*}}, %{{.*}} : !mtia.cb<1, tensor<1024xf32>>, !mtia.cb<1, f32>)
// SOFTMAX-NEXT: ^bb0(%{{.*}}: tensor<1024xf32>, %[[M:.*]]: f32):
// SOFTMAX-NEXT:   %[[MS:.*]] = tt.splat %[[M]] : f32 -> tensor<1024xf32>
// SOFTMAX-NEXT:   arith.subf %{{.*}}, %[[MS]]
// SOFTMAX-NEXT:   math.exp
// SOFTMAX:      mtia.re_reduce %{{.*}} {axis = 0 : i32, kind = "addf"}
// SOFTMAX:      mtia.se_compute ins({{.*}}) outs({{.*}}) valid[%[[N]]] {
// SOFTMAX:        arith.divf

// Matmul: the K loop streams A and B through multi-slot CBs sized by the greedy model (B's read and refill
// fit one iteration, but a DMA load keeps 2), the accumulator is updated in place in one slot, and the DPE
// skips the masked tails of M, N and K.
// MATMUL:      tt.func public @matmul_kernel{{.*}}mtia.pe_mapping = "zigzag"
// MATMUL:      %[[ACC:.*]] = mtia.cb_alloc {mtia.depth_reason = "value carried around the loop at matmul.py:{{.*}}, updated in place: 1 slot", cb_id = 0 : i32, ls_offset = 0 : i64} : !mtia.cb<1, tensor<64x64xf32>>
// MATMUL:      %[[A:.*]] = mtia.cb_alloc {mtia.pipeline_stages = 3 : i64, mtia.depth_reason = "streamed by DMA in the loop at matmul.py:{{.*}} -> 2 slots", cb_id = 1 : i32, ls_offset = 16384 : i64} : !mtia.cb<2, tensor<64x32xf16>>
// MATMUL:      %[[B:.*]] = mtia.cb_alloc {mtia.pipeline_stages = 3 : i64, mtia.depth_reason = "streamed by DMA in the loop at matmul.py:{{.*}} -> 2 slots (a DMA refill{{.*}}: at least 2)", cb_id = 2 : i32, ls_offset = 24576 : i64} : !mtia.cb<2, tensor<32x64xf16>>
// MATMUL:      scf.for
// MATMUL:        mtia.dma_load %{{.*}} into %[[A]]
// MATMUL:        mtia.dma_load %{{.*}} into %[[B]]
// MATMUL:        mtia.dpe_matmul %[[A]], %[[B]], %[[ACC]] valid[%{{.*}}, %{{.*}}, %{{.*}}] inplace
// MATMUL:      } {mtia.pipeline_stages = 3 : i64}

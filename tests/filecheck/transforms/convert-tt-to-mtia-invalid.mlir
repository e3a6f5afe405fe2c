// RUN: mtia-opt %s -p convert-tt-to-mtia --verify-diagnostics | filecheck %s

// fp8 values are refused at the line that makes them, with the fix.
// CHECK: k.py:3:8: error: f8E4M3FN values are not supported on MTIA-2i (its engines take int8, fp16, bf16 and fp32); cast to tl.float16 or tl.bfloat16 instead
tt.func public @fp8(%x: tensor<16xf16>) -> tensor<16xf8E4M3FN> {
  %y = tt.fp_to_fp %x, rounding = rtne : tensor<16xf16> -> tensor<16xf8E4M3FN> loc("k.py":3:8)
  tt.return %y : tensor<16xf8E4M3FN>
}

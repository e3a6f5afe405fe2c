// RUN: mtia-opt %s -p convert-tt-to-mtia --verify-diagnostics | filecheck %s

// fp8 formats without emulation are refused at the line that makes them, naming the supported ones.
// CHECK: k.py:3:8: error: f8E4M3B11FNUZ values are not supported by mtia_xdsl (fp8 is emulated for E5M2, E4M3FN, E5M2FNUZ and E4M3FNUZ: tl.float8e5, tl.float8e4nv, tl.float8e5b16, tl.float8e4b8)
tt.func public @fp8(%x: tensor<16xf16>) -> tensor<16xf8E4M3B11FNUZ> {
  %y = tt.fp_to_fp %x, rounding = rtne : tensor<16xf16> -> tensor<16xf8E4M3B11FNUZ> loc("k.py":3:8)
  tt.return %y : tensor<16xf8E4M3B11FNUZ>
}

// RUN: mtia-opt %s | mtia-opt | filecheck %s
// RUN: mtia-opt %s --print-op-generic | mtia-opt | filecheck %s
// RUN: mtia-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// llvm.intr.assume (tl.assume) in upstream's syntax; the generic form is what libtriton parses.
builtin.module {
  %c = "test.op"() : () -> i1
  // CHECK: llvm.intr.assume %{{.*}} : i1
  // GENERIC: "llvm.intr.assume"(%{{.*}}) <{op_bundle_sizes = array<i32>}> : (i1) -> ()
  llvm.intr.assume %c : i1
}

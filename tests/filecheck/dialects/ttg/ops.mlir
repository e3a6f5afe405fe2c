// RUN: mtia-opt %s | mtia-opt | filecheck %s
// RUN: mtia-opt %s --print-op-generic | mtia-opt | filecheck %s
// RUN: mtia-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// ttg.barrier (tl.debug_barrier) prints its address-space bit set as upstream does.
builtin.module {
  // CHECK: ttg.barrier all
  // GENERIC: "ttg.barrier"() <{addrSpace = 31 : i32}> : () -> ()
  ttg.barrier all
  // CHECK: ttg.barrier local|global_write
  // GENERIC: "ttg.barrier"() <{addrSpace = 5 : i32}> : () -> ()
  ttg.barrier local|global_write
  // CHECK: ttg.barrier none
  ttg.barrier none
}

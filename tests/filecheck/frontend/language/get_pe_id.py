# RUN: mtia-opt %s --print-debuginfo | filecheck %s
# RUN: mtia-opt %s -p 'tt-inline,mtia-set-target,convert-tt-to-mtia,canonicalize,cse,mtia-cb-bufferize,mtia-pe-mapping{subgrid=18,4,2}' | filecheck %s --check-prefix=LOWERED
# mtia-opt: kernel=pe_kernel signature=out_ptr:*i32

# mtl.get_pe_id / tl.mtia.get_pe_id emit mtia.pe_id at the kernel line; without an axis, the row-major PE
# number y * width + x. They survive lowering as scalar-core reads (the kernel records its sub-grid).

import triton
import triton.language as tl

import mtia_xdsl.language as mtl


@triton.jit
def pe_kernel(out_ptr):
    pid = tl.program_id(0)
    tl.store(out_ptr + 2 * pid, mtl.get_pe_id(0))
    tl.store(out_ptr + 2 * pid + 1, tl.mtia.get_pe_id() + mtl.get_num_pes(1))


# CHECK-LABEL: tt.func public @pe_kernel
# CHECK:       mtia.pe_id {axis = 0 : i32} : i32 loc("{{.*}}get_pe_id.py":17:33)
# CHECK-DAG:   %[[X:.*]] = mtia.pe_id {axis = 0 : i32} : i32 loc("{{.*}}get_pe_id.py":18:
# CHECK-DAG:   %[[Y:.*]] = mtia.pe_id {axis = 1 : i32} : i32 loc("{{.*}}get_pe_id.py":18:
# CHECK-DAG:   %[[W:.*]] = mtia.num_pes {axis = 0 : i32} : i32 loc("{{.*}}get_pe_id.py":18:
# CHECK:       %[[YW:.*]] = arith.muli %[[Y]], %[[W]] : i32
# CHECK:       arith.addi %[[YW]], %[[X]] : i32
# CHECK:       mtia.num_pes {axis = 1 : i32} : i32 loc("{{.*}}get_pe_id.py":18:59)

# LOWERED-LABEL: tt.func public @pe_kernel
# LOWERED-SAME:  mtia.pe_subgrid = array<i32: 18, 4, 2>
# LOWERED:       %[[X:.*]] = mtia.pe_id {axis = 0 : i32} : i32
# LOWERED:       mtia.scalar_store %{{.*}}, %[[X]] : !tt.ptr<i32>, i32

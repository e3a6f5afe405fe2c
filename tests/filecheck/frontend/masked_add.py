# RUN: python3 -m mtia_xdsl.frontend %s:masked_add --signature x_ptr=*fp32,y_ptr=*fp32,n=i32,BLOCK=constexpr --constexpr BLOCK=256 --clean --debuginfo | filecheck %s
# RUN: python3 -m mtia_xdsl.frontend %s:masked_add --signature x_ptr=*fp32,y_ptr=*fp32,n=i32,BLOCK=constexpr --constexpr BLOCK=256 --generic | filecheck %s --check-prefix=GENERIC
# RUN: not python3 -m mtia_xdsl.frontend %s:bad_dot --signature x_ptr=*fp32,BLOCK=constexpr --constexpr BLOCK=4 2>&1 | filecheck %s --check-prefix=ERR

import triton
import triton.language as tl


@triton.jit
def masked_add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=float("-inf"))
    tl.store(y_ptr + offs, tl.exp(x) + 1.0, mask=offs < n)


# CHECK-LABEL: tt.func public @masked_add
# CHECK-DAG:   %[[NEGINF:.*]] = arith.constant dense<0xff800000> : tensor<256xf32> loc("{{.*}}masked_add.py":12:
# CHECK-DAG:   %[[PID:.*]] = tt.get_program_id x : i32 loc("{{.*}}masked_add.py":11:12)
# CHECK:       %[[RANGE:.*]] = tt.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32> loc("{{.*}}masked_add.py":11:
# CHECK:       %[[MASK:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : tensor<256xi32> loc("{{.*}}masked_add.py":12:
# CHECK:       %[[X:.*]] = tt.load %{{.*}}, %[[MASK]], %[[NEGINF]] : tensor<256x!tt.ptr<f32>> loc("{{.*}}masked_add.py":12:9)
# CHECK:       math.exp %[[X]] : tensor<256xf32> loc("{{.*}}masked_add.py":13:
# CHECK:       tt.store %{{.*}}, %{{.*}}, %{{.*}} : tensor<256x!tt.ptr<f32>> loc("{{.*}}masked_add.py":13:5)
# CHECK-NOT:   tt.call

# GENERIC: "tt.func"() <{sym_name = "masked_add", function_type = (!tt.ptr<f32>, !tt.ptr<f32>, i32) -> (), sym_visibility = "public"}>
# GENERIC: "tt.load"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1>}>


@triton.jit
def bad_dot(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :])
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.dot(x, x))


# ERR: masked_add.py:[[# @LINE - 3]]:{{[0-9]+}}: error: {{.*}}K >= {{[0-9]+}}

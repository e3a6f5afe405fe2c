# RUN: mtia-opt %s | filecheck %s
# RUN: mtia-opt %s -p tt-inline,mtia-set-target,convert-tt-to-mtia | filecheck %s --check-prefix=DMA
# RUN: sed 's/^# BAD //' %s > %t.py && not mtia-opt %t.py 2>&1 | filecheck %s --check-prefix=BAD
# mtia-opt: kernel=row_sums signature=m:Matrix,out_ptr:*fp32 constexprs=BLOCK:16

# A ctypes.Structure argument is passed by field, in declaration order (nested structures and fixed arrays
# flattened), each with the Triton type of its ctypes declaration; the kernel reads the fields as
# attributes, and a pointer field with stride fields gives a strided DMA block.

import ctypes

import triton
import triton.language as tl


class Shape(ctypes.Structure):
    _fields_ = [("rows", ctypes.c_int32), ("cols", ctypes.c_uint32)]


class Matrix(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.POINTER(ctypes.c_float)),
        ("shape", Shape),
        ("strides", ctypes.c_int64 * 2),
        ("scale", ctypes.c_double),
        ("negate", ctypes.c_bool),
    ]


# BAD class Matrix(ctypes.Structure):
# BAD     _fields_ = [("data", ctypes.POINTER(ctypes.c_float)), ("extra", ctypes.c_longdouble)]


@triton.jit
def row_sums(m, out_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    x = tl.load(m.data + r[:, None] * m.strides[0] + r[None, :] * m.strides[1])
    s = tl.sum(x, axis=1) * m.scale
    tl.store(out_ptr + r, s)


# CHECK: tt.func public @row_sums(%m_data: !tt.ptr<f32>, %m_shape_rows: i32, %m_shape_cols: i32, %m_strides: i64, %m_strides_1: i64, %m_scale: f64, %m_negate: i1, %out_ptr: !tt.ptr<f32>)

# DMA: mtia.dma_load %m_data[%m_strides, %m_strides_1]

# BAD: error: argument 'm': field 'm.extra' has ctypes type c_longdouble, which has no Triton type; use one of:

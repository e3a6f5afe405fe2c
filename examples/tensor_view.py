# mtia-opt: kernel=scale_view constexprs=BLOCK_M:32,BLOCK_N:32
# mtia-opt: signature=src:TensorView,out_ptr:*fp32
"""A kernel over a TensorView: a ctypes.Structure argument passed by field (mtia_xdsl.language.structs).

`TensorView` describes a strided 2-D fp32 tensor as C code would (data pointer, sizes, strides, plus a
nested affine `Epilogue`); `scale_view` reads its fields as attributes (`src.data`, `src.sizes[0]`,
`src.epilogue.scale`). `scale_args` is the same kernel taking every field as its own argument;
`benchmarks/language.py` shows that both compile to the same program and take the same time.
"""

import ctypes

import torch
import triton
import triton.language as tl


class Epilogue(ctypes.Structure):
    """out = x * scale + bias."""

    _fields_ = [("scale", ctypes.c_float), ("bias", ctypes.c_float)]


class TensorView(ctypes.Structure):
    """A strided 2-D fp32 tensor: data pointer, sizes and strides in elements, and an epilogue."""

    _fields_ = [
        ("data", ctypes.POINTER(ctypes.c_float)),
        ("sizes", ctypes.c_int64 * 2),
        ("strides", ctypes.c_int64 * 2),
        ("epilogue", Epilogue),
    ]

    @staticmethod
    def of(x: torch.Tensor, scale: float = 1.0, bias: float = 0.0) -> "TensorView":
        """Return the view of the fp32 2-D tensor `x`; it keeps `x` alive (and visible to the launch)."""
        pointer = ctypes.cast(x.data_ptr(), ctypes.POINTER(ctypes.c_float))
        view = TensorView(
            pointer, (ctypes.c_int64 * 2)(*x.shape), (ctypes.c_int64 * 2)(*x.stride()), Epilogue(scale, bias)
        )
        view.tensor = x  # the usual ctypes idiom: the structure holds what its pointer points into
        return view


@triton.jit
def scale_view(src, out_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    mask = (rows < src.sizes[0]) & (cols < src.sizes[1])
    x = tl.load(src.data + rows * src.strides[0] + cols * src.strides[1], mask=mask)
    tl.store(out_ptr + rows * src.sizes[1] + cols, x * src.epilogue.scale + src.epilogue.bias, mask=mask)


@triton.jit
def scale_args(data, size_0, size_1, stride_0, stride_1, scale, bias, out_ptr, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr):  # fmt: skip
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    mask = (rows < size_0) & (cols < size_1)
    x = tl.load(data + rows * stride_0 + cols * stride_1, mask=mask)
    tl.store(out_ptr + rows * size_1 + cols, x * scale + bias, mask=mask)


def scale(x: torch.Tensor, scale: float, bias: float, by_struct: bool = True, block: int = 32) -> torch.Tensor:
    """Return x * scale + bias, contiguous; x: a strided tensor<M x N x f32>."""
    m, n = x.shape
    out = torch.empty(m, n)
    grid = (triton.cdiv(m, block), triton.cdiv(n, block))
    if by_struct:
        scale_view[grid](TensorView.of(x, scale, bias), out, BLOCK_M=block, BLOCK_N=block)
    else:
        stride_0, stride_1 = x.stride()
        scale_args[grid](x, m, n, stride_0, stride_1, scale, bias, out, BLOCK_M=block, BLOCK_N=block)
    return out

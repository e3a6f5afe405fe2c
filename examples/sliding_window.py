# mtia-opt: kernel=fir_slices constexprs=BLOCK:1024,TAPS:8
# mtia-opt: signature=x_ptr:*fp32,w_ptr:*fp32,out_ptr:*fp32,n:i32
"""A sliding window (an FIR filter, out[i] = sum_k w[k] x[i + k]) with the language extension extract_slice.

`fir_slices` loads each program's window of 2 * BLOCK inputs into local storage once and takes the TAPS
shifted views of it with `mtl.extract_slice` (copies inside LS on the MLU, no DMA); `fir_loads` is the
same filter written in plain Triton, one `tl.load` of BLOCK inputs per tap. `benchmarks/language.py`
prints the bytes each moves and its time.
"""

import torch
import triton
import triton.language as tl

import mtia_xdsl.language as mtl


@triton.jit
def fir_slices(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr, TAPS: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    window = start + tl.arange(0, 2 * BLOCK)
    tile = tl.load(x_ptr + window, mask=window < n, other=0.0)  # the one DMA of the inputs
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in tl.static_range(TAPS):
        acc += tl.load(w_ptr + k) * mtl.extract_slice(tile, [k], [BLOCK])
    offs = start + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, acc, mask=offs < n)


@triton.jit
def fir_loads(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr, TAPS: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    offs = start + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in tl.static_range(TAPS):
        acc += tl.load(w_ptr + k) * tl.load(x_ptr + offs + k, mask=offs + k < n, other=0.0)  # one DMA per tap
    tl.store(out_ptr + offs, acc, mask=offs < n)


def fir(x: torch.Tensor, w: torch.Tensor, slices: bool = True, BLOCK: int = 1024) -> torch.Tensor:
    """Return out[i] = sum_k w[k] x[i + k] (x read as 0 past its end); x: tensor<N x f32>, w: tensor<TAPS x f32>.

    Raises: ValueError if TAPS > BLOCK + 1 (the window of one program holds 2 * BLOCK inputs).
    """
    taps = w.numel()
    if taps > BLOCK + 1:
        raise ValueError(f"{taps} taps need BLOCK >= {taps - 1}")
    out = torch.empty_like(x)
    kernel = fir_slices if slices else fir_loads
    kernel[(triton.cdiv(x.numel(), BLOCK),)](x, w, out, x.numel(), BLOCK=BLOCK, TAPS=taps)
    return out


def fir_reference(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """The filter in torch (float64 accumulation)."""
    padded = torch.cat([x.double(), x.new_zeros(w.numel()).double()])
    return sum(w[k].double() * padded[k : k + x.numel()] for k in range(w.numel())).float()

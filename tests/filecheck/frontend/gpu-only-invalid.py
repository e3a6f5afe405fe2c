# RUN: not mtia-opt %s 2>&1 | filecheck %s
# RUN: sed 's/BLOCK:32/BLOCK=32/' %s > %t.py && not mtia-opt %t.py 2>&1 | filecheck %s --check-prefix=PAIR
# mtia-opt: kernel=asm_kernel signature=x_ptr:*i32,y_ptr:*i32 constexprs=BLOCK:32

# Inline assembly is refused at its kernel line, naming the construct and what to write instead.
# CHECK: gpu-only-invalid.py:19:{{[0-9]+}}: error: tl.inline_asm_elementwise is GPU-only and not supported on MTIA: inline assembly targets one GPU's instruction set and cannot run on MTIA; write the computation with tl operations (tl.map_elementwise for scalar code)

# A constexpr written name=value instead of name:value is refused with the expected form.
# PAIR: error: 'BLOCK=32' in constexprs= of the mtia-opt comment; write name:value pairs, e.g. constexprs=BLOCK:64

import triton
import triton.language as tl


@triton.jit
def asm_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y)

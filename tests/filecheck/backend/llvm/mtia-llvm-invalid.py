# RUN: mtia-opt %s -p 'tt-inline,tt-lift-early-returns,tt-rewrite-tensor-descriptor-to-pointer,mtia-set-target{chip=mtia2i},convert-tt-to-mtia,canonicalize,cse,mtia-vector-codegen,mtia-effective-shape,mtia-cb-bufferize,mtia-software-pipeline{num-stages=3},mtia-cb-sizing{strategy=greedy max-depth=3},mtia-cb-allocate,mtia-pe-mapping{strategy=zigzag}' -t mtia-llvm --verify-diagnostics | filecheck %s
# mtia-opt: kernel=ldexp_kernel signature=x_ptr:*fp32,y_ptr:*fp32 constexprs=BLOCK:16

# A construct the LLVM IR emitter does not translate (here a libdevice function it has no lowering for, inside
# an engine command's body) is an error at its kernel line, never wrong code.
# CHECK: mtia-llvm-invalid.py:17:{{[0-9]+}}: error: the LLVM IR emitter (mtia-llvm) does not handle tt.extern_elementwise (libdevice function {{.*}}ldexp{{.*}}); run the kernel on the machine model (the default executor) instead

import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def ldexp_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, libdevice.ldexp(x, offs))

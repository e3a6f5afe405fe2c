# RUN: not mtia-opt %s 2>&1 | filecheck %s
# RUN: sed 's/^# DIRECTIVE/# mtia-opt:/' %s > %t.py && not mtia-opt %t.py 2>&1 | filecheck %s --check-prefix=MISSING

# A kernel file without the comment naming the kernel to build is refused with a hint.
# CHECK: mtia-opt-py-invalid.py:1:1: error: no '# mtia-opt: kernel=NAME signature=arg:type,...' comment says which kernel to build; add one

# A directive that leaves a non-constexpr argument without a type says which.
# DIRECTIVE kernel=copy signature=x_ptr:*fp32
# MISSING: error: arguments out_ptr, BLOCK of 'copy' have no type in signature= and no value in constexprs=

import triton
import triton.language as tl


@triton.jit
def copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))

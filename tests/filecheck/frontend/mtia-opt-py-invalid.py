# RUN: not mtia-opt %s 2>&1 | filecheck %s
# RUN: sed 's/^# DIRECTIVE/# mtia-opt:/' %s > %t.py && not mtia-opt %t.py 2>&1 | filecheck %s --check-prefix=MISSING
# RUN: sed 's/^# BAD_DIRECTIVE/# mtia-opt:/' %s > %t.bad.py && not mtia-opt %t.bad.py 2>&1 | filecheck %s --check-prefix=BADVALUE

# A kernel file without the comment naming the kernel to build is refused with a hint.
# CHECK: mtia-opt-py-invalid.py:1:1: error: no '# mtia-opt: kernel=NAME signature=arg:type,...' comment says which kernel to build; add one

# A directive that leaves a non-constexpr argument without a type says which.
# DIRECTIVE kernel=copy signature=x_ptr:*fp32
# MISSING: error: arguments out_ptr, BLOCK of 'copy' have no type in signature= and no value in constexprs=

# A constexpr value that is not a Python literal is named, before any argument is found without a type.
# BAD_DIRECTIVE kernel=copy constexprs=BLOCK:abc
# BADVALUE: :[[# @LINE - 1]]:1: error: 'BLOCK:abc' in constexprs= of the mtia-opt comment: 'abc' is not a number or a Python literal; give an int (BLOCK:64), a float, True/False or a quoted string (BLOCK:'abc')

import triton
import triton.language as tl


@triton.jit
def copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))

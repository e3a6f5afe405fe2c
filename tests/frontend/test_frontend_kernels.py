"""Small Triton kernels exercising frontend constructs the example kernels do not (if, while, helpers)."""

import triton
import triton.language as tl


@triton.jit
def _scale(x, factor):
    return x * factor


@triton.jit
def helpers_and_casts(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = _scale(x, 2.0)
    y = tl.rsqrt(tl.abs(y) + 1.0) + tl.exp(y)
    y = tl.where(y > 0.5, y, -y)
    tl.store(y_ptr + offs, y.to(tl.bfloat16).to(tl.float32).to(tl.float16), mask=mask)


@triton.jit
def if_and_while(x_ptr, y_ptr, n, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    if flag > 0:
        acc = acc + 1.0
    else:
        acc = acc - 1.0
    i = 0
    while i < n:
        acc += tl.load(x_ptr + i * BLOCK + offs)
        i += 1
    tl.store(y_ptr + offs, acc)


@triton.jit
def reductions_2d(x_ptr, y_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    x = tl.load(x_ptr + rows * BLOCK_N + cols)
    s = tl.sum(x, axis=1) + tl.max(x, axis=1)
    tl.store(y_ptr + tl.arange(0, BLOCK_M), s)


@triton.jit
def unsupported_inline_asm(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y)


@triton.jit
def shape_mismatch(x_ptr, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK))
    b = a + tl.arange(0, 2 * BLOCK)
    tl.store(x_ptr + tl.arange(0, BLOCK), a)
    tl.store(x_ptr + tl.arange(0, 2 * BLOCK), b)


@triton.jit
def many_ops(x_ptr, y_ptr, n, f, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK) + tl.num_programs(1)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=float("-inf"), cache_modifier=".cg", eviction_policy="evict_last")
    x2 = tl.reshape(x, (BLOCK // 16, 16))
    t = tl.trans(x2)
    d = tl.dot(t.to(tl.float16), x2.to(tl.float16), input_precision="tf32")
    tl.store(y_ptr + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :], d)
    s = tl.sum(x2, axis=1)
    mx = tl.max(x2, axis=0)
    c = tl.cumsum(x2, axis=1)
    e = tl.exp(x) + tl.sqrt_rn(x) + tl.div_rn(x, x) + tl.clamp(x, -1.0, 1.0) + tl.log2(tl.abs(x))
    h = x.to(tl.float16).to(tl.float32) + x.to(tl.bfloat16).to(tl.float32)
    xi = x.to(tl.int32, bitcast=True)
    u = tl.umulhi(xi, xi) // 3 + (xi % 7) + (xi >> 2) + (xi << 1) + (xi & 5) + (xi | 2) + (xi ^ 1)
    a, b = tl.split(tl.join(x, x))
    tl.atomic_add(y_ptr + offs, x, mask=m)
    tl.atomic_max(y_ptr + offs, x, mask=m, sem="relaxed", scope="cta")
    tl.atomic_cas(y_ptr.to(tl.pointer_type(tl.int32)), 0, 1)
    tl.store(y_ptr + offs, e + h + a + b + u.to(tl.float32) + tl.where(m, x, f), mask=m)
    tl.store(y_ptr + tl.arange(0, BLOCK // 16), s + tl.sum(c, axis=1) + tl.max(mx, axis=0))
    hist = tl.histogram(xi, 16)
    tl.store(y_ptr + tl.arange(0, 16), hist.to(tl.float32))
    g = tl.gather(x, offs % BLOCK, 0)
    tl.store(y_ptr + offs, g, cache_modifier=".wb")
    tl.device_print("x", n)
    cc = tl.cat(x, x, can_reorder=True)
    tl.store(y_ptr + tl.arange(0, 2 * BLOCK), cc)


@triton.jit
def hints_and_asserts(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.multiple_of(tl.program_id(0) * BLOCK, 16) + tl.max_contiguous(tl.arange(0, BLOCK), BLOCK)
    tl.device_assert(n > 0, "n must be positive")
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.static_range(2):
        acc += tl.load(x_ptr + offs + i * BLOCK)
    for j in range(n, 0, -1):
        acc = acc * 0.5 + j
    tl.store(y_ptr + offs, acc)

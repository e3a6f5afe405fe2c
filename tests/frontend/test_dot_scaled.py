"""tl.dot_scaled is emulated (decode on the vector core, scale, fp32 dot) instead of refused."""

import pytest
import torch
import triton
import triton.language as tl

_E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


@triton.jit
def _dot_scaled_kernel(a, a_scale, b, b_scale, out, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                       KA: tl.constexpr, FMT_A: tl.constexpr, FMT_B: tl.constexpr):  # fmt: skip
    a_tile = tl.load(a + tl.arange(0, M)[:, None] * KA + tl.arange(0, KA)[None, :])
    b_tile = tl.load(b + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    sa = tl.load(a_scale + tl.arange(0, M)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    sb = tl.load(b_scale + tl.arange(0, N)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    c = tl.dot_scaled(a_tile, sa, FMT_A, b_tile, sb, FMT_B)
    tl.store(out + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


def _e2m1_unpack(packed: torch.Tensor) -> torch.Tensor:
    """[M, K/2] uint8 -> [M, K] float, low nibble first."""
    table = torch.tensor(_E2M1 + [-v for v in _E2M1])
    lo, hi = (packed & 0xF).long(), (packed >> 4).long()
    return torch.stack([table[lo], table[hi]], dim=-1).reshape(packed.shape[0], -1)


@pytest.mark.parametrize("fmt_a", ["e2m1", "e4m3"])
def test_dot_scaled_matches_the_upcast_reference(fmt_a):
    torch.manual_seed(0)
    M, N, K = 16, 16, 64
    if fmt_a == "e2m1":
        a = torch.randint(0, 256, (M, K // 2), dtype=torch.uint8)
        a_value = _e2m1_unpack(a)
    else:
        a_value = (torch.randn(M, K) * 2).to(torch.float8_e4m3fn)
        a, a_value = a_value.view(torch.uint8), a_value.float()
    b = torch.randn(K, N).to(torch.float16)
    sa = torch.randint(120, 134, (M, K // 32), dtype=torch.uint8)
    sb = torch.randint(120, 134, (N, K // 32), dtype=torch.uint8)
    out = torch.empty(M, N)
    _dot_scaled_kernel[(1,)](a, sa, b, sb, out, M, N, K, a.shape[1], fmt_a, "fp16")
    scale_a = torch.exp2(sa.float() - 127).repeat_interleave(32, dim=1)
    scale_b = torch.exp2(sb.float() - 127).repeat_interleave(32, dim=1).T
    expected = (a_value * scale_a).double() @ (b.float() * scale_b).double()
    torch.testing.assert_close(out.double(), expected, rtol=1e-5, atol=1e-5)


@triton.jit
def _batched_dot_scaled_kernel(a, a_scale, b, b_scale, out, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr,
                               K: tl.constexpr, KA: tl.constexpr, NB: tl.constexpr, FMT_A: tl.constexpr,
                               FMT_B: tl.constexpr, B_K_PACK: tl.constexpr):  # fmt: skip
    z = tl.arange(0, B)[:, None, None]
    a_tile = tl.load(a + z * M * KA + tl.arange(0, M)[None, :, None] * KA + tl.arange(0, KA)[None, None, :])
    KB: tl.constexpr = K // 2 if B_K_PACK else K
    b_tile = tl.load(b + z * KB * NB + tl.arange(0, KB)[None, :, None] * NB + tl.arange(0, NB)[None, None, :])
    G: tl.constexpr = K // 32
    sa = tl.load(a_scale + z * M * G + tl.arange(0, M)[None, :, None] * G + tl.arange(0, G)[None, None, :])
    sb = tl.load(b_scale + z * N * G + tl.arange(0, N)[None, :, None] * G + tl.arange(0, G)[None, None, :])
    c = tl.dot_scaled(a_tile, sa, FMT_A, b_tile, sb, FMT_B, rhs_k_pack=B_K_PACK)
    tl.store(out + z * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :], c)


@pytest.mark.parametrize("b_k_pack", [True, False])
def test_batched_dot_scaled_matches_the_upcast_reference(b_k_pack):
    """3-D operands [B, M, K] x [B, K, N] with [B, M, K/32] and [B, N, K/32] scales; e2m1 rhs packed along
    K or along N."""
    torch.manual_seed(1)
    B, M, N, K = 2, 16, 16, 64
    a_value = (torch.randn(B, M, K) * 2).to(torch.float8_e4m3fn)
    a, a_value = a_value.view(torch.uint8), a_value.float()
    if b_k_pack:  # [B, K/2, N]: the two nibbles of a byte are consecutive K
        b = torch.randint(0, 256, (B, K // 2, N), dtype=torch.uint8)
        b_value = torch.stack([_e2m1_unpack(x.T).T for x in b])
    else:  # [B, K, N/2]: consecutive N
        b = torch.randint(0, 256, (B, K, N // 2), dtype=torch.uint8)
        b_value = torch.stack([_e2m1_unpack(x) for x in b])
    sa = torch.randint(120, 134, (B, M, K // 32), dtype=torch.uint8)
    sb = torch.randint(120, 134, (B, N, K // 32), dtype=torch.uint8)
    out = torch.empty(B, M, N)
    _batched_dot_scaled_kernel[(1,)](a, sa, b, sb, out, B, M, N, K, K, b.shape[2], "e4m3", "e2m1", b_k_pack)
    scale_a = torch.exp2(sa.float() - 127).repeat_interleave(32, dim=2)
    scale_b = torch.exp2(sb.float() - 127).repeat_interleave(32, dim=2).transpose(1, 2)
    expected = (a_value * scale_a).double() @ (b_value * scale_b).double()
    torch.testing.assert_close(out.double(), expected, rtol=1e-5, atol=1e-5)


def test_dot_scaled_of_128_wide_e2m1_blocks_fits_local_storage_as_written():
    """Upstream's test_scaled_dot at M = N = K = 128 (e2m1 x fp16, both scaled): the e2m1 decode runs on
    int8 tiles, so the kernel fits 384 KB of LS as written (with int32 tiles it needed 393,728 B; upstream's
    kernel, which also converts its result to bf16, 425,984 B)."""
    import mtia_xdsl

    sig = {"a": "*u8", "a_scale": "*u8", "b": "*fp16", "b_scale": "*u8", "out": "*fp32"}
    consts = {"M": 128, "N": 128, "K": 128, "KA": 64, "FMT_A": "e2m1", "FMT_B": "fp16"}
    kernel = mtia_xdsl.compile(_dot_scaled_kernel, sig, consts, options={"make_fit": False})
    assert "tt.dot" in str(kernel.asm["ttir"])

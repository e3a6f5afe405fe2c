"""Conformance specs: what one corpus kernel is launched with and how its outputs are compared.

A `Case` names a `@triton.jit` kernel, an argument builder (drawing sizes, masks, dtypes and strides from a
`Draw`, which is hypothesis in the tests and a seeded `random.Random` in `refresh_gaps.py`), the
constexprs, which arguments are outputs, the tolerance and the oracle. The oracle is Triton's own
interpreter unless the case names a torch/numpy reference (and says why: DESIGN.md lists where Triton 3.9's
interpreter is wrong).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np
import torch

T = TypeVar("T")


class Draw(Protocol):
    """Source of the choices an argument builder makes."""

    def int(self, lo: int, hi: int) -> int:
        """Return an integer in [lo, hi]."""
        ...

    def choice(self, options: Sequence[T]) -> T:
        """Return one of `options`."""
        ...


@dataclass
class RandomDraw:
    """Draw from a seeded `random.Random` (deterministic; used outside hypothesis)."""

    rng: random.Random

    def int(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]


@dataclass
class HypothesisDraw:
    """Draw from a hypothesis `st.data()` object, so failures shrink."""

    data: Any

    def int(self, lo: int, hi: int) -> int:
        from hypothesis import strategies as st

        return self.data.draw(st.integers(lo, hi))

    def choice(self, options: Sequence[T]) -> T:
        from hypothesis import strategies as st

        return self.data.draw(st.sampled_from(list(options)))


@dataclass
class Launch:
    """One launch: positional kernel arguments (tensors and scalars, no constexprs) and the grid."""

    args: list[Any]
    grid: tuple[int, ...]


@dataclass(frozen=True)
class Tol:
    """Allowed difference per output element.

    `ulp`: distance in units in the last place of the output dtype (0 = bit-exact, NaN equals NaN).
    `atol`: an absolute bound used instead of ULPs where values cancel towards 0 (say why in the case).
    """

    ulp: int = 0
    atol: float = 0.0


EXACT = Tol()


@dataclass(frozen=True)
class Case:
    """One corpus kernel and how to check it."""

    kernel: Any
    """The `@triton.jit` function."""
    build: Callable[[Draw], Launch]
    outputs: tuple[int, ...]
    """Positions in `Launch.args` of the tensors compared after the launch."""
    constexprs: dict[str, Any] = field(default_factory=dict[str, Any])
    tol: Tol = EXACT
    reference: Callable[[list[Any]], None] | None = None
    """Computes the outputs in place (torch/numpy, higher precision) instead of Triton's interpreter."""
    why: str = ""
    """Why the tolerance is not bit-exact, or why `reference` replaces Triton's interpreter."""
    debug: bool = False
    """Build with debug on (device_assert emits checks)."""

    @property
    def name(self) -> str:
        return self.kernel.fn.__name__ if hasattr(self.kernel, "fn") else self.kernel.__name__


# ---------------------------------------------------------------- argument helpers

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
SIGNED = (torch.int8, torch.int16, torch.int32, torch.int64)
UNSIGNED = (torch.uint8, torch.uint16, torch.uint32, torch.uint64)
FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)


def generator(d: Draw) -> torch.Generator:
    """Return a torch generator seeded from `d`."""
    return torch.Generator().manual_seed(d.int(0, 2**31 - 1))


def rand(d: Draw, shape: Sequence[int] | int, dtype: torch.dtype = torch.float32, lo: int = -100, hi: int = 100):
    """Return a random tensor: normal floats (scaled by 4), or integers in [lo, hi) clipped to the dtype."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    g = generator(d)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        base = torch.randn(shape, generator=g, dtype=torch.float64) * 4
        return base.to(dtype)
    info = torch.iinfo(dtype)
    lo, hi = max(lo, info.min), min(hi, info.max)
    return torch.randint(lo, hi, shape, generator=g, dtype=torch.int64).to(dtype)


def strided(d: Draw, t: torch.Tensor) -> torch.Tensor:
    """Return `t` or a copy of it laid out as a view with a larger row stride (2-d) or step (1-d)."""
    if d.choice([False, True]):
        return t
    if t.dim() == 1:
        big = torch.zeros(t.shape[0] * 2, dtype=t.dtype)
        view = big[::2]
    else:
        big = torch.zeros(t.shape[0], t.shape[1] + 3, dtype=t.dtype)
        view = big[:, : t.shape[1]]
    view.copy_(t)
    return view


def full_grid(n: int, block: int) -> tuple[int]:
    return ((n + block - 1) // block,)


# ---------------------------------------------------------------- signatures

_TORCH_TO_TRITON = {
    torch.bool: "i1",
    torch.int8: "i8",
    torch.int16: "i16",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.uint8: "u8",
    torch.uint16: "u16",
    torch.uint32: "u32",
    torch.uint64: "u64",
    torch.float16: "fp16",
    torch.bfloat16: "bf16",
    torch.float32: "fp32",
    torch.float64: "fp64",
    torch.float8_e4m3fn: "fp8e4nv",
    torch.float8_e5m2: "fp8e5",
    torch.float8_e4m3fnuz: "fp8e4b8",
    torch.float8_e5m2fnuz: "fp8e5b16",
}


def scalar_type(value: Any) -> str:
    """Return the Triton type Triton's launcher gives a Python scalar."""
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return "i32"
        return "i64" if -(2**63) <= value < 2**63 else "u64"
    if isinstance(value, float):
        return "fp32"
    raise TypeError(f"no Triton type for {value!r}")


def signature_of(case: Case, launch: Launch) -> dict[str, str]:
    """Return the kernel signature (`{"x_ptr": "*fp32", ..., "BLOCK": "constexpr"}`) for `launch`."""
    names = list(case.kernel.arg_names)
    runtime = [n for n in names if n not in case.constexprs]
    if len(runtime) != len(launch.args):
        raise ValueError(f"{case.name}: {len(launch.args)} arguments for parameters {runtime}")
    types = dict(zip(runtime, launch.args))
    annotations = {p.name: p.annotation for p in case.kernel.params}
    sig: dict[str, str] = {}
    for n in names:
        if n in case.constexprs:
            sig[n] = "constexpr"
        elif annotations.get(n) and not isinstance(types[n], torch.Tensor):
            sig[n] = annotations[n]  # a scalar annotated `x: tl.float16` has that type
        elif isinstance(types[n], torch.Tensor):
            sig[n] = "*" + _TORCH_TO_TRITON[types[n].dtype]
        else:
            sig[n] = scalar_type(types[n])
    return sig


# ---------------------------------------------------------------- comparison


def _ordered(bits: np.ndarray, width: int) -> np.ndarray:
    """Map float bit patterns (as unsigned ints) to integers whose order and distance are the ULP order."""
    b = bits.astype(np.int64) if width < 64 else bits.view(np.int64)
    sign = np.int64(1) << np.int64(width - 1)
    if width < 64:
        neg = (b & sign) != 0
        mag = b & (sign - 1)
    else:
        neg = b < 0
        mag = b & np.int64(0x7FFFFFFFFFFFFFFF)
    return np.where(neg, -mag, mag)


def ulp_distance(a: torch.Tensor, b: torch.Tensor) -> np.ndarray:
    """Return |a - b| in ULPs of their (common) float dtype, elementwise; NaN vs NaN is 0, NaN vs number huge."""
    width = a.element_size() * 8
    as_int = {8: torch.uint8, 16: torch.int16, 32: torch.int32, 64: torch.int64}[width]
    ia = a.contiguous().view(as_int).numpy().astype(np.uint64 if width == 64 else np.int64)
    ib = b.contiguous().view(as_int).numpy().astype(np.uint64 if width == 64 else np.int64)
    if width < 64:
        ia, ib = ia & ((1 << width) - 1), ib & ((1 << width) - 1)
    oa, ob = _ordered(ia, width), _ordered(ib, width)
    dist = np.abs(oa.astype(np.float64) - ob.astype(np.float64))
    na, nb = torch.isnan(a.float()).numpy(), torch.isnan(b.float()).numpy()
    dist = np.where(na & nb, 0.0, dist)
    return np.where(na ^ nb, np.inf, dist)


def mismatch(got: torch.Tensor, want: torch.Tensor, tol: Tol) -> str | None:
    """Return a one-line description of how `got` differs from `want` beyond `tol`, or None."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"got {got.dtype}{list(got.shape)}, want {want.dtype}{list(want.shape)}"
    if not got.dtype.is_floating_point:
        bad = (got != want).nonzero()
        if len(bad) == 0:
            return None
        i = tuple(bad[0].tolist())
        return f"{len(bad)} elements differ, first at {list(i)}: got {got[i].item()}, want {want[i].item()}"
    dist = ulp_distance(got, want)
    err = (got.double() - want.double()).abs().numpy()
    ok = (dist <= tol.ulp) | (err <= tol.atol)
    ok |= torch.isnan(got.double()).numpy() & torch.isnan(want.double()).numpy()
    if ok.all():
        return None
    idx = np.argwhere(~ok)
    i = tuple(idx[0].tolist())
    return (
        f"{len(idx)} elements beyond {tol}, first at {list(i)}: got {got[i].item()!r}, want {want[i].item()!r} "
        f"({dist[i]:.0f} ulp)"
    )


DtypeSpec = torch.dtype | Sequence[torch.dtype]


def _pick(d: Draw, dt: DtypeSpec) -> torch.dtype:
    return dt if isinstance(dt, torch.dtype) else d.choice(list(dt))


def elementwise(
    kernel: Any,
    ins: Sequence[DtypeSpec],
    outs: Sequence[DtypeSpec],
    *,
    block: int = 64,
    scalars: Callable[[Draw], list[Any]] | None = None,
    max_n: int | None = None,
    lo: int = -100,
    hi: int = 100,
    fill: Callable[[Draw, int, torch.dtype], torch.Tensor] | None = None,
    **kw: Any,
) -> Case:
    """Return a case for a 1-D kernel `kernel(*in_ptrs, *out_ptrs, *scalars, n, BLOCK)`.

    n is drawn in [1, max_n] (ragged tails), the grid covers n in BLOCK-sized programs; inputs may be strided
    views; outputs start as zeros. Dtypes given as a sequence are drawn per launch.
    """
    max_n = max_n or 3 * block

    def build(d: Draw) -> Launch:
        n = d.int(1, max_n)
        tensors = [fill(d, n, _pick(d, t)) if fill else rand(d, n, _pick(d, t), lo, hi) for t in ins]
        outputs = [torch.zeros(n, dtype=_pick(d, t)) for t in outs]
        extra = scalars(d) if scalars else []
        return Launch([*tensors, *outputs, *extra, n], full_grid(n, block))

    first_out = len(ins)
    return Case(
        kernel,
        build,
        tuple(range(first_out, first_out + len(outs))),
        constexprs={"BLOCK": block, **kw.pop("constexprs", {})},
        **kw,
    )


def rows(
    kernel: Any,
    ins: Sequence[DtypeSpec],
    outs: Sequence[tuple[DtypeSpec, str]],
    *,
    block: int = 32,
    max_rows: int = 5,
    exact_n: bool = False,
    lo: int = -100,
    hi: int = 100,
    fill: Callable[[Draw, tuple[int, int], torch.dtype], torch.Tensor] | None = None,
    **kw: Any,
) -> Case:
    """Return a case for a row kernel `kernel(*in_ptrs, *out_ptrs, stride, n_cols, BLOCK)`, one program per row.

    Inputs are M x N (N <= BLOCK, ragged unless `exact_n`), possibly views with a padded row stride (all
    inputs share it). Outputs are given as (dtype, "row") for one value per row or (dtype, "full") for M x N
    (contiguous? no: same row stride as the inputs).
    """

    def build(d: Draw) -> Launch:
        m = d.int(1, max_rows)
        n = block if exact_n else d.int(1, block)
        pad = d.choice([0, 3])
        stride = n + pad

        def matrix(t: torch.Tensor) -> torch.Tensor:
            big = torch.zeros(m, stride, dtype=t.dtype)
            big[:, :n] = t
            return big[:, :n]

        tensors = [matrix(fill(d, (m, n), _pick(d, t)) if fill else rand(d, (m, n), _pick(d, t), lo, hi)) for t in ins]
        outputs = [
            torch.zeros(m, dtype=_pick(d, t)) if kind == "row" else matrix(torch.zeros(m, n, dtype=_pick(d, t)))
            for t, kind in outs
        ]
        return Launch([*tensors, *outputs, stride, n], (m,))

    first_out = len(ins)
    return Case(
        kernel,
        build,
        tuple(range(first_out, first_out + len(outs))),
        constexprs={"BLOCK": block, **kw.pop("constexprs", {})},
        **kw,
    )


def int_valued(d: Draw, shape: Any, dtype: torch.dtype, lo: int = -8, hi: int = 8) -> torch.Tensor:
    """Return small integers in `dtype` (float sums of them are exact in any order)."""
    return torch.randint(lo, hi, tuple(shape) if not isinstance(shape, int) else (shape,), generator=generator(d)).to(
        dtype
    )

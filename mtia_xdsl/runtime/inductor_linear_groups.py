"""Independent linear layers of one shape in one launch: the post-grad pass `group_linears` and its kernel.

On MTIA-2i a small GEMM launch costs its DRAM round trips, not its MACs: a layer of a small MLP (16 x 32 x 64)
takes about 0.6 us as Inductor's GEMM template, its loads' DRAM latency, the product, the epilogue and the
store (benchmarks/inductor.py --hot). Models often hold several such layers that do not depend on each other,
the towers of a two-tower model or the dense experts of a mixture of experts, each a launch of its own.

`group_linears` (run by Inductor's post-grad custom pass while our backend is active, after
`inductor_bag_groups.group_embedding_bags`) turns two or more `aten.addmm(bias, x, w)` of one shape
(`linear_key`: M, K, N, dtype, the operands' strides, whether a `relu` is the sole user) of which none depends
on another into the custom op `mtia_xdsl::linear_group` (`linear_group`): one launch, one program per (output
tile, layer), the layers' tensors passed as Triton tuples, each layer's `relu` folded into the op; each
layer's result is a view of the op's output (`aten.select`, no copy). The graph is then sorted
(`stable_topological_sort`). Imports torch and triton when loaded: import it only once Inductor has loaded.
"""

# Triton has no type stubs and a @triton.jit kernel's parameters are untyped by Triton's convention:
# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false, reportUnknownVariableType=false
# pyright: reportUnknownArgumentType=false, reportUnknownParameterType=false, reportMissingParameterType=false
# pyright: reportUntypedFunctionDecorator=false

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl
from torch._inductor.pattern_matcher import stable_topological_sort
from torch.library import triton_op, wrap_triton

from mtia_xdsl.runtime.inductor_bag_groups import independent_sets

MAX_BLOCK_K = 128
"""Columns of x (rows of w) per step of `linear_group`'s K loop at most: K up to it is one DMA per operand."""
BLOCK_MN = (16, 32)
"""Output tile of a `linear_group` program, least and most, rows and columns alike (16: the `tl.dot` minimum):
the least whose programs fit the chip's PEs (`blocks`). Small tiles give the layers' programs PEs of their
own, so their loads' DRAM latencies and transfers overlap (two 16 x 32 x 64 layers were fastest in 16 x 16
tiles, 8 programs, on the machine model, slower in 16 x 32 and slowest in 16 x 64)."""
MAX_OUTPUT = 64 * 64
"""Output elements (M x N) of a layer `group_linears` groups at most: beyond, a GEMM is more than its launch's
latency and Inductor's autotuned GEMM template is the better kernel."""
MAX_K = 4 * MAX_BLOCK_K
"""K of a layer `group_linears` groups at most (at most four steps of the K loop)."""
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
"""Dtypes `linear_group` takes (it accumulates in f32, "ieee" precision for f32 as the GEMM templates)."""


@triton.jit
def _linear_tile(
    x_ptr, w_ptr, b_ptr, out_ptr, rm, rn, M, N, K, stride_xm, stride_xk, stride_wk, stride_wn,
    BLOCK_K: tl.constexpr, RELU: tl.constexpr, IEEE: tl.constexpr,
):  # fmt: skip
    """out[rm, rn] = (relu of) b[rn] + x[rm, :] @ w[:, rn] (out contiguous [M, N]), BLOCK_K columns of x a step.
    Shapes: rm tensor<BLOCK_M x i32>, rn tensor<BLOCK_N x i32>."""
    acc = tl.zeros([rm.shape[0], rn.shape[0]], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + rm[:, None] * stride_xm + rk[None, :] * stride_xk,
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)  # fmt: skip
        w = tl.load(w_ptr + rk[:, None] * stride_wk + rn[None, :] * stride_wn,
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)  # fmt: skip
        if IEEE:
            acc = tl.dot(x, w, acc, input_precision="ieee")
        else:
            acc = tl.dot(x, w, acc)
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    if RELU:
        acc = tl.maximum(acc, 0.0)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], acc.to(out_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))  # fmt: skip


@triton.jit
def _linear_group_kernel(
    xs, ws, bs, out_ptr, M, N, K, stride_xm, stride_xk, stride_wk, stride_wn, G: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, RELU: tl.constexpr, IEEE: tl.constexpr,
):  # fmt: skip
    """Output tile `program_id(0)` (row-major over the [M, N] tiles) of layer `program_id(1)` (< G):
    `_linear_tile` of xs[g], ws[g], bs[g] into out_ptr + g * M * N. xs, ws and bs are tuples of G."""
    tiles_n = tl.cdiv(N, BLOCK_N)
    rm = (tl.program_id(0) // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (tl.program_id(0) % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    g = tl.program_id(1)
    for k in tl.static_range(G):  # pyright: ignore[reportGeneralTypeIssues]  (Triton-only iterable)
        if g == k:
            _linear_tile(
                xs[k], ws[k], bs[k], out_ptr + k * M * N, rm, rn, M, N, K, stride_xm, stride_xk, stride_wk, stride_wn,
                BLOCK_K, RELU, IEEE,
            )  # fmt: skip


def _block(size: int, most: int) -> int:
    """`size`'s next power of two, within [16, most]."""
    return min(max(triton.next_power_of_2(size), 16), most)


def blocks(m: int, n: int, layers: int) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N) of `linear_group` for `layers` layers of [m, n] outputs: from BLOCK_MN's least, the
    columns then the rows doubled (up to BLOCK_MN's most and the sizes' next power of two) while the programs
    outnumber the PEs of the driver's chip (`MachineConfig.n_pes`)."""
    from mtia_xdsl.runtime.triton_backend.driver import target_machine_config

    least, most = BLOCK_MN
    bm, bn = least, least
    pes = target_machine_config().n_pes
    while triton.cdiv(m, bm) * triton.cdiv(n, bn) * layers > pes:
        if bn < min(most, _block(n, most)):
            bn *= 2
        elif bm < min(most, _block(m, most)):
            bm *= 2
        else:
            break
    return bm, bn


@triton_op("mtia_xdsl::linear_group", mutates_args=())
def linear_group(xs: list[torch.Tensor], ws: list[torch.Tensor], bs: list[torch.Tensor], relu: bool) -> torch.Tensor:
    """`torch.stack([aten.addmm(bs[g], xs[g], ws[g]) for g])` (each passed through relu when `relu`) in one
    launch: [G, M, N] of xs' dtype, accumulated in f32 (f32 products in "ieee" precision, as Inductor's GEMM
    templates with allow_tf32 off). xs [M, K], ws [K, N] and bs [N], each list of one shape, dtype and strides
    (any strides: `nn.Linear`'s w is a transposed view); one program per (BLOCK_MN tile, layer).

    Raises: ValueError for empty or unequal lists, or layers of different shapes, dtypes or strides."""
    if not xs or not len(xs) == len(ws) == len(bs):
        raise ValueError("linear_group: xs, ws and bs need one entry per layer (at least one)")
    x0, w0 = xs[0], ws[0]
    (m, k), n = x0.shape, w0.shape[1]
    same = all(
        x.shape == x0.shape and w.shape == w0.shape and b.shape == (n,) and x.stride() == x0.stride()
        and w.stride() == w0.stride() and x.dtype == w.dtype == b.dtype == x0.dtype
        for x, w, b in zip(xs, ws, bs, strict=True)
    )  # fmt: skip
    if not same or w0.shape[0] != k:
        raise ValueError("linear_group: every layer needs x [M, K], w [K, N], b [N] of one shape, dtype and strides")
    out = x0.new_empty(len(xs), m, n)
    block_m, block_n = blocks(m, n, len(xs))
    if out.numel() > 0:
        grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n), len(xs))
        wrap_triton(_linear_group_kernel)[grid](
            tuple(xs), tuple(ws), tuple(b.contiguous() for b in bs), out, m, n, k, x0.stride(0), x0.stride(1),
            w0.stride(0), w0.stride(1), len(xs), block_m, block_n, _block(k, MAX_BLOCK_K), relu,
            x0.dtype == torch.float32,
        )  # fmt: skip
    return out


_OP: Any = linear_group._opoverload  # pyright: ignore[reportFunctionMemberAccess]
"""`mtia_xdsl::linear_group` (the OpOverload `torch.library.triton_op` registered)."""


def _val(node: Any) -> Any:
    """A node's fake tensor (`meta["val"]`), or None."""
    return node.meta.get("val") if hasattr(node, "meta") else None


def linear_key(node: Any) -> tuple[Any, ...] | None:
    """What two `aten.addmm` nodes must share to be one `linear_group`: (M, K, N, dtype, x's and w's strides,
    whether the node's sole user is a relu); None if `node` is not an addmm of static 2-D x, w and 1-D bias
    of a dtype in DTYPES with no beta/alpha, or larger than MAX_OUTPUT outputs or MAX_K."""
    if node.op != "call_function" or node.target is not torch.ops.aten.addmm.default or node.kwargs:
        return None
    vals = [_val(a) for a in node.args]
    if len(vals) != 3 or any(not isinstance(v, torch.Tensor) for v in vals):
        return None
    b, x, w = vals
    shapes = (*b.shape, *x.shape, *w.shape, *x.stride(), *w.stride())
    if b.dim() != 1 or x.dim() != 2 or w.dim() != 2 or not all(isinstance(s, int) for s in shapes):
        return None
    if x.dtype not in DTYPES or not x.dtype == w.dtype == b.dtype:
        return None
    if x.shape[0] * w.shape[1] > MAX_OUTPUT or x.shape[1] > MAX_K:
        return None
    users = list(node.users)
    relu = len(users) == 1 and users[0].target is torch.ops.aten.relu.default
    return (*x.shape, w.shape[1], x.dtype, x.stride(), w.stride(), relu)


def _next_group(graph: Any) -> list[Any] | None:
    """The first set of `independent_sets` of two or more addmm nodes of one `linear_key`, in graph order."""
    by_key: dict[Any, list[Any]] = {}
    for node in graph.nodes:
        key = linear_key(node)
        if key is not None:
            by_key.setdefault(key, []).append(node)
    for nodes in by_key.values():
        for group in independent_sets(nodes):
            if len(group) >= 2:
                return group
    return None


def group_linears(graph: Any) -> int:
    """Rewrite `graph` (Inductor's post-grad FX graph) in place: each set of two or more independent addmm of
    one `linear_key` becomes one `mtia_xdsl::linear_group` (their relus folded in) and a view per layer (see
    the module docstring), one set at a time as `inductor_bag_groups.group_independent_bags` does; the graph
    stays sorted and valid (`graph.lint()`). Returns the number of addmm nodes grouped."""
    grouped = 0
    while (group := _next_group(graph)) is not None:
        _group(graph, group)
        stable_topological_sort(graph)
        grouped += len(group)
    if grouped:
        graph.lint()
    return grouped


def _group(graph: Any, nodes: list[Any]) -> None:
    """Replace `nodes` (independent addmm of one key) by one `linear_group` and an `aten.select` view each."""
    relu = bool(linear_key(nodes[0])[-1])  # type: ignore[index]
    last = nodes[-1]
    args = ([n.args[1] for n in nodes], [n.args[2] for n in nodes], [n.args[0] for n in nodes], relu)
    with graph.inserting_before(last):
        out = graph.call_function(_OP, args)
    m, n = _val(nodes[0]).shape
    out.meta["val"] = _val(nodes[0]).new_empty((len(nodes), m, n))
    for g, node in enumerate(nodes):
        with graph.inserting_before(last):
            view = graph.call_function(torch.ops.aten.select.int, (out, 0, g))
        view.meta["val"] = torch.ops.aten.select.int(out.meta["val"], 0, g)
        replaced = next(iter(node.users)) if relu else node
        replaced.replace_all_uses_with(view)
        if relu:
            graph.erase_node(replaced)
        graph.erase_node(node)

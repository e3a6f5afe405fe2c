"""Embedding bags of one Inductor graph in one launch: the post-grad pass `group_embedding_bags`.

With our backend active, every sum or mean `aten._embedding_bag` is the custom op `mtia_xdsl::embedding_bag`
(`inductor.embedding_bag`), one launch per bag op, whose time is a launch's floor (about 0.9 us) more than
its work. This pass, Inductor's `post_grad_custom_post_pass` while our backend is active (installed by
`inductor.install`), rewrites bags of one mode, dtype, width D, offsets length, include_last_offset and
per-sample weights (`bag_key`) into `mtia_xdsl::embedding_bag_cat` (`inductor_kernels.embedding_bag_cat`),
one launch for all of them:

- **Concatenated bags** (DLRM's stack): a run of two or more consecutive inputs of one `aten.cat` that are
  bags becomes one op writing every table's bags straight into the concatenated result, where Inductor
  launched one kernel per table and copied each table's output into the cat buffer.
- **Independent bags** (two-tower's bag per tower): bags of which none depends on another (no path between
  them in the graph) become one op writing the tables' bags one after another along dim 0; each bag's
  output is a view of its rows (`aten.slice`, no copy).

The bags' other outputs (offset2bag and the bag sizes, which a training step saves for backward) are the
grouped op's per-table outputs. The graph is then sorted (`stable_topological_sort`, as Inductor's own
grouping passes do), since a grouped op runs once all its bags' inputs exist. Imports torch and triton when
loaded (through `inductor_kernels`): import it only once Inductor has loaded.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Any, cast

import torch
from torch._inductor.pattern_matcher import stable_topological_sort

from mtia_xdsl.runtime import inductor_kernels

_BAG_OP: Any = inductor_kernels.embedding_bag_sum._opoverload  # pyright: ignore[reportFunctionMemberAccess]
"""`mtia_xdsl::embedding_bag` (the OpOverload `torch.library.triton_op` registered)."""
_GROUP_OP: Any = inductor_kernels.embedding_bag_cat._opoverload  # pyright: ignore[reportFunctionMemberAccess]
"""`mtia_xdsl::embedding_bag_cat`."""


def group_embedding_bags(graph: Any) -> int:
    """Rewrite `graph` (Inductor's post-grad FX graph) in place: concatenated bags, then independent bags, each
    set as one `mtia_xdsl::embedding_bag_cat` op (see the module docstring); the graph stays topologically
    sorted and valid (`graph.lint()`).

    Returns the number of embedding-bag ops grouped (0 if none, and the graph is unchanged).
    """
    grouped = group_concatenated_bags(graph) + group_independent_bags(graph)
    if grouped:
        stable_topological_sort(graph)
        graph.lint()
    return grouped


def _output0(bag: Any) -> Any:
    """The fake tensor of a bag node's output 0 (its `meta["val"]`), or None if the node has none."""
    vals: Any = bag.meta.get("val")
    return cast(Any, vals[0]) if isinstance(vals, tuple | list) and vals else None


def bag_key(bag: Any) -> tuple[Any, ...] | None:
    """What bags grouped into one op must share (the op's constexprs and its shape rule): mode, include_last_offset,
    per-sample weights (present or not), whether aten writes offset2bag (`inductor_kernels.writes_offset2bag`),
    dtype, width D and the offsets' length; None for a bag the op cannot take (output not 2-D, D wider than
    `inductor_kernels.MAX_BLOCK_D`, shapes not known)."""
    _, _, offsets, mode, psw, include_last = bag.args
    val = _output0(bag)
    if not isinstance(val, torch.Tensor) or val.dim() != 2 or val.shape[1] > inductor_kernels.MAX_BLOCK_D:
        return None
    writes = inductor_kernels.writes_offset2bag(mode, val.dtype, None if psw is None else psw.meta["val"])
    return (mode, include_last, psw is None, writes, val.dtype, val.shape[1], offsets.meta["val"].shape[0])


def _insert_group(graph: Any, bags: list[Any], dim: int, where: Any) -> Any:
    """Insert, before node `where`, the `embedding_bag_cat` of `bags` along `dim` and its output nodes; rewire every
    use of the bags' outputs 1-3 to the op's per-table outputs. Returns the node of the op's output 0 (the bags'
    outputs, concatenated along `dim`)."""
    mode, include_last = bags[0].args[3], bags[0].args[5]
    psws = [b.args[4] for b in bags] if bags[0].args[4] is not None else []
    tables = ([b.args[0] for b in bags], [b.args[1] for b in bags], [b.args[2] for b in bags])
    with graph.inserting_before(where):
        group = graph.call_function(_GROUP_OP, (*tables, mode, psws, include_last, dim))
        out = graph.call_function(operator.getitem, (group, 0))
        per_table = [graph.call_function(operator.getitem, (group, k)) for k in (1, 2, 3)]
    rows, width = _output0(bags[0]).shape
    shape = (rows, len(bags) * width) if dim == 1 else (len(bags) * rows, width)
    out.meta["val"] = _output0(bags[0]).new_empty(shape)
    for k, lists in enumerate(per_table, start=1):
        lists.meta["val"] = [bag.meta["val"][k] for bag in bags]
    group.meta["val"] = (out.meta["val"], *(lists.meta["val"] for lists in per_table))
    for t, bag in enumerate(bags):
        for user in [u for u in bag.users if u.args[1] != 0]:
            with graph.inserting_before(where):
                item = graph.call_function(operator.getitem, (per_table[user.args[1] - 1], t))
            item.meta = dict(user.meta)
            user.replace_all_uses_with(item)
            graph.erase_node(user)
    for lists in per_table:
        if not lists.users:
            graph.erase_node(lists)
    return out


def _erase_unused(graph: Any, items: list[Any]) -> None:
    """Erase the getitem nodes of `items` that have no users left, and then their bags if unused."""
    for x in items:
        if not x.users and x.target is operator.getitem:
            bag = x.args[0]
            graph.erase_node(x)
            if not bag.users:
                graph.erase_node(bag)


def _concatenated_bag(node: Any, cat: Any, order: dict[Any, int]) -> Any:
    """The embedding-bag node whose output 0 is `node` and is used by `cat` alone, or None; every reader of its
    other outputs must follow `cat` (the grouped op comes right before the cat)."""
    if node.op != "call_function" or node.target is not operator.getitem or node.args[1] != 0:
        return None
    bag = node.args[0]
    if getattr(bag, "target", None) is not _BAG_OP or list(node.users) != [cat]:
        return None
    outputs = [user.args[1] for user in bag.users if user.target is operator.getitem]
    if len(outputs) != len(bag.users) or outputs.count(0) != 1:
        return None
    readers = [reader for user in bag.users if user is not node for reader in user.users]
    return bag if all(order[reader] > order[cat] for reader in readers) else None


def _runs(keys: list[Any]) -> Iterator[tuple[int, int]]:
    """(start, end) of every maximal run of equal keys that are not None, two or more long."""
    i = 0
    while i < len(keys):
        j = i + 1
        while keys[i] is not None and j < len(keys) and keys[j] == keys[i]:
            j += 1
        if keys[i] is not None and j - i >= 2:
            yield i, j
        i = j


def group_concatenated_bags(graph: Any) -> int:
    """Turn each run of two or more consecutive `aten.cat` inputs (along dim 0 or 1 of 2-D tensors) that are
    bags of one `bag_key`, each used by the cat alone, into one `embedding_bag_cat` along the cat's dim, right
    before the cat; a cat of that run alone is replaced by the op's output. Returns the number of bag ops
    grouped."""
    grouped = 0
    for cat in list(graph.nodes):
        if cat.op != "call_function" or cat.target is not torch.ops.aten.cat.default:
            continue
        inputs = list(cat.args[0])
        dim = cat.args[1] if len(cat.args) > 1 else cat.kwargs.get("dim", 0)
        if len(inputs) != len(set(inputs)) or not inputs or dim not in (0, 1, -1, -2):
            continue
        order = {n: i for i, n in enumerate(graph.nodes)}
        bags = [_concatenated_bag(x, cat, order) for x in inputs]
        new_inputs: list[Any] = []
        done = 0
        for i, j in _runs([bag_key(bag) if bag is not None else None for bag in bags]):
            new_inputs += [*inputs[done:i], _insert_group(graph, bags[i:j], dim % 2, cat)]
            grouped += j - i
            done = j
        if done == 0:
            continue
        new_inputs += inputs[done:]
        if len(new_inputs) == 1:
            cat.replace_all_uses_with(new_inputs[0])
            graph.erase_node(cat)
        else:
            cat.args = (new_inputs, *cat.args[1:])
        _erase_unused(graph, inputs)
    return grouped


def ancestors(node: Any) -> set[Any]:
    """Every node `node` depends on (its inputs, theirs, and so on)."""
    seen: set[Any] = set()
    stack = list(node.all_input_nodes)
    while stack:
        x = stack.pop()
        if x not in seen:
            seen.add(x)
            stack.extend(x.all_input_nodes)
    return seen


def independent_sets(bags: list[Any]) -> list[list[Any]]:
    """Split `bags` into sets of which no member depends on another, greedily in order: each bag joins the first
    set none of whose members is among its ancestors or has it among theirs."""
    above = {bag: ancestors(bag) for bag in bags}
    sets: list[list[Any]] = []
    for bag in bags:
        free = (s for s in sets if not any(other in above[bag] or bag in above[other] for other in s))
        joined = next(free, None)
        if joined is None:
            sets.append([bag])
        else:
            joined.append(bag)
    return sets


def _next_independent_set(graph: Any) -> list[Any] | None:
    """The first set of `independent_sets` of two or more bags of one `bag_key` (of static shape, every output
    read through getitem), in graph order; None if there is none."""
    by_key: dict[Any, list[Any]] = {}
    for node in graph.nodes:
        if node.op != "call_function" or node.target is not _BAG_OP:
            continue
        key = bag_key(node)
        rows = _output0(node).shape[0] if key is not None else None
        if isinstance(rows, int) and all(user.target is operator.getitem for user in node.users):
            by_key.setdefault(key, []).append(node)
    for bags in by_key.values():
        for group in independent_sets(bags):
            if len(group) >= 2:
                return group
    return None


def group_independent_bags(graph: Any) -> int:
    """Turn each set of two or more bags of one `bag_key` of which none depends on another into one
    `embedding_bag_cat` along dim 0; bag t's output is rows t * bags ... of the op's output (`aten.slice`, a
    view). One set at a time, each found on the graph with the sets before it grouped (and sorted): two sets
    found at once could each depend on the other once grouped (bags of two keys, each set feeding the other).
    Returns the number of bag ops grouped."""
    grouped = 0
    while (group := _next_independent_set(graph)) is not None:
        _group_independent(graph, group)
        stable_topological_sort(graph)
        grouped += len(group)
    return grouped


def _group_independent(graph: Any, bags: list[Any]) -> None:
    """Replace `bags` (independent, of one key, outputs read through getitem) by one op along dim 0 and views."""
    out = _insert_group(graph, bags, 0, bags[-1])
    rows = _output0(bags[0]).shape[0]
    for t, bag in enumerate(bags):
        with graph.inserting_before(bags[-1]):
            view = graph.call_function(torch.ops.aten.slice.Tensor, (out, 0, t * rows, (t + 1) * rows))
        view.meta["val"] = torch.ops.aten.slice.Tensor(out.meta["val"], 0, t * rows, (t + 1) * rows)
        for item in list(bag.users):
            item.replace_all_uses_with(view)
            graph.erase_node(item)
        graph.erase_node(bag)

"""A faster equivalent of an xDSL hot path: the IRDL op builder (the dead-code sweep is transforms/dce.py).

Every `IRDLOperation(...)` goes through `xdsl.irdl.operations.irdl_op_init`, which builds each operand, result,
region and successor list generically (an `isinstance(arg, collections.abc.Sequence)` ABC check per argument,
per-argument helper calls, the options matched one by one). That generic path was about a tenth of a compile
(benchmarks/compile_time.py; op construction as a whole about a fifth). `install()` puts `irdl_op_init`
behind a fast path for the argument forms the compiler uses (SSA values or ops for operands, lists of them
for variadic operands, types for results, `Region`s and `Block`s): it builds the same lists, the same segment-size
attributes and calls `Operation.__init__` the same way; any other form (nested sequences for regions, None
for a non-optional argument, a wrong count, SameVariadic* options) goes to xDSL's own function, so its errors
are unchanged. Installed when `mtia_xdsl.dialects` is imported, only while xDSL's `irdl_op_init` takes the
same parameters; xDSL is pinned (pyproject.toml), and tests/frontend/test_xdsl_speed.py compares both builders
on every op kind of a compiled kernel.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, cast

from xdsl.dialects.builtin import UNKNOWN_LOC, LocationAttr
from xdsl.ir import Attribute, Block, Operation, OpResult, Region, SSAValue, SSAValues, Use
from xdsl.irdl import operations as irdl_operations
from xdsl.irdl.operations import (
    AttrSizedOperandSegments,
    AttrSizedRegionSegments,
    AttrSizedResultSegments,
    AttrSizedSegments,
    AttrSizedSuccessorSegments,
    OpDef,
    OptionalDef,
    SameVariadicSize,
    VariadicDef,
)

XDSL_IRDL_OP_INIT: Callable[..., None] = irdl_operations.irdl_op_init
"""xDSL's own builder (the fallback, and the reference the tests compare with)."""

_SINGLE, _VARIADIC, _OPTIONAL = 0, 1, 2

_Plan = tuple[OpDef, tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[tuple[Any, int], ...]]
_PLANS: dict[type[Any], _Plan] = {}
"""Op class -> (its OpDef, kinds of its operand, result, region and successor definitions, segment options)."""

_NOT_SEQUENCE: dict[type, bool] = {}
"""Type -> whether its instances are not `collections.abc.Sequence`s (xDSL's test for "a list of arguments")."""

_IS_VALUE: dict[type, bool] = {}
"""Type -> whether its instances are `SSAValue`s (an ABC: `isinstance` on it costs a Python-level call per operand)."""

_SEGMENT_SIZES: dict[tuple[int, ...], Any] = {}
"""Segment sizes -> their `DenseArrayBase` attribute (immutable, so one instance serves every op)."""

_SEGMENTS: dict[type[Any], int] = {
    AttrSizedOperandSegments: 0,
    AttrSizedResultSegments: 1,
    AttrSizedRegionSegments: 2,
    AttrSizedSuccessorSegments: 3,
}


class _Fallback(Exception):
    """An argument form the fast path leaves to xDSL's builder."""


def _kind(arg_def: Any) -> int:
    if isinstance(arg_def, OptionalDef):
        return _OPTIONAL
    return _VARIADIC if isinstance(arg_def, VariadicDef) else _SINGLE


def _plan(cls: type[Any], op_def: OpDef) -> _Plan | None:
    segments: list[tuple[Any, int]] = []
    for option in op_def.options:
        if isinstance(option, AttrSizedSegments | SameVariadicSize):
            which = _SEGMENTS.get(type(option))
            if which is None:
                return None  # SameVariadic* (a check): xDSL's builder
            segments.append((option, which))
        # xDSL's builder ignores the other options (ParsePropInAttrDict, ...)
    plan = (
        op_def,
        tuple(_kind(d) for _, d in op_def.operands),
        tuple(_kind(d) for _, d in op_def.results),
        tuple(_kind(d) for _, d in op_def.regions),
        tuple(_kind(d) for _, d in op_def.successors),
        tuple(segments),
    )
    _PLANS[cls] = plan
    return plan


def _not_sequence(arg: object) -> bool:
    t = type(arg)
    known = _NOT_SEQUENCE.get(t)
    if known is None:
        known = _NOT_SEQUENCE[t] = not isinstance(arg, Sequence)
    return known


def _is_value(arg: object) -> bool:
    t = type(arg)
    known = _IS_VALUE.get(t)
    if known is None:
        known = _IS_VALUE[t] = isinstance(arg, SSAValue)
    return known


def _operands(args: Sequence[Any], kinds: tuple[int, ...], sizes: list[int]) -> list[SSAValue]:
    built: list[SSAValue] = []
    for kind, arg in zip(kinds, args):
        if _is_value(arg):
            built.append(cast(SSAValue, arg))
            sizes.append(1)
        elif isinstance(arg, (list, tuple)):
            items = cast(Sequence[Any], arg)
            if (kind == _SINGLE and len(items) != 1) or (kind == _OPTIONAL and len(items) > 1):
                raise _Fallback
            for value in items:
                if not _is_value(value):
                    raise _Fallback
            built.extend(cast(Sequence[SSAValue], items))
            sizes.append(len(items))
        elif arg is None and kind != _SINGLE:
            sizes.append(0)  # xDSL builds None as an empty list of operands
        else:
            raise _Fallback  # an Operation (SSAValue.get checks its result count), another sequence, ...
    return built


def _results(args: Sequence[Any], kinds: tuple[int, ...], sizes: list[int]) -> list[Any]:
    built: list[Any] = []
    for kind, arg in zip(kinds, args):
        if arg is not None and _not_sequence(arg):
            built.append(arg)
            sizes.append(1)
        elif isinstance(arg, (list, tuple)):
            items = cast(Sequence[Any], arg)
            if (kind == _SINGLE and len(items) != 1) or (kind == _OPTIONAL and len(items) > 1):
                raise _Fallback
            built.extend(items)
            sizes.append(len(items))
        elif arg is None and kind == _OPTIONAL:
            sizes.append(0)
        else:
            raise _Fallback
    return built


def _regions(args: Sequence[Any], kinds: tuple[int, ...], sizes: list[int]) -> list[Region]:
    built: list[Region] = []
    for kind, arg in zip(kinds, args):
        if type(arg) is Region:
            built.append(arg)
            sizes.append(1)
        elif arg is None and kind != _SINGLE:
            sizes.append(0)
        else:
            raise _Fallback  # lists of ops, blocks or regions: xDSL's conversions
    return built


def _successors(args: Sequence[Any], kinds: tuple[int, ...], sizes: list[int]) -> list[Block]:
    built: list[Block] = []
    for kind, arg in zip(kinds, args):
        if isinstance(arg, Block):
            built.append(arg)
            sizes.append(1)
        elif isinstance(arg, (list, tuple)):
            items = cast(Sequence[Any], arg)
            if (kind == _SINGLE and len(items) != 1) or (kind == _OPTIONAL and len(items) > 1):
                raise _Fallback
            built.extend(items)
            sizes.append(len(items))
        else:
            raise _Fallback
    return built


def irdl_op_init(
    self: Any,
    op_def: OpDef,
    *,
    operands: Sequence[Any],
    result_types: Sequence[Any],
    properties: Any,
    attributes: Any,
    successors: Sequence[Any],
    regions: Sequence[Any],
) -> None:
    """`xdsl.irdl.operations.irdl_op_init` with a fast path (see the module docstring); its parameters are
    xDSL's (`install` checks)."""
    cls = cast(type[Any], type(self))
    plan = _PLANS.get(cls)
    if plan is None or plan[0] is not op_def:
        plan = _plan(cls, op_def)
    sizes: tuple[list[int], list[int], list[int], list[int]] = ([], [], [], [])
    try:
        if (
            plan is None
            or len(operands) != len(plan[1])
            or len(result_types) != len(plan[2])
            or len(regions) != len(plan[3])
            or len(successors) != len(plan[4])
        ):
            raise _Fallback
        built_operands = _operands(operands, plan[1], sizes[0])
        built_results = _results(result_types, plan[2], sizes[1])
        built_regions = _regions(regions, plan[3], sizes[2])
        built_successors = _successors(successors, plan[4], sizes[3])
    except _Fallback:
        return XDSL_IRDL_OP_INIT(
            self,
            op_def,
            operands=operands,
            result_types=result_types,
            properties=properties,
            attributes=attributes,
            successors=successors,
            regions=regions,
        )
    built_properties = {k: v for k, v in properties.items() if v is not None}
    built_attributes = {k: v for k, v in attributes.items() if v is not None}
    if plan[5]:
        from xdsl.dialects.builtin import DenseArrayBase, i32

        for option, which in plan[5]:
            container = built_properties if option.as_property else built_attributes
            key = tuple(sizes[which])
            segment_sizes = _SEGMENT_SIZES.get(key)
            if segment_sizes is None:
                segment_sizes = _SEGMENT_SIZES[key] = DenseArrayBase.from_list(i32, key)
            container[option.attribute_name] = segment_sizes
    init_operation(self, built_operands, built_results, built_properties, built_attributes, UNKNOWN_LOC,
                   built_successors, built_regions)  # fmt: skip


_NO_VALUES: SSAValues[Any] = SSAValues()


def init_operation(
    op: Operation,
    operands: Sequence[SSAValue],
    result_types: Sequence[Attribute],
    properties: dict[str, Attribute],
    attributes: dict[str, Attribute],
    location: LocationAttr,
    successors: Sequence[Block],
    regions: Sequence[Region],
) -> None:
    """`Operation.__init__(op, ...)` with the same resulting op, taking `properties` and `attributes` as they
    are (dicts the caller made for `op`, not copied) and setting empty operand and successor lists without
    the setters' generic steps (an op without successors paid a tuple, a generator and a zip for them: 2 % of
    a compile, and the operand setter's steps as much again)."""
    if operands:
        values = SSAValues(operands)
        uses = tuple([Use(op, i) for i in range(len(values))])
        for value, use in zip(values, uses):
            value.add_use(use)
        op._operands = values  # pyright: ignore[reportPrivateUsage]
        op._operand_uses = uses  # pyright: ignore[reportPrivateUsage]
    else:
        op._operands = _NO_VALUES  # pyright: ignore[reportPrivateUsage]
        op._operand_uses = ()  # pyright: ignore[reportPrivateUsage]
    op.results = SSAValues([OpResult(t, op, i) for i, t in enumerate(result_types)])
    op.properties = properties
    op.attributes = attributes
    op.location = location
    if successors:
        op.successors = list(successors)
    else:
        op._successors = ()  # pyright: ignore[reportPrivateUsage]
        op._successor_uses = ()  # pyright: ignore[reportPrivateUsage]
    op.regions = ()
    for region in regions:
        op.add_region(region)
    op.__post_init__()


def _parameters(function: Callable[..., Any]) -> list[tuple[str, Any, Any]]:
    """(name, kind, default) of each parameter of `function` (annotations left out)."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


def install() -> bool:
    """Make every IRDL op construction (`IRDLOperation.__init__`) use `irdl_op_init` above (same ops, same
    errors; process-wide, as `register_dialects` documents), if xDSL's `irdl_op_init` takes the same
    parameters (names, kinds, defaults): an xDSL whose builder takes others keeps its own. Return whether
    the fast path is installed."""
    if irdl_operations.irdl_op_init is irdl_op_init:
        return True
    if _parameters(XDSL_IRDL_OP_INIT) != _parameters(irdl_op_init):
        return False
    irdl_operations.irdl_op_init = irdl_op_init
    return True

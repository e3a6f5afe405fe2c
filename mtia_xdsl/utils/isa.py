"""`isa(obj, classes)`: `isinstance` for xDSL's IR classes, answered once per (class of obj, classes).

xDSL's ops, values and attributes derive from `abc.ABC`, so `isinstance` on them runs ABCMeta's
Python-level `__instancecheck__` once per class it tries: a test against a tuple of op classes that does
not match (`mtia.ENGINE_OPS`, twelve classes, on every op of a kernel; `builtin.AnyFloat`, a union of eighteen)
costs a dozen such calls or more. Where a
pass tests every op of a module against a tuple or union of classes, `isa` answers from a cache keyed by
the object's class (`issubclass` of it: the same answer, as no IR class fakes its `__class__`); a test
against one class is as fast with `isinstance` itself.
"""

from __future__ import annotations

import functools
from types import UnionType
from typing import Any

is_subclass = functools.cache(issubclass)
"""`issubclass(cls, classes)`, cached (classes: a class, a tuple or a union of classes)."""


def isa(obj: object, classes: type | tuple[type, ...] | UnionType | Any) -> bool:
    """`isinstance(obj, classes)`, answered once per class of `obj` (see the module docstring)."""
    return is_subclass(type(obj), classes)

"""`arith`: every arith op class as the registered dialect has it (ours where we replace xDSL's)."""

from types import SimpleNamespace

from xdsl.dialects import arith as _xarith

from mtia_xdsl.dialects import arith as _ours

_ops = {name: getattr(_xarith, name) for name in dir(_xarith) if name.endswith("Op")}
_ops.update({name: getattr(_ours, name) for name in dir(_ours) if name.endswith("Op")})
arith = SimpleNamespace(**_ops)

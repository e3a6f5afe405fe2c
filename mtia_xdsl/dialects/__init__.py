"""Dialect registry: lazy factories keyed by dialect name (nothing registers on import)."""

from collections.abc import Callable
from functools import cache

from xdsl.ir import Dialect


@cache
def _xdsl_dialects() -> dict[str, Callable[[], Dialect]]:
    """xDSL's own dialect factories. Cached: the multiverse rescans installed plugins on every call,
    which was about 8 % of a kernel's compile time."""
    from xdsl.universe import Universe

    return dict(Universe.get_multiverse().all_dialects)


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Return xDSL's dialects with `arith` replaced by the tensor-capable one, `llvm` extended by
    `llvm.intr.assume`, and `tt`, `ttg` (its barrier), `mtia` added."""
    dialects = dict(_xdsl_dialects())

    def get_arith() -> Dialect:
        from mtia_xdsl.dialects.arith import Arith

        return Arith

    def get_tt() -> Dialect:
        from mtia_xdsl.dialects.tt import TT

        return TT

    def get_llvm() -> Dialect:
        from mtia_xdsl.dialects.llvm_intr import LLVM

        return LLVM

    def get_ttg() -> Dialect:
        from mtia_xdsl.dialects.ttg import TTG

        return TTG

    def get_mtia() -> Dialect:
        from mtia_xdsl.dialects.mtia import MTIA

        return MTIA

    dialects["arith"] = get_arith
    dialects["llvm"] = get_llvm
    dialects["tt"] = get_tt
    dialects["ttg"] = get_ttg
    dialects["mtia"] = get_mtia
    return dialects


def make_context():
    """Return an xDSL Context with every dialect of `get_all_dialects` registered."""
    from xdsl.context import Context

    from mtia_xdsl.dialects.arith import patch_dense_float_hex_parsing

    patch_dense_float_hex_parsing()  # before any parse: dense<0xFF800000> : tensor<..xf32> is -inf
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx

"""Our dialects for a caller's xDSL context: `tt` (TTIR as Triton 3.9), `ttg`, `mtia` and tensor-capable `arith`.

Public API (`__all__`): `get_all_dialects`, `register_dialects`, `make_context`. Nothing registers on import:
the registry is a table of lazy factories keyed by dialect name, as xDSL's own (`xdsl.universe`).
The op classes are those of each Dialect (`get_all_dialects()["tt"]().operations`); inside a pass, look an op
up in the context the pass is given (`ctx.get_op("tt.load")`).
"""

from collections.abc import Callable, Iterable
from functools import cache

from xdsl.context import Context
from xdsl.ir import Dialect

from mtia_xdsl.utils.lazy_formats import install as _install_lazy_formats

_install_lazy_formats()  # op formats of the dialects below parsed on first print or parse (utils/lazy_formats.py)

__all__ = ["get_all_dialects", "make_context", "register_dialects"]


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


def register_dialects(ctx: Context, names: Iterable[str] | None = None) -> Context:
    """Register our dialects (and xDSL's, with `arith` and `llvm` replaced) in a caller's context; return it.

    `names`: only these dialects (e.g. `("tt", "arith", "scf")`); None: every dialect of `get_all_dialects`.
    A dialect the context already has is left as it is, so a caller may register its own first (xDSL's
    `Context.register_dialect` refuses a second registration). Also applies `patch_dense_float_hex_parsing`
    (a fix to xDSL 0.74's parser for `dense<0xFF800000> : tensor<4xf32>`, i.e. -inf) and
    `mtia_xdsl.utils.xdsl_speed.install` (a faster builder of IRDL ops: the same ops and errors), process-wide.
    Raises: KeyError naming the dialect if `names` holds one that is not in `get_all_dialects()`.
    Example: ctx = register_dialects(Context()); ctx.load_dialect(MyDialect)
    """
    from mtia_xdsl.dialects.arith import patch_dense_float_hex_parsing
    from mtia_xdsl.utils import xdsl_speed

    patch_dense_float_hex_parsing()  # before any parse: dense<0xFF800000> : tensor<..xf32> is -inf
    xdsl_speed.install()
    factories = get_all_dialects()
    wanted = list(factories) if names is None else list(names)
    unknown = [n for n in wanted if n not in factories]
    if unknown:
        raise KeyError(f"no dialect named {', '.join(map(repr, unknown))}; known: {', '.join(sorted(factories))}")
    registered = set(ctx.registered_dialect_names)
    for name in wanted:
        if name not in registered:
            ctx.register_dialect(name, factories[name])
    return ctx


def make_context() -> Context:
    """Return a new xDSL Context with every dialect of `get_all_dialects` registered (`register_dialects`)."""
    return register_dialects(Context())

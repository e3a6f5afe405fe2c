"""MtiaOptions lives in `mtia_xdsl.options` (below both the pipeline and the runtime, which read it); it
is re-exported here for the runtime's callers."""

from mtia_xdsl.options import CB_SIZINGS, OTHER_BACKEND_OPTIONS, PE_MAPPINGS, MtiaOptions

__all__ = ["CB_SIZINGS", "OTHER_BACKEND_OPTIONS", "PE_MAPPINGS", "MtiaOptions"]

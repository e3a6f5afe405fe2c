"""The resource refusals of the CB passes (the kernel's circular buffers (CBs) do not fit a PE), and the
internal compiler error that is neither a refusal nor the kernel's fault.

The two refusals are `PassFailedException`s (located messages in `mtia-opt`); the compile driver turns them into
Triton's `OutOfResources` (`runtime/errors.py`) and kernel fitting (`fit.py`) tries smaller sub-tiles.
Raised by mtia-cb-bufferize (LS bytes alive at once) and mtia-cb-allocate (CB IDs, LS high-water mark).
"""

from __future__ import annotations

from xdsl.utils.exceptions import PassFailedException


class LocalStorageOverflow(PassFailedException):
    """The CBs of a kernel need more local storage than a PE has (`MachineConfig.ls_bytes`).

    `required_bytes` and `limit_bytes` are bytes per PE; the message names the kernel line and lists
    the largest CBs.
    """

    def __init__(self, message: str, required_bytes: int, limit_bytes: int) -> None:
        super().__init__(message)
        self.required_bytes = required_bytes
        self.limit_bytes = limit_bytes


class CbIdOverflow(PassFailedException):
    """More CBs of a kernel are alive at once than the CP has CB IDs (`MachineConfig.cb_ids`).

    `required` is the CBs alive at the peak, `limit` the CB IDs; the message names the kernel lines of the
    values alive at the peak.
    """

    def __init__(self, message: str, required: int, limit: int) -> None:
        super().__init__(message)
        self.required = required
        self.limit = limit


class InternalCompilerError(PassFailedException):
    """A pass broke its contract (valid IR in, valid IR out, or a located refusal): a compiler bug.

    The compile driver (`pipeline.lower`) raises it with the pass's exception chained (`__cause__`); kernel
    fitting (`fit.py`) lets it through with a note naming the step, never as an OutOfResources.
    """

"""Errors the runtime raises to a Triton user, as subclasses of Triton's own types (so user code and
`@triton.autotune` catch them as upstream's).

Importing this module imports `triton` first, which loads the `cpu` plugin (`runtime.triton_backend`); the
plugin's modules do not import this one, so Triton's backend discovery never meets it half-imported.
"""

import triton  # noqa: F401  # first: Triton's backend discovery imports our plugin while this runs
from triton.runtime.errors import InterpreterError, OutOfResources
from xdsl.utils.exceptions import InterpretationError


class LocalStorageOutOfResources(OutOfResources):
    """Triton's OutOfResources for local storage, with our located message (kernel line, largest CBs).

    `required` and `limit` are bytes per PE.
    """

    def __init__(self, required: int, limit: int, message: str = "") -> None:
        super().__init__(required, limit, "local storage")
        self.message = message

    def __str__(self) -> str:
        return self.message or super().__str__()

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.required, self.limit, self.message))


class CbIdsOutOfResources(OutOfResources):
    """Triton's OutOfResources for CB IDs (`MachineConfig.cb_ids`), with our located message (kernel line,
    the values alive at the peak).

    `required` is the CBs alive at once, `limit` the CB IDs.
    """

    def __init__(self, required: int, limit: int, message: str = "") -> None:
        super().__init__(required, limit, "CB IDs")
        self.message = message

    def __str__(self) -> str:
        return self.message or super().__str__()

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.required, self.limit, self.message))


class KernelRuntimeError(InterpreterError, RuntimeError, InterpretationError):
    """An error found while a kernel runs on the machine model (out-of-bounds access, failed device_assert,
    a deadlock, misuse of a language extension such as re_reduce without a whole PE row), with our located
    message (`file:line:col: error: ... (program id (x, y, z)); no tensor was written`).

    Raised by launches through the Triton backend and by `mtia_xdsl.compile` kernels. It is the types user
    code already catches: Triton's interpreter's `InterpreterError` (TRITON_INTERPRET=1), `RuntimeError`
    (what torch raises for a device-side assert or illegal access on a GPU) and xDSL's
    `InterpretationError` (what these errors were before).
    """

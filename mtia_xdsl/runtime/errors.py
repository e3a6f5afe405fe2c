"""Errors the runtime raises to a Triton user, as subclasses of Triton's own types (so user code and
`@triton.autotune` catch them as upstream's).

Importing this module imports `triton` first, which loads the `cpu` plugin (`runtime.triton_backend`); the
plugin's modules do not import this one, so Triton's backend discovery never meets it half-imported.
"""

import triton  # noqa: F401  # first: Triton's backend discovery imports our plugin while this runs
from triton.runtime.errors import OutOfResources


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

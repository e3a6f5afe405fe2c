"""Triton backend plugin `cpu`: Triton's `kernel[grid](...)` on CPU tensors runs on the MTIA machine model.

Registered through the `triton.backends` entry point; Triton imports `.compiler` and `.driver` while
`import triton` is still running, so neither imports `triton.compiler` or `triton.runtime` at import time.
A user may import them first: this package then imports `triton` before either module runs, so Triton's
backend discovery loads them whole (not half-imported, which Triton reports as "Found 0 concrete
subclasses of DriverBase").
"""

import triton  # noqa: F401

from mtia_xdsl.runtime.inductor import install_when_inductor_loads

install_when_inductor_loads()  # Inductor's hooks (mtia_xdsl/runtime/inductor.py), once Inductor is loaded

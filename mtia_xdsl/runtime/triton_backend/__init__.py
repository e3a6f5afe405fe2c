"""Triton backend plugin `cpu`: Triton's `kernel[grid](...)` on CPU tensors runs on the MTIA machine model.

Registered through the `triton.backends` entry point; Triton imports `.compiler` and `.driver` while
`import triton` is still running, so neither imports `triton.compiler` or `triton.runtime` at import time.
"""

from mtia_xdsl.runtime.inductor import install_if_inductor_loaded

install_if_inductor_loaded()  # Inductor's hooks, if torch.compile brought triton in (else MtiaDriver installs them)

"""Settings of mtia_xdsl's Inductor integration, as a torch config module like `torch._inductor.config`.

It has `patch` (a context manager and decorator), `save_config` and `get_config_copy`, as Inductor's config
module does:

    from mtia_xdsl.runtime import inductor_config

    with inductor_config.patch(norm_templates=False):
        torch.compile(model)(x)

Each setting can also be set with an environment variable. That variable takes precedence over the default and
over an assignment in code, as with Inductor's `env_name_force` settings. Its value is "1" (on) or "0" (off).

This module imports torch when loaded.
"""

import os
import sys

from torch.utils._config_module import Config, install_config_module

norm_templates: bool = Config(default=True, env_name_force="MTIA_XDSL_NORM_TEMPLATES")  # pyright: ignore
"""While mtia_xdsl's backend is active, LayerNorm and RMSNorm lower to mtia_xdsl's Triton templates, written for
MTIA's engines. Pointwise ops that follow a norm fuse into the template as an epilogue. False keeps Inductor's
stock lowering: generic reduction kernels. Environment variable: MTIA_XDSL_NORM_TEMPLATES."""

install_config_module(sys.modules[__name__])

# torch keeps an environment value other than "0", "1", "True" or "False" as a string, which is truthy
if not isinstance(sys.modules[__name__].norm_templates, bool):
    raise ValueError(
        f"MTIA_XDSL_NORM_TEMPLATES={os.environ.get('MTIA_XDSL_NORM_TEMPLATES')!r}: set it to 1 (mtia_xdsl's norm "
        "templates on) or 0 (Inductor's stock lowering), or unset it"
    )

"""The chip a module is compiled for, as the passes read it: the `MachineConfig` of its `mtia.target`.

Passes read hardware numbers only through `machine_config_for(module, pass_name)`, which maps the module
attribute `mtia.target` (set by the frontend or `mtia-set-target`) to a `MachineConfig` preset, with the
fields of the module attribute `mtia.machine_overrides` (a dictionary of field name -> value string, e.g.
`{ls_bytes = "307200"}`; the compile driver sets it from the `machine_overrides` option, `overrides_attr`)
changed, so the LS budget and the cost models see the machine the kernel will run on.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.dialects import mtia
from mtia_xdsl.dialects.mtia import TargetAttr
from mtia_xdsl.machine.config import MachineConfig, module_config


def overrides_attr(overrides: tuple[tuple[str, object], ...]) -> DictionaryAttr:
    """The `mtia.machine_overrides` attribute for (field, value) pairs (MtiaOptions.machine_overrides)."""
    return DictionaryAttr({name: StringAttr(str(value)) for name, value in overrides})


def machine_config_for(module: ModuleOp, pass_name: str) -> MachineConfig:
    """Return `machine.config.module_config(module)`: the MachineConfig preset named by `module`'s
    `mtia.target` attribute, with the module's `mtia.machine_overrides` applied.

    Raises: PassFailedException naming `pass_name` if the attribute is missing or names no preset, or an
    override names no field or has a bad value.
    """
    target = module.attributes.get(mtia.TARGET_ATTR)
    if not isinstance(target, TargetAttr):
        raise PassFailedException(
            f'{pass_name} needs the module attribute mtia.target (e.g. #mtia.target<"mtia2i">); '
            "run mtia-set-target{chip=mtia2i} first"
        )
    try:
        return module_config(module)
    except ValueError as e:
        raise PassFailedException(f"{pass_name}: {e}") from e

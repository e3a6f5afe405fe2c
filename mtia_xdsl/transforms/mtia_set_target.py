"""mtia-set-target: record the chip a module is compiled for (`mtia.target` module attribute).

Passes read hardware numbers only through `machine_config_for(module)`, which maps this attribute to a
`MachineConfig` preset, with the fields of the module attribute `mtia.machine_overrides` (a dictionary of
field name -> value string, e.g. `{ls_bytes = "307200"}`; the compile driver sets it from the
`machine_overrides` option) changed, so the LS budget and the cost models see the machine the kernel
will run on.
Example: mtia-opt k.mlir -p mtia-set-target{chip=mtia2i}
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.dialects import mtia
from mtia_xdsl.dialects.mtia import TargetAttr
from mtia_xdsl.machine.config import DEFAULT_CHIP, MachineConfig, module_config

"""Module attribute: MachineConfig fields changed from the preset, as a dictionary of value strings."""


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


@dataclass(frozen=True)
class MtiaSetTargetPass(ModulePass):
    """Set the module's `mtia.target` to `chip` (a MachineConfig preset name).

    Raises: PassFailedException if `chip` names no preset.
    Example: mtia-opt k.mlir -p mtia-set-target{chip=small_test}
    """

    name = "mtia-set-target"
    chip: str = DEFAULT_CHIP

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            MachineConfig.preset(self.chip)  # validate before touching the module
        except ValueError as e:
            raise PassFailedException(f"{self.name}: {e}") from e
        op.attributes[mtia.TARGET_ATTR] = TargetAttr(self.chip)

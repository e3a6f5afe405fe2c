"""mtia-set-target: record the chip a module is compiled for (`mtia.target` module attribute).

Passes read hardware numbers only through `machine_config_for(module)`, which maps this attribute to a
`MachineConfig` preset.
Example: mtia-opt k.mlir -p mtia-set-target{chip=mtia2i}
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.dialects.mtia import TargetAttr
from mtia_xdsl.machine.config import MachineConfig


def machine_config_for(module: ModuleOp, pass_name: str) -> MachineConfig:
    """Return the MachineConfig preset named by `module`'s `mtia.target` attribute.

    Raises: PassFailedException naming `pass_name` if the attribute is missing or names no preset.
    """
    target = module.attributes.get("mtia.target")
    if not isinstance(target, TargetAttr):
        raise PassFailedException(
            f'{pass_name} needs the module attribute mtia.target (e.g. #mtia.target<"mtia2i">); '
            "run mtia-set-target{chip=mtia2i} first"
        )
    try:
        return MachineConfig.preset(target.chip.data)
    except ValueError as e:
        raise PassFailedException(f"{pass_name}: {e}") from e


@dataclass(frozen=True)
class MtiaSetTargetPass(ModulePass):
    """Set the module's `mtia.target` to `chip` (a MachineConfig preset name).

    Raises: PassFailedException if `chip` names no preset.
    Example: mtia-opt k.mlir -p mtia-set-target{chip=small_test}
    """

    name = "mtia-set-target"
    chip: str = "mtia2i"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            MachineConfig.preset(self.chip)  # validate before touching the module
        except ValueError as e:
            raise PassFailedException(f"{self.name}: {e}") from e
        op.attributes["mtia.target"] = TargetAttr(self.chip)

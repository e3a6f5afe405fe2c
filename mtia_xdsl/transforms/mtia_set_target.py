"""mtia-set-target: record the chip a module is compiled for (`mtia.target` module attribute).

Passes read hardware numbers only through `transforms/target.py`'s `machine_config_for(module)`, which maps
this attribute (and the module's `mtia.machine_overrides`) to a `MachineConfig`.
Example: mtia-opt k.mlir -p mtia-set-target{chip=mtia2i}
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.dialects import mtia
from mtia_xdsl.dialects.mtia import TargetAttr
from mtia_xdsl.machine.config import DEFAULT_CHIP, MachineConfig


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

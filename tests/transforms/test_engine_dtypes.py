"""Which element types each engine takes is one MachineConfig fact, read by the lowering and the options."""

import pytest
from xdsl.parser import Parser

from mtia_xdsl.dialects import make_context, mtia
from mtia_xdsl.frontend.build import FrontendOptions
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.options import MtiaOptions
from mtia_xdsl.transforms.convert_tt_to_mtia import ConvertTtToMtiaPass

ADD = """
tt.func public @k(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xf32> {
  %c = arith.addf %a, %b : tensor<16xf32>
  tt.return %c : tensor<16xf32>
}
"""


def _engine_of_add() -> type:
    ctx = make_context()
    module = Parser(ctx, ADD).parse_module()
    ConvertTtToMtiaPass().apply(ctx, module)
    (engine,) = [op for op in module.walk() if isinstance(op, mtia.EngineComputeOp)]
    return type(engine)


def test_the_lowering_puts_work_on_the_se_by_the_config_se_dtypes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _engine_of_add() is mtia.SeComputeOp
    monkeypatch.setattr(MachineConfig, "SE_DTYPES", MachineConfig.SE_DTYPES - {"f32"})
    assert _engine_of_add() is mtia.VecComputeOp


def test_the_fp8_formats_triton_accepts_are_the_config_s() -> None:
    assert MtiaOptions().supported_fp8_dtypes == MachineConfig.TRITON_FP8_DTYPES
    assert FrontendOptions().supported_fp8_dtypes == MachineConfig.TRITON_FP8_DTYPES


def test_the_dpe_rate_and_the_lowering_agree_on_dtypes() -> None:
    config = MachineConfig()
    for dtype in ("i8", "bf16", "f16", "f32"):
        assert config.dpe_takes(dtype)
        assert config.dpe_macs_per_cycle(dtype) > 0
    assert not config.dpe_takes("f64")
    with pytest.raises(ValueError, match="the DPE takes no 'f64' inputs"):
        config.dpe_macs_per_cycle("f64")

"""pipeline_for: the pass pipeline a set of compile options runs."""

import pytest

from mtia_xdsl.options import MtiaOptions
from mtia_xdsl.pipeline import default_pipeline, pipeline_for


def test_defaults_turn_every_optimization_on() -> None:
    steps = [s.split("{")[0] for s in pipeline_for().split(",")]
    assert steps[steps.index("cse") + 1 :] == [
        "mtia-vector-codegen",
        "mtia-effective-shape",
        "mtia-cb-bufferize",
        "mtia-software-pipeline",
        "mtia-cb-sizing",
        "mtia-cb-allocate",
        "mtia-pe-mapping",
    ]
    assert pipeline_for() == pipeline_for(MtiaOptions())


def test_options_as_a_dict_turn_passes_off_and_set_pass_options() -> None:
    text = pipeline_for({"num_stages": 1, "effective_shapes": False, "vector_codegen": False, "pe_mapping": "linear"})
    assert (
        text
        == default_pipeline()
        + ",mtia-cb-sizing{strategy=greedy max-depth=1},mtia-cb-allocate,mtia-pe-mapping{strategy=linear}"
    )
    assert "mtia-software-pipeline{num-stages=4}" in pipeline_for({"num_stages": 4})
    assert "strategy=uniform max-depth=3" in pipeline_for({"cb_sizing": "uniform"})


def test_bad_options_are_named() -> None:
    with pytest.raises(TypeError, match="num_stage"):
        pipeline_for({"num_stage": 2})
    with pytest.raises(ValueError, match="cb_sizing"):
        pipeline_for({"cb_sizing": "best"})


def test_the_optimized_examples_filecheck_runs_the_default_pipeline() -> None:
    """tests/filecheck/examples/optimized.mlir spells the pipeline out; it must stay what the driver runs."""
    from pathlib import Path

    text = (Path(__file__).parents[1] / "filecheck" / "examples" / "optimized.mlir").read_text()
    assert text.count(f"-p '{pipeline_for()}'") == 2


def _lowered_verifies(monkeypatch: pytest.MonkeyPatch, options: MtiaOptions) -> int:
    """Lower vector add with `options`; return how often the lowered module was verified."""
    from xdsl.dialects.builtin import ModuleOp

    from examples.vector_add import add_kernel
    from mtia_xdsl.frontend import build_tt_module
    from mtia_xdsl.pipeline import lower

    module = build_tt_module(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32",
                                          "n_elements": "i32", "BLOCK_SIZE": "constexpr"}, {"BLOCK_SIZE": 64},
                             verify=False)  # fmt: skip
    calls = []
    real = ModuleOp.verify
    monkeypatch.setattr(ModuleOp, "verify", lambda self, *a, **k: calls.append(self) or real(self, *a, **k))
    lower(module, options)
    return len(calls)


def test_the_lowered_module_is_verified_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MTIA_VERIFY_IR", raising=False)
    assert _lowered_verifies(monkeypatch, MtiaOptions()) == 0  # verifying was 7-10 % of a compile
    assert _lowered_verifies(monkeypatch, MtiaOptions(debug=True)) == 1
    monkeypatch.setenv("MTIA_VERIFY_IR", "1")  # what tests/conftest.py sets for the whole suite
    assert _lowered_verifies(monkeypatch, MtiaOptions()) == 1

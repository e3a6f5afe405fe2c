"""The target registry `mtia-opt -t` reads: lazy factories, keyed by the name of the Target they return."""

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from mtia_xdsl.backend import get_all_targets
from mtia_xdsl.dialects import make_context


def test_every_factory_returns_the_target_of_its_name() -> None:
    targets = get_all_targets()
    assert "mlir" in targets
    for name, factory in targets.items():
        target = factory()
        assert issubclass(target, Target)
        assert target.name == name


def test_the_mlir_target_emits_the_module() -> None:
    import io

    out = io.StringIO()
    get_all_targets()["mlir"]()().emit(make_context(), ModuleOp([]), out)
    assert out.getvalue().startswith("builtin.module {")

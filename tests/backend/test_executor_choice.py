"""The executor of a plain launch: the `executor` option, then MTIA_EXECUTOR, then the machine model; bad names
and missing paths are one-line errors that list the choices."""

import sys

import pytest
import torch
import triton

import mtia_xdsl
from examples.vector_add import add_kernel
from mtia_xdsl.backend import executor
from mtia_xdsl.backend.executor import ExecutorChoiceError, ExecutorUnavailableError
from mtia_xdsl.options import MtiaOptions

CHOICES = "'model', 'cpp', 'llvm', 'riscv'"


def test_the_option_wins_over_the_environment_which_wins_over_the_default():
    assert executor.choose(None, {}) == "model"
    assert executor.choose(None, {"MTIA_EXECUTOR": "cpp"}) == "cpp"
    assert executor.choose("llvm", {"MTIA_EXECUTOR": "cpp"}) == "llvm"
    assert executor.choose(None, {"MTIA_EXECUTOR": "riscv"}) == "riscv"
    assert executor.choose(None, {"MTIA_EXECUTOR": ""}) == "model"


@pytest.mark.parametrize("value", ["CPP", " cpp", "cpp ", "Llvm", " "])
def test_a_name_is_exact_lower_case_with_the_near_name_suggested(value: str):
    """One rule for the option and the variable: an executor name exactly as listed; a name that only differs in
    case or spaces is refused with the name meant (an empty variable is the default)."""
    meant = value.strip().lower()
    hint = rf"; did you mean '{meant}'\?" if meant else ""
    with pytest.raises(ExecutorChoiceError, match=rf"^MTIA_EXECUTOR must be one of {CHOICES}, got {value!r}{hint}$"):
        executor.choose(None, {"MTIA_EXECUTOR": value})
    with pytest.raises(ExecutorChoiceError, match=rf"^executor must be one of {CHOICES}, got {value!r}{hint}$"):
        MtiaOptions(executor=value)


def test_a_bad_environment_value_names_the_variable_and_the_choices():
    with pytest.raises(ExecutorChoiceError, match=rf"^MTIA_EXECUTOR must be one of {CHOICES}, got 'gpu'$"):
        executor.choose(None, {"MTIA_EXECUTOR": "gpu"})


def test_a_bad_option_is_a_value_error_at_compile_time():
    with pytest.raises(ValueError, match=rf"executor must be one of {CHOICES}, got 'interpreter'"):
        mtia_xdsl.compile(add_kernel, options={"executor": "interpreter"})
    assert MtiaOptions(executor="cpp").executor == "cpp"


def _add(n: int, **launch: object) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(n)
    x, y = torch.rand(n, generator=g), torch.rand(n, generator=g)
    out = torch.zeros(n)
    add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK_SIZE=256, **launch)
    return x, y, out


def test_model_chosen_by_env_or_option_is_the_default_launch(monkeypatch: pytest.MonkeyPatch):
    x, y, out = _add(1000)
    default = mtia_xdsl.last_report().total_cycles
    monkeypatch.setenv("MTIA_EXECUTOR", "model")
    _, _, by_env = _add(1000)
    assert mtia_xdsl.last_report().total_cycles == default
    monkeypatch.setenv("MTIA_EXECUTOR", "cpp")  # the option wins over the variable
    _, _, by_option = _add(1000, executor="model")
    assert mtia_xdsl.last_report().total_cycles == default
    assert torch.equal(out, x + y) and torch.equal(by_env, out) and torch.equal(by_option, out)


def test_a_bad_environment_value_fails_the_launch_and_leaves_no_report(monkeypatch: pytest.MonkeyPatch):
    _add(300)
    monkeypatch.setenv("MTIA_EXECUTOR", "gpu")
    with pytest.raises(ExecutorChoiceError, match=rf"MTIA_EXECUTOR must be one of {CHOICES}, got 'gpu'"):
        _add(300)
    assert mtia_xdsl.last_report() is None


def test_a_compiled_kernel_takes_the_option():
    kernel = mtia_xdsl.compile(
        add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"},
        {"BLOCK_SIZE": 256}, options={"executor": "model"},
    )  # fmt: skip
    x, y, out = torch.rand(500), torch.rand(500), torch.zeros(500)
    result = kernel[(2,)](x, y, out, 500)
    assert torch.equal(out, x + y) and result.report.total_cycles > 0


@pytest.mark.parametrize("name", ["cpp", "llvm", "riscv"])
def test_an_executor_whose_path_is_missing_is_one_line_naming_the_usable_ones(
    monkeypatch: pytest.MonkeyPatch, name: str
):
    """With a path module absent (as in a build without it), the launch says so in one line, chained to nothing."""
    monkeypatch.setitem(sys.modules, "mtia_xdsl.backend.host", None)  # `import` raises ModuleNotFoundError
    monkeypatch.setitem(sys.modules, "mtia_xdsl.backend.riscv", None)
    with pytest.raises(ExecutorUnavailableError) as info:
        _add(100, executor=name)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"executor {name!r} is not available")
    assert "use one of: 'model'" in message
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_cpp_without_a_compiler_is_one_line_with_the_install_command(monkeypatch: pytest.MonkeyPatch, tmp_path: object):
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no c++, g++ or clang++ to be found
    with pytest.raises(ExecutorUnavailableError) as info:
        _add(100, executor="cpp")
    message = str(info.value)
    assert "\n" not in message and message.startswith("executor 'cpp': no C++ compiler found")
    assert "apt-get install" in message
    assert info.value.__cause__ is None and info.value.__suppress_context__

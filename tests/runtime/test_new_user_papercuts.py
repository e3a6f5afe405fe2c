"""What a new user tries from the README works: its commands, the tools' help and errors, the spellings it gives."""

import re
import shlex
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

import mtia_xdsl
from mtia_xdsl.tools import mtia_opt, mtia_run

ROOT = Path(__file__).resolve().parents[2]


def _readme_block_after(marker: str) -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text[text.index(marker) :].split("```")[1]
    return [line.split("  #")[0].strip() for line in block.strip().splitlines()]


def test_the_readme_mtia_run_commands_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    commands = _readme_block_after("`mtia-run` runs a kernel")
    assert [c.split()[0] for c in commands] == ["mtia-run", "mtia-opt", "mtia-run"]
    for command in commands:
        argv = [a.replace("examples/", f"{ROOT}/examples/") for a in shlex.split(command)[1:]]
        if command.startswith("mtia-opt"):
            mtia_opt.main(argv)
        else:
            assert mtia_run.main(argv) == 0, command
    out = capsys.readouterr().out
    assert out.count("arg 2: sum =") == 2 and (tmp_path / "t.json").exists()


def test_mtia_opt_on_a_missing_file_is_one_line_not_a_traceback(capsys):
    with pytest.raises(SystemExit) as exit_info:
        mtia_opt.main(["no_such_kernel.mlir"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "cannot read no_such_kernel.mlir" in err and "Traceback" not in err


def test_mtia_opt_help_lists_our_passes_first_with_descriptions_and_the_py_comment(capsys):
    with pytest.raises(SystemExit):
        mtia_opt.main(["--help"])
    out = capsys.readouterr().out
    assert out.index("convert-tt-to-mtia") < out.index("usage:")
    assert re.search(r"mtia-cb-bufferize\s+\S.*CB", out)
    assert "# mtia-opt: kernel=" in out


def test_mtia_run_help_prints_its_description_once(capsys):
    with pytest.raises(SystemExit):
        mtia_run.main(["--help"])
    assert capsys.readouterr().out.count("mtia-run: run an .mlir kernel") == 1


def test_mtia_run_on_a_py_without_the_comment_names_the_file(tmp_path, capsys):
    kernel = tmp_path / "k.py"
    kernel.write_text("import triton\n")
    assert mtia_run.main([str(kernel)]) == 1
    err = capsys.readouterr().err
    assert "mtia-opt" in err and "{first_char}" not in err


@triton.jit
def _scale(x, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs) * 2)


def test_the_readmes_autotune_spelling_of_machine_overrides_runs():
    configs = [triton.Config({"BLOCK": 64, "machine_overrides": (("ls_bytes", 262144),)})]
    tuned = triton.autotune(configs=configs, key=[])(_scale)
    x, y = torch.arange(64.0), torch.zeros(64)
    tuned[(1,)](x, y)
    assert torch.equal(y, 2 * x)
    assert "machine_overrides" in (ROOT / "README.md").read_text()
    assert '"machine_overrides": (("ls_bytes", 262144),)' in (ROOT / "README.md").read_text()


@triton.jit
def _div_mod(a, b, q, r, N: tl.constexpr):
    offs = tl.arange(0, N)
    x, y = tl.load(a + offs), tl.load(b + offs)
    tl.store(q + offs, x // y)
    tl.store(r + offs, x % y)


def test_integer_division_by_zero_gives_zero_as_the_readme_says():
    a, b = torch.tensor([7, -7, 5, 0], dtype=torch.int32), torch.tensor([0, 0, 2, 0], dtype=torch.int32)
    q, r = torch.full((4,), 9, dtype=torch.int32), torch.full((4,), 9, dtype=torch.int32)
    _div_mod[(1,)](a, b, q, r, 4)
    assert q.tolist() == [0, 0, 2, 0] and r.tolist() == [0, 0, 1, 0]


@triton.jit
def _strided_copy(x, y, stride, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y + offs, tl.load(x + offs * stride))


def test_a_non_contiguous_view_is_read_through_the_strides_passed():
    base = torch.arange(32.0).reshape(4, 8)
    column = base[:, 3]  # stride 8, not contiguous
    y = torch.zeros(4)
    _strided_copy[(1,)](column, y, column.stride(0), 4)
    assert torch.equal(y, column)
    assert mtia_xdsl.last_report() is not None


def test_mtia_run_piped_into_a_reader_that_stops_early_is_not_a_traceback(tmp_path):
    """`mtia-run ... --trace t.json | head -3`: the reader closing the pipe stops the printing quietly, and
    the trace is still written."""
    import subprocess
    import sys

    trace = tmp_path / "t.json"
    kernel = Path(__file__).resolve().parents[2] / "examples" / "vector_add.py"
    argv = ["--grid", "1", "--arg", "f32:64", "--arg", "f32:64", "--arg", "zeros:f32:64", "--arg", "64"]
    code = "import sys; from mtia_xdsl.tools.mtia_run import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(kernel), *argv, "--trace", str(trace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before mtia-run prints anything
    err = proc.stderr.read()
    proc.wait()
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert proc.returncode == 0
    assert trace.exists()


def test_the_readme_torch_compile_example_runs(capsys):
    """The torch.compile block of the README runs as written (it once used an undefined `MyModel` and `x`) and
    prints the report of a kernel launched on the machine model."""
    import torch._inductor.config as inductor_config

    block = (ROOT / "README.md").read_text().split("## torch.compile (Inductor)")[1].split("```python")[1]
    code = block.split("```")[0]
    with inductor_config.patch(cpu_backend="cpp", force_disable_caches=True):
        torch._dynamo.reset()
        exec(compile(code, "README.md", "exec"), {})
        torch._dynamo.reset()
    assert "on mtia2i (64 PEs" in capsys.readouterr().out

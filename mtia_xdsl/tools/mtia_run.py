"""mtia-run: run an .mlir kernel (tt or buffer-level mtia) on the MTIA-2i machine model and print the report.

A tt-level module is lowered with the default pipeline first. A .cpp file (a kernel's C++ as `mtia-opt -t mtia-cpp`
writes it, edited or not) is built with the system C++ compiler and the host runtime, run, and its recorded
commands timed with the same timing model (mtia_xdsl/backend/host.py). Kernel arguments are made from specs:
  f32:1024            random normal tensor<1024 x f32> (seeded)      zeros:f16:64x64   zeros
  ones:f32:1024       ones                                           arange:i32:128    0, 1, 2, ...
  1000  /  1e-5       an integer / a float scalar
DTYPE names an element type (f32, bf16, i32, i8, u8 for uint8, i1 for bool, ...); a tensor fits a pointer by
Triton's rule (TTIR integers are signless: a u8 tensor fits !tt.ptr<i8>, an i1 one only !tt.ptr<i1>).
After the run, each tensor argument's sum is printed (so a test can check results).

Machine numbers: `--machine` picks the MachineConfig preset, each `--set FIELD=VALUE` overrides one of its
fields (e.g. --set global_placement=sram --set dram_latency_cycles=300).

Example: mtia-run add.mlir --grid 4 --arg arange:f32:4096 --arg ones:f32:4096 --arg zeros:f32:4096 --arg 4000
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mtia_xdsl.machine.config import DEFAULT_CHIP, PE_MAPPINGS, MachineConfig
from mtia_xdsl.tools import os_error_text

_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64", "i1": "bool", "i8": "int8",
           "u8": "uint8", "i16": "int16", "i32": "int32", "i64": "int64"}  # fmt: skip


MAPPING_CHOICES = PE_MAPPINGS
"""--mapping values (`machine.config.PE_MAPPINGS`)."""


@dataclass(frozen=True)
class RunOptions:
    """What the command line asks of the machine model."""

    machine: str
    mapping_override: str | None = None
    """--mapping: the program-id -> PE mapping of the run, over the kernel's `mtia.pe_mapping` attribute."""
    machine_overrides: tuple[tuple[str, str], ...] = ()
    """--set FIELD=VALUE pairs: the lowering sizes CBs for them and the run simulates with them."""

    @property
    def machine_config(self) -> Any:
        """The MachineConfig to run on: `derive_config` of the preset `machine` with the --set overrides."""
        from mtia_xdsl.machine.config import derive_config

        return derive_config(self.machine, self.machine_overrides)

    subgrid_override: tuple[int, ...] | None = None
    """--pe-subgrid: the launch's PE sub-grid (base PE, tile width, tile height), over `mtia.pe_subgrid`."""

    def compile_options(self) -> Any:
        """Return the MtiaOptions a tt-level input is lowered with: the machine with its --set overrides (so
        CB sizing and the LS check see the machine the run simulates) and the mapping, if given."""
        from mtia_xdsl.options import MtiaOptions

        extra: dict[str, Any] = {"pe_mapping": self.mapping_override} if self.mapping_override else {}
        if self.subgrid_override:
            extra["pe_subgrid"] = self.subgrid_override
        return MtiaOptions(machine=self.machine, machine_overrides=self.machine_overrides, **extra)


def parse_overrides(specs: Sequence[str]) -> dict[str, str]:
    """Turn `--set FIELD=VALUE` specs into a dict (a later spec of the same field wins).

    Raises: ValueError naming the spec if it has no `=` or no field name.
    """
    pairs: dict[str, str] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set {spec!r}: expected FIELD=VALUE, e.g. --set dram_latency_cycles=300")
        pairs[key.strip()] = value.strip()
    return pairs


def parse_grid(text: str) -> tuple[int, ...]:
    """Turn `--grid` text (`4`, `4x2`, `4x2x1`) into a tuple of 1 to 3 program counts.

    Raises: ValueError naming the option and the expected form if `text` is not 1 to 3 integers >= 1 joined by x.
    """
    try:
        grid = tuple(int(g) for g in text.split("x"))
    except ValueError:
        grid = ()
    if not 1 <= len(grid) <= 3 or min(grid) < 1:
        raise ValueError(f"--grid {text!r}: expected 1 to 3 program counts >= 1 joined by x, e.g. 4 or 4x2")
    return grid


def parse_subgrid(text: str | None) -> tuple[int, int, int] | None:
    """Turn `--pe-subgrid` text (`BASE,WIDTH,HEIGHT`) into three integers; None when not given.

    Raises: ValueError naming the option and the expected form if `text` is not three integers >= 0.
    """
    if text is None:
        return None
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        values = ()
    if len(values) != 3 or values[0] < 0 or min(values[1:]) < 1:
        raise ValueError(
            f"--pe-subgrid {text!r}: expected BASE,WIDTH,HEIGHT (the first PE and the rectangle's width and "
            "height in PEs), e.g. 18,4,2"
        )
    return values[0], values[1], values[2]


def parse_arg(spec: str, index: int, seed: int) -> Any:
    """Turn one `--arg` spec into a torch tensor or a Python number.

    Raises: ValueError with the accepted forms if `spec` is none of them.
    """
    try:
        return _parse_arg(spec, index, seed)
    except ValueError as e:
        raise ValueError(f"--arg #{index + 1} {spec!r}: {e}") from None


def _parse_scalar(spec: str) -> int | float:
    try:
        return int(spec)
    except ValueError:
        pass
    try:
        return float(spec)
    except ValueError:
        raise ValueError("expected a number or [KIND:]DTYPE:SHAPE (see mtia-run --help)") from None


def _parse_arg(spec: str, index: int, seed: int) -> Any:
    import torch

    parts = spec.split(":")
    if len(parts) == 1:
        return _parse_scalar(spec)
    kind, dtype_name, shape_text = ("randn", *parts) if len(parts) == 2 else parts
    if dtype_name not in _DTYPES or kind not in ("randn", "zeros", "ones", "arange"):
        raise ValueError(
            f"kind must be zeros, ones or arange (or none, for random) and dtype one of {', '.join(_DTYPES)}"
        )
    try:
        shape = [int(d) for d in shape_text.split("x")]
    except ValueError:
        shape = []
    if not shape or min(shape) < 0:
        raise ValueError(f"shape {shape_text!r} must be sizes >= 0 separated by x, e.g. 64x128")
    dtype = getattr(torch, _DTYPES[dtype_name])
    n = 1
    for d in shape:
        n *= d
    if kind == "zeros":
        return torch.zeros(shape, dtype=dtype)
    if kind == "ones":
        return torch.ones(shape, dtype=dtype)
    if kind == "arange":
        return torch.arange(n).to(dtype).reshape(shape)
    gen = torch.Generator().manual_seed(seed + index)
    values = torch.randn(shape, generator=gen)
    return values.to(dtype) if dtype.is_floating_point else (values * 100).to(dtype)


def check_args(module: Any, kernel_name: str | None, args: list[Any]) -> None:
    """Check each argument against the kernel's parameter: a tensor that fits each pointer by Triton's rule
    (`launch.pointer_fits`, as `run_module` checks: a u8 tensor fits `!tt.ptr<i8>`, an i8 one not `!tt.ptr<i1>`).

    Raises: ValueError naming the parameter and the --arg that does not fit.
    """
    import torch

    from mtia_xdsl.dialects import tt
    from mtia_xdsl.machine.interpret.values import element_format
    from mtia_xdsl.machine.reference import find_kernel
    from mtia_xdsl.runtime.launch import pointer_fits, scalar_type

    kernel = find_kernel(module, kernel_name, how_to_choose="choose one with --kernel NAME")
    block_args = kernel.regions[0].blocks[0].args
    if len(args) != len(block_args):
        took = "was" if len(args) == 1 else "were"
        raise ValueError(f"the kernel takes {len(block_args)} arguments but {len(args)} --arg {took} given")
    for i, (param, arg) in enumerate(zip(block_args, args, strict=True)):
        name = param.name_hint or f"#{i}"
        if isinstance(param.type, tt.PointerType):
            want = element_format(param.type.pointee_type).name
            if not isinstance(arg, torch.Tensor):
                raise ValueError(
                    f"--arg #{i + 1}: parameter '{name}' is {param.type}; give a tensor such as {want}:1024"
                )
            if not pointer_fits(scalar_type(arg), param.type):
                got = {v: k for k, v in _DTYPES.items()}.get(str(arg.dtype).removeprefix("torch."), str(arg.dtype))
                raise ValueError(f"--arg #{i + 1}: parameter '{name}' is {param.type} but the tensor is {got}")
        elif isinstance(arg, torch.Tensor):
            raise ValueError(f"--arg #{i + 1}: parameter '{name}' is the scalar {param.type}; give a number")


def load_module(path: str, options: Any = None) -> Any:
    """Parse `path` and lower it to the buffer level (for `options.machine`) if it is still tt-level.

    Raises: ValueError naming the file for an input that is neither a Triton .py nor MLIR; PassFailedException
    (located) if a buffer-level input gives two CBs alive at the same time one CB ID or overlapping LS bytes
    (`verify_cb_allocation`).
    """
    from xdsl.utils.exceptions import ParseError

    from mtia_xdsl.dialects import make_context
    from mtia_xdsl.frontend.ttir_import import parse_ttir, verify_parsed

    if path.endswith(".py"):  # a Triton kernel named by its '# mtia-opt:' comment, as mtia-opt reads it
        from mtia_xdsl.frontend.pyfile import module_from_python_file

        module = module_from_python_file(path)  # the pipeline below inlines its helpers
    else:
        text = Path(path).read_text() if path != "-" else sys.stdin.read()
        try:
            module = parse_ttir(text, make_context(), path)
        except ParseError as e:
            if path == "-" or path.endswith((".mlir", ".ttir")):
                raise
            raise ValueError(
                f"{e.span.get_location()}: error: not an MLIR module ({e.msg}); give a Triton "
                "kernel .py with a '# mtia-opt:' comment, or an .mlir file such as `mtia-opt kernel.py -p "
                "tt-inline -o kernel.mlir` writes"
            ) from None
        verify_parsed(module, text, path)
    from mtia_xdsl.runtime.modules import is_buffer_level

    if not is_buffer_level(module):
        from mtia_xdsl.pipeline import lower

        lower(module, options.compile_options() if isinstance(options, RunOptions) else options)
    else:  # a buffer-level input: its CB allocation must hold before the model runs it
        from mtia_xdsl.transforms.analysis.cb_liveness import verify_cb_allocation

        verify_cb_allocation(module)
    return module


def main(argv: Sequence[str] | None = None) -> int:
    """Run mtia-run on the command line; returns the exit status."""
    first, _, rest = __doc__.partition("\n")
    parser = argparse.ArgumentParser(
        prog="mtia-run", description=first, formatter_class=argparse.RawDescriptionHelpFormatter, epilog=rest.strip()
    )
    parser.add_argument("input", help="an .mlir file with one public tt.func (tt or buffer level), a Triton kernel "
                        ".py with a '# mtia-opt:' comment (see mtia-opt --help), or - for stdin")  # fmt: skip
    parser.add_argument("--grid", default="1", help="program grid, e.g. 4 or 4x2 (default 1)")
    parser.add_argument("--arg", action="append", default=[], help="a kernel argument spec (repeat, in order)")
    parser.add_argument("--kernel", help="name of the tt.func to run when the module has several")
    parser.add_argument(
        "--machine", default=DEFAULT_CHIP, help=f"MachineConfig preset ({', '.join(MachineConfig.PRESET_NAMES)})"
    )
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="override one MachineConfig field of the preset (repeatable)")  # fmt: skip
    parser.add_argument("--mapping", choices=MAPPING_CHOICES,
                        help="program-id to PE mapping (default: the kernel's mtia.pe_mapping)")  # fmt: skip
    parser.add_argument("--pe-subgrid", metavar="BASE,WIDTH,HEIGHT",
                        help="run on a rectangle of PEs (default: the kernel's mtia.pe_subgrid, else all)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="seed of the random tensor arguments")
    parser.add_argument("--trace", help="write a Chrome/Perfetto trace (JSON) of engine activity to this path")
    args = parser.parse_args(argv)
    from xdsl.utils.exceptions import DiagnosticException, InterpretationError, ParseError

    from mtia_xdsl.frontend.errors import KernelError

    try:
        grid = parse_grid(args.grid)
        kernel_args = [parse_arg(s, i, args.seed) for i, s in enumerate(args.arg)]
        subgrid = parse_subgrid(args.pe_subgrid)
    except ValueError as e:
        parser.error(str(e))  # a usage error: "mtia-run: error: ...", exit status 2
    try:
        options = RunOptions(args.machine, args.mapping, tuple(parse_overrides(args.set).items()), subgrid)
        _ = options.machine_config  # a bad preset or --set is a usage error before anything compiles
        if args.input.endswith(".cpp"):  # a kernel's C++ (mtia-opt -t mtia-cpp), maybe hand-edited
            return _run_cpp_file(args, options, grid, kernel_args, subgrid)
        module = load_module(args.input, options)
        from mtia_xdsl.machine.run import run_kernel

        check_args(module, args.kernel, kernel_args)
        timeline = "full" if args.trace else "totals"  # only the report is printed: keep no command
        result = run_kernel(module, grid, kernel_args, options, kernel_name=args.kernel, timeline=timeline)
        if hasattr(result.report, "fit"):
            from mtia_xdsl.fit import fit_lines

            result.report.fit = fit_lines(module)  # how the lowering above made the CBs fit, as the Python API says
    except (ValueError, InterpretationError, ParseError, DiagnosticException, OSError, KernelError) as e:
        print(os_error_text("mtia-run", e) if isinstance(e, OSError) else f"mtia-run: {e}", file=sys.stderr)
        return 1
    try:
        print(result.report.format())
        for i, a in enumerate(kernel_args):
            if hasattr(a, "dtype"):
                print(f"arg {i}: sum = {a.double().sum().item():.6g}")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader (`| head`) stopped: print nothing more, still write the trace
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if args.trace:
        from mtia_xdsl.machine.trace import write_chrome_trace

        try:
            write_chrome_trace(result.timeline, args.trace)
        except OSError as e:
            print(f"mtia-run: cannot write the trace: {e}", file=sys.stderr)
            return 1
        print(f"trace written to {args.trace}")
    return 0


def _run_cpp_file(args: Any, options: Any, grid: Any, kernel_args: list[Any], subgrid: Any) -> int:
    """mtia-run on a .cpp file: build it with the host runtime, run it, time its commands (backend/host.py)."""
    from xdsl.utils.exceptions import InterpretationError

    from mtia_xdsl.backend.host import CompilerMissingError, CppBuildError, run_cpp

    config = options.machine_config if (args.set or args.machine != DEFAULT_CHIP) else None
    try:
        result = run_cpp(Path(args.input).read_text(), grid, kernel_args, config=config, mapping=args.mapping,
                         subgrid=subgrid, filename=args.input)  # fmt: skip
    except (CompilerMissingError, CppBuildError, InterpretationError, OSError, ValueError) as e:
        print(os_error_text("mtia-run", e) if isinstance(e, OSError) else f"mtia-run: {e}", file=sys.stderr)
        return 1
    print(result.report.format())
    for i, a in enumerate(kernel_args):
        if hasattr(a, "dtype"):
            print(f"arg {i}: sum = {a.double().sum().item():.6g}")
    if args.trace:
        from mtia_xdsl.machine.trace import write_chrome_trace

        write_chrome_trace(result.timeline, args.trace)
        print(f"trace written to {args.trace}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

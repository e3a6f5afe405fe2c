"""mtia-opt: xdsl-opt with the tt and mtia dialects, mtia_xdsl's passes and targets.

Example: mtia-opt kernel.mlir -p convert-tt-to-mtia,mtia-cb-bufferize
"""

import argparse
import sys
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.xdsl_opt_main import xDSLOptMain

from mtia_xdsl.tools import os_error_text

DESCRIPTION = "mtia-opt: xdsl-opt with the tt and mtia dialects and mtia_xdsl's passes (listed at the end)"

PY_INPUT_HELP = """\
A Triton kernel in a .py file is built through Triton's code generator; comments in the file name the
kernel and its specialisation (several lines are joined; arguments not in the signature are constexprs):
  # mtia-opt: kernel=add_kernel signature=x_ptr:*fp32,y_ptr:*fp32,output_ptr:*fp32,n_elements:i32
  # mtia-opt: constexprs=BLOCK_SIZE:1024
The default pipeline: python -c 'import mtia_xdsl.pipeline as p; print(p.pipeline_for())'"""


def our_passes_help() -> str:
    """The help text listing mtia_xdsl's passes, each with the first line of its docstring."""
    from mtia_xdsl.transforms import get_all_passes

    lines = ["mtia_xdsl passes (-p NAME or NAME{option=value ...}; xDSL's own passes work too):"]
    for name, factory in sorted(get_all_passes().items()):
        doc = (factory().__doc__ or "").strip().splitlines()
        lines.append(f"  {name:34} {doc[0] if doc else ''}")
    return "\n".join(lines)


class MtiaOptMain(xDSLOptMain):
    """Registration hooks only: dialects, passes, targets and the `.py` kernel frontend."""

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        """xdsl-opt's arguments; the help names our passes first, with descriptions, and the .py input."""
        super().register_all_arguments(arg_parser)
        arg_parser.description = DESCRIPTION
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        for action in arg_parser._actions:
            if action.dest == "passes":
                action.help = "comma-separated pass pipeline; mtia_xdsl's passes are listed below"
            elif action.dest == "input_file":
                action.help = "an .mlir or .ttir file, or a Triton kernel .py with a '# mtia-opt:' comment"
        base_help = arg_parser.format_help

        def format_help() -> str:  # the pass list imports every pass: built only when help is shown
            return f"{our_passes_help()}\n\n{base_help()}\n{PY_INPUT_HELP}\n"

        arg_parser.format_help = format_help  # type: ignore[method-assign]

    def register_all_dialects(self) -> None:
        from mtia_xdsl.dialects import get_all_dialects
        from mtia_xdsl.dialects.arith import patch_dense_float_hex_parsing

        patch_dense_float_hex_parsing()

        for name, factory in get_all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def parse_ttir(io: IO[bytes]) -> ModuleOp:
            # upstream TTIR (`.ttir`, as Triton's cache and dumps write it): location aliases may follow.
            # Invalid ops are reported at their line (xDSL's own messages name no position).
            from mtia_xdsl.frontend.ttir_import import parse_ttir as parse
            from mtia_xdsl.frontend.ttir_import import verify_parsed

            text, name = io.read().decode(), self.get_input_name()
            module = parse(text, self.ctx, name)
            if not self.args.disable_verify:
                verify_parsed(module, text, name)
            return module

        self.available_frontends["ttir"] = parse_ttir
        self.available_frontends["mlir"] = parse_ttir

        def parse_python(io: IO[bytes]) -> ModuleOp:
            from mtia_xdsl.frontend.pyfile import module_from_python_file

            io.close()
            if self.args.input_file is None:
                raise SystemExit("mtia-opt: a Triton kernel (.py) must be given as a file, not on stdin")
            return module_from_python_file(self.args.input_file)

        self.available_frontends["py"] = parse_python

    def register_all_passes(self) -> None:
        super().register_all_passes()
        from mtia_xdsl.transforms import get_all_passes

        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def setup_pipeline(self) -> None:
        """Build the pass pipeline; a pass option the pass does not have, or of the wrong type, is a
        usage error (`_PassOptionError`) rather than a traceback."""
        try:
            super().setup_pipeline()
        except (ValueError, TypeError) as e:
            if str(e).startswith("Unrecognized passes"):
                raise
            raise _PassOptionError(f"mtia-opt: bad pass option in -p: {e}") from None

    def register_all_targets(self) -> None:
        """Offer the targets of mtia_xdsl's registry (`mtia_xdsl.backend.get_all_targets`) only: xDSL's
        other targets (x86-asm, wgsl, ...) do not translate tt or mtia ops."""
        from mtia_xdsl.backend import get_all_targets

        for name, factory in get_all_targets().items():
            self.available_targets[name] = factory


class _PassOptionError(Exception):
    """A -p pipeline names a pass option that does not exist or gives it a value of the wrong type."""


def main(args: Sequence[str] | None = None) -> None:
    """Run mtia-opt on the command line; kernel and pass errors print as diagnostics, exit status 1."""
    from xdsl.utils.exceptions import DiagnosticException, ParseError

    from mtia_xdsl.frontend.errors import KernelError

    main_ = None
    try:
        main_ = MtiaOptMain(args=args)
        main_.run()
    except (KernelError, DiagnosticException, ParseError, _PassOptionError) as e:
        print(e, file=sys.stderr)
        raise SystemExit(1) from None
    except ValueError as e:
        if not str(e).startswith("Unrecognized passes"):
            raise
        print(f"mtia-opt: {e}; `mtia-opt --help` lists the passes", file=sys.stderr)
        raise SystemExit(1) from None
    except OSError as e:  # a missing or unreadable input file, or an output file that cannot be written
        output = getattr(getattr(main_, "args", None), "output_file", None)
        verb = "write" if output is not None and e.filename == output else "read"
        print(os_error_text("mtia-opt", e, verb), file=sys.stderr)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()

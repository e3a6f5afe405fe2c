"""Print a Triton kernel's tt module: `python3 -m mtia_xdsl.frontend path/kernel.py:name --signature ...`.

Example: python3 -m mtia_xdsl.frontend examples/vector_add.py:add_kernel \
    --signature x_ptr=*fp32,y_ptr=*fp32,output_ptr=*fp32,n_elements=i32,BLOCK_SIZE=constexpr \
    --constexpr BLOCK_SIZE=1024 --clean --debuginfo
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from xdsl.printer import Printer

from mtia_xdsl.frontend import KernelError, build_tt_module, inline_and_clean
from mtia_xdsl.frontend.pyfile import import_file, parse_number, parse_pairs


def _load_kernel(spec: str) -> Any:
    path_text, _, name = spec.rpartition(":")
    return getattr(import_file(Path(path_text)), name)


def main(argv: list[str] | None = None) -> int:
    """Build and print the kernel's tt module; return the exit status."""
    parser = argparse.ArgumentParser(prog="python3 -m mtia_xdsl.frontend", description=__doc__)
    parser.add_argument("kernel", help="path/to/file.py:kernel_name")
    parser.add_argument("--signature", required=True, help="name=type,... (Triton type strings)")
    parser.add_argument("--constexpr", default="", help="name=value,...")
    parser.add_argument("--clean", action="store_true", help="run inline_and_clean")
    parser.add_argument("--generic", action="store_true", help="print the generic form")
    parser.add_argument("--debuginfo", action="store_true", help="print op locations")
    args = parser.parse_args(argv)
    fn = _load_kernel(args.kernel)
    constexprs = {k: parse_number(v) for k, v in parse_pairs(args.constexpr, "=").items()}
    try:
        module = build_tt_module(fn, parse_pairs(args.signature, "="), constexprs)
    except KernelError as e:
        print(e, file=sys.stderr)
        return 1
    if args.clean:
        inline_and_clean(module)
    Printer(print_generic_format=args.generic, print_debuginfo=args.debuginfo).print_op(module)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

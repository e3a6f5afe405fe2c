"""`python -m mtia_xdsl.tools.build_timing [--verbose]`: compile the timing model with mypyc (machine/compiled.py).

Exit status 0 when the build is in place, 1 (with the reason on stderr) when it could not be built; the
pure-Python timing model runs either way.
"""

from __future__ import annotations

import sys

from mtia_xdsl.machine import compiled


def main(argv: list[str] | None = None) -> int:
    """Build into `compiled.BUILD_DIR`; print where, or why not."""
    args = sys.argv[1:] if argv is None else argv
    try:
        out = compiled.build(verbose="--verbose" in args)
    except RuntimeError as e:
        print(f"mtia_xdsl: {e}", file=sys.stderr)
        return 1
    print(f"compiled timing model built in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

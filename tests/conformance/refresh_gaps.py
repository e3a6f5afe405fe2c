"""Regenerate known_gaps.py: run every check of every corpus kernel on seeded launches and record failures.

Usage (from the repository root): python3 tests/conformance/refresh_gaps.py [kernel ...]
With kernel names, only those are re-checked and the other entries are kept.
"""

from __future__ import annotations

import pprint
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[2]))

from checks import SEEDS, CheckFailed, check_machine, check_tt, check_ttir, example_launch
from corpus import all_cases
from known_gaps import GAPS


def gaps_of(case) -> dict[str, tuple[str, str]]:
    """Return check -> (stage, first line) for every failing check of `case`."""
    found: dict[str, tuple[str, str]] = {}
    runs = [("ttir", lambda: check_ttir(case))]
    for seed in SEEDS:
        launch = example_launch(case, seed)
        runs += [("tt", lambda launch=launch: check_tt(case, launch))]
        runs += [("machine", lambda launch=launch: check_machine(case, launch))]
    for check, run in runs:
        if check in found:
            continue
        try:
            run()
        except CheckFailed as e:
            found[check] = (e.stage, e.line)
        except Exception as e:  # an error of the harness or the oracle: record it too, it needs a look
            found[check] = ("harness", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200])
    return found


def main(names: list[str]) -> None:
    cases = all_cases()
    gaps = {k: v for k, v in GAPS.items() if k in cases and names and k not in names}
    for name in sorted(cases):
        if names and name not in names:
            continue
        found = gaps_of(cases[name])
        print(f"{name}: {found or 'ok'}", flush=True)
        if found:
            gaps[name] = found
    path = Path(__file__).parent / "known_gaps.py"
    head = path.read_text().split("GAPS: dict")[0]
    body = pprint.pformat(dict(sorted(gaps.items())), width=116, sort_dicts=True)
    path.write_text(f"{head}GAPS: dict[str, dict[str, tuple[str, str]]] = {body}\n")


if __name__ == "__main__":
    main(sys.argv[1:])

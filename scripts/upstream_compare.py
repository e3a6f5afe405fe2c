"""Compare two outcome files of scripts/upstream_plugin.py: mtia_xdsl against Triton's interpreter.

Usage: python scripts/upstream_compare.py OURS.json INTERPRETER.json [--list]
Prints the pass/fail/skip counts side by side, how the tests the interpreter passes fare here, and the
most common reasons among those that do not pass here (`--list` prints every such test).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter


def reason_class(reason: str) -> str:
    """Group a failure line by its exception type and the start of its message (numbers blanked)."""
    reason = re.sub(r"\s*\(.*?\)", "", reason)
    reason = re.sub(r"[-+]?\d[\d.e+-]*", "N", reason)
    reason = re.sub(r"/\S+\.py:N:N: ", "", reason)
    return reason[:110]


def compare(ours: dict[str, list[str]], interp: dict[str, list[str]]) -> tuple[dict[str, Counter], Counter]:
    """Return ({mode: Counter of outcomes}, Counter of (interpreter outcome, our outcome)) on common ids."""
    counts = {"mtia_xdsl": Counter(o for o, _ in ours.values()), "interpreter": Counter(o for o, _ in interp.values())}
    pairs = Counter((interp[t][0], ours[t][0]) for t in ours.keys() & interp.keys())
    return counts, pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ours")
    parser.add_argument("interpreter")
    parser.add_argument("--list", action="store_true", help="print every test the interpreter passes and we do not")
    args = parser.parse_args()
    with open(args.ours) as f:
        ours = json.load(f)
    with open(args.interpreter) as f:
        interp = json.load(f)
    counts, pairs = compare(ours, interp)
    print(f"{'outcome':<10}{'mtia_xdsl':>11}{'interpreter':>13}")
    for outcome in ("passed", "failed", "skipped"):
        print(f"{outcome:<10}{counts['mtia_xdsl'][outcome]:>11}{counts['interpreter'][outcome]:>13}")
    print(f"{'total':<10}{len(ours):>11}{len(interp):>13}")
    passed_interp = sum(n for (i, _), n in pairs.items() if i == "passed")
    both = pairs[("passed", "passed")]
    share = f" ({100 * both / passed_interp:.0f} %)" if passed_interp else ""
    print(
        f"\nof the {passed_interp} tests the interpreter passes, {both} pass here{share}, "
        f"{pairs[('passed', 'failed')]} fail, {pairs[('passed', 'skipped')]} skip"
    )
    print(
        f"tests the interpreter does not pass that pass here: "
        f"{sum(n for (i, o), n in pairs.items() if i != 'passed' and o == 'passed')}"
    )
    missing = [t for t in interp if interp[t][0] == "passed" and t in ours and ours[t][0] != "passed"]
    reasons = Counter(reason_class(ours[t][1]) for t in missing)
    if reasons:
        print("\nwhy the others do not pass here (count, reason):")
        for reason, n in reasons.most_common(25):
            print(f"{n:5}  {reason}")
    if args.list:
        for t in sorted(missing):
            print(f"{ours[t][0]:8} {t}  {ours[t][1][:200]}")


if __name__ == "__main__":
    main()

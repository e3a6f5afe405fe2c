"""Every FileCheck prefix a test file checks is enabled by one of its RUN lines, and every enabled prefix is
checked: a check line under a prefix no RUN line uses checks nothing (it silently passes).

Package-wide (it reads every file under tests/filecheck), so it sits next to the per-area folders.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

FILECHECK = Path(__file__).resolve().parent / "filecheck"
SUFFIXES = ("", "-NEXT", "-SAME", "-NOT", "-DAG", "-LABEL", "-EMPTY", "-COUNT-\\d+")
CHECK_LINE = re.compile(r"(?://|#|;)\s*([A-Z][A-Z0-9_-]*?)(" + "|".join(SUFFIXES) + r"):")


def run_prefixes(text: str) -> set[str]:
    """The prefixes the RUN lines of a test enable (CHECK for a FileCheck run without --check-prefix)."""
    enabled: set[str] = set()
    for line in text.splitlines():
        if "RUN:" not in line:
            continue
        for run in line.split("filecheck")[1:]:
            named = re.findall(r"--check-prefix(?:es)?[= ]([A-Za-z0-9_,-]+)", run)
            enabled |= {p for group in named for p in group.split(",")} if named else {"CHECK"}
    return enabled


def checked_prefixes(text: str) -> set[str]:
    """The prefixes check lines use (lines like `// PREFIX-NEXT: ...`), RUN lines excluded."""
    return {m.group(1) for line in text.splitlines() if "RUN:" not in line for m in CHECK_LINE.finditer(line)}


def test_the_prefix_readers_see_an_unused_prefix() -> None:
    text = "// RUN: mtia-opt %s | filecheck %s --check-prefix=A\n// A: x\n// B: y\n"
    assert run_prefixes(text) == {"A"}
    assert checked_prefixes(text) - run_prefixes(text) == {"B"}


def lit_tests() -> list[Path]:
    """The files lit runs (lit.cfg's suffixes), without its Output/ and Inputs/ folders."""
    paths = [*FILECHECK.rglob("*.mlir"), *FILECHECK.rglob("*.py")]
    return sorted(p for p in paths if not {"Output", "Inputs", "__pycache__"} & set(p.relative_to(FILECHECK).parts))


@pytest.mark.parametrize("path", lit_tests(), ids=lambda p: str(p.relative_to(FILECHECK)))
def test_every_check_prefix_is_run_and_every_run_prefix_is_checked(path: Path) -> None:
    text = path.read_text()
    if "RUN:" not in text or "filecheck" not in text:
        return
    enabled, checked = run_prefixes(text), checked_prefixes(text)
    assert not checked - enabled, f"check prefixes no RUN line enables: {sorted(checked - enabled)}"
    assert not enabled - checked, f"RUN prefixes with no check line: {sorted(enabled - checked)}"

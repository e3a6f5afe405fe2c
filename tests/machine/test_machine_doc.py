"""docs/machine.md lists every MachineConfig field with the mtia2i preset's value: the two stay in step."""

import dataclasses
import re
from pathlib import Path

from mtia_xdsl.machine import MachineConfig

DOC = Path(__file__).resolve().parents[2] / "docs" / "machine.md"
ROW = re.compile(r"^\| `(\w+)` \| ([^|]+) \|(.*)\|$")


def _doc_rows() -> dict[str, tuple[str, str]]:
    rows = {}
    for line in DOC.read_text().splitlines():
        m = ROW.match(line.strip())
        if m and m.group(1) in {f.name for f in dataclasses.fields(MachineConfig)}:
            rows[m.group(1)] = (m.group(2).strip(), m.group(3).strip())
    return rows


def test_every_field_is_documented_with_its_value_and_source():
    config = MachineConfig.preset("mtia2i")
    rows = _doc_rows()
    missing = [f.name for f in dataclasses.fields(MachineConfig) if f.name != "name" and f.name not in rows]
    assert not missing, f"docs/machine.md lacks MachineConfig fields {missing}"
    for name, (text, source) in rows.items():
        value = getattr(config, name)
        documented = text.strip("'") if isinstance(value, str) else float(text)
        assert documented == value or abs(float(documented) - value) <= 1e-6 * abs(value), (name, text, value)
        assert "source" in source or "ASSUMPTION" in source, f"{name}: no source or ASSUMPTION in docs/machine.md"


def test_the_docs_cite_no_path_outside_the_repository():
    for path in [DOC, DOC.parents[1] / "README.md", DOC.parents[1] / "mtia_xdsl" / "machine" / "config.py"]:
        text = path.read_text()
        assert "/work/" not in text and "../shared" not in text, path

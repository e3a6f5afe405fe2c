"""The documentation site's pages (scripts/docs_hooks.py): every README section, every public module.

`bash scripts/test.sh` builds the site itself with `mkdocs build --strict`; this checks what the hooks feed it.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "scripts" / "docs_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_readme_section_and_public_module_is_a_page() -> None:
    hooks = _hooks()
    pages = hooks._pages()
    titles = re.findall(r"^## (.+)$", (ROOT / "README.md").read_text(), re.M)
    guide = [text.split("\n", 1)[0] for path, text in pages.items() if path.startswith("guide/")]
    assert guide == [f"# {t}" for t in titles]
    modules = {
        line.split(":")[0] for line in (ROOT / "tests/public_api.txt").read_text().splitlines() if line[:1].isalpha()
    }
    assert {f"reference/{m}.md" for m in modules} == {p for p in pages if p.startswith("reference/")}
    assert "::: mtia_xdsl.passes" in pages["reference/mtia_xdsl.passes.md"]
    nav = hooks.on_config({"docs_dir": str(ROOT / "docs"), "nav": None})["nav"]
    assert {"machine.md", "cb-allocation.md"} <= {p for d in nav[2]["Topics"] for p in d.values()}


def test_readme_links_to_repository_files_become_links_between_pages() -> None:
    pages = _hooks()._pages()
    text = "\n".join(pages.values())
    assert "](docs/" not in text and "](examples/embedding/README.md)" not in text
    assert "](../cb-allocation.md)" in pages["guide/running-kernels.md"]

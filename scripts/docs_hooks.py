"""mkdocs hooks: the documentation site's pages made from the files that hold the facts, at build time.

Nothing is copied into docs/: the README's sections become pages (the text before the first section the
home page), CHANGELOG.md and examples/embedding/README.md become pages, docs/*.md are taken as they are, and
each public module listed in tests/public_api.txt (the released API) gets an API reference page rendered by
mkdocstrings from its docstrings. The navigation follows the README's order.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _readme_sections() -> tuple[str, list[tuple[str, str]]]:
    """Return the README's text before its first `## ` heading, and its (title, body) sections."""
    intro: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    fenced = False
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            sections.append((line[3:].strip(), []))
        elif sections:
            sections[-1][1].append(line)
        else:
            intro.append(line)
    return "\n".join(intro), [(t, "\n".join(body)) for t, body in sections]


def _promote_headings(text: str) -> str:
    """Raise every heading of a README section one level (`### x` -> `## x`), outside code blocks."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        out.append(line[1:] if not fenced and re.match(r"#{3,} ", line) else line)
    return "\n".join(out)


def _public_modules() -> dict[str, list[str]]:
    modules: dict[str, list[str]] = {}
    for line in (ROOT / "tests" / "public_api.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            module, name = (part.strip() for part in line.split(":"))
            modules.setdefault(module, []).append(name)
    return modules


PAGE_OF_FILE = {"examples/embedding/README.md": "embedding.md", "CHANGELOG.md": "changelog.md"}
"""Repository files that are pages of the site (besides docs/*.md), for the README's links to them."""


def _links_from(text: str, up: str) -> str:
    """Rewrite the README's links to repository files into links between pages (`up`: "" or "../")."""
    for file, page in PAGE_OF_FILE.items():
        text = text.replace(f"]({file})", f"]({up}{page})")
    return text.replace("](docs/", f"]({up}")


def _pages() -> dict[str, str]:
    """Return every generated page by its path under the site's docs directory."""
    intro, sections = _readme_sections()
    pages = {"index.md": _links_from(intro, "")}
    for title, body in sections:
        pages[f"guide/{_slug(title)}.md"] = f"# {title}\n" + _links_from(_promote_headings(body), "../")
    for file, page in PAGE_OF_FILE.items():
        pages[page] = (ROOT / file).read_text()
    for module, names in _public_modules().items():
        members = "\n".join(f"        - {n}" for n in sorted(names))
        pages[f"reference/{module}.md"] = (
            f"# `{module}`\n\n::: {module}\n    options:\n      show_root_heading: false\n      members:\n{members}\n"
        )
    return pages


def on_config(config: Any) -> Any:
    """Build the navigation: home, the README's sections in order, topics (docs/*.md), API reference."""
    _, sections = _readme_sections()
    docs = Path(config["docs_dir"])
    topics = [{_title(p): p.name} for p in sorted(docs.glob("*.md"))]
    config["nav"] = [
        {"Home": "index.md"},
        {"Guide": [{title: f"guide/{_slug(title)}.md"} for title, _ in sections]},
        {"Topics": [*topics, {"Embedding mtia_xdsl in a compiler": "embedding.md"}]},
        {"API reference": [{m: f"reference/{m}.md"} for m in _public_modules()]},
        {"Changelog": "changelog.md"},
    ]
    return config


def _title(path: Path) -> str:
    first = path.read_text().split("\n", 1)[0]
    return first.lstrip("# ").strip() if first.startswith("# ") else path.stem


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages to the site."""
    from mkdocs.structure.files import File

    for path, content in _pages().items():
        files.append(File.generated(config, path, content=content))
    return files

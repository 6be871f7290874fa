"""Issue 40, item 1: one argument from the first page to the last.

Walk "Next" from the landing page to the last page and "Previous" back, as a reader clicks: each step switches to
the target of the page's own Next (Previous) link, read from the page.  The walk fails if a page is skipped (the
pages visited are not the order of posenc/ui/pages.py, the landing page's map), if a page has no headline at the
top, no wrap-up at the bottom ("What this shows" / "What is still wrong or open"), or its wrap-up does not lead to
the next page.
"""

from __future__ import annotations

from apphelpers import APP, assert_clean, open_page
from streamlit.testing.v1 import AppTest

from posenc.ui.pages import PAGES
from posenc.ui.spine import HANDOUT, HEADLINE_ICON

ORDER = [p.path for p in PAGES]
BY_URL = {p.url_path: p.path for p in PAGES} | {"": PAGES[0].path}  # a link names its page by URL path ("" = the landing page)


def _links(at: AppTest) -> dict[str, str]:
    """{"Next" | "Previous": target page path} of the page's previous/next links."""
    out = {}
    for el in at.get("page_link"):
        label, page = el.proto.label, BY_URL.get(el.proto.page.strip("/"), el.proto.page)
        for word in ("Next", "Previous"):
            if label.startswith(f"{word}: "):
                assert word not in out or out[word] == page, f"two {word} links: {out[word]} and {page}"
                out[word] = page
    return out


def _check_spine(at: AppTest, path: str) -> None:
    assert_clean(at)
    text = "\n".join(m.value for m in at.markdown)
    assert "What this shows" in text and "What is still wrong or open" in text, f"{path} has no wrap-up"
    heads = [x for x in at.info if x.proto.icon == HEADLINE_ICON]
    assert len(heads) == 1 and heads[0].value.strip(), f"{path} has no headline at the top"
    assert "None" not in heads[0].value, heads[0].value


# What each page's "the next page …" sentence describes (the title of the page it means).  Compare once said "The next
# page trains the schemes" while the claims page came next and the lab after it.
NEXT_SAID = {"pages/home.py": "Attention needs order", "pages/context_extension.py": "Precision at long context",
             "pages/precision.py": "Similarity matrices"}
TITLES = {p.path: p.title for p in PAGES}


def _says_next(at: AppTest, path: str, target: str | None) -> None:
    """A page that says "the next page" means the page its Next link opens (``NEXT_SAID``)."""
    text = " ".join(m.value for m in (*at.markdown, *at.caption)).lower()
    if "next page " in text.replace("next page:", ""):
        assert path in NEXT_SAID, f"{path} says 'the next page': add what it means to NEXT_SAID"
        assert target is not None and NEXT_SAID[path] == TITLES[target], (path, NEXT_SAID[path], target)
    else:
        assert path not in NEXT_SAID, f"{path} no longer says 'the next page'"


def _step(at: AppTest, word: str) -> str | None:
    return _links(at).get(word)


def test_next_walks_every_page_in_order_and_previous_walks_back():
    at = AppTest.from_file(APP, default_timeout=180)
    at.switch_page(ORDER[0])
    at.run()
    visited = [ORDER[0]]
    _check_spine(at, ORDER[0])
    while (target := _step(at, "Next")) is not None:
        _says_next(at, visited[-1], target)
        assert target not in visited, f"Next from {visited[-1]} goes back to {target}"
        assert any(c.value.startswith(":material/arrow_forward: **Next, ") for c in at.caption), \
            f"the wrap-up of {visited[-1]} does not lead to the next page"
        at.switch_page(target)
        at.run()
        visited.append(target)
        _check_spine(at, target)
    _says_next(at, visited[-1], None)
    assert visited == ORDER, f"skipped: {[p for p in ORDER if p not in visited]}"
    back = [visited[-1]]
    while (target := _step(at, "Previous")) is not None:
        at.switch_page(target)
        at.run()
        back.append(target)
        assert_clean(at)
    assert back == ORDER[::-1]


def test_the_handout_holds_the_headline_the_first_figure_and_the_wrap_up():
    at = open_page("pages/raw_index.py")
    assert_clean(at)
    page = at.session_state[HANDOUT]().decode("utf-8")
    headline = next(x.value for x in at.info if x.proto.icon == HEADLINE_ICON)
    assert page.startswith("<!doctype html>") and "<svg" in page and page.count("<figure>") == 1
    assert "What this shows" in page and "What is still wrong or open" in page and "Next: 2 · Index / length" in page
    assert headline.split(":")[0].replace("*", "") in page  # the same sentence, computed at these settings
    wrong = next(m.value for m in at.markdown if "What is still wrong or open" in m.value)
    assert "divide by the prompt length" in wrong and "divide by the prompt length" in page  # the page's wrap-up
    assert "7,999,992" not in wrong and "7,999,992" not in page  # its number waits for the exercise's reveal in both

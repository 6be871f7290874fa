"""Plain words: no text on a page refers to things the reader has not been shown -- the articles
by their title, never as "the seed"; no "registry", no "fsum", no "word(s)"-style placeholders --
and a story page's numbers are not clipped text ("…") made by a rule we could state instead."""

from __future__ import annotations

import re

import pytest
from apphelpers import shown_page

from posenc.ui.pages import PAGES

pytestmark = pytest.mark.warm_caches  # tests/conftest.py: runs after another page sweep reuse its caches
STORY = {"pages/home.py", "pages/attention_order.py", "pages/raw_index.py", "pages/index_length.py", "pages/single_sine.py",
         "pages/sincos_pair.py", "pages/sinusoid.py"}
EVERYWHERE = re.compile(r"(?i:\bseed (article|text)s?\b|\bthe seeds?\b|\bregistry\b|\bfsum\b)|\b[a-z]+\(s\)")
ON_STORY_PAGES = re.compile(r"(?i)\bseed\w*\b")  # the RoPE and learned pages have a random-seed control, the story none


def page_words(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [x.value for x in (*at.info, *at.warning, *at.success, *at.error)]
    parts += [m.label for m in at.metric] + [str(m.proto.help) for m in at.metric]
    widgets = (*at.slider, *at.select_slider, *at.number_input, *at.text_input, *at.toggle)
    parts += [w.label for w in widgets] + [str(getattr(w, "help", "") or "") for w in widgets]
    return re.sub(r"`[^`]*`", "", "\n".join(parts))  # code spans (function names in "Show the code") are code


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_no_word_the_reader_has_not_been_shown(info):
    text = page_words(shown_page(info.path))
    assert not EVERYWHERE.findall(text), sorted({m.group(0) for m in EVERYWHERE.finditer(text)})
    if info.path in STORY:
        assert not ON_STORY_PAGES.findall(text), sorted(set(ON_STORY_PAGES.findall(text)))


def test_the_rules_catch_what_the_issue_found():
    for bad in ("see the seed article", "with its registry defaults", "a correctly rounded math.fsum", "(0 of 2 word(s) here)"):
        assert EVERYWHERE.search(bad), bad
    assert not EVERYWHERE.search("the article “What are Positional Embeddings?”")

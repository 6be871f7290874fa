"""posenc.ui.md: outside text as inert Markdown, checked against the Markdown oracle (mdcheck) and by
round trip: the escaped text shows exactly the original (one line, length-capped), and renders no link,
image or autolink, whatever the text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mdcheck import rendered_links

from posenc.ui import md

ATTACKS = [
    "a` [Log in](http://evil.example/x) `",
    "![p](http://evil.example/p.png)",
    "<http://evil.example/a>",
    "<img src=http://evil.example/i.png>",
    "http://evil.example/b https://evil.example/c",
    "www.evil.example",
    "me@evil.example",
    "[r]: http://evil.example/r",
    "``` x ``` `` [q](http://evil.example/q)",
    "\\[x](http://evil.example/bs)",
    "a\n\n[Log in](http://evil.example/nl)",
]
_PUNCT = re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def shown(escaped: str) -> str:
    """What an escaped string displays: backslash escapes resolved, word joiners invisible."""
    return re.sub(rf"\\([{_PUNCT}])", r"\1", escaped).replace("\u2060", "")


def code_content(span: str) -> str:
    fence = re.match(r"`+", span).group(0)
    inner = span[len(fence):-len(fence)]
    return inner[1:-1] if inner.startswith(" ") and inner.endswith(" ") and inner.strip(" ") else inner


@pytest.mark.parametrize("attack", ATTACKS)
def test_attacks_are_links_raw_and_text_escaped(attack):
    assert rendered_links(attack) or rendered_links("to `" + attack + "` instead")  # the oracle sees the raw attack
    assert rendered_links(md.escape(attack, limit=None)) == []
    assert rendered_links("to " + md.code(attack, limit=None) + " instead") == []
    assert shown(md.escape(attack, limit=None)) == md.one_line(attack, limit=None)
    assert code_content(md.code(attack, limit=None)) == md.one_line(attack, limit=None)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60)
       | st.lists(st.sampled_from(list("[]()<>!`\\*_~$:/@.#-+= \n") + ["http", "www", "evil.example", "1."]),
                  max_size=30).map("".join))
def test_any_text_is_inert_and_shows_itself(text):
    esc, span = md.escape(text, limit=None), md.code(text, limit=None)
    assert rendered_links(esc) == [] and rendered_links(f"a {span} b {esc}") == []
    line = md.one_line(text, limit=None)
    assert shown(esc) == line and "\n" not in esc
    assert span == "(empty)" if text == "" else code_content(span) == line


def test_one_line_shows_hidden_characters_and_caps_the_length():
    assert md.one_line("a\nb\tc\u202ed\u2028") == "a\\x0ab\\x09c\\u202ed\\u2028"
    assert md.one_line("x" * 100, 10) == "xxxxxxx..."
    assert md.escape("plain words, 1.5e3 and max_len = 512") == "plain words, 1.5e3 and max_len = 512"  # nothing to escape
    assert md.code("ok.npy") == "`ok.npy`" and md.code("a`b") == "``a`b``" and md.code("`x`") == "`` `x` ``"

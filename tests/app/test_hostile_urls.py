"""Hostile links: hypothesis-generated query strings on every page.

Wrong types, huge numbers, negative sizes, NaN/inf, unknown keys, very long values and repeated
keys.  Every run must end without an exception; every rejected value of a control the page knows
must be answered with a visible note naming its key; and no link value ever renders as a link or an
image (``mdcheck.live_links``).  12 cases per page by default, the same 12 on every run (each an AppTest run of ~0.25 s,
up to 6 s where a typed text runs the real model: at 25 this file took 157 worker-seconds of the suite's 1,944, 2026-12-07); set
HYPOTHESIS_PROFILE=deep for 500.
Then Markdown injection on purpose: every key a page binds, and an unknown one, set to crafted values
(a "Log in" link breaking out of a code span, an image the browser would fetch, autolinks, bare URLs,
an e-mail address, a reference definition) -- accepted by a text control or refused by the others,
the value must show as text wherever it lands (notes, captions, labels, errors, tooltips).
"""

from __future__ import annotations

import os

import pytest
from apphelpers import open_page, shown_page
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mdcheck import live_links

from posenc.ui.pages import PAGES

pytestmark = pytest.mark.warm_caches  # tests/conftest.py: runs after another page sweep reuse its caches

settings.register_profile("ci", max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
settings.register_profile("deep", max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")

HOSTILE_VALUES = [
    "", "abc", "nan", "NaN", "inf", "-inf", "1e308", "-1e308", "99999999999999999999", "-5", "-1", "0",
    "0.5", "1.5e3", "true", "false", "None", "[]", "{}", "%00", "' OR 1=1 --", "<script>alert(1)</script>",
    "é€😀", "x" * 5000, "9" * 400, "1,000", "0x10", " 7 ", "1e-320",
]

_known: dict[str, list[str]] = {}


def known_keys(path: str) -> list[str]:
    """The URL keys the page binds, read off a default run."""
    if path not in _known:
        at = shown_page(path)
        bound = at.session_state["_posenc_run"]["bound"] if "_posenc_run" in at.session_state else {}
        _known[path] = sorted(bound)
    return _known[path]


def queries(path: str):
    keys = known_keys(path) or ["n"]
    key = st.one_of(st.sampled_from(keys), st.sampled_from(["zz", "n_heads", "__proto__", "a" * 300]),
                    st.text(min_size=1, max_size=12))
    value = st.one_of(st.sampled_from(HOSTILE_VALUES), st.text(max_size=60),
                      st.integers(-10**12, 10**12).map(str), st.floats(allow_nan=True, allow_infinity=True).map(repr))
    one = st.one_of(value, st.lists(value, min_size=2, max_size=3))
    return st.dictionaries(key, one, min_size=1, max_size=4)


def _same(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return x == y  # NaN never equals: a NaN link value is always a rejection


def _equivalent(raws: list[str], url_now: list[str]) -> bool:
    """The control took the link's value (possibly normalised, e.g. " 7 " -> 7)."""
    return len(raws) == len(url_now) and all(_same(a, b) for a, b in zip(sorted(raws), sorted(url_now)))


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_hostile_query_strings(info):
    path = info.path
    keys = set(known_keys(path))

    @settings(settings.get_profile(PROFILE))
    @given(query=queries(path))
    def run(query):
        at = open_page(path, query)
        assert not at.exception, (query, [e.value for e in at.exception])
        assert not live_links(at), (query, live_links(at))
        state = at.session_state["_posenc_run"] if "_posenc_run" in at.session_state else {"bound": {}}
        notes = "\n".join(w.value for w in at.warning) + "\n".join(c.value for c in at.caption)
        for key, raw in query.items():
            if key not in keys or key not in state["bound"]:
                continue
            raws = raw if isinstance(raw, list) else [raw]
            url_now = state["bound"][key][2]
            if not _equivalent(raws, url_now):
                assert f"`{key}`" in notes, (query, key, url_now, notes[:500])

    run()


# Each at most 40 characters, so text controls (the shortest takes 80) accept them and the page uses them.
INJECTIONS = [
    "x` [Log in](http://evil.example/a) `",
    "![p](http://evil.example/p.png) y",
    "<http://evil.example/c> www.evil.example",
    "http://evil.example/d me@evil.example",
    "[r]: http://evil.example/e\n[r] `` [q](",
]


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_link_values_never_render_links(info):
    keys = known_keys(info.path)
    for shift in range(len(INJECTIONS)):
        query = {key: INJECTIONS[(i + shift) % len(INJECTIONS)] for i, key in enumerate(keys)}
        query[INJECTIONS[shift].replace("\n", " ")] = INJECTIONS[shift]  # an unknown key: the caption quotes its name
        at = open_page(info.path, query)
        assert not at.exception, (query, [e.value for e in at.exception])
        assert not live_links(at), (info.path, query, live_links(at))
        shown = "\n".join(w.value for w in at.warning) + "\n".join(c.value for c in at.caption)
        assert "Ignored link parameter(s)" in shown, shown[-500:]


# Found by HYPOTHESIS_PROFILE=deep: the address bar wrote base = 1000001 back as "1e+06" (":g" keeps 6 digits),
# so the link reopened another value.  Every float a page binds must come back exactly.
@pytest.mark.parametrize(("path", "key", "raw"), [
    ("pages/precision.py", "base", "1000001"), ("pages/rope.py", "base", "123456.75"),
    ("pages/context_extension.py", "s", "4.25"), ("pages/context_extension.py", "base", "999999999"),
])
def test_a_float_in_a_link_comes_back_exactly(path, key, raw):
    at = open_page(path, {key: raw})
    assert not at.exception
    value, _, url = at.session_state["_posenc_run"]["bound"][key]
    assert value == float(raw) and len(url) == 1 and float(url[0]) == float(raw), (value, url)

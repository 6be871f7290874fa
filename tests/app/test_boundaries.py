"""Every legal setting works: each page at the edges of every control's range, through its link.

For every page the controls say what they offer (``posenc.ui.controls.control_specs``: a range's
smallest and largest value, a select's options, a multiselect's options and limit, a text's length).
The test opens the page, through the URL, at

- each control's minimum and its maximum (the others at their defaults),
- all minima at once and all maxima at once,
- every option of every select (a select slider of more than 12 values: its two ends and its middle),
- the boundary pairs where one control bounds another: a control whose range or options changed when
  another was set to an edge is then set to the edges of its new range (heads = 1 and head = 1;
  d = 4 and the pair index at 1; 256 buckets and the smallest max distance they allow) -- and to its
  old extreme, now outside the range, which must be noted and never crash;

and asserts: no exception, no error message, every value the link set was taken (or, where another
control fixed it, noted), and every key number (st.metric) finite.  One test per page; AppTest runs of
a page share posenc's cache, so repeated views are not recomputed.
"""

from __future__ import annotations

import re

import pytest
from apphelpers import open_page, shown_page

from posenc.ui.pages import PAGES

pytestmark = pytest.mark.warm_caches  # tests/conftest.py: runs after another page sweep reuse its caches

TIMEOUT = 300
MANY = 12  # a select slider with more values is tried at its ends and its middle
NOT_FINITE = re.compile(r"(?i)\bnan\b|\binf(inity)?\b|∞")
# Key numbers that are infinite by design, with why.
EXPECTED_NONFINITE = {
    # a causal mask moved under the permutation: a masked logit (-inf) now faces a finite one
    "attention_order": re.compile(r"^∞ \(a mask moved\)$"),
}
# Errors a legal setting may show, with why: the page teaches a limit of the scheme itself.
EXPECTED_ERRORS = {
    # a learned table has 512 rows: asked for more positions, the page says so (the other schemes still draw)
    "similarity": re.compile(r"max\\?_len = 512"),
}


def _run(path: str, query: dict):
    at = open_page(path, query, timeout=TIMEOUT) if query else shown_page(path)  # the defaults: read only
    state = at.session_state["_posenc_run"] if "_posenc_run" in at.session_state else {"bound": {}, "specs": {}, "notes": []}
    return at, state


def _text_max(spec) -> str:
    seed = spec["default"] or "word"
    return (seed + " ") * (spec["max_chars"] // (len(seed) + 1)) + seed[: spec["max_chars"] % (len(seed) + 1)]


def edges(spec) -> tuple[object, object] | None:
    """(minimum, maximum) as link values, or None for a control without an order."""
    kind = spec["kind"]
    if kind == "range":
        return spec["lo_url"], spec["hi_url"]
    if kind == "options" and spec["ordered"]:
        return spec["options"][0], spec["options"][-1]
    if kind == "options" and spec["options"] == ["false", "true"]:
        return "false", "true"
    if kind == "multi":  # a link names at least one option
        top = spec["max_selections"] or len(spec["options"])
        return spec["options"][:1], spec["options"][:top]
    if kind == "text":
        return "", _text_max(spec)
    return None


def inside(spec, value) -> bool:
    """Whether the link value ``value`` is one the control offers."""
    if spec["kind"] == "range":
        return float(spec["lo"]) <= float(value) <= float(spec["hi"])
    if spec["kind"] in ("options", "multi"):
        return all(v in spec["options"] for v in (value if isinstance(value, list) else [value]))
    return True


def options(spec) -> list:
    if spec["kind"] == "options":
        opts = spec["options"]
        if spec["ordered"] and len(opts) > MANY:
            return [opts[len(opts) // 2]]  # the ends are the minimum and maximum
        return list(opts)
    if spec["kind"] == "multi":  # each option shown beside the default's first choice
        first = spec["default"][:1]
        return [[o] if o in first else first + [o] for o in spec["options"]]
    return []


def check(path: str, query: dict, *, outside: tuple[str, ...] = ()) -> dict:
    """Open ``path`` at ``query``; assert it works; return the run's control registry (bound values, specs)."""
    at, state = _run(path, query)
    where = (path, query)
    assert not at.exception, (where, [e.value for e in at.exception])
    errors = [e.value for e in at.error]
    allowed = EXPECTED_ERRORS.get(path.split("/")[-1][:-3])
    unexpected = [e for e in errors if not (allowed and allowed.search(e))]
    texts = any(state["specs"].get(k, {}).get("kind") == "text" for k in query)
    if not texts:  # a typed text may be one the page answers with a message ("at most 64 tokens")
        assert not unexpected, (where, unexpected)
    by_design = EXPECTED_NONFINITE.get(path.split("/")[-1][:-3])
    for label, value in ((m.label, m.value) for m in at.metric):
        assert not NOT_FINITE.search(str(value)) or (by_design and by_design.search(str(value))), (where, label, value)
    notes = "\n".join(state["notes"])
    for key in outside:
        assert f"`{key}`" in notes, (where, key, notes)
    for key, raw in query.items():
        if key in outside or key not in state["bound"]:
            continue
        spec = state["specs"][key]
        url = state["bound"][key][2]
        wanted = raw if isinstance(raw, list) else [raw]
        if spec.get("fixed"):
            continue  # another control fixed it: a note says so if the link wanted another value
        assert sorted(url) == sorted(str(w) for w in wanted), (where, key, url)
    return state


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_every_legal_setting_works(info):
    path = info.path
    state = check(path, {})
    base = state["specs"]
    defaults = {key: url if isinstance(value, list) else url[0] for key, (value, _, url) in state["bound"].items()}
    cases: list[dict] = []
    mins, maxs = {}, {}
    for key, spec in base.items():
        e = edges(spec)
        if e is not None:
            lo, hi = e
            if spec["kind"] != "text":
                mins[key], maxs[key] = lo, hi
            cases += [{key: lo}, {key: hi}]
        cases += [{key: o} for o in options(spec)]
    seen, unique = set(), []
    for query in cases:  # each distinct setting once; the defaults are the base run
        (key, value), = query.items()
        ident = (key, str(value))
        if ident not in seen and value != defaults.get(key):
            seen.add(ident)
            unique.append(query)
    cases = unique
    specs_after: list[tuple[dict, dict]] = []
    for query in cases:
        specs_after.append((query, check(path, query)["specs"]))
    specs_after.append((mins, check(path, mins)["specs"]))
    specs_after.append((maxs, check(path, maxs)["specs"]))
    # boundary pairs: a control whose range moved when another was set to an edge
    tried = 0
    for query, specs in specs_after:
        for key, spec in specs.items():
            if key in query or key not in base or spec == base[key] or edges(spec) is None:
                continue
            lo, hi = edges(spec)
            old_lo, old_hi = edges(base[key])
            for value in dict.fromkeys([lo, hi]):
                check(path, {**query, key: value})
            for value in (old_lo, old_hi):
                if not inside(spec, value):
                    check(path, {**query, key: value}, outside=(key,))  # now outside the range: noted, not a crash
            tried += 1
    print(f"{info.url_path}: {len(cases) + 3} runs, {tried} dependent pairs")

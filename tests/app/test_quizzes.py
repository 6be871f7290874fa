"""Exercises ask before they tell, on every page: before the reveal no metric, text or table cell
shows the answer, and moving a control turns the reveal off again (a new question, unanswered).

The answer is read from the page itself (reveal, then parse "**Answer: X.**"), so the test needs
no knowledge of each page.  A figure that draws an exercise's answer is declared by the page
(``quiz_figure(key, chart key, field)``): after the reveal it must be drawn, and before it no drawn
figure may hold the answer in that field.  Other charts are figures the reader predicts *from*.  A printed number "gives the answer away" when the
answer rounds to it and it carries at least three significant digits (or is the answer itself, as
a metric): "22" in "position 22" is not a leak, "6,350" above "how many times larger?" is.
"""

from __future__ import annotations

import math
import re

import pytest
from apphelpers import chart_frame, charts, open_page, shown_frames
from streamlit.testing.v1 import AppTest

from posenc.lab.results import load_tasks
from posenc.ui.pages import PAGES
from posenc.ui.quiz import FIGURES, TABLES

pytestmark = pytest.mark.warm_caches  # tests/conftest.py: runs after another page sweep reuse its caches

ANSWER = re.compile(r"\*\*Answer: (.+?)\.\*\*")
NUMBER = re.compile(r"(?<![\w.])[-−]?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?(?![\w])")


def reveal_keys(at: AppTest) -> list[str]:
    return [t.key[3:-7] for t in at.toggle if t.key and t.key.startswith("ex_") and t.key.endswith("_reveal")]


def _texts(at: AppTest) -> list[str]:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [x.value for x in (*at.info, *at.success, *at.warning, *at.error)]
    return parts


def _metric_values(at: AppTest) -> list[str]:
    out = []
    for m in at.metric:
        out.append(m.value)
        if m.proto.delta:
            out.append(m.proto.delta)
    return out


def _cell(x) -> str:
    if isinstance(x, float) and math.isfinite(x) and x == int(x):
        return str(int(x))  # 20.0 in a table of bucket ids is "20", not three significant digits
    return str(x)


def _cells(at: AppTest) -> list[str]:
    out = []
    for df in shown_frames(at):
        for i in range(df.shape[1]):  # by place: two columns may share a header ("↳ measured")
            out += [_cell(x) for x in df.iloc[:, i].tolist()]
    return out


def _parse(token: str) -> tuple[float, float] | None:
    """(value, half a unit of its last digit) of a printed number, or None."""
    t = token.replace("−", "-").replace(",", "")
    try:
        value = float(t)
    except ValueError:
        return None
    mantissa, _, exp = t.lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return value, 0.5 * 10.0 ** (-decimals + (int(exp) if exp else 0))


def _significant(token: str) -> int:
    digits = token.lower().split("e")[0].replace(",", "").replace(".", "").lstrip("-−").lstrip("0")
    return len(digits)


def leaks(at: AppTest, answer: str) -> list[str]:
    """Every place on the page that shows ``answer`` (before the reveal there must be none): a
    printed number with at least three significant digits (or an integer of 100 or more) that
    agrees with the answer to the coarser of the two precisions; an integer answer (a count) only where the number
    printed is that integer to its own precision."""
    parsed = _parse(answer)
    if parsed is None:  # a text answer (multiple choice): only the answer line itself would show it
        return [t for t in _texts(at) if f"Answer: {answer}" in t]
    a, a_half = parsed
    count = "." not in answer and "e" not in answer.lower() and a == round(a)  # an integer answer: a count
    found = []
    for where, strings in (("metric", _metric_values(at)), ("text", _texts(at)), ("cell", _cells(at))):
        for s in strings:
            for token in NUMBER.findall(s):
                p = _parse(token)
                if p is None or not math.isfinite(p[0]):
                    continue
                if not (_significant(token) >= 3 or (abs(p[0]) >= 100 and p[0] == round(p[0]))):
                    continue
                # a count is shown only by that integer (11.0 shows 11; 11.31, another quantity, does not)
                if abs(p[0] - a) <= (p[1] if count else max(p[1], a_half)) * (1 + 1e-9):
                    found.append(f"{where} {token!r} in {s[:80]!r}")
    return found


def declared_figures(at: AppTest, key: str) -> list[tuple[str, str]]:
    """The (chart key, field) pairs exercise ``key`` declared as drawing its answer (``quiz.quiz_figure``)."""
    try:
        return list(at.session_state[FIGURES].get(key, []))
    except KeyError:
        return []


def figure_leaks(at: AppTest, key: str, answer: str) -> list[str]:
    """Every declared figure drawn now whose answer field holds the answer: a number within half a unit of the
    answer's last digit, or the answer's text (a figure not drawn at all holds nothing)."""
    parsed = _parse(answer)
    drawn = set(charts(at))
    found = []
    for chart_key, field in declared_figures(at, key):
        if chart_key not in drawn:
            continue
        frame = chart_frame(at, chart_key)
        if field not in frame.columns:
            continue
        for v in frame[field].tolist():
            if parsed is None:
                hit = str(v) == answer
            else:
                try:
                    hit = abs(float(v) - parsed[0]) <= parsed[1] * (1 + 1e-9)
                except (TypeError, ValueError):
                    hit = False
            if hit:
                found.append(f"figure {chart_key!r} field {field!r} draws {v!r}")
                break
    return found


def declared_columns(at: AppTest, key: str) -> list[str]:
    """The table columns (headers as displayed) exercise ``key`` declared as holding its answer (``quiz.quiz_column``)."""
    try:
        return list(at.session_state[TABLES].get(key, []))
    except KeyError:
        return []


def _same(value, answer: str) -> bool:
    """``value`` (a table or figure cell) is ``answer``: within half a unit of its last digit, or its text."""
    parsed = _parse(answer)
    if parsed is None:
        return str(value) == answer
    try:
        return abs(float(value) - parsed[0]) <= parsed[1] * (1 + 1e-9)
    except (TypeError, ValueError):
        return False


def table_leaks(at: AppTest, key: str, answer: str) -> list[str]:
    """Every cell of a declared column that holds the answer, in every table drawn now -- small integers included,
    which ``leaks`` skips ("20" may name a position; in a column of bucket ids, 10 is the bucket asked for)."""
    found = []
    for column in declared_columns(at, key):
        for df in shown_frames(at):
            for i in (i for i, c in enumerate(df.columns) if c == column):
                found += [f"table column {column!r} holds {v!r}" for v in df.iloc[:, i].tolist() if _same(v, answer)]
    return found


def quotient_leaks(at: AppTest, answer: str, rel: float) -> list[str]:
    """Two numbers on the page (metric, text, cell) whose quotient is the answer within ``rel``: the reader divides."""
    numbers = {}
    for s in _metric_values(at) + _texts(at) + _cells(at):
        for token in NUMBER.findall(s):
            p = _parse(token)
            if p is not None and math.isfinite(p[0]) and p[0] != 0:
                numbers[token] = p[0]
    a = _parse(answer)[0]
    return [f"{x!r} / {y!r}" for x, u in numbers.items() for y, v in numbers.items() if abs(u / v - a) <= rel * abs(a)]


def pair_leaks(at: AppTest, answer: str) -> list[str]:
    """Where the page names the pair (0, answer): position 0 and its first return (the single sine, one sin+cos pair).
    In words ("(0, 31)", "0 and 31", "0 & 52") in a metric, text, cell or a chart's text field, or as a row of a chart's
    data or a table with position i = 0 and position j = the answer (a dashed link, a listed pair)."""
    said = re.compile(rf"(?<![\d.])0\s*(?:,|and|&)\s*{re.escape(answer)}(?![\d.])")
    strings = _metric_values(at) + _texts(at) + _cells(at)
    frames = [(f"chart {k!r}", d) for k, c in charts(at).items() for d in c["data"].values()]
    frames += [("a table", d) for d in shown_frames(at)]
    found = [f"{s[:60]!r} names the pair" for s in strings if said.search(s)]
    for where, d in frames:
        for col in d.columns:
            if d[col].dtype.kind not in "biufcmM":  # text, whatever the frame stores it as
                found += [f"{where} field {col!r}: {v!r}" for v in d[col].astype(str) if said.search(v)][:1]
        i, j = (next((c for c in d.columns if c in names), None) for names in (("i", "position i"), ("j", "position j")))
        if i and j and ((d[i].astype(str) == "0") & (d[j].astype(str) == answer)).any():
            found.append(f"{where}: a row ({i} = 0, {j} = {answer})")
    return found


def square_leaks(at: AppTest, answer: str) -> list[str]:
    """Printed numbers (metric, text, cell; three significant digits or more) that are the answer squared, to the coarser
    of their own precision and the answer's: the reader takes a square root."""
    a, a_half = _parse(answer)
    found = []
    for s in _metric_values(at) + _texts(at) + _cells(at):
        for token in NUMBER.findall(s):
            p = _parse(token)
            if p is not None and math.isfinite(p[0]) and _significant(token) >= 3 and \
                    abs(p[0] - a * a) <= max(p[1], 2 * abs(a) * a_half) * (1 + 1e-9):
                found.append(f"{token!r} in {s[:80]!r} is {answer} squared")
    return found


def count_leaks(at: AppTest, answer: str, label: str, below: float) -> list[str]:
    """Metrics labelled with ``label`` that all print a number: counting those below ``below`` gives the answer."""
    values = [m.value for m in at.metric if label in m.label]
    numbers = [p[0] for v in values if (p := _parse(v)) is not None]
    if not values or len(numbers) < len(values):
        return []
    count = sum(x < below for x in numbers)
    return [f"{count} of the metrics {label!r} {values} are below {below:g}"] if str(count) == answer else []


PAST_L = {  # which rows of a lab figure lie past the training length L (the gap per length's first length is L)
    "length": lambda f: f["length"] > f["length"].min(),
    "unseen": lambda f: f["unseen"] > 0,  # the bands: the share of the band's positions not seen in training
}
RANK = " < "  # an ordering answer: the schemes, smallest gap first


def rank_leaks(at: AppTest, key: str, answer: str) -> list[str]:
    """What ranks the schemes of an ordering answer ("T5 buckets < Sinusoidal < RoPE") before its reveal: a value of one
    of them past L in a figure the exercise declares (a point of the gap per length, a band, a position past L), a
    number past L in a table column it declares, or a text that names them in that order."""
    names = answer.split(RANK)
    found = [t[:80] for t in _texts(at) if answer in t]
    drawn = set(charts(at))
    lengths = chart_frame(at, "lab_gap")["length"] if "lab_gap" in drawn else None
    for chart_key, field in declared_figures(at, key):
        if chart_key not in drawn:
            continue
        frame = chart_frame(at, chart_key)
        if "position" in frame.columns:
            past = frame["position"] >= lengths.min()
        else:
            past = next(rule(frame) for column, rule in PAST_L.items() if column in frame.columns)
        rows = frame[past & frame["scheme"].isin(names) & frame[field].notna()]
        found += [f"figure {chart_key!r} draws {s} past L" for s in dict.fromkeys(rows["scheme"])]
    for column in declared_columns(at, key):
        for v in shown_frames(at):
            if column in v.columns and "scheme" in v.columns:
                cells = v.loc[v["scheme"].isin(names), column]
                found += [f"table column {column!r} holds {x!r}" for x in cells if re.search(r"\d", str(x))]
    return found


CLAIM = "Extrapolates beyond training length?"  # the article's column (Compare: the article's table, measured)
CLAIM_VERDICT = re.compile(r"^(confirmed|nuanced|contradicted) · ")
LAB_VERDICT = re.compile(r"^(holds|degrades|worse than a uniform guess) · ")


def claim_leaks(at: AppTest) -> list[str]:
    """What tells which of the article's extrapolation claims the lab confirms before the reveal: a verdict in the
    measured cell beside the article's claim, or a lab verdict (which the rule under the table reads as one) in any
    table."""
    found = []
    for v in shown_frames(at):
        if CLAIM in v.columns:
            measured = v.iloc[:, list(v.columns).index(CLAIM) + 1]  # by place: two "↳ measured" headers read alike
            found += [f"beside {claim!r}: {cell[:40]!r}" for claim, cell in zip(v[CLAIM], measured.astype(str)) if CLAIM_VERDICT.match(cell)]
        for col in v.columns:
            hits = [str(x) for x in v[col] if LAB_VERDICT.match(str(x))]
            found += [f"column {col!r}: {hits[0][:40]!r}"] if hits else []
    return found


# Exercises whose answer is worked out from numbers the page prints (the issue: "8e+06 and 0.16 on screen", "the four
# metrics at the top answer 'how many below 10⁻⁶'"): what the reader would compute, and how exactly.
DERIVED = {
    "raw_ratio": lambda at, answer: quotient_leaks(at, answer, rel=0.05),  # the exercise's own tolerance: 5 %
    "similarity_relative": lambda at, answer: count_leaks(at, answer, "deviation from translation invariance", 1e-6),
    "lab_rank": lambda at, answer: rank_leaks(at, "lab_rank", answer),  # "rank the schemes at 4L before the lab chart"
    "claims_confirmed": lambda at, answer: claim_leaks(at),  # "say which of the article's four claims the lab will confirm"
    "ext_yarn_af": lambda at, answer: square_leaks(at, answer),  # YaRN's logit scale is its attention factor squared
    "rope_bound0": lambda at, answer: quotient_leaks(at, answer, rel=0.01 / float(answer)),  # a bound over bound / bound(0)
    "first_return": lambda at, answer: pair_leaks(at, answer),  # the closest pair, ringed, linked or labelled: (0, answer)
}


# The figures (chart key, field) and table columns the issue saw carry an exercise's answer: its page must declare them
# (quiz_figure, quiz_column), so a page that stops declaring them fails instead of escaping the search.
CARRIERS = {
    "t5_rel": ((("t5_buckets", "bucket"), ("t5_matrix", "bucket")), ("bucket",)),
    "alibi_slope": ((("alibi_slopes", "slope"),), ("m",)),
    "lab_rank": ((("lab_gap", "gap"), ("lab_bands", "gap"), ("lab_positions", "gap")), ("4L = 128",)),
    "longest": ((("sinusoid_spectrum", "wavelength"), ("sinusoid_bases", "wavelength")), ()),  # hover the slowest pair
    "rope_bound0": ((("rope_decay", "value"),), ("bound",)),  # the bound's raw value at 0, in the tooltip and the table
}


def all_leaks(at: AppTest, key: str, answer: str) -> list[str]:
    """What shows exercise ``key``'s answer before its reveal: printed numbers, declared figures and table columns, and
    the numbers it is worked out from."""
    found = leaks(at, answer) + figure_leaks(at, key, answer) + table_leaks(at, key, answer)
    return found + (DERIVED[key](at, answer) if key in DERIVED else [])


def answers(at: AppTest, key: str) -> str:
    at.toggle(key=f"ex_{key}_reveal").set_value(True).run()
    shown = [m.value for m in at.markdown if "**Answer:" in m.value]
    assert shown, f"revealing {key} shows no answer"
    return ANSWER.search(shown[0]).group(1)


def _hide_all(at: AppTest, keys: list[str]) -> None:
    for k in keys:
        at.toggle(key=f"ex_{k}_reveal").set_value(False)
    at.run()


# Pages whose first slider sits in a section that reruns alone in the browser and redraws only its own exercises: the
# control the page's exercise depends on is moved instead (the lab's prediction: the task).
MOVE = {"pages/lab.py": ("task", lambda: list(load_tasks()))}


def move_a_control(at: AppTest, path: str | None = None) -> str | None:
    """Change the first bound slider (else select slider, else number input) of the page, or its ``MOVE`` control."""
    if path in MOVE and (picked := [s for s in at.segmented_control if s.key == MOVE[path][0]]):
        s = picked[0]
        s.set_value(next(o for o in MOVE[path][1]() if o != s.value)).run()
        return s.key
    for s in at.slider:
        if s.key and not s.key.startswith("ex_") and s.max != s.min:
            s.set_value(s.max if s.value != s.max else s.min).run()
            return s.key
    for s in at.select_slider:
        if s.key and len(s.options) > 1:
            s.set_value(s.options[-1] if str(s.value) != s.options[-1] else s.options[0]).run()
            return s.key
    for s in at.number_input:
        if s.key and not s.key.startswith("ex_"):
            s.increment().run()
            return s.key
    return None


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_no_answer_before_the_reveal_and_the_reveal_resets(info):
    at = open_page(info.path)
    keys = reveal_keys(at)
    if not keys:
        pytest.skip(f"{info.path} has no exercise")
    for key in keys:
        before = [t for t in _texts(at) if "Answer:" in t]
        assert not before, (key, before)
        answer = answers(at, key)  # reveal to learn the answer, hide again, then search the page for it
        drawn = set(charts(at))
        missing = [c for c, _ in declared_figures(at, key) if c not in drawn]
        assert not missing, (info.path, key, "a figure declared as drawing the answer is not drawn after the reveal", missing)
        figures, columns = CARRIERS.get(key, ((), ()))  # what the issue saw carry the answer: the page must declare it
        undeclared = [*set(figures) - set(declared_figures(at, key)), *set(columns) - set(declared_columns(at, key))]
        assert not undeclared, (info.path, key, "carries the answer but is not declared", undeclared)
        _hide_all(at, keys)
        assert not all_leaks(at, key, answer), (info.path, key, answer, all_leaks(at, key, answer))
    # move a control: every reveal goes off, and the new answers are hidden too
    for key in keys:
        at.toggle(key=f"ex_{key}_reveal").set_value(True)
    at.run()
    moved = move_a_control(at, info.path)
    assert moved is not None, f"{info.path}: no control to move"
    assert not at.exception, [e.value for e in at.exception]
    for key in reveal_keys(at):
        assert at.toggle(key=f"ex_{key}_reveal").value is False, (info.path, key, moved)
        assert not [m.value for m in at.markdown if "**Answer:" in m.value], (info.path, key, moved)
    for key in reveal_keys(at):
        answer = answers(at, key)
        _hide_all(at, reveal_keys(at))
        assert not all_leaks(at, key, answer), (info.path, key, moved, answer, all_leaks(at, key, answer))


EXTREMES = {
    # (8.31, 32, 0.01): the closest pair is (0, the answer); (1.0, 32, 0.05): (0, the answer) is among the 20 listed
    "pages/single_sine.py": [{"omega": "0.05", "eps": "0.1", "n": "8"}, {"omega": "10", "eps": "0.001", "n": "512"},
                             {"omega": "6.28", "eps": "0.01"}, {"omega": "3.14", "eps": "0.1"},
                             {"omega": "8.31", "eps": "0.01", "n": "32"}, {"omega": "1.0", "eps": "0.05", "n": "32"}],
    # (0.12, 64, 0.1): the closest pair is (0, the answer), labelled "0 & 52" on the circle
    "pages/sincos_pair.py": [{"omega": "0.05", "eps": "0.2", "n": "2048"}, {"omega": "10", "eps": "0.001", "n": "2"},
                             {"omega": "6.28", "eps": "0.001"}, {"omega": "0.12", "eps": "0.1", "n": "64"}],
    "pages/raw_index.py": [{"context": "16", "d": "1"}, {"context": "128", "d": "1024"}],
    "pages/index_length.py": [{"p": "64"}, {"p": "2", "s1": "a", "s2": ""}],
    "pages/sinusoid.py": [{"d": "2", "n": "2", "base": "1.5"}, {"d": "1024", "n": "4096", "base": "1000000000"}],
    "pages/attention_order.py": [{"scheme": "NoPE (causal mask only)"}, {"scheme": "RoPE", "d": "4"}, {"a": "a b", "b": "b a"}],
}


@pytest.mark.parametrize(("path", "query"), [(p, q) for p, qs in EXTREMES.items() for q in qs])
def test_answers_make_sense_at_the_extremes(path, query):
    """At the ends of every range the page still asks a question with a computed, hidden answer that
    the explanation supports: no "position 1" first return, no answer on the page before the reveal."""
    at = open_page(path, query)
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    for key in reveal_keys(at):
        answer = answers(at, key)
        explanation = next(m.value for m in at.markdown if "**Answer:" in m.value)
        assert "nan" not in explanation.lower() and "None" not in explanation, explanation
        if key == "first_return":
            assert answer != "1", explanation  # a neighbour is not a return
        _hide_all(at, reveal_keys(at))
        assert not all_leaks(at, key, answer), (path, query, key, answer, all_leaks(at, key, answer))


def test_the_leak_search_finds_what_the_issue_found_and_nothing_else():
    app = AppTest.from_string('''
import streamlit as st
st.metric("ratio", "6,350")
st.metric("wavelength", "54,410.14")
st.markdown("positions 11 and 55 differ by 0.000235; position 22 is ringed")
st.dataframe({"sum": ["[0.841, 0.540, 0.010, 1.000]"], "bucket": [20.0]})
''').run()
    assert leaks(app, "6350") == ["metric '6,350' in '6,350'"]
    assert leaks(app, "54410.1") and leaks(app, "54410.14")  # 6 significant digits or 7: the same number
    assert leaks(app, "0.000235") and leaks(app, "0.00023456")
    assert not leaks(app, "22") and not leaks(app, "20")  # a position or a bucket id named on the page is no answer
    assert not leaks(app, "0.843") and not leaks(app, "54,400")


def test_the_derived_leak_searches_find_what_the_issue_found():
    """Each of the issue's four remaining leaks, as the pages drew them, is found: the T5 table's bucket of −20 (10, a
    small integer the number search skips), head 9's slope in a declared column, "8e+06" and "0.16" whose quotient is
    the raw-index ratio, and four deviations of which three are below 10⁻⁶; the pages as they are now show none."""
    app = AppTest.from_string('''
import streamlit as st
from posenc.ui.quiz import quiz_column
quiz_column("t5_rel", "bucket"), quiz_column("alibi_slope", "m")
st.table({"bucket": [9, 10, 11], "covers": ["|rel| 12–15", "|rel| 16–22", "|rel| 23–31"]})
st.table({"head": [8, 9], "m": [0.00390625, 0.7071067811865476]})
st.metric("‖PE‖ there", "8e+06")
st.metric("token embedding ‖e‖ at init", "0.16")
for name, ti in (("Sinusoidal", "4.1e-16"), ("Learned", "0.61"), ("RoPE", "0"), ("ALiBi", "0")):
    st.metric(f"{name}: deviation from translation invariance", ti)
''').run()
    assert table_leaks(app, "t5_rel", "10") == ["table column 'bucket' holds 10"] and not leaks(app, "10")
    assert table_leaks(app, "alibi_slope", "0.70711") == ["table column 'm' holds 0.7071067811865476"]
    assert "'8e+06' / '0.16'" in DERIVED["raw_ratio"](app, "5e+07")
    assert DERIVED["similarity_relative"](app, "3") and not DERIVED["similarity_relative"](app, "2")
    assert not table_leaks(app, "t5_rel", "12") and not DERIVED["raw_ratio"](app, "6350")
    square = AppTest.from_string('import streamlit as st\nst.metric("YaRN logit scale", "1.2965")').run()  # Context extension's
    assert DERIVED["ext_yarn_af"](square, "1.1386") and not DERIVED["ext_yarn_af"](square, "1.1390")


def test_the_pair_search_finds_what_the_pages_drew():
    """The single sine at ω = 8.31, n = 32, ε = 0.01 hid "0 and 31" in its metric but printed "the ringed pair (0, 31)"
    under the chart and drew the link (0, 31); one sin+cos pair at ω = 0.12, n = 64, ε = 0.1 labelled the circle's start
    "0 & 52".  The pages as they are now show none of it (test_answers_make_sense_at_the_extremes)."""
    app = AppTest.from_string('''
import altair as alt, pandas as pd, streamlit as st
st.caption("Dashed links join the 1 closest of the 1 pairs within ε; the ringed pair (0, 31) is the closest of all.")
links = pd.DataFrame({"i": [0, 3], "j": [31, 40]})
st.vega_lite_chart(alt.Chart(links).mark_rule().encode(x="i:Q", x2="j:Q").to_dict() | {"usermeta": {"posenc_key": "a"}})
labels = pd.DataFrame({"t": [0, 4], "label": ["0 & 52", "4"]})
st.vega_lite_chart(alt.Chart(labels).mark_text().encode(x="t:Q", text="label:N").to_dict() | {"usermeta": {"posenc_key": "b"}})
st.dataframe(pd.DataFrame({"position i": [0], "position j": [22]}))
''').run()
    assert len(pair_leaks(app, "31")) == 2 and pair_leaks(app, "52") == ["chart 'b' field 'label': '0 & 52'"]
    assert pair_leaks(app, "22") == ["a table: a row (position i = 0, position j = 22)"]
    assert not pair_leaks(app, "40") and not pair_leaks(app, "4")  # (3, 40) and the label "4" name no return

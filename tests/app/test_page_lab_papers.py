"""The lab page's "Against the papers" table: posenc.lab.papers.rows of the shipped runs, shown once the page's
prediction is revealed (its shares past L would rank the schemes the prediction asks about) and never before."""

from __future__ import annotations

from apphelpers import assert_clean, open_page, text_of

from posenc.lab import papers
from posenc.views import lab_predict as predict

PAGE = "pages/lab.py"
TITLE = "Against the papers"


def _expanders(at):
    return [e for e in at.expander if e.label.startswith(TITLE)]


def test_the_papers_table_waits_for_the_prediction_then_shows_every_claim_and_its_computed_reading():
    at = open_page(PAGE)
    assert_clean(at)
    assert _expanders(at) == []
    at.toggle(key=f"ex_{predict.KEY}_reveal").set_value(True).run()
    assert_clean(at)
    (box,) = _expanders(at)
    shown = box.table[0].value
    rows = papers.rows()
    assert list(shown["reading"]) == [r["reading"] for r in rows] and list(shown["paper"]) == [r["paper"] for r in rows]
    assert papers.NOT_COMPARED in set(shown["reading"])  # Press et al.'s tables, not read
    assert "never a reproduction" in text_of(at)

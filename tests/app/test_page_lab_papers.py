"""The lab page's "Against the papers" table: posenc.lab.papers.rows of the shipped runs, shown once the page's
prediction is revealed (its shares past L would rank the schemes the prediction asks about) and never before, in a box
that computes them only once it is opened."""

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
    assert box.markdown == [] and not box.proto.expanded  # closed, and nothing computed in it until it opens
    at.session_state["lab_papers"] = True  # opened (posenc.ui.section.when_open)
    at.run()
    assert_clean(at)
    (box,) = _expanders(at)
    shown = "\n".join(m.value for m in box.markdown)
    items = [line for line in shown.splitlines() if line.startswith("- **")]
    rows = papers.rows()
    assert len(items) == len(rows) and "$" not in shown  # one item per claim; no text Streamlit would read as math
    for item, r in zip(items, rows):
        assert item.startswith(f"- **{r['paper']}**: {r['claim']}") and f"**Reading: {r['reading']}.**" in item
    assert f"**Reading: {papers.NOT_COMPARED}.**" in shown  # Press et al.'s tables, not read
    assert "never a reproduction" in text_of(at)

"""Compare schemes' prediction (issue 40: "say which of the article's four claims the lab will confirm"): asked before the
article's table, answered from the lab's shipped verdicts, and until its reveal neither that table's measured verdicts
nor the lab's verdict columns of the full table are shown; once revealed they are (so the leak search is not vacuous)."""

from __future__ import annotations

import pandas as pd
from apphelpers import assert_clean, open_page, tables
from test_quizzes import claim_leaks

from posenc.views.claims import ARTICLE_ROWS, article_table
from posenc.views.lab_predict import CLAIMS_KEY, NONE, SEVERAL, claims_quiz

PAGE = "pages/compare.py"


def test_asked_first_hidden_until_revealed_then_shown():
    view = article_table(512, 64, 8, 512)["frame"]
    confirmed = [r[0] for r, v in zip(ARTICLE_ROWS, view["measured: extrapolates"]) if v.startswith("confirmed · ")]
    at = open_page(PAGE)
    assert_clean(at)
    asked = [m.value for m in at.markdown if "Predict, then reveal" in m.value]
    assert "which of its four" in asked[0]  # the first exercise on the page, before the article's table
    assert not claim_leaks(at), claim_leaks(at)
    assert list(tables(at)["compare_article"].iloc[:, 4]) == ["?"] * len(ARTICLE_ROWS)
    assert not [c for c in at.dataframe[0].value.columns if c.startswith(("verdict_", "beyond_L_"))]
    assert "contradict “Good with scaling tricks”" not in "\n".join(m.value for m in at.markdown)  # the intro said it
    at.toggle(key=f"ex_{CLAIMS_KEY}_reveal").set_value(True).run()
    assert_clean(at)
    shown = next(m.value for m in at.markdown if "**Answer:" in m.value)
    assert shown.startswith(f"**Answer: {confirmed[0]}: “" if len(confirmed) == 1 else f"**Answer: {NONE if not confirmed else SEVERAL}.**")
    assert len(claim_leaks(at)) >= len(ARTICLE_ROWS)  # every verdict beside the claims, and the lab's columns
    assert [c for c in at.dataframe[0].value.columns if c.startswith("verdict_")]


def test_the_answer_follows_the_verdicts():
    rows = pd.DataFrame({"Scheme": ["A", "B"], "Extrapolates beyond training length?": ["Yes", "No"],
                         "measured: extrapolates": ["confirmed · x", "nuanced · y"]})
    assert claims_quiz(rows)["answer"] == "A: “Yes”"
    assert claims_quiz(rows.assign(**{"measured: extrapolates": ["confirmed · x", "confirmed · y"]}))["answer"] == SEVERAL
    q = claims_quiz(rows.assign(**{"measured: extrapolates": ["nuanced · x", "contradicted · y"]}))
    assert q["answer"] == NONE and q["answer"] in q["options"] and q["cells"] == [(0, "measured: extrapolates"), (1, "measured: extrapolates")]

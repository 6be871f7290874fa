"""The Extrapolation lab's prediction (issue 40: "rank the schemes at 4L before the lab chart"): asked above the charts,
answered from the shipped results, and until its reveal no figure, table, headline or wrap-up ranks the schemes it asks
about; once revealed, everything is drawn whole (so the leak search below is not vacuous)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from apphelpers import assert_clean, chart_frame, charts, open_page, tables, text_of
from test_quizzes import RANK, rank_leaks

from posenc.lab.positions import NAMES
from posenc.lab.results import load_task, load_tasks
from posenc.views import lab_predict as predict
from posenc.views.lab import finding, overview, top_sentence
from posenc.views.takeaways import lab_takeaway

PAGE = "pages/lab.py"
KEY = predict.KEY
HEADLINE_ICON = ":material/flag:"


def _oracle(task: str) -> tuple[list[str], str]:
    """The asked schemes (the article's rows, as the lab names them) and their order at 4L, straight from the file's
    per-seed means, independent of the view."""
    res = load_tasks()[task]
    n = 4 * res["config"]["train_len"]
    asked = ["sinusoidal", "t5", "rope"]  # Sinusoidal absolute · Relative position bias (T5, ALiBi) · RoPE; learned: none past L
    mean = {s: np.mean([r["mean"][str(n)]["gap"] for r in res["runs"][s].values()]) for s in asked}
    return [NAMES[s] for s in asked], RANK.join(NAMES[s] for s in sorted(asked, key=mean.get))


def _reveal(at):
    at.toggle(key=f"ex_{KEY}_reveal").set_value(True).run()
    assert_clean(at)
    return at


def test_asked_above_the_charts_with_the_answer_computed_from_the_results():
    names, answer = _oracle("markov")
    spec = predict.ranking(load_task("markov"))
    assert spec["names"] == names and spec["answer"] == answer and answer in spec["options"]
    assert len(spec["options"]) == 6 and len(set(spec["options"])) == 6
    at = open_page(PAGE)
    assert_clean(at)
    quiz = next(m for m in at.markdown if "Predict, then reveal" in m.value and "4L = 128" in m.value)
    assert all(n in quiz.value for n in names)
    assert not [m.value for m in at.markdown if "**Answer:" in m.value]
    at = _reveal(at)
    shown = next(m.value for m in at.markdown if "**Answer:" in m.value)
    assert f"**Answer: {answer}.**" in shown and "overlap over seeds" in shown  # Sinusoidal and RoPE: seeds 0.670–0.721, 0.710–0.743


def test_until_the_reveal_nothing_ranks_them_and_after_it_everything_is_drawn():
    names, answer = _oracle("markov")
    at = open_page(PAGE)
    assert_clean(at)
    full = top_sentence([finding(load_task(t)) for t in load_tasks()])
    assert at.info[0].value != full and full not in text_of(at)  # the top sentence names their verdict classes: it waits
    assert not rank_leaks(at, KEY, answer), rank_leaks(at, KEY, answer)
    gap = chart_frame(at, "lab_gap")
    assert set(gap["scheme"].dropna()) == {NAMES[s] for s in load_tasks()["markov"]["runs"]}  # every scheme is drawn, ...
    assert gap[gap["scheme"].isin(names)]["length"].max() == 32  # ... the asked ones up to L
    assert "lab_ext" not in charts(at)  # the RoPE model's chart starts from its own gap past L
    table = tables(at)["lab_overview"]
    assert set(table[table["scheme"].isin(names)]["4L = 128"]) == {"?"}
    assert all(f"{n}: its gaps past L are hidden" in text_of(at) for n in names)
    assert lab_takeaway(overview(load_task("markov")))["shows"][0] in text_of(at)  # the wrap-up counts every scheme
    at = _reveal(at)
    assert at.info[0].value == full
    leaks = rank_leaks(at, KEY, answer)  # the same search finds them once they are drawn
    assert {f"figure {c!r} draws {n} past L" for c in ("lab_gap", "lab_bands", "lab_positions") for n in names} <= set(leaks)
    assert any("table column '4L = 128'" in x for x in leaks)
    assert "lab_ext" in charts(at), sorted(charts(at))
    assert not any("its gaps past L are hidden" in c.value for c in at.caption)


def test_moving_the_task_asks_again_on_the_new_task():
    if len(load_tasks()) < 2:
        pytest.skip("one shipped task")
    names, answer = _oracle("induction")
    at = _reveal(open_page(PAGE))
    at.segmented_control(key="task").set_value("induction").run()
    assert_clean(at)
    assert at.toggle(key=f"ex_{KEY}_reveal").value is False
    assert not rank_leaks(at, KEY, answer)
    at = _reveal(at)
    assert f"**Answer: {answer}.**" in next(m.value for m in at.markdown if "**Answer:" in m.value)


def test_hide_run_stops_only_the_asked_schemes_at_L():
    run = load_task("markov")
    res = run["results"]
    hid = predict.hide_run(run, ["rope"])
    assert hid["weights"] is run["weights"] and all(hid["results"]["runs"][s] is res["runs"][s] for s in res["runs"] if s != "rope")
    for r in hid["results"]["runs"]["rope"].values():
        assert list(r["mean"]) == ["32"] and len(r["gap_by_position"]) == 32 and r["extensions"] == {}
    assert hid["results"]["undefined"]["rope"] == predict.HIDDEN_WHY and "rope" not in res["undefined"]  # no write-through
    assert len(res["runs"]["rope"]["0"]["gap_by_position"]) == 256


def test_the_helpers_leave_a_revealed_page_alone():
    table = pd.DataFrame({"scheme": ["RoPE", "ALiBi"], "L = 32": ["0.007", "0.020"], "2L = 64": ["0.4", "0.02"]})
    ask = {"names": ["RoPE"], "hidden": True}
    assert list(predict.blank(table, ask)["2L = 64"]) == ["?", "0.02"] and list(predict.blank(table, ask)["L = 32"]) == ["0.007", "0.020"]
    assert predict.blank(table, {**ask, "hidden": False}) is table and predict.blank(table, None) is table
    sweep = pd.DataFrame({"scheme": ["RoPE", "ALiBi"], "order": [1, 1]})
    assert list(predict.hidden_sweep(sweep, ask)["scheme"]) == ["ALiBi"] and predict.hidden_sweep(sweep, None) is sweep
    t = {"headline": "X stays closest.", "shows": []}
    assert predict.takeaway(t, None) is t and predict.takeaway(t, {**ask, "hidden": False}) is t
    whole = lab_takeaway(overview(load_task("markov")))
    hid = predict.takeaway(t, {**ask, "names": ["A", "B"], "run": load_task("markov")})
    assert hid["headline"] == "X stays closest, of the schemes drawn (A and B wait for the prediction above)."
    assert hid["shows"] == whole["shows"] and hid["wrong"] == whole["wrong"]  # counted over the whole run, not the drawn part
    one = load_task("markov")
    only = {**one, "results": {**one["results"], "runs": {"rope": one["results"]["runs"]["rope"]}}}
    assert predict.ranking(only) is None  # one scheme: nothing to rank

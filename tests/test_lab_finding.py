"""The lab's finding, computed: the top sentence names exactly the schemes the verdict puts in each group (pinned on
hand-made results), and at the shipped results the relations docs/lab.md states (not the numbers, which a regeneration
changes)."""

from __future__ import annotations

import math

import pytest

from posenc.lab.positions import NAMES
from posenc.lab.results import DEGRADES, HOLDS, beyond_fraction, gaps, load_shipped, load_task, load_tasks, spread
from posenc.views.lab import finding, top_sentence, uniform_gap, worse_than_uniform

RUN = load_shipped()


def _hand(curves: dict, task: str | None = None) -> dict:
    """L = 2, Bayes loss 0.5 at every position and log V = 1: the uniform guess's gap is 0.5 everywhere."""
    cfg = {"train_len": 2, "n_layers": 2, "d_model": 32, "n_heads": 4, "n_seeds": 2} | ({"task": task} if task else {})
    runs = {s: {str(i): {"gap_by_position": c, "extensions": {}, "mean": {}} for i, c in enumerate(per)} for s, per in curves.items()}
    return {"results": {"config": cfg, "uniform": 1.0, "floor": 0.5, "bayes_by_position": [0.5] * 8, "runs": runs,
                        "undefined": {"learned": "no row past L"}}}


HAND = _hand({"alibi": [[0, 0] + [0.02] * 6] * 2, "kerple": [[0, 0] + [0.05] * 6] * 2, "t5": [[0, 0] + [0.2] * 6] * 2,
              "rope": [[0, 0] + [0.9] * 6] * 2, "xpos": [[0, 0] + [0.6] * 6, [0, 0] + [0.7] * 6], "learned": [[0, 0]] * 2})


def test_the_sentence_by_hand():
    f = finding(HAND)
    assert f["within"] == ["alibi", "kerple"] and f["between"] == {"t5": pytest.approx(0.4)}
    assert f["worse"] == {"rope": pytest.approx(1.8), "xpos": pytest.approx(1.3)} and f["undefined"] == ["learned"]
    assert f["sentence"] == ("Trained at L = 2, on the Markov task past L (positions [L, 4L)), only ALiBi and Kerple (log) stay "
                             "within 10% of a uniform guess's gap; T5 buckets degrades (40% of it); RoPE and xPos end worse "
                             "than a uniform guess (RoPE at 1.80× its gap).")
    assert "2-layer models of d = 32" in f["caveat"] and "L = 2" in f["caveat"]


def test_no_scheme_holds_and_two_tasks_make_one_sentence():
    f = finding(_hand({"rope": [[0, 0] + [0.9] * 6] * 2}, task="induction"))
    assert f["sentence"].startswith("Trained at L = 2, on the induction task past L (positions [L, 4L)), no scheme stays within 10%")
    both = top_sentence([finding(HAND), f])
    assert both.startswith("Trained at L = 2, on the Markov task") and "; on the induction task past L" in both
    assert both.count("Trained at") == 1 and both.endswith(".")
    with pytest.raises(ValueError, match="findings"):
        top_sentence([])


def test_uniform_gap_is_log_v_minus_floor():
    res = RUN["results"]
    assert uniform_gap(res) == res["uniform"] - res["floor"]
    assert uniform_gap(res) == pytest.approx(math.log(8) - res["floor"], abs=1e-12)


def test_worse_than_uniform_is_the_mean_gap_over_the_uniform_guess():
    w = worse_than_uniform(RUN)
    res = RUN["results"]
    for n, names in w["by_length"].items():
        assert names == [s for s in res["runs"] if (sp := spread(gaps(res, s, n)))["n"] and sp["mean"] > w["uniform_gap"]]
    assert w["by_length"][res["config"]["train_len"]] == []  # at L every model is far better than guessing


@pytest.mark.parametrize("task", list(load_tasks()))
def test_the_shipped_sentence_names_exactly_each_verdicts_schemes(task):
    run = load_task(task)
    f = finding(run)
    fr = {s: beyond_fraction(run["results"], s)["fraction"] for s in run["results"]["runs"]}
    assert set(f["within"]) == {s for s, x in fr.items() if x <= HOLDS}
    assert set(f["worse"]) == {s for s, x in fr.items() if x > DEGRADES}
    assert set(f["between"]) == {s for s, x in fr.items() if HOLDS < x <= DEGRADES}
    for s in f["worse"]:
        assert NAMES[s] in f["sentence"]
    if task == "markov":  # issue 37's reading of the shipped run: RoPE past L is worse than a uniform guess
        assert "rope" in f["worse"] and all(NAMES[s] in f["sentence"].split(" stay within")[0] for s in f["within"])

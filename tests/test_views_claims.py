"""The claims views' extrapolation verdicts (issue 37): a claim reads the lab's verdict word of each scheme on each
task (the gap past L as a fraction of a uniform guess's gap) and its bootstrap interval, through one reading per kind
of claim.  Relations only: the shipped numbers change with every ship."""

import math

import pytest

from posenc.lab.results import DEGRADES, HOLDS, VERDICT_RULE, VERDICTS, task_title, task_verdicts, verdict_word
from posenc.registry import SCHEMES
from posenc.views import claims
from posenc.views.claims import (
    CLAIM_RULE,
    EXTRAPOLATES,
    PARTIALLY,
    SCALING,
    WELL,
    article_table,
    claims_ledger,
    interval_words,
    lab_verdict,
)
from posenc.views.compare import verdict_text

READINGS = (EXTRAPOLATES, WELL, PARTIALLY)
HOLDS_W, DEGRADES_W, WORSE_W = VERDICTS


def row(fraction, lo, hi):
    """A lab row as posenc.lab.results.verdict_rows returns it (the fields the claims read)."""
    return {"fraction": fraction, "lo": lo, "hi": hi, "verdict": verdict_word(fraction), "reason": None,
            "span": "[L, 8L)", "seeds": 3, "per_seed": [lo, fraction, hi], "measured_as": "test", "task": "markov"}


INSIDE = {HOLDS_W: row(HOLDS / 2, HOLDS / 4, HOLDS * 0.9), DEGRADES_W: row(0.5, 0.4, 0.6), WORSE_W: row(1.5, 1.2, 1.8)}
ACROSS_DEGRADES = row(DEGRADES * 1.05, DEGRADES * 0.95, DEGRADES * 1.1)  # the interval straddles 100 %


def test_interval_words_are_the_bands_the_interval_spans():
    for word, r in INSIDE.items():
        assert interval_words(r) == (word,)
    assert interval_words(ACROSS_DEGRADES) == (DEGRADES_W, WORSE_W)
    assert interval_words(row(0.5, HOLDS / 2, 1.5)) == VERDICTS  # all three bands, best first
    assert interval_words(None) == () and interval_words({**INSIDE[HOLDS_W], "verdict": None}) == ()


def test_each_reading_maps_each_word_inside_its_band():
    for reading in READINGS:
        for word, r in INSIDE.items():
            assert lab_verdict([r], reading) == reading[word]
        assert reading[WORSE_W] == "contradicted"  # worse than a uniform guess contradicts every claim of extrapolation
    assert lab_verdict([INSIDE[HOLDS_W]], EXTRAPOLATES) == lab_verdict([INSIDE[HOLDS_W]], WELL) == "confirmed"
    assert lab_verdict([INSIDE[DEGRADES_W]], PARTIALLY) == "confirmed"
    assert lab_verdict([INSIDE[HOLDS_W]], PARTIALLY) == "nuanced"  # "partially" undersells a scheme that holds
    assert lab_verdict([INSIDE[DEGRADES_W]], EXTRAPOLATES) == "nuanced"
    assert lab_verdict([INSIDE[DEGRADES_W]], WELL) == "contradicted"


def test_an_interval_across_a_threshold_or_a_disagreement_is_nuanced_unless_every_reading_agrees():
    assert lab_verdict([ACROSS_DEGRADES], EXTRAPOLATES) == "nuanced"  # nuanced and contradicted
    assert lab_verdict([ACROSS_DEGRADES], PARTIALLY) == "nuanced"  # confirmed and contradicted
    assert lab_verdict([ACROSS_DEGRADES], WELL) == "contradicted"  # both words contradict "good"
    assert lab_verdict([INSIDE[HOLDS_W], INSIDE[WORSE_W]], EXTRAPOLATES) == "nuanced"  # two schemes or tasks disagree
    assert lab_verdict([INSIDE[DEGRADES_W], row(0.3, 0.2, 0.35)], PARTIALLY) == "confirmed"  # they agree
    assert lab_verdict([], EXTRAPOLATES) == "nuanced"  # nothing measured
    assert lab_verdict([INSIDE[HOLDS_W], None], EXTRAPOLATES) == "nuanced"  # a row without a verdict
    with pytest.raises(ValueError, match="reading"):
        lab_verdict([INSIDE[HOLDS_W]], {"holds": "confirmed"})


def check_article_table(view, lab):
    frame = view["frame"].set_index("Scheme")
    for scheme, _, claim, _, keys in claims.ARTICLE_ROWS:
        cell = frame.loc[scheme, "measured: extrapolates"]
        assert "×" not in cell  # the retired ratio gap(4L) / gap(L)
        for task, rows in lab.items():
            for k in keys:
                assert f"{SCHEMES[k].name} ({task_title(task)}): {verdict_text(rows.get(k))}" in cell
        checked = [rows[k] for rows in lab.values() for k in keys if k in rows]
        if claim == "Partially":
            assert cell.startswith(lab_verdict(checked, PARTIALLY) + " · ")
        if "in principle" in claim:  # defined at every position: confirmed only when the lab says holds
            v = lab_verdict(checked, EXTRAPOLATES)
            assert cell.startswith(("confirmed" if v == "confirmed" else "nuanced") + " · ")
        if "scaling" in claim:  # the trick with the smallest fraction on each task, read as "good"
            best = []
            for task, rows in lab.items():
                have = [k for k in SCALING if k in rows and math.isfinite(rows[k]["fraction"])]
                b = min(have, key=lambda k: rows[k]["fraction"])
                assert all(rows[b]["fraction"] <= rows[k]["fraction"] for k in have)
                assert f"best trick ({task_title(task)}): {SCHEMES[b].name}: {verdict_text(rows[b])}" in cell
                best.append(rows[b])
            assert cell.startswith(lab_verdict(best, WELL) + " · ")
    assert VERDICT_RULE in view["setting"] and CLAIM_RULE in view["setting"] and view["rule"] == CLAIM_RULE


def test_article_table_reads_the_shipped_verdict_of_every_task():
    check_article_table(article_table(512, 64, 8, 512), task_verdicts())


def test_any_set_of_tasks_and_schemes(monkeypatch):
    """A second task (here: the shipped rows with T5 and ALiBi both degrading, the sinusoid not trained, and a
    scheme the views do not know) is read alongside the first, and a scheme a task did not train does not count."""
    shipped = task_verdicts()
    first = next(iter(shipped.values()))
    second = {k: v for k, v in first.items() if k != "sinusoidal"}
    second.update(t5=INSIDE[DEGRADES_W], alibi=row(0.3, 0.2, 0.35), t5_scaled=INSIDE[HOLDS_W])
    lab = {**shipped, "induction": second}
    monkeypatch.setattr(claims, "task_verdicts", lambda: lab)
    view = article_table(128, 16, 4, 128)
    check_article_table(view, lab)
    ledger = claims_ledger(128, 16, 128)["frame"].set_index("label")
    partial = ledger.loc[ledger.index.str.endswith("relative biases: partially")].iloc[0]
    assert "T5 relative buckets (induction): degrades" in partial["measured"]
    assert partial["verdict"] == lab_verdict([r[k] for r in lab.values() for k in ("t5", "alibi")], PARTIALLY)
    assert "induction" in partial["setting"]
    sin = ledger.loc[ledger.index.str.endswith("sinusoid extrapolates")].iloc[0]
    assert "Sinusoidal (induction): not trained in the lab" in sin["measured"]
    assert sin["verdict"] == lab_verdict([r["sinusoidal"] for r in shipped.values()], EXTRAPOLATES)  # only where trained


def test_the_ledger_reads_the_same_verdicts_as_the_article_table():
    lab, ledger = task_verdicts(), claims_ledger(512, 64, 512)
    frame = ledger["frame"].set_index("label")
    partial = frame.loc[frame.index.str.endswith("relative biases: partially")].iloc[0]
    assert partial["verdict"] == lab_verdict([r[k] for r in lab.values() for k in ("t5", "alibi") if k in r], PARTIALLY)
    for k in ("t5", "alibi"):
        assert all(verdict_text(rows.get(k)) in partial["measured"] for rows in lab.values())
    assert not frame["measured"].str.contains("×").any()  # the retired ratio
    assert VERDICT_RULE in ledger["rule"] and CLAIM_RULE in ledger["rule"]
    assert all(task_title(t) in ledger["lab"] for t in lab)


def test_the_verdict_grid_names_its_glyph_columns_and_draws_one_cell_per_claim():
    from posenc.charts.claims import GLYPHS, verdict_grid
    from posenc.charts.claims import VERDICTS as GRID_VERDICTS

    frame = claims_ledger(128, 16, 128)["frame"]
    spec = verdict_grid(frame).to_dict()
    data = next(iter(spec["datasets"].values()))
    assert [r["label"] for r in data] == list(frame["label"])
    assert all(r["glyph"] == GLYPHS[r["verdict"]] for r in data)
    assert all(f"{GLYPHS[v]} {v}" in spec["title"]["text"][1] for v in GRID_VERDICTS)  # the key the columns' glyphs need
    axis = spec["layer"][0]["encoding"]["x"]["axis"]
    assert all(f"'{GLYPHS[v]}'" in axis["labelExpr"] for v in GRID_VERDICTS)
    assert spec["layer"][0]["encoding"]["color"]["legend"] is None  # the title is the key

"""posenc.lab.papers: each rule reads made-up numbers the way its claim says, a claim whose measurement was not read
is never "agrees", and the README and docs/lab.md print the table ``papers.markdown()`` makes of the shipped results."""

from __future__ import annotations

from pathlib import Path

import pytest

from posenc.lab import papers

REPO = Path(__file__).resolve().parents[1]
TASKS = {"markov": {}, "induction": {}}  # the rules below read only the patched functions


@pytest.fixture
def numbers(monkeypatch):
    """Patch the readers of the shipped results with {task: {scheme or extension row: value}}."""
    table: dict[str, dict] = {}
    ids = {id(v): k for k, v in TASKS.items()}
    monkeypatch.setattr(papers, "_share", lambda res, s: table[ids[id(res)]][s])
    monkeypatch.setattr(papers, "_at4", lambda res, row: table[ids[id(res)]]["plain" if row is None else row])
    monkeypatch.setattr(papers, "_learned", lambda res, s: table[ids[id(res)]].get(f"{s}_learned", True))
    return table


def _rule(key):
    return next(c for c in papers.CLAIMS if c.key == key).rule


def test_press_agrees_only_where_alibi_holds_and_the_others_are_above_it(numbers):
    numbers.update(markov={"alibi": 0.05, "sinusoidal": 1.8, "rope": 1.9, "t5": 0.6},
                   induction={"alibi": 0.05, "sinusoidal": 1.2, "rope": 1.1, "t5": 1.1})
    assert _rule("press")(TASKS)[1] == papers.AGREES
    numbers["induction"]["alibi"] = 0.23  # degrades on one task
    assert _rule("press")(TASKS)[1] == papers.PART
    numbers["markov"]["t5"] = 0.01  # and T5 below ALiBi on the other
    assert _rule("press")(TASKS)[1] == papers.DISAGREES


def test_chen_needs_pi_plus_fine_tune_below_both_plain_and_direct_fine_tuning(numbers):
    numbers.update(markov={"plain": 0.72, "pi_ft": 0.02, "ft": 0.07, "pi": 0.77},
                   induction={"plain": 1.28, "pi_ft": 0.64, "ft": 0.67, "pi": 1.56})
    assert _rule("chen")(TASKS)[1] == papers.AGREES
    numbers["induction"]["ft"] = 0.5
    assert _rule("chen")(TASKS)[1] == papers.PART


def test_peng_is_in_part_when_one_extension_does_not_help(numbers):
    numbers.update(markov={"plain": 0.72, "ntk": 0.56, "dynamic": 0.69, "yarn": 0.32},
                   induction={"plain": 1.28, "ntk": 0.93, "dynamic": 1.30, "yarn": 0.14})
    assert _rule("peng")(TASKS)[1] == papers.PART
    numbers["induction"]["dynamic"] = 1.1
    assert _rule("peng")(TASKS)[1] == papers.AGREES


def test_kazemnejad_agrees_only_if_nope_learns_and_is_best(numbers):
    base = {"nope": 0.01, "rope": 1.9, "alibi": 0.06}
    numbers.update(markov=dict(base), induction=dict(base))
    TASKS["markov"]["runs"] = TASKS["induction"]["runs"] = dict.fromkeys(base)
    try:
        assert _rule("kazemnejad")(TASKS)[1] == papers.AGREES
        numbers["induction"]["nope_learned"] = False
        assert _rule("kazemnejad")(TASKS)[1] == papers.PART
        numbers["markov"]["nope"] = 1.15
        assert _rule("kazemnejad")(TASKS)[1] == papers.DISAGREES
    finally:
        for r in TASKS.values():
            r.pop("runs")


def test_ruoss_chi_and_fire(numbers):
    numbers.update(markov={"rope_randomized": 0.56, "rope": 1.96, "kerple": 0.017, "fire": 0.4, "t5": 0.64,
                           "alibi": 0.06, "nope": 1.15},
                   induction={"rope_randomized": 1.2, "rope": 1.17, "kerple": 0.2, "fire": 0.01, "t5": 1.16,
                              "alibi": 0.23, "nope": 0.86})
    assert _rule("ruoss")(TASKS)[1] == papers.PART
    assert _rule("chi")(TASKS)[1] == papers.PART  # holds on Markov, degrades on induction
    assert _rule("li")(TASKS)[1] == papers.PART  # best of all on induction, not on Markov
    numbers["markov"]["fire"] = 0.001
    assert _rule("li")(TASKS)[1] == papers.AGREES


def test_a_measurement_not_read_is_never_agreement():
    rows = {r["key"]: r for r in papers.rows()}
    assert {c.key for c in papers.CLAIMS if not c.read} == {"press_tables"}
    assert all(rows[c.key]["reading"] == papers.NOT_COMPARED for c in papers.CLAIMS if not c.read)
    assert all(r["reading"] in papers.READINGS for r in rows.values())
    assert {r["reading"] for r in rows.values()} - {papers.NOT_COMPARED}  # the rules did read the shipped files


@pytest.mark.parametrize("doc", ["README.md", "docs/lab.md"])
def test_the_docs_print_the_table_of_the_shipped_results(doc):
    assert papers.markdown() in (REPO / doc).read_text(encoding="utf-8"), (
        f"{doc}'s agreement table is not papers.markdown() of the shipped results: paste "
        "`python -c 'from posenc.lab import papers; print(papers.markdown())'`")

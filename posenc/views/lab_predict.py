"""The Extrapolation lab's prediction, asked before its results chart: rank the article's schemes by their gap at 4L.

The schemes asked about are one per row of the article's table (``posenc.views.claims.ARTICLE_ROWS``): the row's first
scheme the run trained and measured at 4L (the learned table has no row past L, so its row has none).  The answer is
their mean gap over seeds at 4L (``posenc.lab.results.gaps``), never written by hand.  Until the reader reveals it the
page draws ``hide_run``'s copy of the run, in which those schemes stop at L as the learned table does: every figure and
table built from it (the bands, the gap per length, the gap per position, the wide table, the order sweep's rows, the
context-extension chart of the RoPE model) then holds nothing of theirs past L, and the exercise declares those figures
(``FIGURES``) for the leak test.  The attention maps ("Why") show no gap and are drawn from the run itself.
"""

from __future__ import annotations

from itertools import permutations

import pandas as pd

from posenc.lab.positions import NAMES, REGISTRY_KEY
from posenc.lab.results import gaps, spread, task_of, task_title
from posenc.views.claims import ARTICLE_ROWS

KEY = "lab_rank"  # the exercise's key (its reveal toggle is ex_lab_rank_reveal)
MULTIPLE = 4  # the length asked about, in multiples of L
SEP = " < "  # an ordering, smallest gap first
HIDDEN_WHY = "its gaps past L are hidden until you reveal the prediction above the charts"
HIDDEN_CELL = "?"
FIGURES = (("lab_gap", "gap"), ("lab_bands", "gap"), ("lab_positions", "gap"))  # (chart key, field) that carry the answer


def asked_schemes(results: dict) -> list[str]:
    """The lab schemes asked about: per row of the article's table, the first of the run's schemes (in its order) that
    stands for one of the row's registry schemes and has a gap at ``MULTIPLE`` × L at every seed."""
    n = MULTIPLE * results["config"]["train_len"]
    out = []
    for _scheme, _learned, _extrap, _used, keys in ARTICLE_ROWS:
        found = [s for s in results["runs"] if REGISTRY_KEY[s] in keys and spread(gaps(results, s, n))["n"]]
        out += found[:1]
    return out


def _range(sp: dict) -> str:
    return f"{sp['mean']:.3f} nats (seeds {sp['min']:.3f}–{sp['max']:.3f})"


def ranking(run: dict) -> dict:
    """The exercise (a ``posenc.ui.quiz.quiz`` dict) and what carries its answer: {"key", "question", "options" (every
    ordering of the asked schemes, in a fixed order that says nothing), "answer" (the ordering by mean gap at 4L, smallest
    first), "explanation" (each gap with its spread over seeds; neighbours whose seed ranges overlap are named), "schemes"
    (lab keys), "names", "figures" (``FIGURES``), "columns" (the wide table's column at 4L), "hidden": False}.  None
    when fewer than two schemes can be asked about."""
    res = run["results"]
    L = res["config"]["train_len"]
    n = MULTIPLE * L
    schemes = asked_schemes(res)
    if len(schemes) < 2:
        return None
    names = [NAMES[s] for s in schemes]
    sp = {s: spread(gaps(res, s, n)) for s in schemes}
    order = sorted(schemes, key=lambda s: sp[s]["mean"])
    answer = SEP.join(NAMES[s] for s in order)
    close = [f"{NAMES[a]} and {NAMES[b]}" for a, b in zip(order, order[1:]) if sp[b]["min"] <= sp[a]["max"]]
    explanation = (f"Gap (loss − floor) at {MULTIPLE}L = {n} on the {task_title(task_of(res))} task, mean over "
                   f"{sp[order[0]]['n']} seeds: " + "; ".join(f"{NAMES[s]} {_range(sp[s])}" for s in order) + ". "
                   + (f"{' and '.join(close)} overlap over seeds: {sp[order[0]]['n']} seeds do not settle their order. " if close
                      else "No two seed ranges overlap. ")
                   + "The charts below now draw every scheme past L.")
    question = (f"Predict before the charts: rank the article's schemes the lab trained, {', '.join(names[:-1])} and {names[-1]} "
                f"(one per row of its table; the learned table has no row past L), by their gap at {MULTIPLE}L = {n} tokens, "
                "smallest first. Until you reveal it, their lines stop at L.")
    return {"key": KEY, "question": question, "options": [SEP.join(p) for p in permutations(names)], "answer": answer,
            "explanation": explanation, "schemes": schemes, "names": names, "figures": list(FIGURES),
            "columns": [f"{MULTIPLE}L = {n}"], "hidden": False}


def _stop_at_L(runs: dict, L: int) -> dict:
    """One scheme's {seed: run} with nothing past L: its mean at L only, its gap per position up to L, no context
    extensions (the RoPE model's chart starts from its own gap at 2L, 4L and 8L)."""
    return {seed: {**r, "mean": {k: v for k, v in r["mean"].items() if int(k) <= L}, "gap_by_position": list(r["gap_by_position"][:L]),
                   "extensions": {}} for seed, r in runs.items()}


def hide_run(run: dict, schemes) -> dict:
    """A copy of ``run`` in which ``schemes`` stop at L (their follow-up run's rows too), each with ``HIDDEN_WHY`` as its
    reason for having no row past L; the other schemes and the weights are the same objects."""
    def hide(res: dict | None) -> dict | None:
        if res is None:
            return None
        L = res["config"]["train_len"]
        mine = [s for s in schemes if s in res["runs"]]
        return {**res, "runs": {s: _stop_at_L(r, L) if s in mine else r for s, r in res["runs"].items()},
                "undefined": {**res["undefined"], **{s: HIDDEN_WHY for s in mine}}}

    return {**run, "results": hide(run["results"]), **({"longer": hide(run["longer"])} if run.get("longer") is not None else {})}


def hidden(run: dict, shipped: dict, key: tuple, ask: dict) -> tuple[dict, dict, tuple, dict]:
    """(run, shipped, key, ask) to draw before the reveal: both runs with the asked schemes stopping at L (one copy when
    the run is the shipped one), a cache key of their own, and ``ask`` marked hidden."""
    run_h = hide_run(run, ask["schemes"])
    shipped_h = run_h if run is shipped else hide_run(shipped, ask["schemes"])
    return run_h, shipped_h, (*key, "hidden"), {**ask, "hidden": True, "run": run}


def blank(table: pd.DataFrame, ask: dict | None) -> pd.DataFrame:
    """The wide table with the asked schemes' cells past L shown as "?" while hidden (the masked run writes "no row past
    L" there, which would be false); the table itself once revealed."""
    if ask is None or not ask["hidden"]:
        return table
    out = table.copy()
    rows = out["scheme"].isin(ask["names"])
    for col in out.columns[2:]:  # scheme, L = ..., then the lengths past L
        out[col] = out[col].astype(object)
        out.loc[rows, col] = HIDDEN_CELL
    return out


def hidden_sweep(sweep: pd.DataFrame, ask: dict | None) -> pd.DataFrame:
    """The order sweep without the asked schemes' rows while hidden (their beyond-L fractions at k = 1 … 4 would rank
    them); the sweep itself once revealed (or when it is empty)."""
    if ask is None or not ask["hidden"] or sweep.empty:
        return sweep
    return sweep[~sweep["scheme"].isin(ask["names"])].reset_index(drop=True)


def takeaway(t: dict, ask: dict | None) -> dict:
    """The lab's takeaway (``posenc.views.takeaways.lab_takeaway`` of the overview drawn): while hidden, what it shows and
    what is still open are those of the whole run (the count of schemes read at 4L, the models that learned), and its
    headline (the handout's) ranks only the schemes drawn, and says so."""
    if ask is None or not ask["hidden"]:
        return t
    from posenc.views.lab import overview
    from posenc.views.takeaways import lab_takeaway

    whole = lab_takeaway(overview(ask["run"]))
    if "headline" not in t:
        return whole
    names = ask["names"]
    return {**whole, "headline": t["headline"].rstrip(".") + f", of the schemes drawn ({', '.join(names[:-1])} and {names[-1]} "
                                                              "wait for the prediction above)."}


# ----------------------------------------------------------------------------- Compare: the article's four claims
CLAIMS_KEY = "claims_confirmed"
CLAIM_COLUMN = "Extrapolates beyond training length?"  # the article's words, in its table
MEASURED_COLUMN = "measured: extrapolates"  # posenc.views.claims.article_table: "<verdict> · <what the lab measured>"
NONE, SEVERAL = "none of the four", "two or more of them"


def claims_quiz(article: pd.DataFrame) -> dict:
    """The Compare page's prediction, asked before the article's table (a ``posenc.ui.quiz.quiz`` dict): which of the
    article's four "Extrapolates beyond training length?" claims the lab confirms.  ``article`` is
    ``posenc.views.claims.article_table``'s frame; each claim's verdict is the first word of its measured cell.
    Returns the dict with "cells" (the (row, column) cells that hold the verdicts) and "columns" (that column)."""
    labels = [f"{row['Scheme']}: “{row[CLAIM_COLUMN]}”" for _, row in article.iterrows()]
    verdicts = [str(v).split(" · ")[0] for v in article[MEASURED_COLUMN]]
    confirmed = [label for label, v in zip(labels, verdicts) if v == "confirmed"]
    answer = confirmed[0] if len(confirmed) == 1 else NONE if not confirmed else SEVERAL
    explanation = ("The lab's verdicts, read by the rule under the table: " + "; ".join(f"{label} {v}" for label, v in zip(labels, verdicts))
                   + ". The lab's models are tiny and trained on synthetic tasks, and the scaling tricks are applied without "
                   "fine-tuning: the verdicts hold in this setting.")
    return {"key": CLAIMS_KEY, "answer": answer, "options": [*labels, NONE, SEVERAL], "explanation": explanation,
            "question": f"Predict before the article's table: which of its four “{CLAIM_COLUMN}” claims will the Extrapolation "
                        "lab confirm? Until you reveal it, the measured verdicts of that column show “?”.",
            "cells": [(i, MEASURED_COLUMN) for i in range(len(article))], "columns": []}


VERDICT_COLUMNS = ("verdict_", "beyond_L_", "extrapolates")  # posenc.views.compare.comparison's lab columns (by prefix)


def without_verdicts(frame: pd.DataFrame) -> pd.DataFrame:
    """The measured table without the lab's verdict columns (each task's verdict and fraction past L, the "holds" box):
    read by the rule, they answer ``claims_quiz``, so the page draws them once it is revealed."""
    return frame.drop(columns=[c for c in frame.columns if c.startswith(VERDICT_COLUMNS)])

"""The articles' claims, answered: the comparison table one article prints, with a measured verdict
beside each cell, and a ledger of every checkable claim of the three articles, each measured by a posenc
function at the page's settings (nothing typed in but the quotes).

Verdicts: "confirmed", "nuanced" (true in part, or only in principle) or "contradicted", always "in this
setting" (the setting is in its own column).
"""

from __future__ import annotations

import math
from typing import TypedDict

import numpy as np
import pandas as pd

from posenc.analysis.attention import permutation_equivariance
from posenc.analysis.compare import measure_schemes
from posenc.analysis.geometry import shift_operator
from posenc.lab.results import VERDICT_RULE, VERDICTS, task_title, task_verdicts, verdict_word
from posenc.registry import SCHEMES
from posenc.schemes.sinusoidal import sinusoid_wavelengths, sinusoidal
from posenc.views.compare import verdict_text

WHY_ORDER = "Positional Embeddings: Why Attention Needs Order"
IN_TRANSFORMERS = "Positional Encoding in Transformers"
WHAT_ARE = "What are Positional Embeddings?"
ARTICLES = (WHY_ORDER, IN_TRANSFORMERS, WHAT_ARE)
ARTICLE_D = 512  # the width the articles quote their wavelengths at
DOG, MAN = "The dog bit the man.", "The man bit the dog."

# The comparison table as the article prints it: (scheme, learned or fixed?, extrapolates?, used in, registry keys)
ARTICLE_ROWS = (
    ("Sinusoidal absolute", "Fixed function", "Yes, in principle", "Original Transformer", ("sinusoidal",)),
    ("Learned absolute", "Learned table", "No", "BERT, GPT-2", ("learned_minilm",)),
    ("Relative position bias", "Learned, added to attention scores", "Partially", "T5, ALiBi", ("t5", "alibi")),
    ("Rotary (RoPE)", "Fixed rotation applied to Q/K", "Good with scaling tricks",
     "Llama, GPT-NeoX, most modern LLMs", ("rope",)),
)
LEDGER_SCHEMES = ("raw_index", "index_over_length", "single_sine", "sincos_pair", "sinusoidal", "learned_minilm", "rope")
SCALING = ("rope_linear", "rope_ntk", "rope_dynamic", "rope_yarn", "rope_llama3")  # the tricks the lab applies at test time

RELATIVE_CLAIM = ("t5", "alibi")  # the schemes the article names in "Relative position biases (T5, ALiBi)"


class ArticleTableView(TypedDict):
    frame: pd.DataFrame  # one row per article row: the article's cells and a measured verdict beside each
    setting: str  # the settings, the lab's verdict rule and CLAIM_RULE
    rule: str  # CLAIM_RULE: how a claim reads the lab's verdict


class LedgerView(TypedDict):
    frame: pd.DataFrame  # claim, source, measured, verdict, setting, page
    counts: dict  # verdict -> number of claims
    headline: str
    takeaway: dict  # {"headline", "shows", "wrong"} for the page's wrap-up
    rule: str  # the lab's verdict rule (VERDICT_RULE) and how a claim reads it (CLAIM_RULE), for beside the table
    lab: str  # what the lab trained, on which tasks


# How a claim about extrapolation reads the lab's verdict word (posenc.lab.results.verdict_word) of one scheme on one task
EXTRAPOLATES = {"holds": "confirmed", "degrades": "nuanced", "worse than a uniform guess": "contradicted"}
WELL = {"holds": "confirmed", "degrades": "contradicted", "worse than a uniform guess": "contradicted"}  # "good", "well"
PARTIALLY = {"holds": "nuanced", "degrades": "confirmed", "worse than a uniform guess": "contradicted"}  # holds: it undersells
CLAIM_RULE = ("A claim reads that verdict: “extrapolates” is confirmed by **holds**, nuanced by **degrades**, contradicted "
              "by **worse than a uniform guess**; “good” or “well” needs **holds** (degrades contradicts it); “partially” is "
              "confirmed by **degrades**, nuanced by **holds** (it undersells the scheme), contradicted by **worse than a "
              "uniform guess**. Every task it was trained on, and the whole 95\u00a0% interval, must give one answer; otherwise "
              "the claim is nuanced.")


def interval_words(row: dict) -> tuple[str, ...]:
    """The verdict words a lab row's bootstrap interval [lo, hi] spans, best first (one word when it lies inside one
    band of the rule); () when the row has no verdict."""
    if row is None or row["verdict"] is None:
        return ()
    at = [VERDICTS.index(w) for w in (verdict_word(row["lo"]), row["verdict"], verdict_word(row["hi"])) if w is not None]
    return VERDICTS[min(at):max(at) + 1]


def lab_verdict(rows: list[dict | None], reading: dict[str, str]) -> str:
    """One claim's verdict from the lab rows that check it (one per scheme and task): each word its interval spans is
    read through ``reading`` (EXTRAPOLATES, WELL or PARTIALLY); one answer over all of them is the verdict, several (or a
    row without a verdict, or no row) make it "nuanced"."""
    if set(reading) != set(VERDICTS):
        raise ValueError(f"reading must map each of {VERDICTS} to a verdict, got {sorted(reading)}")
    answers = set()
    for row in rows:
        words = interval_words(row)
        if not words:
            return "nuanced"
        answers |= {reading[w] for w in words}
    return answers.pop() if len(answers) == 1 else "nuanced"


def _tasks_text(key: str, lab: dict[str, dict[str, dict]]) -> str:
    """What the lab measured for ``key``, per task: "ALiBi (Markov): holds · 6.2% of a uniform guess's gap (95 %: …)"."""
    return "; ".join(f"{SCHEMES[key].name} ({task_title(t)}): {verdict_text(rows.get(key))}" for t, rows in lab.items())


def _best_trick(rows: dict[str, dict]) -> str | None:
    """The scaling trick with the smallest mean fraction on one task (None: no trick was measured there)."""
    have = [k for k in SCALING if rows.get(k) is not None and math.isfinite(rows[k]["fraction"])]
    return min(have, key=lambda k: rows[k]["fraction"]) if have else None


def _tricks(lab: dict[str, dict[str, dict]]) -> tuple[list[dict | None], str]:
    """The best trick's row on each task that measured one, and what each task measured."""
    rows, bits = [], []
    for t, task_rows in lab.items():
        best = _best_trick(task_rows)
        rows += [] if best is None else [task_rows[best]]
        bits.append(f"best trick ({task_title(t)}): " + ("none measured" if best is None else
                                                          f"{SCHEMES[best].name}: {verdict_text(task_rows[best])}"))
    return rows, "; ".join(bits)


def _lab_setting(lab: dict) -> str:
    return (f"the Extrapolation lab's tiny causal transformers, trained at their own L, scored past L "
            f"({', '.join(map(task_title, lab))} task{'s' if len(lab) > 1 else ''})")


def article_table(n: int = 512, d: int = 64, n_heads: int = 8, train_len: int = 512) -> ArticleTableView:
    """The article's four rows with a measured verdict beside each cell: learned or fixed from the scheme's
    learned parameters; "extrapolates" from the Extrapolation lab's shipped verdicts per task (the gap past L as a
    fraction of the uniform guess's gap, ``posenc.lab.results.task_verdicts``) read by ``lab_verdict`` and CLAIM_RULE,
    and whether the scheme is defined at 4L; "used in" from the registry's model list."""
    lab = task_verdicts()
    every = measure_schemes(dict.fromkeys(k for *_, keys in ARTICLE_ROWS for k in keys), n=n, d=d, n_heads=n_heads,
                            train_len=train_len, strict=True)
    rows = []
    for scheme, learned, extrap, used, keys in ARTICLE_ROWS:
        measured = [every[k] for k in keys]
        kinds = [f"{SCHEMES[k].name}: {'learned' if m['learned_parameters'] else 'fixed'} "
                 f"({int(m['learned_parameters']):,} parameters)" for k, m in zip(keys, measured)]
        said_learned = "learned" in learned.lower()
        agree = [bool(m["learned_parameters"]) == said_learned for m in measured]
        kind_verdict = "confirmed" if all(agree) else "nuanced" if any(agree) else "contradicted"
        checked = [task_rows[k] for task_rows in lab.values() for k in keys if k in task_rows]
        defined = all(m["defined_at_4L"] for m in measured)
        lab_bits = [_tasks_text(k, lab) for k in keys]
        if extrap == "No":
            ex_verdict = "confirmed" if not defined else "contradicted"
            lab_bits.append("no value at 4L" if not defined else "defined at 4L")
        elif extrap == "Partially":
            ex_verdict = lab_verdict(checked, PARTIALLY)
        elif "in principle" in extrap:
            v = lab_verdict(checked, EXTRAPOLATES)  # a model trained at L may not use it: "in principle" is then nuanced
            ex_verdict = "contradicted" if not defined else v if v == "confirmed" else "nuanced"
            lab_bits.append("defined at every position" if defined else "undefined at 4L")
        else:  # RoPE: "good with scaling tricks"
            best_rows, text = _tricks(lab)
            ex_verdict = lab_verdict(best_rows, WELL)
            lab_bits.append(f"{text} (applied at test time, no fine-tuning)")
        models = [", ".join(SCHEMES[k].models[:3]) for k in keys]
        rows.append({
            "Scheme": scheme,
            "Learned or fixed?": learned, "measured: learned or fixed": f"{kind_verdict} · " + "; ".join(kinds),
            "Extrapolates beyond training length?": extrap,
            "measured: extrapolates": f"{ex_verdict} · " + "; ".join(lab_bits),
            "Used in": used, "measured: used in": "; ".join(models),
        })
    setting = (f"structure at n = {n}, d = {d}; extrapolation from {_lab_setting(lab)}. "
               f"{VERDICT_RULE} {CLAIM_RULE}")
    return {"frame": pd.DataFrame(rows), "setting": setting, "rule": CLAIM_RULE}


def _verdict(ok: bool | None, nuanced: bool = False) -> str:
    if ok is None or nuanced:
        return "nuanced"
    return "confirmed" if ok else "contradicted"


def claims_ledger(n: int = 512, d: int = 64, train_len: int = 512) -> LedgerView:
    """Every checkable claim of the three articles: (claim, source, measured, verdict, setting, page).  Each
    number comes from a posenc function at (n, d, train_len), or at the article's own setting where it names one
    (d = 512 for the wavelengths, d = 4 for Hello World)."""
    m = measure_schemes(LEDGER_SCHEMES, n=n, d=d, n_heads=8, train_len=train_len, strict=True)
    lab = task_verdicts()
    bare = permutation_equivariance(DOG, MAN)
    with_pe = permutation_equivariance(DOG, MAN, scheme="sinusoidal")
    w = sinusoid_wavelengths(ARTICLE_D)
    hello = sinusoidal([0, 1], 4)  # (2, 4)
    shift = shift_operator("sinusoidal", 2, d if d % 2 == 0 else d + 1)
    pe = sinusoidal(np.arange(n + 8), d + d % 2)  # (n + 8, d)
    dist = [np.linalg.norm(pe[k:] - pe[:-k], axis=1) for k in (1, 2, 8)]  # |PE(p+k) - PE(p)| for every p
    spread = max(float(x.max() - x.min()) for x in dist)
    at_d, at_n = f"d = {d}", f"positions 0 .. {n - 1}, d = {d}"
    C = []

    def claim(topic, text, source, measured, verdict, setting, page):
        C.append({"topic": topic, "claim": text, "source": source, "measured": measured, "verdict": verdict, "setting": setting,
                  "page": page})

    claim("attention is permutation-equivariant",
          "Shuffle the tokens and the attention scores only move to other slots: permutation-equivariant.", WHY_ORDER,
          f"max |Δ| after un-permuting: outputs {bare['max_diff_permuted']:.3g}, scores {bare['max_diff_logits']:.3g}",
          _verdict(bare["max_diff_permuted"] == 0 and bare["max_diff_logits"] == 0),
          f"“{DOG}” vs “{MAN}”, one attention layer without positions", "pages/attention_order.py")
    claim("no positions: dog = man", "Without positions a transformer cannot tell “the dog bit the man” from “the man bit the dog”.", IN_TRANSFORMERS,
          f"pooled outputs differ by {bare['max_diff_pooled']:.3g} without positions, {with_pe['max_diff_pooled']:.3g} "
          "with the sinusoid", _verdict(bare["max_diff_pooled"] == 0 and with_pe["max_diff_pooled"] > 0),
          "the same tiny layer, mean-pooled", "pages/attention_order.py")
    claim("raw index reaches 10⁶", "Raw indices put values like 10⁶ into the residual stream.", WHY_ORDER,
          f"max |value| out to position 10⁶: {m['raw_index']['max_abs_at_1e6']:,.0f}",
          _verdict(m["raw_index"]["max_abs_at_1e6"] >= 1e5), "the raw index t, positions to 10⁶", "pages/raw_index.py")
    claim("index ÷ length moves with length",
          "Index ÷ length: the same first token gets a different value depending on the prompt's length.", WHY_ORDER,
          f"position 1 changes by up to {m['index_over_length']['length_change']:.3g} across lengths",
          _verdict(m["index_over_length"]["length_change"] > 0), f"lengths 2 .. 4L, L = {train_len}",
          "pages/index_length.py")
    claim("one sine collides", "A single sine collides: sin(t) = sin(t + 2πk), and nearby readings repeat.", WHY_ORDER,
          f"closest two of {n} positions: {m['single_sine']['closest_distance']:.3g} apart",
          _verdict(not m["single_sine"]["unique"]), f"sin(t), {at_n}", "pages/single_sine.py")
    claim("one sin+cos pair collides across turns", "A sin+cos pair is unique within one turn, but long sequences collide across periods.", WHY_ORDER,
          f"closest two of {n} positions: {m['sincos_pair']['closest_distance']:.3g} apart (on a unit circle)",
          _verdict(not m["sincos_pair"]["unique"]), f"[sin t, cos t], positions 0 .. {n - 1}", "pages/sincos_pair.py")
    claim("many waves stay unique", "Many waves at different speeds almost never line up the same way twice in a realistic context.", WHY_ORDER,
          f"closest two of {n} positions: {m['sinusoidal']['closest_distance']:.3g} apart",
          _verdict(m["sinusoidal"]["unique"]), at_n, "pages/sinusoid.py")
    claim("sinusoid bounded in [−1, 1]", "Sinusoidal values stay bounded in [−1, 1].", WHAT_ARE,
          f"max |value| out to position 10⁶: {m['sinusoidal']['max_abs_at_1e6']:.6f}",
          _verdict(m["sinusoidal"]["max_abs_at_1e6"] <= 1 + 1e-12), f"{at_d}, positions to 10⁶", "pages/sinusoid.py")
    claim("wavelengths ~6, hundreds, tens of thousands",
          "At d = 512, early dimensions cycle every ~6 positions, middle ones every few hundred, the last take tens "
          "of thousands.", WHAT_ARE,
          f"wavelengths {w[0]:.2f} (pair 0), {w[len(w) // 2]:,.0f} (pair {len(w) // 2}), {w[-1]:,.0f} (pair {len(w) - 1})",
          _verdict(5 <= w[0] < 7 and 100 <= w[len(w) // 2] < 1000 and 1e4 <= w[-1] < 1e5),
          "d = 512, base 10000 (the article's setting)", "pages/sinusoid.py")
    claim("Hello World's position vectors", "Hello at position 0 gets [0, 1, 0, 1]; World at 1 gets [0.841, 0.540, 0.010, 1.000].", WHAT_ARE,
          "World: [" + ", ".join(f"{x:.3f}" for x in hello[1]) + "]",
          _verdict(bool(np.allclose(hello, [[0, 1, 0, 1], [0.841, 0.540, 0.010, 1.000]], atol=5e-4))),
          "d = 4, base 10000 (the article's setting)", "pages/sinusoid.py")
    claim("PE(p + k) linear in PE(p)", "For any fixed offset k, PE(pos + k) is a linear function of PE(pos).", WHAT_ARE,
          f"fit of M_2: largest residual {shift['residual']:.2g}, |MMᵀ − I| ≤ {shift['orthogonality']:.2g} (a rotation)",
          _verdict(shift["residual"] < 1e-8), f"k = 2, {at_d}", "pages/sinusoid.py")
    claim("PE differences depend on distance only",
          "The difference between position embeddings shows how far apart words are, whatever their absolute positions.",
          WHAT_ARE, f"|PE(p + k) − PE(p)| varies by at most {spread:.2g} over p (k = 1, 2, 8)", _verdict(spread < 1e-9),
          at_n, "pages/sinusoid.py")
    sin_rows = [rows["sinusoidal"] for rows in lab.values() if "sinusoidal" in rows]
    claim("sinusoid extrapolates", "The sinusoid lets a model generalize to sequences longer than any seen in training (a model trained on 512 "
          "words can often handle much longer texts).", f"{IN_TRANSFORMERS}; {WHAT_ARE}", _tasks_text("sinusoidal", lab),
          lab_verdict(sin_rows, EXTRAPOLATES) if m["sinusoidal"]["defined_at_4L"] else "contradicted", _lab_setting(lab),
          "pages/lab.py")
    claim("learned table stops at its last row", "A learned table cannot extrapolate past its last row.", IN_TRANSFORMERS,
          f"defined at 4L: {'yes' if m['learned_minilm']['defined_at_4L'] else 'no'} (a table of 512 rows)",
          _verdict(not m["learned_minilm"]["defined_at_4L"]), f"L = {train_len}, 4L = {4 * train_len}", "pages/learned.py")
    claim("relative biases: partially", "Relative position biases (T5, ALiBi) extrapolate partially.", IN_TRANSFORMERS,
          f"{_tasks_text('t5', lab)}; {_tasks_text('alibi', lab)}",
          lab_verdict([rows[k] for rows in lab.values() for k in RELATIVE_CLAIM if k in rows], PARTIALLY), _lab_setting(lab),
          "pages/relative_bias.py")
    trick_rows, trick_text = _tricks(lab)
    claim("RoPE: good with scaling tricks", "RoPE extrapolates well with scaling tricks (PI, NTK-aware, YaRN).", IN_TRANSFORMERS,
          f"{_tasks_text('rope', lab)}; {trick_text}", lab_verdict(trick_rows, WELL),
          f"{_lab_setting(lab)}; tricks at test time without fine-tuning, scored over the whole 8L sequence",
          "pages/context_extension.py")
    claim("RoPE's score depends on the offset",
          "RoPE rotates queries and keys so the score depends on the offset, not the absolute positions.", WHY_ORDER,
          f"deviation from translation invariance: {m['rope']['translation_invariance']:.2g} (0 = offset only)",
          _verdict(m["rope"]["translation_invariance"] < 1e-9), at_n, "pages/rope.py")
    frame = pd.DataFrame(C)
    frame.insert(0, "label", [f"{i + 1}. {t}" for i, t in enumerate(frame.pop("topic"))])
    counts = {v: int((frame["verdict"] == v).sum()) for v in ("confirmed", "nuanced", "contradicted")}
    headline = (f"Of the articles' {len(frame)} checkable claims, {counts['confirmed']} are confirmed, "
                f"{counts['nuanced']} nuanced and {counts['contradicted']} contradicted at these settings.")
    against = frame.loc[frame["verdict"] != "confirmed", "claim"].tolist()
    takeaway = {
        "headline": headline,
        "shows": [f"{counts['confirmed']} claims hold at n = {n}, d = {d}: permutation-equivariance, the naive attempts' "
                  "failures, the sinusoid's bounds, wavelengths, uniqueness and the linear shift, RoPE's offset-only score."],
        "wrong": [f"Not confirmed here: {len(against)} {'claim' if len(against) == 1 else 'claims'}: "
                  + " ".join(f"“{c}”" for c in against) if against else "Every checkable claim is confirmed at these settings.",
                  "A tiny model on a synthetic source is one setting; large models fine-tuned with the tricks are another."],
    }
    return {"frame": frame, "counts": counts, "headline": headline, "takeaway": takeaway,
            "rule": f"{VERDICT_RULE} {CLAIM_RULE}", "lab": _lab_setting(lab)}

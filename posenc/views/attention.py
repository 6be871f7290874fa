"""Data for the page "Attention needs order": the tiny attention of posenc.analysis.attention on
two sentences, with and without a positional scheme.

axes: n tokens, d model width, i query, j key.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import TypedDict

import numpy as np
import pandas as pd

from posenc.analysis.attention import permutation_equivariance, tokenize
from posenc.registry import get_scheme


class AttentionView(TypedDict):
    """What ``attention_view`` returns."""

    tokens_a: list
    tokens_b: list
    labels_a: list
    labels_b: list
    same_bag: bool
    only_a: list
    only_b: list
    heat_a: pd.DataFrame
    heat_b: pd.DataFrame
    vmax: float
    diff: pd.DataFrame | None
    perm_table: pd.DataFrame | None
    max_diff_pooled: float
    max_diff_permuted: float | None
    max_diff_logits: float | None
    masked: int
    scheme: str | None
    d_model: int



# ----------------------------------------------------------------------------- page 1: attention needs order
def _token_labels(tokens: list[str]) -> list[str]:
    """Axis labels "0 the", "1 dog", ...: the index keeps repeated tokens apart."""
    return [f"{i} {t}" for i, t in enumerate(tokens)]


def _tokens(name: str, text: str) -> list[str]:
    """tokenize() with the sentence's name in the message (e.g. "sentence B has 70 tokens ...")."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{name} is empty: type a sentence")
    try:
        return tokenize(text)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None


def _score_frame(M: np.ndarray, labels_q: list[str], labels_k: list[str], value: str = "score") -> pd.DataFrame:
    """Tidy (query, key, qi, ki, value) frame of an (n, n) matrix; masked -inf becomes NaN."""
    n_q, n_k = M.shape
    qi = np.repeat(np.arange(n_q), n_k)  # (n_q * n_k,) row-major
    ki = np.tile(np.arange(n_k), n_q)
    vals = np.where(np.isfinite(M), M, np.nan).ravel()
    return pd.DataFrame({
        "query": np.asarray(labels_q, dtype=object)[qi], "key": np.asarray(labels_k, dtype=object)[ki],
        "qi": qi.astype(np.int32), "ki": ki.astype(np.int32), value: vals,
    })


def attention_view(sentence_a: str, sentence_b: str, scheme: str | None, d_model: int) -> AttentionView:
    """The tiny attention of posenc.attention on two sentences, without (scheme=None) or with a scheme.

    Returns {"tokens_a", "tokens_b": list[str], "labels_a", "labels_b": axis labels "i token",
    "same_bag": bool, "only_a", "only_b": tokens (with multiplicity) found in one sentence only,
    "heat_a", "heat_b": DataFrame(query, key, qi, ki, score) of the logits q_i.k_j/sqrt(d) (+ bias),
    one row per cell, NaN where masked; "vmax": max |finite logit| over both (a shared colour scale);
    "diff": DataFrame(query, key, qi, ki, diff) of logits_B - logits_A re-ordered into B's order
    (NaN where either is masked), None if not the same bag; "perm_table": DataFrame(token,
    position in A, position in B) in A's order, None if not the same bag; "max_diff_pooled",
    "max_diff_permuted", "max_diff_logits" (from permutation_equivariance; the last two None if not
    the same bag, max_diff_logits inf if a mask moved); "masked": cells masked in A; "scheme";
    "d_model": the width actually used (384 for the MiniLM table)}.
    """
    ta, tb = _tokens("sentence A", sentence_a), _tokens("sentence B", sentence_b)
    if scheme is not None:
        get_scheme(scheme)
    r = permutation_equivariance(sentence_a, sentence_b, scheme=scheme, d_model=d_model)
    la, lb = _token_labels(r["tokens_a"]), _token_labels(r["tokens_b"])
    finite = np.concatenate([r["logits_a"][np.isfinite(r["logits_a"])], r["logits_b"][np.isfinite(r["logits_b"])]])
    diff = perm_table = None
    if r["same_bag"]:
        P = np.asarray(r["permutation"])  # (n,) tokens_b[i] == tokens_a[P[i]]
        a_in_b_order = r["logits_a"][P][:, P]  # (n, n)
        both = np.isfinite(a_in_b_order) & np.isfinite(r["logits_b"])
        D = np.where(both, r["logits_b"] - np.where(both, a_in_b_order, 0.0), np.nan)
        diff = _score_frame(D, lb, lb, value="diff")
        inverse = np.argsort(P)  # position in B of A's token j
        perm_table = pd.DataFrame({"token": r["tokens_a"], "position in A": np.arange(len(ta)), "position in B": inverse})
    ca, cb = Counter(ta), Counter(tb)
    return {
        "tokens_a": r["tokens_a"], "tokens_b": r["tokens_b"], "labels_a": la, "labels_b": lb,
        "same_bag": bool(r["same_bag"]),
        "only_a": sorted((ca - cb).elements()), "only_b": sorted((cb - ca).elements()),
        "heat_a": _score_frame(r["logits_a"], la, la), "heat_b": _score_frame(r["logits_b"], lb, lb),
        "vmax": float(np.max(np.abs(finite))) if finite.size else 1.0,
        "diff": diff, "perm_table": perm_table,
        "max_diff_pooled": r["max_diff_pooled"], "max_diff_permuted": r["max_diff_permuted"],
        "max_diff_logits": r["max_diff_logits"],
        "masked": int(np.sum(~np.isfinite(r["logits_a"]))),
        "scheme": scheme, "d_model": int(r["d_model"]),
    }


def format_tokens(tokens: list[str], limit: int = 8, width: int = 20) -> str:
    """Tokens for a message: at most ``limit`` of them, each cut to ``width`` characters, "—" if none."""
    if not tokens:
        return "—"
    cut = [t if len(t) <= width else t[: width - 1] + "…" for t in tokens[:limit]]
    more = len(tokens) - limit
    return ", ".join(cut) + (f" and {more} more" if more > 0 else "")


def format_difference(x: float | None) -> str:
    """A difference as the page shows it: "0.0 (exact)", "∞ (a mask moved)", "n/a", or 3 significant digits."""
    if x is None:
        return "n/a"
    if x == 0.0:
        return "0.0 (exact)"
    if math.isinf(x):
        return "∞ (a mask moved)"
    return f"{x:.3g}"


def attention_story(sentence_a: str, sentence_b: str, scheme: str, d_model: int) -> dict:
    """The exercise and the closing claims of the page, computed for these sentences and scheme.

    Returns {"quiz": {"key", "question", "options", "answer", "explanation"} (None when the two
    sentences are not one bag of tokens: there is no permutation to undo), "takeaway": {"shows",
    "wrong"}: claims as strings, or (string, quiz key) when they state the quiz's answer}.
    """
    name = get_scheme(scheme).name
    bag = permutation_equivariance(sentence_a, sentence_b, scheme=None, d_model=d_model)
    pos = permutation_equivariance(sentence_a, sentence_b, scheme=scheme, d_model=d_model)
    n = len(bag["tokens_a"])
    if not bag["same_bag"]:
        return {"quiz": None, "takeaway": {
            "shows": [f"These two sentences hold different tokens, so attention tells them apart even without positions "
                      f"(summaries {format_difference(bag['max_diff_pooled'])} apart)."],
            "wrong": ["Type a reordering of sentence A to see what attention cannot tell apart: the same bag of tokens."]}}
    apart = pos["max_diff_pooled"] > 0
    answer = "no, it is positive" if apart else "yes, still 0.0"
    quiz = {
        "key": "pooled", "options": ["yes, still 0.0", "no, it is positive"], "answer": answer,
        "question": f"With {name}, is the largest difference between the two sentence summaries (mean-pooled outputs) "
                    "still exactly zero?",
        "explanation": f"It is {format_difference(pos['max_diff_pooled'])}: " + (
            "the two orderings no longer give the same summary, so the bag has become a sequence." if apart else
            "this scheme does not tell these two orderings apart."),
    }
    takeaway = {
        "shows": [f"Without positions the two sentences are one bag of {n} tokens: re-ordering A's scores gives B's exactly "
                  f"(largest difference {format_difference(bag['max_diff_logits'])}), and the sentence summaries differ by "
                  f"{format_difference(bag['max_diff_pooled'])}.",
                  (f"With {name} the summaries differ by {format_difference(pos['max_diff_pooled'])}: "
                   + ("the order now reaches the output." if apart else "still no difference."), "pooled")],
        "wrong": ["We have not said how to build the position signal. The next four pages try the obvious ideas "
                  "(the index, the index over the length, one sine, one sin+cos pair) and watch each one fail."],
    }
    return {"quiz": quiz, "takeaway": takeaway}

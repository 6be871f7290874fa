"""Data for the story pages (1-6): attention needs order, the naive attempts, the sinusoid."""

from __future__ import annotations

import math
from collections import Counter
from typing import TypedDict

import numpy as np
import pandas as pd

from posenc._validate import check_float, check_int
from posenc.analysis.attention import permutation_equivariance, tokenize
from posenc.analysis.geometry import collisions, first_return, growth, length_dependence, token_embedding_norm
from posenc.registry import encode, get_scheme, signature
from posenc.schemes.learned import minilm_metadata
from posenc.schemes.naive import single_sine, unit_circle_points

# ----------------------------------------------------------------------------- result types
# One TypedDict per view: the keys a page reads, with their types.

class RawIndexGrowthView(TypedDict):
    """What ``raw_index_growth`` returns."""

    frame: pd.DataFrame
    context: int
    pe_norm: float
    pe_max: float
    token_norm: float
    minilm_token_norm: float
    ratio: float
    sinusoid_norm: float


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


class IndexLengthView(TypedDict):
    """What ``index_length_view`` returns."""

    values: pd.DataFrame
    summary: pd.DataFrame
    steps: pd.DataFrame
    position: int
    shortest: int
    at_position: pd.DataFrame
    max_change: float
    exercise: dict


class SingleSineView(TypedDict):
    """What ``single_sine_view`` returns."""

    points: pd.DataFrame
    curve: pd.DataFrame
    pairs: pd.DataFrame
    n_pairs: int
    closest: dict
    identity: dict
    first_return: dict
    period: float
    omega: float
    n: int
    eps: float


class CircleView(TypedDict):
    """What ``circle_view`` returns."""

    points: pd.DataFrame
    outline: pd.DataFrame
    labelled: list
    per_turn: int
    closest: dict
    turn_closest: dict
    sine_pairs: int
    curve: pd.DataFrame
    first_return: dict
    omega: float
    n: int
    eps: float


GROWTH_POINTS = 121  # log-spaced positions from 1 to 10^6 (plus the chosen context)


def raw_index_growth(context: int, d_model: int) -> RawIndexGrowthView:
    """Norm of the raw-index encoding against position (1 .. 10^6), next to embedding scales.

    Returns {"frame": DataFrame(position, norm, series) for the chart, "context": int,
    "pe_norm": ||PE(context - 1)||, "pe_max": max |PE(context - 1)|, "token_norm": 0.02 sqrt(d),
    "minilm_token_norm": median token-row norm of a trained MiniLM (d = 384), "ratio":
    pe_norm / token_norm, "sinusoid_norm": sqrt(d / 2) (for even d)}.
    """
    L = check_int("context", context, lo=2, hi=10**6)
    d = check_int("d_model", d_model, lo=1, hi=1024)
    pos = np.unique(np.concatenate([np.round(np.geomspace(1, 10**6, GROWTH_POINTS)), [L - 1]]))
    g = growth("raw_index", pos, d)
    s = growth("sinusoidal", pos, d)
    token = token_embedding_norm(d)
    trained = float(minilm_metadata()["reference_scalars"]["median_token_embedding_l2_norm"])
    frame = pd.concat(
        [
            pd.DataFrame({"position": pos, "norm": g["norm"], "series": "raw index ‖PE(t)‖ = t·√d"}),
            pd.DataFrame({"position": pos, "norm": s["norm"], "series": "sinusoid ‖PE(t)‖ (for contrast)"}),
            pd.DataFrame({"position": pos, "norm": np.full(pos.size, token), "series": "token embedding at init, 0.02·√d"}),
        ],
        ignore_index=True,
    )
    at = int(np.flatnonzero(pos == L - 1)[0])
    return {
        "frame": frame,
        "context": L,
        "pe_norm": float(g["norm"][at]),
        "pe_max": float(g["max_abs"][at]),
        "token_norm": token,
        "minilm_token_norm": trained,
        "ratio": float(g["norm"][at] / token),
        "sinusoid_norm": float(s["norm"][at]),
    }


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


# ----------------------------------------------------------------------------- page 3: index / length
MAX_SENTENCES = 4
STEP_CURVE_MAX_L = 64  # the step curve 1/L runs over L = 2 .. 64 (the longest sentence tokenize allows)


def index_length_view(sentences: tuple[str, ...], position: int = 0) -> IndexLengthView:
    """Index / length, PE(t) = (t + 1) / L, for each non-empty sentence (tokens counted from 1 as the article does).

    ``sentences``: up to 4 strings; empty ones are skipped (each keeps its box number in the labels).

    Returns {"values": DataFrame(sentence, t, token, value, L), one row per token;
    "summary": DataFrame(slot, sentence, L, first, step, last): slot is the 1-based input box; the first token's value 1/L, the step
    between neighbours (None for L = 1) and the last value L/L = 1;
    "steps": DataFrame(L, step) for L = 2 .. max(64, longest), step = PE(1) - PE(0) = 1/L;
    "position": int, "shortest": tokens in the shortest sentence (positions 0 .. shortest - 1 exist in all),
    "at_position": DataFrame(sentence, L, value) of that position in each sentence,
    "max_change": largest change of that position across the lengths (posenc.geometry.length_dependence),
    "exercise": {"L": 64, "value": the first token's value in a 64-token prompt}}.
    """
    if len(sentences) > MAX_SENTENCES:
        raise ValueError(f"at most {MAX_SENTENCES} sentences, got {len(sentences)}")
    texts = [(k, s.strip()) for k, s in enumerate(sentences) if isinstance(s, str) and s.strip()]  # (slot, text)
    if not texts:
        raise ValueError("type at least one sentence")
    p = check_int("position", position, lo=0, hi=STEP_CURVE_MAX_L - 1)
    frames, summary, lengths, names = [], [], [], []
    for k, text in texts:
        toks = _tokens(f"sentence {k + 1}", text)
        L = len(toks)
        v = encode("index_over_length", np.arange(L), 1, seq_len=L)[:, 0]  # (L,)
        short = text if len(text) <= 28 else text[:27] + "…"
        name = f"{k + 1}: {short} (L = {L})"
        frames.append(pd.DataFrame({"sentence": name, "t": np.arange(L), "token": toks, "value": v, "L": L}))
        summary.append({"slot": k + 1, "sentence": name, "L": L, "first": float(v[0]),
                        "step": float(v[1] - v[0]) if L > 1 else None, "last": float(v[-1])})
        lengths.append(L)
        names.append(name)
    shortest = min(lengths)
    if p >= shortest:
        raise ValueError(f"position {p} does not exist in the shortest sentence ({shortest} tokens); pick a position below {shortest}")
    dep = length_dependence("index_over_length", p, lengths, 1)
    Ls = np.arange(2, max(STEP_CURVE_MAX_L, max(lengths)) + 1)
    steps = [float(np.diff(encode("index_over_length", [0, 1], 1, seq_len=int(L))[:, 0])[0]) for L in Ls]
    return {
        "values": pd.concat(frames, ignore_index=True),
        "summary": pd.DataFrame(summary),
        "steps": pd.DataFrame({"L": Ls, "step": steps}),
        "position": p,
        "shortest": shortest,
        "at_position": pd.DataFrame({"sentence": names, "L": lengths, "value": dep["signatures"][:, 0]}),
        "max_change": float(dep["max_change"]),
        "exercise": {"L": STEP_CURVE_MAX_L,
                     "value": float(encode("index_over_length", [0], 1, seq_len=STEP_CURVE_MAX_L)[0, 0])},
    }


# ----------------------------------------------------------------------------- page 4: a single sine
SINE_SAMPLES_PER_STEP = 8  # the continuous curve between integer positions
MAX_LISTED_PAIRS = 20
IDENTITY_POSITION = 5.0  # the article: "position 5 gets sin(5), position 5 + 2 pi gets exactly the same number"


def single_sine_view(omega: float, n: int, eps: float) -> SingleSineView:
    """A single sine sin(omega t) at positions 0 .. n-1, and its collisions within eps.

    Returns {"points": DataFrame(t, value, partners, status): partners = how many other positions
    lie within eps; "curve": DataFrame(x, value) at fractional x (8 samples per step);
    "pairs": DataFrame(i, j, value_i, value_j, distance) of every pair within eps, closest first;
    "n_pairs": posenc.geometry.count_close_pairs (== len(pairs)); "closest": {"i", "j", "distance"}
    from posenc.geometry.collisions; "identity": {"t0", "t1" = t0 + 2 pi / omega, "v0", "v1",
    "diff"} by posenc.naive.single_sine; "first_return": {"position", "distance", "value"} of position 0
    within eps (posenc.geometry.first_return; position None and no value if none up to 100,000; value
    = sin(omega position)); "period": 2 pi / omega}.
    """
    w = check_float("omega", omega, lo=0.0, hi=100.0, lo_open=True)
    n = check_int("n", n, lo=2, hi=1024)
    eps = check_float("eps", eps, lo=0.0, hi=2.0)
    t = np.arange(n)
    value = signature("single_sine", t, 1, omega=w)[:, 0]  # (n,)
    col = collisions("single_sine", n, 1, eps=eps, omega=w)
    near = np.triu(np.abs(value[:, None] - value[None, :]) <= eps, 1)  # (n, n) pairs i < j within eps
    i, j = np.nonzero(near)
    dist = np.abs(value[i] - value[j])
    pairs = pd.DataFrame({"i": i, "j": j, "value_i": value[i], "value_j": value[j], "distance": dist})
    pairs = pairs.sort_values(["distance", "i", "j"], kind="stable", ignore_index=True)
    partners = near.sum(axis=0) + near.sum(axis=1)  # (n,)
    status = np.where(partners > 0, "within ε of another position", "no other position within ε")
    x = np.linspace(0.0, n - 1, (n - 1) * SINE_SAMPLES_PER_STEP + 1)
    t0, t1 = IDENTITY_POSITION, IDENTITY_POSITION + 2 * math.pi / w
    v0, v1 = single_sine([t0, t1], 1, omega=w)[:, 0]
    fr = first_return("single_sine", 1, eps=eps, omega=w)
    if fr["position"] is not None:
        fr = {**fr, "value": float(single_sine([fr["position"]], 1, omega=w)[0, 0])}
    return {
        "points": pd.DataFrame({"t": t, "value": value, "partners": partners, "status": status}),
        "curve": pd.DataFrame({"x": x, "value": single_sine(x, 1, omega=w)[:, 0]}),
        "pairs": pairs,
        "n_pairs": int(col["pairs_within_eps"]),
        "closest": {"i": col["i"], "j": col["j"], "distance": col["distance"]},
        "identity": {"t0": t0, "t1": t1, "v0": float(v0), "v1": float(v1), "diff": float(abs(v1 - v0))},
        "first_return": fr,
        "period": 2 * math.pi / w,
        "omega": w, "n": n, "eps": eps,
    }


# ----------------------------------------------------------------------------- page 5: one sin+cos pair
CURVE_LENGTHS = 60  # log-spaced context lengths for the closest-pair curve
MAX_CIRCLE_LABELS = 16


def circle_view(omega: float, n: int, n_max: int, eps: float) -> CircleView:
    """Positions 0 .. n-1 as points (sin wt, cos wt) on the unit circle, and how close they come.

    Returns {"points": DataFrame(t, x = cos wt, y = sin wt, turn, label): label is the position as
    text for the labelled points (the first turn, at most 16 evenly strided, plus the closest pair,
    written "i & j" on i when the two are closer than 0.1) and "" otherwise; "outline": DataFrame(x, y, order) of the unit circle; "labelled": list of
    labelled positions; "per_turn": positions per turn ceil(2 pi / omega); "closest": collisions
    ("sincos_pair", n, 2) as {"i", "j", "distance", "pairs_within_eps"}; "turn_closest": the same
    within the first turn (None if the first turn holds one position); "sine_pairs": pairs within eps
    of a single sine at the same n and omega (d = 1); "curve": DataFrame(n, distance, i, j) of the
    closest pair for 60 log-spaced context lengths 2 .. n_max; "first_return": {"position",
    "distance", "turns"} of position 0 within eps (posenc.geometry.first_return, d = 2; turns =
    omega position / 2 pi; position None and no turns if none up to 100,000)}.
    """
    w = check_float("omega", omega, lo=0.0, hi=100.0, lo_open=True)
    n = check_int("n", n, lo=2, hi=4096)
    n_max = check_int("n_max", n_max, lo=2, hi=100_000)
    eps = check_float("eps", eps, lo=0.0, hi=2.0)
    t = np.arange(n)
    pts = unit_circle_points(t, omega=w)  # (n, 2): sin, cos
    col = collisions("sincos_pair", n, 2, eps=eps, omega=w)
    per_turn = math.ceil(2 * math.pi / w)  # integer t >= 0 with w t < 2 pi
    first_turn = np.arange(min(per_turn, n))
    stride = max(1, math.ceil(first_turn.size / MAX_CIRCLE_LABELS))
    labelled = sorted(set(first_turn[::stride].tolist()) | {col["i"], col["j"]})
    label = np.full(n, "", dtype=object)
    label[labelled] = [str(p) for p in labelled]
    if col["distance"] < 0.1:  # the closest pair nearly coincides: one label "i & j" instead of two on top of each other
        label[col["i"]], label[col["j"]] = f"{col['i']} & {col['j']}", ""
    turn_closest = None
    if min(per_turn, n) >= 2:
        tc = collisions("sincos_pair", min(per_turn, n), 2, eps=eps, omega=w)
        turn_closest = {"i": tc["i"], "j": tc["j"], "distance": tc["distance"]}
    lengths = np.unique(np.round(np.geomspace(2, n_max, CURVE_LENGTHS)).astype(np.int64))
    curve = [collisions("sincos_pair", int(m), 2, eps=eps, omega=w) for m in lengths]  # exact, O(m) each
    ring = unit_circle_points(np.linspace(0.0, 2 * math.pi, 181), omega=1.0)  # (181, 2)
    fr = first_return("sincos_pair", 2, eps=eps, omega=w)
    if fr["position"] is not None:
        fr = {**fr, "turns": fr["position"] * w / (2 * math.pi)}
    return {
        "points": pd.DataFrame({"t": t, "x": pts[:, 1], "y": pts[:, 0], "turn": np.floor(w * t / (2 * math.pi)).astype(np.int64), "label": label}),
        "outline": pd.DataFrame({"x": ring[:, 1], "y": ring[:, 0], "order": np.arange(ring.shape[0])}),
        "labelled": labelled,
        "per_turn": per_turn,
        "closest": {k: col[k] for k in ("i", "j", "distance", "pairs_within_eps")},
        "turn_closest": turn_closest,
        "sine_pairs": int(collisions("single_sine", n, 1, eps=eps, omega=w)["pairs_within_eps"]),
        "curve": pd.DataFrame({"n": lengths, "distance": [c["distance"] for c in curve], "i": [c["i"] for c in curve], "j": [c["j"] for c in curve]}),
        "first_return": fr,
        "omega": w, "n": n, "eps": eps,
    }

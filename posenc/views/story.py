"""Data for the story pages: the naive attempts (raw index, index / length, a single sine, one
sin+cos pair); the page "Attention needs order" lives in posenc.views.attention.

axes: n positions, d model width, L prompt length (tokens), f curve samples.

Each view also returns what its page says in words, computed at the page's settings: the
exercise ("quiz": key, question, answer, tolerance, explanation, and what on the page would give
the answer away) and the closing box ("takeaway": {"shows": [...], "wrong": [...]}, each claim a
string, or (string, quiz key) when it states that quiz's answer and must wait for the reveal).
"""

from __future__ import annotations

import math
from typing import TypedDict

import numpy as np
import pandas as pd

from posenc._validate import check_float, check_int
from posenc.analysis.geometry import collisions, growth, length_dependence, token_embedding_norm
from posenc.registry import encode, signature
from posenc.schemes.learned import minilm_metadata
from posenc.schemes.naive import single_sine
from posenc.views.attention import (  # noqa: F401  (re-exported: the attention page's view lived here)
    AttentionView,
    _tokens,
    attention_view,
    format_difference,
    format_tokens,
)
from posenc.views.circle import CircleView, circle_view  # noqa: F401  (re-exported: the page-5 view lived here)
from posenc.views.returns import HELD_NOTE, RETURN_LIMIT, return_after_leaving, returns_to_start

# ----------------------------------------------------------------------------- result types
# One TypedDict per view: the keys a page reads, with their types.

class RawIndexGrowthView(TypedDict):
    """What ``raw_index_growth`` returns."""

    frame: pd.DataFrame
    positions: tuple
    context: int
    pe_norm: float
    pe_max: float
    token_norm: float
    minilm_token_norm: float
    ratio: float
    sinusoid_norm: float
    quiz: dict
    takeaway: dict


class IndexLengthView(TypedDict):
    """What ``index_length_view`` returns."""

    values: pd.DataFrame
    summary: pd.DataFrame
    steps: pd.DataFrame
    position: int
    shortest: int
    at_position: pd.DataFrame
    missing: list
    max_change: float | None
    lengths: tuple
    quiz: dict
    takeaway: dict


class SingleSineView(TypedDict):
    """What ``single_sine_view`` returns."""

    points: pd.DataFrame
    curve: pd.DataFrame
    pairs: pd.DataFrame
    n_pairs: int
    closest: dict
    identity: dict
    first_return: dict | None
    period: float
    omega: float
    n: int
    eps: float
    quiz: dict
    takeaway: dict


GROWTH_POINTS = 121  # log-spaced positions from 1 to 10^6 (plus the chosen context)
def _num(x: float) -> str:
    """A number for a sentence: 6 significant digits, whole with thousands separators from 10^5 on (no "e+06")."""
    return f"{x:,.0f}" if abs(x) >= 1e5 else f"{x:,.6g}"


# ----------------------------------------------------------------------------- page 2: raw index
def raw_index_growth(context: int, d_model: int) -> RawIndexGrowthView:
    """Norm of the raw-index encoding against position (1 .. 10^6), next to embedding scales.

    Returns {"frame": DataFrame(position, norm, series) for the chart, "positions": the plotted
    positions, "context": int, "pe_norm": ||PE(context - 1)||, "pe_max": max |PE(context - 1)|,
    "token_norm": 0.02 sqrt(d), "minilm_token_norm": median token-row norm of a trained MiniLM
    (d = 384), "ratio": pe_norm / token_norm, "sinusoid_norm": sqrt(d / 2) (for even d), "quiz",
    "takeaway"}.
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
    norm, ratio = float(g["norm"][at]), float(g["norm"][at] / token)
    last = L - 1
    quiz = {
        "key": "raw_ratio",
        "question": f"With d_model = {d}, how many times larger than a freshly initialised token embedding is the "
                    f"raw-index encoding at position {last:,}?",
        "answer": round(ratio, 1), "tolerance": 0.05 * ratio,
        "explanation": f"‖PE‖ / ‖e‖ = {_num(norm)} / {token:.4g} = {_num(ratio)}. Both norms carry the same √d, so the ratio "
                       f"is t / 0.02 = 50·t whatever the width: the content signal is drowned as soon as t is more than a few.",
    }
    takeaway = {
        "shows": [f"Every position gets its own vector: position t adds t to each of the {d} channels, so neighbours "
                  f"are √d = {math.sqrt(d):.4g} apart and no two positions collide."],
        "wrong": [(f"Unbounded: at position {last:,} every channel holds {last:,} (‖PE‖ = {_num(norm)}), while the token "
                   f"embedding it is added to has norm {token:.4g} at initialisation and {trained:.3f} when trained.",
                   "raw_ratio"),  # the two norms' quotient is the exercise's answer
                  "Next, divide by the prompt length to keep the values in (0, 1]."],
    }
    return {
        "frame": frame, "positions": tuple(float(p) for p in pos), "context": L,
        "pe_norm": norm, "pe_max": float(g["max_abs"][at]), "token_norm": token, "minilm_token_norm": trained,
        "ratio": ratio, "sinusoid_norm": float(s["norm"][at]), "quiz": quiz, "takeaway": takeaway,
    }


# ----------------------------------------------------------------------------- page 3: index / length
MAX_SENTENCES = 4
STEP_CURVE_MAX_L = 64  # the step curve 1/L runs over L = 2 .. 64 (the longest sentence tokenize allows)
EXERCISE_L = 100  # the exercise's prompt length: longer than any sentence the boxes take, so never on the page


def sentence_label(slot: int, L: int) -> str:
    """The legend name of sentence box ``slot`` (1-based): short by rule, the text itself goes in the table."""
    return f"sentence {slot} (L = {L})"


def index_length_view(sentences: tuple[str, ...], position: int = 1) -> IndexLengthView:
    """Index / length: token t of an L-token prompt gets t / L, t = 1 ... L (tokens counted from 1,
    as the article does: "for length 2: 1/2, 2/2").  posenc's index_over_length is 0-based
    (position p gets (p + 1) / L); here t = p + 1 throughout.

    ``sentences``: up to 4 strings; empty ones are skipped (each keeps its box number).
    ``position``: the token t (1 = the first) to follow across the sentences; a sentence shorter
    than t is listed in "missing" and left out of that comparison only (every chart keeps it).

    Returns {"values": DataFrame(sentence, t, token, value, L), one row per token; "summary":
    DataFrame(slot, sentence (label), text, L, first, step, last, at_position (NaN if missing));
    "steps": DataFrame(L, step) for L = 2 .. max(64, longest), step = 1/L; "position": t;
    "at_position": DataFrame(sentence, L, value) of token t where it exists; "missing": labels of
    the sentences shorter than t; "max_change": largest change of token t across the sentences
    that have it (posenc.geometry.length_dependence; None if fewer than two do); "lengths"; "quiz";
    "takeaway"}.
    """
    if len(sentences) > MAX_SENTENCES:
        raise ValueError(f"at most {MAX_SENTENCES} sentences, got {len(sentences)}")
    texts = [(k, s.strip()) for k, s in enumerate(sentences) if isinstance(s, str) and s.strip()]  # (slot, text)
    if not texts:
        raise ValueError("type at least one sentence")
    t = check_int("position", position, lo=1, hi=STEP_CURVE_MAX_L)
    frames, summary = [], []
    for k, text in texts:
        toks = _tokens(f"sentence {k + 1}", text)
        L = len(toks)
        v = encode("index_over_length", np.arange(L), 1, seq_len=L)[:, 0]  # (L,) token t = p + 1 gets t / L
        name = sentence_label(k + 1, L)
        frames.append(pd.DataFrame({"sentence": name, "t": np.arange(1, L + 1), "token": toks, "value": v, "L": L}))
        summary.append({"slot": k + 1, "sentence": name, "text": text, "L": L, "first": float(v[0]),
                        "step": float(v[1] - v[0]) if L > 1 else None, "last": float(v[-1]),
                        "at_position": float(v[t - 1]) if t <= L else float("nan")})
    summary = pd.DataFrame(summary)
    have = summary[summary["L"] >= t]
    missing = summary.loc[summary["L"] < t, "sentence"].tolist()
    max_change = None
    if len(have) >= 2:
        max_change = float(length_dependence("index_over_length", t - 1, have["L"].tolist(), 1)["max_change"])
    Ls = np.arange(2, max(STEP_CURVE_MAX_L, int(summary["L"].max())) + 1)
    steps = [float(np.diff(encode("index_over_length", [0, 1], 1, seq_len=int(L))[:, 0])[0]) for L in Ls]
    answer = float(encode("index_over_length", [t - 1], 1, seq_len=EXERCISE_L)[0, 0])
    first = summary.iloc[0]
    shown_in = (f"in {first['sentence']} the same token gets {first['at_position']:.4g}" if first["L"] >= t else
                f"{first['sentence']} has no token {t} at all")
    quiz = {
        "key": "index_t", "question": f"In a prompt of {EXERCISE_L} tokens, what value does token t = {t} get?",
        "answer": round(answer, 6), "tolerance": 5e-4,
        "explanation": f"{t}/{EXERCISE_L} = {answer:.6g}, while {shown_in}. The model never sees one fixed value for "
                       f"“token {t}”.",
    }
    lens = summary["L"].tolist()
    follow, values = (t, have["at_position"]) if len(have) >= 2 else (1, summary["first"])
    spread = (f"token {follow} gets " + ", ".join(f"{x:.4g}" for x in values) + " in prompts of "
              + ", ".join(map(str, (have if follow == t else summary)["L"])) + " tokens")
    step_txt = ", ".join(f"1/{L} = {1 / L:.4g}" for L in lens if L > 1)
    takeaway = {
        "shows": [f"Bounded: every value lies in (0, 1]; the last token of every prompt gets exactly {summary['last'].max():g}."],
        "wrong": [f"The same position means different things: {spread}." if len(lens) > 1 else
                  "Type a second sentence: the same position gets a different value in a prompt of another length.",
                  "Not continuous: the step between neighbours is set by the prompt length, not by the position ("
                  + (step_txt or "a one-token prompt has no step") + "): a count of tokens divided by L, a discrete step "
                  "dressed up as a float.",
                  "Not relative: the gap between two tokens k apart is k/L, a different number in every prompt."],
    }
    return {
        "values": pd.concat(frames, ignore_index=True),
        "summary": summary,
        "steps": pd.DataFrame({"L": Ls, "step": steps}),
        "position": t,
        "at_position": have[["sentence", "L", "at_position"]].rename(columns={"at_position": "value"}).reset_index(drop=True),
        "missing": missing,
        "max_change": max_change,
        "lengths": tuple(int(x) for x in lens),
        "quiz": quiz,
        "takeaway": takeaway,
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
    "diff"} by posenc.naive.single_sine; "first_return": return_after_leaving of position 0 within
    eps over 100,000 positions, with "value" = sin(omega position) and "half_turns" = the nearest
    multiple k of pi/omega (None if it never comes back); "period": 2 pi / omega; "quiz"; "takeaway"}.
    """
    w = check_float("omega", omega, lo=0.0, hi=100.0, lo_open=True)
    n = check_int("n", n, lo=2, hi=1024)
    eps = check_float("eps", eps, lo=0.0, hi=2.0)
    t = np.arange(n)
    value = signature("single_sine", t, 1, omega=w)[:, 0]  # (n,)
    col = collisions("single_sine", n, 1, eps=eps, omega=w)
    near = np.triu(np.abs(value[:, None] - value[None, :]) <= eps, 1)  # (n, n) pairs i < j within eps
    i, j = np.nonzero(near)
    pairs = pd.DataFrame({"i": i, "j": j, "value_i": value[i], "value_j": value[j], "distance": np.abs(value[i] - value[j])})
    pairs = pairs.sort_values(["distance", "i", "j"], kind="stable", ignore_index=True)
    partners = near.sum(axis=0) + near.sum(axis=1)  # (n,)
    status = np.where(partners > 0, "within ε of another position", "no other position within ε")
    x = np.linspace(0.0, n - 1, (n - 1) * SINE_SAMPLES_PER_STEP + 1)
    t0, t1 = IDENTITY_POSITION, IDENTITY_POSITION + 2 * math.pi / w
    v0, v1 = single_sine([t0, t1], 1, omega=w)[:, 0]
    far = signature("single_sine", np.arange(RETURN_LIMIT + 1), 1, omega=w)[:, 0]  # (m,)
    fr = return_after_leaving(np.abs(far - far[0]), eps)
    if fr is not None:
        fr = {**fr, "value": float(far[fr["position"]]), "half_turns": int(round(w * fr["position"] / math.pi))}
    closest = {"i": col["i"], "j": col["j"], "distance": col["distance"]}
    return {
        "points": pd.DataFrame({"t": t, "value": value, "partners": partners, "status": status}),
        "curve": pd.DataFrame({"x": x, "value": single_sine(x, 1, omega=w)[:, 0]}),
        "pairs": pairs, "n_pairs": int(col["pairs_within_eps"]), "closest": closest,
        "identity": {"t0": t0, "t1": t1, "v0": float(v0), "v1": float(v1), "diff": float(abs(v1 - v0))},
        "first_return": fr, "period": 2 * math.pi / w, "omega": w, "n": n, "eps": eps,
        "quiz": _sine_quiz(w, eps, fr, closest),
        "takeaway": _sine_takeaway(n, eps, closest, int(col["pairs_within_eps"]), fr),
    }


def sine_shown(view: SingleSineView, revealed: bool) -> dict:
    """What the single sine's chart and list draw: the ``MAX_LISTED_PAIRS`` closest pairs within ε and the ringed
    closest pair.  Until the first-return exercise is ``revealed`` they leave out the pairs that return to position 0
    (``returns.returns_to_start``: the first is the answer, any other bounds it), and the ring goes to the closest pair
    left (None: none).  Returns {"pairs", "ring": (i, j) or None, "held": whether a pair that would have been drawn was
    left out, "sentence": what the links and the ring show}."""
    pairs, close, fr = view["pairs"], view["closest"], view["first_return"]
    back = np.zeros(len(pairs), dtype=bool) if revealed else returns_to_start(pairs["i"].to_numpy(), pairs["j"].to_numpy(), fr)
    ring_back = not revealed and view["quiz"]["gives_away"]  # the closest pair is a return to position 0
    shown = pairs[~back].head(MAX_LISTED_PAIRS).reset_index(drop=True)
    ring = (close["i"], close["j"]) if not ring_back else ((int(shown["i"][0]), int(shown["j"][0])) if len(shown) else None)
    held = bool(back[:MAX_LISTED_PAIRS].any()) or ring_back
    links = (f"Dashed links join the {len(shown)} closest of the {view['n_pairs']:,} pairs within ε" if len(shown)
             else "No dashed link" + (" yet" if held else f": no pair lies within ε = {view['eps']:g}"))
    if ring:
        links += f"; the ringed pair ({ring[0]}, {ring[1]}) is the closest of all" + (" the others" if ring_back else "")
    return {"pairs": shown, "ring": ring, "held": held, "sentence": links + "." + (f" {HELD_NOTE}" if held else "")}


def _sine_quiz(w: float, eps: float, fr: dict | None, closest: dict) -> dict:
    q = {"key": "first_return", "gives_away": bool(returns_to_start(closest["i"], closest["j"], fr))}  # the answer, or a bound
    if fr is None:  # a sine that never leaves eps (or never returns within 100,000): ask about the period instead
        return {**q, "question": f"With ω = {w:g}, how many positions does one full period of the sine span (2π/ω, to 0.1)?",
                "answer": round(2 * math.pi / w, 1), "tolerance": 0.05,
                "explanation": f"2π/{w:g} = {2 * math.pi / w:.6g} positions: after that the hand is back where it started."}
    k, p = fr["half_turns"], fr["position"]
    turns = f"{k // 2} full turn" + ("s" if k // 2 != 1 else "")
    where = f"{turns} on, where the sine crosses zero going up again" if k % 2 == 0 else (
        f"{k} half-turn{'s' if k != 1 else ''} on, where the sine crosses zero going *down*: one number cannot tell "
        "going up from going down")
    return {**q,
            "question": f"With ω = {w:g} the sine starts at sin(0) = 0 and moves away. At which integer position does it "
                        f"first come back within ε = {eps:g} of that value?",
            "answer": p, "tolerance": 0,
            "explanation": f"Position {p}: sin(ω·{p}) = {fr['value']:.5g}, only {fr['distance']:.3g} from sin(0) = 0. It left "
                           f"the band at position {fr['left_at']} and came back next to {k}π/ω = {k * math.pi / w:.5g}, "
                           f"{where}."}


def _sine_takeaway(n: int, eps: float, closest: dict, n_pairs: int, fr: dict | None) -> dict:
    pair = (f"Positions {closest['i']} and {closest['j']} differ by {closest['distance']:.3g}: a collision.")
    hide = "first_return" if returns_to_start(closest["i"], closest["j"], fr) else None
    return {
        "shows": ["Bounded: every value lies in [−1, 1], at position 10 and at position 10⁶ alike.",
                  "Continuous: sin(ωt) is defined between the integers (the grey curve), with a slope of at most ω."],
        "wrong": [(pair, hide) if hide else pair,
                  f"{n_pairs:,} pairs of the {n:,} positions lie within ε = {eps:g} of each other: one number per position "
                  "is the second hand of a clock.",
                  "Next: a second number, the cosine, tells the rising half of the turn from the falling one."],
    }



# ----------------------------------------------------------------------------- attention needs order: the recurrence


RNN_SEED = 1  # the recurrence's weights (the attention layer's are seed 0)


def recurrence_view(sentence_a: str, sentence_b: str, d_model: int = 16) -> dict:
    """The contrast the article draws: an RNN reads tokens one after another, h_t = tanh(W h_(t−1) + U x_t), so order
    is baked into the computation.  The same seeded token embeddings as the attention layer, no positions anywhere.

    Returns {"frame": (sentence, step, token, gap) with gap = max |h_A(t) − h_B(t)| at each step (both sentences), "final"
    (max |h_A − h_B| of the last hidden states, 0 only if the sentences are the same sequence), "attention" (max |pooled
    A − pooled B| of the attention layer without positions), "same_sequence", "words"}."""
    from posenc.analysis.attention import permutation_equivariance, token_embeddings, tokenize

    d = check_int("d_model", d_model, lo=2, hi=256)
    ta, tb = tokenize(sentence_a), tokenize(sentence_b)
    if not ta or not tb:
        raise ValueError("both sentences need at least one token")
    rng = np.random.default_rng(RNN_SEED)
    W = rng.standard_normal((d, d)) / math.sqrt(d)  # (d, d) recurrent weights
    U = rng.standard_normal((d, d)) / math.sqrt(d)  # (d, d) input weights

    def run(tokens: list[str]) -> np.ndarray:
        X = token_embeddings(tokens, d)  # (n, d)
        h, hs = np.zeros(d), []
        for x in X:
            h = np.tanh(W @ h + U @ x)
            hs.append(h)
        return np.vstack(hs)  # (n, d)

    ha, hb = run(ta), run(tb)
    n = min(len(ta), len(tb))
    gaps = np.max(np.abs(ha[:n] - hb[:n]), axis=1)  # (n,)
    frame = pd.DataFrame({"step": np.arange(1, n + 1), "token_a": ta[:n], "token_b": tb[:n], "gap": gaps})
    final = float(np.max(np.abs(ha[-1] - hb[-1]))) if ha.shape == hb.shape else float("inf")
    attention = permutation_equivariance(sentence_a, sentence_b, d_model=d)["max_diff_pooled"]
    same = ta == tb
    words = (f"The recurrence's last hidden states differ by **{_num(final)}** (max |h_A − h_B|) with no positional "
             f"encoding at all; the attention layer's sentence summaries differ by **{_num(attention)}**. "
             + ("The two sentences are the same sequence, so nothing can differ."
                if same else "Reading token after token puts the order into the state itself."))
    return {"frame": frame, "final": final, "attention": float(attention), "same_sequence": same, "words": words}

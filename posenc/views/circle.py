"""Data for the page "One sin+cos pair": positions as points on the unit circle, how close they
come within a turn and across turns, and the exercise and closing claims of the page.

axes: n positions, m context lengths of the closest-pair curve.
"""

from __future__ import annotations

import math
from typing import TypedDict

import numpy as np
import pandas as pd

from posenc._validate import check_float, check_int
from posenc.analysis.geometry import collisions
from posenc.registry import signature
from posenc.schemes.naive import unit_circle_points
from posenc.views.returns import HELD_NOTE, RETURN_LIMIT, return_after_leaving, returns_to_start


class CircleView(TypedDict):
    """What ``circle_view`` returns."""

    points: pd.DataFrame
    outline: pd.DataFrame
    labelled: list
    turn_labels: list
    per_turn: int
    closest: dict
    turn_closest: dict
    sine_pairs: int
    curve: pd.DataFrame
    first_return: dict | None
    omega: float
    n: int
    eps: float
    quiz: dict
    takeaway: dict


# ----------------------------------------------------------------------------- page 5: one sin+cos pair
CURVE_LENGTHS = 60  # log-spaced context lengths for the closest-pair curve
MAX_CIRCLE_LABELS = 16
HELD = "named once the exercise is revealed"  # the curve's pair, in its tooltip, when it returns to position 0


def circle_view(omega: float, n: int, n_max: int, eps: float) -> CircleView:
    """Positions 0 .. n-1 as points (sin wt, cos wt) on the unit circle, and how close they come.

    Returns {"points": DataFrame(t, x = cos wt, y = sin wt, turn, label): label is the position as
    text for the labelled points (the first turn, at most 16 evenly strided, plus the closest pair,
    written "i & j" on i when the two are closer than 0.1) and "" otherwise; "outline": DataFrame(x, y, order) of the unit circle; "labelled": list of
    labelled positions; "turn_labels": the first turn's among them; "per_turn": positions per turn ceil(2 pi / omega); "closest": collisions
    ("sincos_pair", n, 2) as {"i", "j", "distance", "pairs_within_eps"}; "turn_closest": the same
    within the first turn (None if the first turn holds one position); "sine_pairs": pairs within eps
    of a single sine at the same n and omega (d = 1); "curve": DataFrame(n, distance, i, j, pair) of the
    closest pair for 60 log-spaced context lengths 2 .. n_max (pair: "i and j", as its tooltip prints it);
    "first_return": return_after_leaving of position 0's point within eps over 100,000 positions, with "turns" = omega position / 2 pi (None if
    it never comes back); "quiz"; "takeaway"}.
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
    labelled, label = _labels(n, first_turn[::stride].tolist(), col)
    turn_closest = None
    if min(per_turn, n) >= 2:
        tc = collisions("sincos_pair", min(per_turn, n), 2, eps=eps, omega=w)
        turn_closest = {"i": tc["i"], "j": tc["j"], "distance": tc["distance"]}
    lengths = np.unique(np.round(np.geomspace(2, n_max, CURVE_LENGTHS)).astype(np.int64))
    curve = [collisions("sincos_pair", int(m), 2, eps=eps, omega=w) for m in lengths]  # exact, O(m) each
    ring = unit_circle_points(np.linspace(0.0, 2 * math.pi, 181), omega=1.0)  # (181, 2)
    far = signature("sincos_pair", np.arange(RETURN_LIMIT + 1), 2, omega=w)  # (m, 2)
    fr = return_after_leaving(np.linalg.norm(far - far[0], axis=1), eps)
    if fr is not None:
        fr = {**fr, "turns": fr["position"] * w / (2 * math.pi)}
    closest = {k: col[k] for k in ("i", "j", "distance", "pairs_within_eps")}
    sine_pairs = int(collisions("single_sine", n, 1, eps=eps, omega=w)["pairs_within_eps"])
    return {
        "points": pd.DataFrame({"t": t, "x": pts[:, 1], "y": pts[:, 0], "turn": np.floor(w * t / (2 * math.pi)).astype(np.int64),
                                "label": label}),
        "outline": pd.DataFrame({"x": ring[:, 1], "y": ring[:, 0], "order": np.arange(ring.shape[0])}),
        "labelled": labelled, "turn_labels": first_turn[::stride].tolist(), "per_turn": per_turn, "closest": closest,
        "turn_closest": turn_closest,
        "sine_pairs": sine_pairs,
        "curve": pd.DataFrame({"n": lengths, "distance": [c["distance"] for c in curve], "i": [c["i"] for c in curve],
                               "j": [c["j"] for c in curve], "pair": [f"{c['i']} and {c['j']}" for c in curve]}),
        "first_return": fr, "omega": w, "n": n, "eps": eps,
        "quiz": _circle_quiz(w, eps, fr, closest),
        "takeaway": _circle_takeaway(n, per_turn, turn_closest, closest, sine_pairs, eps, fr, curve[-1], int(lengths[-1])),
    }


def _labels(n: int, turn: list[int], pair: dict | None) -> tuple[list[int], np.ndarray]:
    """The labelled positions and the label column: the first turn's strided positions ``turn``, plus the closest
    ``pair`` (None: left out), written "i & j" on i when the two are closer than 0.1 (one label, not two on top of each
    other)."""
    labelled = sorted(set(turn) | ({pair["i"], pair["j"]} if pair else set()))
    label = np.full(n, "", dtype=object)
    label[labelled] = [str(p) for p in labelled]
    if pair and pair["distance"] < 0.1:
        label[pair["i"]], label[pair["j"]] = f"{pair['i']} & {pair['j']}", ""
    return labelled, label


def circle_shown(view: CircleView, revealed: bool) -> dict:
    """What the circle and the closest-distance curve draw: until the first-return exercise is ``revealed``, no label
    names the closest pair when it is a return to position 0 (the quiz's "gives_away") or a position of the first turn
    at or past the first return (``returns_to_start`` from 0), and the curve's tooltip leaves
    out the pairs that are (``returns_to_start``).  Returns {"points", "labelled", "curve", "held": whether anything was
    left out, "label_note" and "curve_note": what the two captions add about it}."""
    if revealed or view["first_return"] is None:
        return {"points": view["points"], "labelled": view["labelled"], "curve": view["curve"], "held": False,
                "label_note": "", "curve_note": ""}
    pair = None if view["quiz"]["gives_away"] else view["closest"]
    # a strided label of the first turn can fall on the answer too: at ω = 0.12 and ε = 0.1, "52" printed beside "0"
    turn = [p for p in view["turn_labels"] if not returns_to_start(0, p, view["first_return"])]
    labelled, label = _labels(view["n"], turn, pair)
    curve = view["curve"].astype({"i": "Int64", "j": "Int64"})
    start = returns_to_start(view["curve"]["i"].to_numpy(), view["curve"]["j"].to_numpy(), view["first_return"])
    curve.loc[start, ["i", "j"]] = pd.NA
    curve.loc[start, "pair"] = HELD
    cut = len(turn) < len(view["turn_labels"])
    held = bool(start.any()) or pair is None or cut
    note = (" unless it is a return to position 0" if held else "") + ("; the first turn's labels at or past position 0's "
                                                                      "first return wait for the reveal" if cut else "")
    return {"points": view["points"].assign(label=label), "labelled": labelled, "curve": curve, "held": held,
            "label_note": note, "curve_note": f" {HELD_NOTE}" if held else ""}


def _circle_quiz(w: float, eps: float, fr: dict | None, closest: dict) -> dict:
    q = {"key": "first_return", "gives_away": bool(returns_to_start(closest["i"], closest["j"], fr))}  # the answer, or a bound
    if fr is None:
        return {**q, "question": f"With ω = {w:g}, how many positions does one full turn of the circle take (2π/ω, to 0.1)?",
                "answer": round(2 * math.pi / w, 1), "tolerance": 0.05,
                "explanation": f"2π/{w:g} = {2 * math.pi / w:.6g} positions: after that the point is back where it started."}
    p = fr["position"]
    return {**q,
            "question": f"With ω = {w:g} the point starts at position 0 and moves round the circle. At which position does "
                        f"it first come back within ε = {eps:g} of where it started?",
            "answer": p, "tolerance": 0,
            "explanation": f"Position {p}, at distance {fr['distance']:.4g}: it left the ε-disc at position {fr['left_at']} "
                           f"and came back after {fr['turns']:.2f} turns. Unlike the sine alone, the point cannot come back "
                           "half-way round: the cosine tells the two halves apart."}


def _circle_takeaway(n, per_turn, turn_closest, closest, sine_pairs, eps, fr, longest, n_max) -> dict:
    inside = (f"Within the first turn ({per_turn} positions) the closest two points are {turn_closest['distance']:.4f} apart: "
              "every position is a different point." if turn_closest else "At this ω each turn holds a single position.")
    offset = closest["j"] - closest["i"]
    pair = (f"Across turns it collides: positions {closest['i']} and {closest['j']} ({offset} apart) are "
            f"{closest['distance']:.3g} apart, and at n = {n_max:,} the closest pair is {longest['distance']:.2g}.")
    hide = "first_return" if returns_to_start(closest["i"], closest["j"], fr) else None
    return {
        "shows": [inside,
                  f"Far fewer collisions than a sine alone: {closest['pairs_within_eps']:,} pairs within ε = {eps:g} "
                  f"against {sine_pairs:,} for sin(ωt) at the same positions.",
                  "Relative: PE(p)·PE(p+k) = cos(kω) depends on the offset k only."],
        "wrong": [(pair, hide) if hide else pair,
                  "One frequency cannot keep a long context apart; the sinusoid packs many frequencies into d dimensions."],
    }

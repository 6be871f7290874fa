"""Data for the sinusoid page's "why 10000" section: a measurement over bases 10 ... 10^8 at the
chosen d and context length n.

axes: n positions, d = d_model, h = d // 2 frequency pairs, k offsets 0 .. n-1, b bases.

For the sinusoid at even d the shift PE(p) -> PE(p + k) is a rotation, so everything depends on
the offset k alone (posenc.scores.offset_profile, exact):

    PE(p) . PE(p + k) = sum_i cos(k w_i),   ||PE(p + k) - PE(p)||^2 = d - 2 sum_i cos(k w_i).

Per base: the shortest and longest wavelengths, how many pairs complete a turn within n, how
many barely move (turn less than one radian over the whole context), the neighbour distance
(k = 1) against the closest non-neighbour pair (k >= 2), and the dot product against k: whether
it falls to half of its value at k = 0 and how high it climbs back after that.

The verdicts: a base is *too small* when even its slowest pair turns fully within the context
(no channel keeps growing with distance: far looks like near); *too large* when more than half
of its pairs turn less than a radian over the whole context (they hardly change: wasted
dimensions); and it *collides* when two positions k >= 2 apart are closer than neighbours.
"""

from __future__ import annotations

import math
from typing import TypedDict

import numpy as np
import pandas as pd

from posenc._validate import check_choice, check_float, check_int
from posenc.analysis.geometry import collisions
from posenc.analysis.scores import offset_profile
from posenc.schemes.sinusoidal import LAYOUTS, sinusoid_frequencies, sinusoidal
from posenc.views.sinusoid import MAX_D, MAX_N, _even_d, spectrum_view, without_answer

WHY_BASES = tuple(10.0 ** e for e in range(1, 9))  # 10, 100, ..., 10^8
DOT_BASES = (10.0, 100.0, 1e3, 1e4, 1e6, 1e8)  # drawn on the dot-product chart (plus the chosen base)
MAX_DOT_OFFSETS = 1024  # offsets drawn per base on the dot-product chart
FROZEN_RADIANS = 1.0  # a pair that turns less than this over the whole context barely moves
LONGEST = "longest wavelength"  # the table column that holds the wavelength exercise's answer
# The chosen base's series on the two charts: one legend entry whatever the base (its value is in the tooltip and the
# table), so that a new base only swaps the charts' data (a legend naming it would change their spec:
# docs/performance.md, section 8).  When the chosen base is one of the fixed ones, its curve is drawn twice, the thick one on top.
YOUR_BASE = "your base"


class ClosestPairSinusoidView(TypedDict):
    """What ``closest_pair_sinusoid`` returns."""

    distance: float
    i: int
    j: int
    offset: int
    method: str


class WhyBaseView(TypedDict):
    """What ``why_base_view`` returns."""

    closest: dict
    caption: str
    conclusion: str
    table: pd.DataFrame
    chosen_row: int
    lines: pd.DataFrame
    dots: pd.DataFrame
    bases: list
    line_series: list
    dot_series: list
    your_base: str
    settings: str
    rows: list
    too_small: list
    too_large: list
    good: list


def closest_pair_sinusoid(n: int, d: int, base: float, layout: str) -> ClosestPairSinusoidView:
    """The closest pair of positions among 0 .. n-1: {"distance", "i", "j", "offset", "method"}.

    posenc.geometry.collisions: for the sinusoid at even d the shift PE(p) -> PE(p + k) is the
    rotation M_k, so ||PE(p+k) - PE(p)||^2 = d - 2 sum_i cos(k w_i) depends only on k and the
    closest pair is the closest offset -- exact in O(n d).  Layout-free: the layouts are a column
    permutation, which keeps every distance.
    """
    n = check_int("n", n, lo=2, hi=MAX_N)
    d = _even_d("d_model", d, MAX_D)
    layout = check_choice("layout", layout, LAYOUTS)
    c = collisions("sinusoidal", n, d, base=base, layout=layout)
    method = {"offsets": "the offset relation d − 2Σcos(kω) (exact)", "kd-tree": "a KD-tree over all positions"}[c["method"]]
    return {"distance": c["distance"], "i": c["i"], "j": c["j"], "offset": c["j"] - c["i"], "method": method}


def base_label(b: float) -> str:
    """10 -> "10", 10000 -> "10,000", 1e8 -> "10⁸"; other bases as they are typed."""
    e = math.log10(b)
    if abs(e - round(e)) < 1e-12 and round(e) >= 6:
        return "10" + str(int(round(e))).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{b:,.6g}"


def measure_base(n: int, d: int, base: float, layout: str = "interleaved") -> dict:
    """The measured row of one base (see the module docstring), with its dot-product profile."""
    spec = spectrum_view(d, base, n, layout)
    k = np.arange(n, dtype=np.float64)  # (n,) offsets 0 .. n-1
    dot = offset_profile("sinusoidal", k, d=d, base=base, layout=layout)  # (n,) sum_i cos(k w_i)
    peak = float(dot[0])  # d / 2
    dist = np.sqrt(np.maximum(d - 2.0 * dot, 0.0))  # (n,) ||PE(p+k) - PE(p)||
    omega = sinusoid_frequencies(d, base=base)  # (h,)
    row = {
        "base": base, "label": base_label(base),
        "shortest": spec["shortest"], "longest": spec["longest"], "full_turns": spec["full_turns"], "pairs": spec["pairs"],
        "frozen": int(np.count_nonzero(omega * (n - 1) < FROZEN_RADIANS)),
        "neighbour": float(dist[1]),
        "dot": dot / peak,  # (n,) normalised: 1 at k = 0
    }
    if n >= 3:
        k2 = 2 + int(np.argmin(dist[2:]))
        row.update(far=float(dist[k2]), far_offset=k2)
    else:
        row.update(far=float("nan"), far_offset=None)
    below = np.flatnonzero(row["dot"] <= 0.5)
    if below.size:
        row.update(halves_at=int(below[0]), returns_to=float(row["dot"][below[0]:].max()))
    else:
        row.update(halves_at=None, returns_to=None)
    row["too_small"] = bool(row["full_turns"] == row["pairs"])
    row["too_large"] = bool(row["frozen"] > row["pairs"] / 2)
    row["collides"] = bool(row["far_offset"] is not None and row["far"] < row["neighbour"])
    return row


def _names(rows: list[dict]) -> str:
    labels = [r["label"] for r in rows]
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def _subject(rows: list[dict]) -> str:
    return f"a base of {_names(rows)} is" if len(rows) == 1 else f"bases {_names(rows)} are"


def verdict(r: dict) -> str:
    """One base's verdict, as the table prints it."""
    parts = [w for w, on in (("too small", r["too_small"]), ("too large", r["too_large"]), ("collides", r["collides"])) if on]
    return ", ".join(parts) or "fine"


def conclusion(rows: list[dict], n: int, d: int, chosen: float | None = None) -> str:
    """One sentence on what too small and too large a base do, from the measured rows.  The
    chosen base's longest wavelength (the page's exercise) is never quoted."""
    small = [r for r in rows if r["too_small"]]
    large = [r for r in rows if r["too_large"]]
    collide = [r for r in rows if r["collides"]]
    good = [r for r in rows if verdict(r) == "fine"]
    parts = []
    if small:
        quoted = [r for r in small if r["base"] != chosen]
        why = (f" (wavelength {quoted[-1]['longest']:,.4g} < {n:,} at base {quoted[-1]['label']})" if quoted else "")
        parts.append(f"{_subject(small)} too small: even the slowest pair turns fully within the context{why}, "
                     "so no channel keeps growing with distance")
    if large:
        g = large[-1]
        never = [r for r in large if r["halves_at"] is None]
        parts.append(f"{_subject(large)} too large: {g['frozen']} of {g['pairs']} pairs turn less than "
                     f"{FROZEN_RADIANS:g} radian over all {n:,} positions at base {g['label']}, so they hardly change"
                     + (f", and at {_names(never)} PE(p)·PE(p+k) never even falls to half" if never else ""))
    if collide:
        c = collide[0]
        parts.append(f"at base {_names(collide)} two positions come closer than neighbours ({c['far']:.3g} at offset "
                     f"{c['far_offset']:,} against {c['neighbour']:.3g} at base {c['label']})")
    head = f"At n = {n:,} and d = {d}, " + ("; ".join(parts) if parts else "no base from 10 to 10⁸ fails any of these tests")
    if not parts:
        return head + "."
    return head + (f"; {_names(good)} avoid all of this." if good else "; no base here avoids all of it.")


def _add_series(frames: list, own: dict, r: dict, fixed: tuple, chosen: bool, **columns) -> None:
    """Base ``r``'s rows (``columns``) as its own series when it is one of ``fixed``, and as YOUR_BASE (kept in ``own``
    under the first column's name, to be drawn last) when it is the chosen one."""
    def rows(series: str) -> pd.DataFrame:
        return pd.DataFrame({"series": series, "base": r["label"], "chosen": series == YOUR_BASE,
                             "log10 base": math.log10(r["base"]), **columns})
    if r["base"] in fixed:
        frames.append(rows(r["label"]))
    if chosen:
        own[next(iter(columns))] = rows(YOUR_BASE)


def why_base_view(n: int, d_model: int, base: float, layout: str) -> WhyBaseView:
    """The measurement over WHY_BASES plus the chosen base, at the chosen n and d.

    Returns {"closest": closest_pair_sinusoid(...) at the chosen base, "table": DataFrame (one row
    per base, numbers formatted; the column LONGEST holds the wavelength exercise's answer in row
    "chosen_row"), "lines": DataFrame(base, log10 base, pair, wavelength) for the wavelength chart
    (without any point at the chosen base's slowest wavelength: the wavelength exercise's answer),
    "dots": DataFrame(base, log10 base, chosen, k, dot) -- PE(p).PE(p+k) / (d/2) for the bases of
    DOT_BASES and the chosen one, k up to MAX_DOT_OFFSETS -- "bases": labels in order, "rows": the
    measured dicts (without profiles), "too_small", "too_large", "good": labels, "conclusion": the
    computed sentence, "caption"}.  "lines" and "dots" carry a column "series": the base's label for the fixed bases
    (WHY_BASES, DOT_BASES) and YOUR_BASE for the chosen one's rows (its label in "base", "chosen" True); "line_series"
    and "dot_series" list the series in legend order (the same for every base); "your_base" is the chosen base's label
    and "settings" the line an export carries ("your base 20,000; d = 128, n = 128").
    """
    n = check_int("n", n, lo=2, hi=MAX_N)
    d = _even_d("d_model", d_model, MAX_D)
    base = check_float("base", base, lo=1.0, hi=1e12, lo_open=True)
    layout = check_choice("layout", layout, LAYOUTS)
    bases = sorted(set(WHY_BASES) | {base})
    rows = [measure_base(n, d, b, layout) for b in bases]
    chosen = bases.index(base)
    table, lines, dots, own = [], [], [], {}
    kmax = min(n, MAX_DOT_OFFSETS + 1)
    for r in rows:
        mark = " (chosen)" if r["base"] == base else ""
        table.append({
            "base": r["label"] + mark,
            "shortest wavelength": f"{r['shortest']:.4f}",
            LONGEST: f"{r['longest']:,.2f}" if r["longest"] < 1e7 else f"{r['longest']:.4e}",
            f"pairs turning within n = {n:,}": f"{r['full_turns']} of {r['pairs']}",
            f"pairs turning < {FROZEN_RADIANS:g} rad in n": f"{r['frozen']} of {r['pairs']}",
            "neighbour distance": f"{r['neighbour']:.4g}",
            "closest non-neighbour": "—" if r["far_offset"] is None else f"{r['far']:.4g} (offset {r['far_offset']:,})",
            "PE·PE(k) falls to half at k": "never" if r["halves_at"] is None else f"{r['halves_at']:,}",
            "then climbs back to": "—" if r["returns_to"] is None else f"{r['returns_to']:.0%}",
            "verdict": verdict(r),
        })
        spec = spectrum_view(d, r["base"], n, layout)["frame"]
        _add_series(lines, own, r, WHY_BASES, bool(mark), pair=spec["pair"], wavelength=spec["wavelength"])
        _add_series(dots, own, r, DOT_BASES, bool(mark), k=np.arange(kmax, dtype=np.int32), dot=r["dot"][:kmax].astype(np.float32))
    lines.append(own["pair"])  # the chosen base last: drawn on top
    dots.append(own["k"])
    closest = closest_pair_sinusoid(n, d, base, layout)
    caption = (f"Closest pair at the chosen base by {closest['method']}. Every number here is exact in the offset k: for the "
               f"sinusoid PE(p)·PE(p+k) = Σ cos(kωᵢ) whatever p. The chart shows offsets up to {kmax - 1:,}.")
    plain = [{k: v for k, v in r.items() if k != "dot"} for r in rows]
    lines = pd.concat(lines, ignore_index=True)
    if d > 2:  # the chosen base's slowest wavelength is the exercise's answer (asked above the chart): no point states it
        lines = without_answer(lines, rows[chosen]["longest"])
    return {
        "closest": closest, "caption": caption, "conclusion": conclusion(rows, n, d, base),
        "table": pd.DataFrame(table), "chosen_row": chosen,
        "lines": lines, "dots": pd.concat(dots, ignore_index=True),
        "bases": [t["base"] for t in table], "rows": plain,
        "your_base": rows[chosen]["label"], "settings": f"your base {rows[chosen]['label']}; d = {d}, n = {n:,}",
        "line_series": [r["label"] for r in rows if r["base"] in WHY_BASES] + [YOUR_BASE],
        "dot_series": [r["label"] for r in rows if r["base"] in DOT_BASES] + [YOUR_BASE],
        "too_small": [r["label"] for r in rows if r["too_small"]],
        "too_large": [r["label"] for r in rows if r["too_large"]],
        "good": [r["label"] for r in rows if verdict(r) == "fine"],
    }


def sinusoid_story(n: int, d_model: int, base: float, layout: str) -> dict:
    """The closing claims of the sinusoid page at its settings: {"shows": [...], "wrong": [...]}."""
    n = check_int("n", n, lo=2, hi=MAX_N)
    d = _even_d("d_model", d_model, MAX_D)
    pe = sinusoidal(np.arange(n), d, base=base, layout=layout)  # (n, d)
    norms = np.linalg.norm(pe, axis=1)  # (n,)
    cp = closest_pair_sinusoid(n, d, base, layout)
    r = measure_base(n, d, base, layout)
    unique = (f"Unique: the closest two of the {n:,} positions are {cp['distance']:.4g} apart, positions {cp['i']:,} and "
              f"{cp['j']:,}" + (" (neighbours): no collision." if cp["offset"] == 1 else
                                f" ({cp['offset']:,} apart, closer than neighbours at {r['neighbour']:.4g})."))
    falls = ("never falls to half its value at k = 0 within the context" if r["halves_at"] is None else
             f"falls to half of its value at k = 0 by offset {r['halves_at']:,}, then climbs back to {r['returns_to']:.0%}")
    return {
        "shows": [f"Bounded: max |PE| = {np.abs(pe).max():.4f} over all {n:,} × {d:,} values, and every position has the same "
                  f"norm √(d/2) = {norms.mean():.4f}.",
                  unique,
                  "Relative: PE(p + k) = M_k PE(p), one rotation per offset k, fitted above from the encodings alone."],
        "wrong": [f"Distance is only loosely ordered: PE(p)·PE(p+k) {falls}, so a model reads “how far” only through its "
                  "learned weights.",
                  "It is still added to the token embedding, so position and meaning share the same channels; the next pages "
                  "move position into a learned table, the attention logits (T5, ALiBi) or a rotation of q and k (RoPE)."],
    }

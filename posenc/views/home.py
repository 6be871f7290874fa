"""Data for the landing page: the wishlist marks of the schemes the story meets, measured by
posenc.analysis.compare (the same rules as Compare schemes), with the number behind each mark.
"""

from __future__ import annotations

import math

import pandas as pd

from posenc.analysis.compare import comparison_table

STORY = ("raw_index", "index_over_length", "single_sine", "sincos_pair", "sinusoidal", "learned_minilm", "t5", "alibi", "rope")
MARKS = ("bounded", "continuous", "relative", "unique")
SETTINGS = {"n": 512, "d": 64, "n_heads": 8, "train_len": 512}


def _detail(r: dict, mark: str) -> str:
    """The measurement behind one mark, in words."""
    if mark == "bounded":
        if math.isnan(r["max_abs_at_1e6"]):
            return f"no value past its last row; at most {r['max_abs_near']:.3g} where it is defined"
        return f"max |value| between positions 10⁵ and 10⁶: {r['max_abs_at_1e6']:,.4g} (up to 1,000: {r['max_abs_near']:,.4g})"
    if mark == "continuous":
        if math.isnan(r["max_slope"]):
            return "defined at integer positions only (a lookup row or a bucket)"
        if not r["continuous"]:
            return f"its slope changes with the prompt length by {r['slope_length_change']:.3g} (16 tokens against {SETTINGS['n']})"
        return f"smooth: slope {r['max_slope']:.3g}, the same in a short and a long prompt"
    if mark == "relative":
        flat = " but the score never varies" if r["score_spread"] <= 1e-9 else ""
        return f"deviation from translation invariance {r['translation_invariance']:.3g} (0 = the score depends on j − i only){flat}"
    return (f"closest pair {r['closest_i']} & {r['closest_j']}: {r['closest_distance']:.3g} apart, against "
            f"{r['neighbour_distance']:.3g} between neighbours")


def wishlist_view(keys: tuple[str, ...] = STORY) -> dict:
    """The landing page's wishlist: {"marks": DataFrame(scheme, property, ok, detail), "all": names
    ticking every mark, "none": names ticking none, "settings": the measurement's n, d, heads, L}."""
    rows = comparison_table(list(keys), **SETTINGS)
    marks = pd.DataFrame([{"scheme": r["name"], "property": m, "ok": bool(r[m]), "detail": _detail(r, m)}
                          for r in rows for m in MARKS])
    return {"marks": marks, "all": [r["name"] for r in rows if all(r[m] for m in MARKS)],
            "none": [r["name"] for r in rows if not any(r[m] for m in MARKS)], "settings": dict(SETTINGS)}

"""Data for the sinusoid page's "why 10000" section: how the base moves the wavelengths and the closest pair.

axes: n positions, d = d_model, h = d // 2 frequency pairs.
"""

from __future__ import annotations

from typing import TypedDict

import pandas as pd

from posenc._validate import check_choice, check_float, check_int
from posenc.analysis.geometry import collisions
from posenc.schemes.sinusoidal import LAYOUTS
from posenc.views.sinusoid import MAX_D, MAX_N, _even_d, spectrum_view

WHY_BASES = (100.0, 1000.0, 10000.0, 100000.0)
# printf formats of the why-base table's number columns (the page hands them to st.column_config)
TABLE_FORMATS = {"longest wavelength": "%.2f", "limit 2π·base": "%.2f", "closest-pair distance": "%.6f"}


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
    table: pd.DataFrame
    lines: pd.DataFrame
    bases: list


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


def why_base_view(n: int, d_model: int, base: float, layout: str) -> WhyBaseView:
    """How the base changes the wavelengths and the closest pair, at the chosen n and d.

    Bases: WHY_BASES plus the chosen one.  Returns {"closest": closest_pair_sinusoid(...) at the
    chosen base, "table": DataFrame(base, longest wavelength, limit 2π·base, pairs turning within
    n, closest-pair distance, closest-pair offset, method), "lines": DataFrame(base label, pair,
    wavelength) for the chart, "bases": the labels in order, "caption"}.
    """
    n = check_int("n", n, lo=2, hi=MAX_N)
    d = _even_d("d_model", d_model, MAX_D)
    base = check_float("base", base, lo=1.0, hi=1e12, lo_open=True)
    bases = sorted(set(WHY_BASES) | {base})
    rows, lines, names, closest = [], [], [], None
    for b in bases:
        spec = spectrum_view(d, b, n, layout)
        cp = closest_pair_sinusoid(n, d, b, layout)
        plain = f"{b:,.6g}"
        label = plain + (" (chosen)" if b == base else "")
        closest = cp if b == base else closest
        rows.append({
            "base": label,
            "longest wavelength": spec["longest"],
            "limit 2π·base": spec["limit"],
            f"pairs turning fully within n = {n:,}": f"{spec['full_turns']} of {spec['pairs']}",
            "closest-pair distance": cp["distance"],
            "closest pair": f"{cp['i']} and {cp['j']}",
            "offset j − i": cp["offset"],
        })
        names.append(plain)
        lines.append(pd.DataFrame({"base": label, "pair": spec["frame"]["pair"], "wavelength": spec["frame"]["wavelength"]}))
    adjacent = [nm for nm, r in zip(names, rows) if r["offset j − i"] == 1]
    far = [f"{nm} ({r['offset j − i']:,} apart)" for nm, r in zip(names, rows) if r["offset j − i"] != 1]
    caption = (f"Closest pair by {closest['method']}. For the sinusoid (even d) the distance between two positions "
               "depends only on their offset, so one pair stands for every pair that far apart. ")
    caption += (f"Neighbours are the closest pair for base {', '.join(adjacent)}; " if adjacent else "")
    caption += (f"for base {', '.join(far)} two distant positions come closer than neighbours do." if far else
                "no base here brings two distant positions closer than neighbours.")
    return {"closest": closest, "caption": caption, "table": pd.DataFrame(rows), "lines": pd.concat(lines, ignore_index=True),
            "bases": [r["base"] for r in rows]}

"""Data for page 12, the comparison table: posenc.compare.measure_scheme for every registered
scheme, as one display table with the wishlist marks derived from the measured numbers.

Page 11's views (similarity matrices) are in posenc.views.similarity.
"""

from __future__ import annotations

import math
from typing import TypedDict

import pandas as pd

from posenc.analysis.compare import measure_schemes
from posenc.lab.results import load_tasks, task_verdicts
from posenc.registry import SCHEMES

# ----------------------------------------------------------------------------- result types

class ComparisonView(TypedDict):
    """What ``comparison`` returns."""

    frame: pd.DataFrame
    errors: dict
    wishlist_names: list


LENGTH_TOL = 1e-12  # length_change at or below this counts as length-invariant


# ----------------------------------------------------------------------------- page 12

WISHLIST = ("bounded", "continuous", "relative", "unique")


def display_rows(rows: list[dict], pages: dict[str, str], fallback: str = "") -> pd.DataFrame:
    """The display table: measured columns from ``rows`` (measure_scheme dicts), the derived
    marks, and each row's page link (``pages``: scheme key -> URL path, e.g. "sinusoid";
    ``fallback`` for keys not in it, e.g. uploaded tables).

    Derived marks: learned_or_fixed ("learned" iff learned_parameters > 0), length_invariant
    (length_change <= 1e-12), wishlist (bounded and continuous and relative and unique).
    """
    out = []
    for r in rows:
        lp = int(r["learned_parameters"])
        out.append({
            "scheme": r["name"],
            "page": pages.get(r["key"], fallback),
            "kind": r["kind"],
            "learned_or_fixed": "learned" if lp > 0 else "fixed",
            "learned_parameters": lp,
            "enters": r["enters"],
            "bounded": bool(r["bounded"]),
            "max_abs_at_1e6": float(r["max_abs_at_1e6"]),
            "continuous": bool(r["continuous"]),
            "closest_distance": float(r["closest_distance"]),
            "closest_pair": f"{int(r['closest_i'])} & {int(r['closest_j'])}",
            "length_change": float(r["length_change"]),
            "length_invariant": bool(r["length_change"] <= LENGTH_TOL),
            "translation_invariance": float(r["translation_invariance"]),
            "relative": bool(r["relative"]),
            "defined_at_4L": bool(r["defined_at_4L"]),
            "unique": bool(r["unique"]),
            "wishlist": all(bool(r[m]) for m in WISHLIST),
            "models": r["models"],
            "paper": r["paper"],
            "n_measured": int(r.get("n_measured", 0)) or None,
            "key": r["key"],
        })
    return pd.DataFrame(out)


def comparison(n: int = 512, d: int = 64, n_heads: int = 8, train_len: int = 512, pages: tuple = ()) -> ComparisonView:
    """Every registered scheme measured at (n, d, n_heads, train_len).

    ``pages``: ((scheme key, URL path), ...) for the link column.  Returns {"frame": the
    display table (see display_rows), "errors": {scheme name: message} for schemes whose
    measurement raised ValueError (left out of the frame), "wishlist_names": names ticking every
    wishlist box}.
    """
    measured = measure_schemes(SCHEMES, n=n, d=d, n_heads=n_heads, train_len=train_len)
    rows = [r for r in measured.values() if not isinstance(r, ValueError)]
    errors = {SCHEMES[k].name: str(r) for k, r in measured.items() if isinstance(r, ValueError)}
    frame = with_lab(display_rows(rows, dict(pages)))
    return {"frame": frame, "errors": errors, "wishlist_names": wishlist_names(frame)}


def lab_tasks() -> list[str]:
    """The tasks the lab ships results for, the Markov task first (``posenc.lab.results.load_tasks``)."""
    return list(load_tasks())


def _pct(x: float) -> str:
    return f"{x:.1%}" if abs(x) < 0.1 else f"{x:.0%}"


def verdict_text(row: dict | None) -> str:
    """One verdict cell in words: "holds · 1.7% of a uniform guess's gap (95 %: 1.5%–1.9%)", or why there is none
    ("not trained in the lab", the lab's reason); a row measured over another span says which."""
    if row is None:
        return "not trained in the lab"
    if row["verdict"] is None:
        return f"no verdict: {row['reason']}"
    span = "" if row["span"].startswith("[L,") else f" over {row['span']}"
    return (f"{row['verdict']} · {_pct(row['fraction'])} of a uniform guess's gap{span} "
            f"(95 %: {_pct(row['lo'])}–{_pct(row['hi'])})")


def with_lab(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the Extrapolation lab's shipped verdict per scheme and task (issue 37): for each task t,
    "beyond_L_<t>" (mean gap past L ÷ the uniform guess's gap there, ``posenc.lab.results.verdict_rows``) and
    "verdict_<t>" (``verdict_text``); "extrapolates" (the first task's verdict is "holds"; None where there is none)
    and "extrapolation_note" (how the first task measured it, or why there is no number)."""
    verdicts = task_verdicts()
    nan = float("nan")
    cols: dict[str, list] = {}
    for task, lab in verdicts.items():
        rows = [lab.get(k) for k in frame["key"]]
        cols[f"beyond_L_{task}"] = [nan if r is None else r["fraction"] for r in rows]
        cols[f"verdict_{task}"] = [verdict_text(r) for r in rows]
    first = [next(iter(verdicts.values())).get(k) for k in frame["key"]]
    cols["extrapolates"] = [None if r is None or r["verdict"] is None else r["verdict"] == "holds" for r in first]
    # the lab's scheme named before its reason: "the learned table has 32 rows" is the lab's table, not MiniLM's 512
    cols["extrapolation_note"] = ["not trained in the lab" if r is None else f"trained as {r['measured_as']}"
                                  + (f": {r['reason']}" if r["reason"] else "") for r in first]
    return frame.assign(**cols)


def wishlist_names(frame: pd.DataFrame) -> list[str]:
    """Schemes of a display table that tick every wishlist box, in table order."""
    return [str(x) for x in frame.loc[frame["wishlist"].astype(bool), "scheme"]]


def with_rows(frame: pd.DataFrame, rows: list[dict], link: str) -> pd.DataFrame:
    """``frame`` (a display table) with ``rows`` (measure dicts, e.g. uploads) appended, each
    linking to ``link``."""
    if not rows:
        return frame
    return pd.concat([frame, with_lab(display_rows(rows, {}, fallback=link))], ignore_index=True)


def marks_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Long (scheme, property, ok, detail, group) frame of the yes/no columns, for the heat table."""
    props = [
        ("bounded", "bounded", "wishlist", lambda r: f"max |value| up to 10^6: {r['max_abs_at_1e6']:.4g}"),
        ("continuous", "continuous", "wishlist",
         lambda r: "defined between integers, stable slope" if r["continuous"] else "integer positions only, or a jump"),
        ("relative", "relative", "wishlist", lambda r: f"deviation from translation invariance {r['translation_invariance']:.3g}"),
        ("unique", "unique", "wishlist", lambda r: f"closest pair {r['closest_pair']} at distance {r['closest_distance']:.3g}"),
        ("length_invariant", "length-invariant", "also measured", lambda r: f"max change of position 1: {r['length_change']:.3g}"),
        ("defined_at_4L", "defined at 4L", "also measured", lambda r: "defined at every position" if r["defined_at_4L"] else "no row past the table"),
        ("extrapolates", "extrapolates (lab)", "also measured",
         lambda r: (f"{r[next(c for c in r.index if c.startswith('verdict_'))]}; {r['extrapolation_note']}"
                    if r["extrapolates"] is not None else str(r["extrapolation_note"]))),
    ]
    recs = []
    for _, r in frame.iterrows():
        for col, label, group, detail in props:
            ok = None if r[col] is None or (isinstance(r[col], float) and math.isnan(r[col])) else bool(r[col])
            recs.append({"scheme": r["scheme"], "property": label, "group": group, "ok": ok, "detail": detail(r)})
    return pd.DataFrame(recs)


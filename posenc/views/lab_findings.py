"""The Extrapolation lab's findings in words (the page's top sentence, what ends worse than a uniform guess, the YaRN /
Llama 3 identity at head size 8) and the Markov order sweep; re-exported by posenc.views.lab."""

from __future__ import annotations

import numpy as np
import pandas as pd

from posenc.charts.base import spread_labels
from posenc.lab.positions import NAMES, REGISTRY_KEY
from posenc.lab.results import (
    HOLDS,
    VERDICTS,
    beyond_fraction,
    gaps,
    learned_check,
    spread,
    task_of,
    task_title,
)
from posenc.registry import get_scheme

LABEL_PX, BAND_PLOT_PX = 13, 300  # the band chart: px between two labels' baselines (font 11), px of its plot's height


def uniform_gap(res: dict) -> float:
    """The gap of the uniform guess (log V - floor, nats): KL of the source's next-token distribution from uniform."""
    return float(res["uniform"] - res["floor"])


def worse_than_uniform(run: dict) -> dict:
    """Which schemes end worse than a uniform guess: {"uniform_gap", "by_length": {n: [lab scheme, ...] whose mean gap
    over seeds at n exceeds the uniform guess's gap}, "from": {scheme: the first length where it does (None: never)},
    "names": {scheme: shown name}}.  Computed from the run, never written by hand."""
    res = run["results"]
    u = uniform_gap(res)
    by_length, first = {}, {}
    for n in res["lengths"]:
        by_length[n] = [s for s in res["runs"] if (sp := spread(gaps(res, s, n)))["n"] and sp["mean"] > u]
    for s in res["runs"]:
        first[s] = next((n for n in res["lengths"] if s in by_length[n]), None)
    return {"uniform_gap": u, "by_length": by_length, "from": first, "names": {s: NAMES[s] for s in res["runs"]}}


def yarn_llama3_identity(train_len: int = 32, head_dim: int = 8, multiples=(2, 4, 8)) -> dict:
    """YaRN's and Llama 3's frequencies for the lab's RoPE model (base 1e4, head_dim, L) at each multiple of L, as the
    lab applies them (positions.rope_extension).  At head_dim 8 their ramps put every pair in the same band (the fastest
    unscaled, the other three divided by s), so the frequencies are identical and the two rows differ only by YaRN's
    attention temperature.  Returns {"identical", "max_difference", "temperature": {multiple: YaRN's factor},
    "frequencies": {multiple: (yarn, llama3)}}."""
    from posenc.lab.positions import rope_extension

    diff, temperature, freqs = 0.0, {}, {}
    for m in multiples:
        out = []
        for ext in ("yarn", "llama3"):
            key, params = rope_extension(ext, m, train_len)
            inv, af = get_scheme(key).behaviour.frequencies(head_dim, seq_len=m * train_len, **params)
            out.append((np.asarray(inv), float(af)))
        (iy, ay), (il, _) = out
        diff = max(diff, float(np.max(np.abs(iy - il))))
        temperature[m], freqs[m] = ay, (iy, il)
    return {"identical": diff == 0.0, "max_difference": diff, "temperature": temperature, "frequencies": freqs}


WITHIN = HOLDS  # "stays close": the mean gap past L within this fraction of the uniform guess's gap (the verdict's "holds")


def _names(xs) -> str:
    xs = list(xs)
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def finding(run: dict) -> dict:
    """The run's finding, computed from ``posenc.lab.results.beyond_fraction`` (the Compare verdict): which schemes hold
    (mean gap past L within ``HOLDS`` of the uniform guess's gap), which degrade, which end worse than a uniform guess
    (above ``DEGRADES``), and which have no position past L.  Returns {"clause" (the task's part of the top sentence),
    "sentence" (the whole sentence for this task alone), "caveat", "task", "fractions": {scheme: fraction},
    "groups": {verdict: [scheme, ...]}, "within" (= groups["holds"]), "worse": {scheme: fraction}, "between":
    {scheme: fraction}, "undefined": [scheme, ...], "span", "uniform_gap"}."""
    res = run["results"]
    cfg = res["config"]
    L, task = cfg["train_len"], task_of(res)
    rows = {s: beyond_fraction(res, s) for s in res["runs"]}
    fractions = {s: r["fraction"] for s, r in rows.items() if r["verdict"] is not None}
    groups = {v: [s for s, r in rows.items() if r["verdict"] == v] for v in VERDICTS}
    undefined = [s for s, r in rows.items() if r["verdict"] is None]
    span = next((r["span"] for r in rows.values() if r["span"]), None)
    parts = []
    held, mid, bad = groups[VERDICTS[0]], groups[VERDICTS[1]], groups[VERDICTS[2]]
    verb = "stays" if len(held) == 1 else "stay"
    parts.append(f"{'only ' if held and (mid or bad) else ''}{_names([NAMES[s] for s in held])} {verb} within {HOLDS:.0%} of a "
                 "uniform guess's gap" if held else f"no scheme stays within {HOLDS:.0%} of a uniform guess's gap")
    if mid:
        lo, hi = min(fractions[s] for s in mid), max(fractions[s] for s in mid)
        parts.append(f"{_names([NAMES[s] for s in mid])} degrade{'s' if len(mid) == 1 else ''} "
                     f"({lo:.0%} of it)" if lo == hi else f"{_names([NAMES[s] for s in mid])} degrade ({lo:.0%}–{hi:.0%} of it)")
    if bad:
        worst = max(bad, key=fractions.get)
        parts.append(f"{_names([NAMES[s] for s in bad])} end{'s' if len(bad) == 1 else ''} worse than a uniform guess ({NAMES[worst]} at "
                     f"{fractions[worst]:.2f}× its gap)")
    where = f"on the {task_title(task)} task past L (positions {span})" if span else f"on the {task_title(task)} task"
    clause = f"{where}, " + "; ".join(parts) if span else f"{where} no scheme has a position past L"
    sentence = f"Trained at L = {L}, {clause}."
    caveat = (f"Scale: {cfg['n_layers']}-layer models of d = {cfg['d_model']} ({cfg['n_heads']} heads of "
              f"{cfg['d_model'] // cfg['n_heads']}) trained at L = {L} on one small synthetic task, {cfg['n_seeds']} seeds "
              "— a toy beside the papers' models of 10⁸–10¹⁰ parameters trained at 512–4,096 tokens.")
    return {"clause": clause, "sentence": sentence, "caveat": caveat, "task": task, "fractions": fractions, "groups": groups,
            "within": held, "worse": {s: fractions[s] for s in bad}, "between": {s: fractions[s] for s in mid},
            "undefined": undefined, "span": span, "uniform_gap": uniform_gap(res)}


def top_sentence(findings: list[dict]) -> str:
    """The page's one top sentence: a task's ``finding`` sentence, or with several tasks their clauses in one sentence
    (every task trained at the same L)."""
    if not findings:
        raise ValueError("findings must hold at least one finding")
    if len(findings) == 1:
        return findings[0]["sentence"]
    L = findings[0]["sentence"].split(",")[0]
    return f"{L}, " + "; ".join(f["clause"] for f in findings) + "."


# ----------------------------------------------------------------------------- issue 37: the Markov task at orders k = 1 .. 4
ORDERS_FILE = "lab_orders.json"  # written by `python -m posenc.lab --ship` (posenc.lab.__main__.ORDERS_FILE)
ORDERS_TITLE = "The Markov task at orders k = 1 … 4 (one seed each)"
ORDER_COLUMNS = ["scheme", "key", "order", "fraction", "verdict", "learned", "floor", "uniform"]


def order_sweep(data: dict | None = None) -> pd.DataFrame:
    """The order sweep, one row per (scheme, order k): "scheme" (shown name), "key" (its registry entry: its colour),
    "order", "fraction" (``results.beyond_fraction``: its mean gap past L ÷ the uniform guess's gap there, mean over the
    file's seeds; NaN for a scheme with no position past L), "verdict" (the rule's word; None without a fraction),
    "learned" (``results.learned_check`` at every seed), "floor" and "uniform" (the order's, nats).  ``data`` is the
    {"format", "task", "orders": {k: results}} dict; None reads lab_orders.json from ``results.DATA`` (an empty frame
    when there is no such file)."""
    from posenc.lab import results as lab_results

    if data is None:
        path = lab_results.DATA / ORDERS_FILE
        if not path.exists():
            return pd.DataFrame(columns=ORDER_COLUMNS)
        import json

        data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("orders"), dict):
        raise ValueError("data must be a dict with an 'orders' dict {k: results}")
    rows = []
    for k, res in sorted(data["orders"].items(), key=lambda kv: int(kv[0])):
        learned: dict[str, bool] = {}
        for c in learned_check(res):
            learned[c["scheme"]] = learned.get(c["scheme"], True) and c["learned"]
        for s in res["runs"]:
            b = beyond_fraction(res, s)
            rows.append({"scheme": NAMES[s], "key": REGISTRY_KEY[s], "order": int(k), "fraction": b["fraction"],
                         "verdict": b["verdict"], "learned": learned[s], "floor": res["floor"], "uniform": res["uniform"]})
    return pd.DataFrame(rows, columns=ORDER_COLUMNS)


def order_view(frame: pd.DataFrame) -> dict:
    """What the order chart draws from ``order_sweep``: {"frame" (the rows with a fraction), "labels": DataFrame(scheme,
    key, order, fraction, y: the end label's height, spread as the band chart's), "names", "orders", "domain" (the y axis:
    every fraction, label and the 10 % and 100 % lines), "sentence" (what to look at, from the data)}."""
    if frame.empty:
        raise ValueError("frame must hold the order sweep's rows (order_sweep found no file)")
    drawn = frame[np.isfinite(frame["fraction"].astype(float))].reset_index(drop=True)
    names = list(dict.fromkeys(drawn["scheme"]))
    orders = sorted(int(k) for k in frame["order"].unique())
    ends = drawn.loc[drawn.groupby("scheme", sort=False)["order"].idxmax()].reset_index(drop=True)
    lo = min(float(drawn["fraction"].min()), HOLDS) if len(drawn) else HOLDS
    hi = max(float(drawn["fraction"].max()), 1.0) if len(drawn) else 1.0
    domain = [lo, hi]
    for _ in range(3):  # as bands_view: the labels' spacing in decades depends on the axis's range
        ends["y"] = spread_labels(ends["fraction"].to_numpy(), gap=np.log10(domain[1] / domain[0]) * LABEL_PX / BAND_PLOT_PX)
        domain = [min(lo, float(ends["y"].min())) / 10 ** 0.05, max(hi, float(ends["y"].max())) * 10 ** 0.05]
    return {"frame": drawn, "labels": ends[["scheme", "key", "order", "fraction", "y"]], "names": names, "orders": orders,
            "domain": domain, "sentence": order_sentence(frame)}


def order_sentence(frame: pd.DataFrame) -> str:
    """One sentence of what to look at in the order sweep: which schemes hold (``HOLDS``) at every order, which at some
    (and where), which at none; one seed, so no interval."""
    orders = sorted(int(k) for k in frame["order"].unique())
    always, some, never = [], {}, []
    for name, g in frame[frame["verdict"].notna()].groupby("scheme", sort=False):
        held = tuple(sorted(int(k) for k in g[g["verdict"] == VERDICTS[0]]["order"]))
        if list(held) == orders:
            always.append(name)
        elif held:
            some.setdefault(held, []).append(name)  # the schemes that hold at the same orders, named together
        else:
            never.append(name)
    span = f"k = {orders[0]} … {orders[-1]}" if len(orders) > 1 else f"k = {orders[0]}"
    parts = [f"{_names(always)} hold{'s' if len(always) == 1 else ''} at every order" if always
             else "no scheme holds at every order"]
    for held, names in some.items():
        parts.append(f"{_names(names)} hold{'s' if len(names) == 1 else ''} only at k = {', '.join(map(str, held))}")
    if never:
        parts.append(f"{_names(never)} at none")
    return (f"Within {HOLDS:.0%} of a uniform guess's gap past L at {span}: " + "; ".join(parts)
            + ". One seed per order, so no interval: a point near a line could fall on either side at another seed.")


ORDERS_CAPTION = ("Each point: one model trained at L on a Markov source of order k (the next token depends on the k before "
                  "it; vocabulary 8, every other setting the default), its mean gap past L as a fraction of a uniform guess's "
                  "gap there (log scale). Faded: that model did not learn the task at L. Dotted: the verdict's \"holds\" line; "
                  "dashed: a uniform guess. Falsified by a second seed whose point crosses a line this one does not.")

"""The engineer's measurements on the context-extension page, for every classic method and a pasted model.

axes: h pairs, D distances, n context lengths.

``entries`` lists what is compared: the classic methods at the page's settings (or at the model's,
``at="model"``) and the model at its own head size, base and lengths.  Each measurement view takes
the same scalars (cache keys) and returns tidy frames whose ``method`` labels carry the settings of
each curve (a tooltip and the CSV say what was measured) and whose ``name`` is the method alone: a legend
keyed on names stays the same when a setting changes, so the browser swaps the data of the charts it
built instead of building new ones (docs/performance.md, section 8); ``settings`` says them in words, a line per set of curves.
Nothing here is typed in: every number comes from
``posenc.analysis.extension`` on frequencies from ``posenc.schemes.scaling``.
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np
import pandas as pd

from posenc._threads import pmap
from posenc._validate import check_choice, check_float, check_int
from posenc.analysis.extension import long_range, pair_bands, short_range_fidelity
from posenc.charts.base import model_series
from posenc.io.ropeconfig import rope_from_config
from posenc.registry import SCHEMES, get_scheme
from posenc.schemes.scaling import MAX_CONTEXT, check_head_dim, default_inv_freq, dynamic_scale
from posenc.views.extension import method_frequencies

PAGE = "pages/context_extension.py"
# the context extensions: every registry scheme this page explains (its entry names the page), in the registry's order
CLASSIC_KEYS = tuple(key for key, scheme in SCHEMES.items() if scheme.page == PAGE)
CLASSICS = tuple((key, get_scheme(key).short_name) for key in CLASSIC_KEYS)
REFERENCE = get_scheme("rope")
AT = ("controls", "model")
# Whether each method's paper extends a model with fine-tuning (the registry's fine_tuning, with its source), by name
FINE_TUNING = {s.short_name: s.fine_tuning for s in (REFERENCE, *(get_scheme(k) for k, _ in CLASSICS))}
LAB = "/lab"  # the Extrapolation lab: measured per scheme there


def settings(d: int, base: float, trained: int, factor: float | None = None, target: int | None = None) -> str:
    out = f"d {d}, base {base:g}, L {trained:,}"
    if factor is not None:
        out += f", s {factor:g}"
    return out + (f" → {target:,}" if target is not None else "")


def methods_at(config_text: str, at: str) -> str:
    """Where ``entries`` compares the methods: "model" when ``at`` asks for it and ``config_text`` is a model with a
    trained length, else "controls".  The page keys its views on this, so the model's settings asked for without such
    a model are the controls' measurements, computed once."""
    check_choice("at", at, AT)
    return "model" if at == "model" and config_text and rope_from_config(config_text).trained_length else "controls"


def entries(d: int, base: float, trained: int, factor: float, config_text: str = "", at: str = "controls") -> dict:
    """{"methods": [{label, name, inv, theta, logit, d, trained, target, why}], "skipped": {name: message},
    "model": RopeFromConfig or None, "target", "trained"}: plain RoPE first, then each method, then the model.

    At ``at="model"`` the classics use the model's rotated width, base, trained length and factor, and
    extend to its served length; otherwise the page's d, base, L and s, to s x L.
    """
    model = rope_from_config(config_text) if config_text else None
    if methods_at(config_text, at) == "model":
        d, base, trained = model.rotary_dim, model.base, model.trained_length
        factor = float(model.model.factor if model.model else factor)
        target = int(model.served_length or round(trained * factor))
    else:
        d = check_head_dim(d, lo=4)
        trained = check_int("trained length", trained, lo=16, hi=1_048_576)
        factor = check_float("factor", factor, lo=1.0, hi=128.0)
        target = int(round(trained * factor))
    if target > MAX_CONTEXT or d < 4:
        raise ValueError(f"target length {target:,} (cap {MAX_CONTEXT:,}) or head_dim {d} (at least 4) is out of range")
    theta = default_inv_freq(d, base)
    tag = settings(d, base, trained, factor)
    ref = REFERENCE.short_name
    out = [{"label": f"{ref} · {settings(d, base, trained)}", "name": ref, "inv": theta, "theta": theta, "logit": 1.0, "d": d,
            "trained": trained, "target": target}]
    skipped = {}
    for key, name in CLASSICS:
        try:
            inv, af = method_frequencies(key, d, base, trained, factor, target)
        except ValueError as exc:
            skipped[name] = f"{name} is left out at these settings: {exc}"
            continue
        out.append({"label": f"{name} · {tag}", "name": name, "inv": inv, "theta": theta, "logit": float(af) ** 2, "d": d,
                    "trained": trained, "target": target})
    said = [f"the methods at {settings(d, base, trained, factor, target)}"]
    if model is not None:
        L = model.trained_length or model.served_length or target
        mt = model.served_length or target
        own = settings(model.rotary_dim, model.base, L, target=mt)
        out.append({"label": f"{model_series(model.name)} · {own}", "name": model_series(model.name),
                    "inv": model.inv_freq, "theta": default_inv_freq(model.rotary_dim, model.base), "logit": model.logit_scale,
                    "ref_logit": model.model.softmax_ratio if model.model else 1.0, "d": model.rotary_dim, "trained": L, "target": mt})
        said.append(f"the model ({model.name}) at its own {own}")
    return {"methods": out, "skipped": skipped, "model": model, "target": target, "trained": trained, "factor": factor,
            "d": d, "base": base, "settings": said}


def _curve(m: dict, **columns) -> pd.DataFrame:
    """One method's rows: its ``method`` label (name and settings: tooltips, CSV) and its ``name`` (legends), then ``columns``."""
    return pd.DataFrame({"method": m["label"], "name": m["name"], **columns})


def _said(methods: list[dict], e: dict) -> dict:
    """What every view returns about the curves it drew: {"labels", "names", "settings", "drawn": the settings as the
    sentence a caption opens with}."""
    return {"labels": [m["label"] for m in methods], "names": [m["name"] for m in methods], "settings": e["settings"],
            "drawn": f"Drawn with {'; '.join(e['settings'])}."}


class BandsView(TypedDict):
    target: int
    dynamic_at_target: float
    frame: pd.DataFrame
    summary: pd.DataFrame
    labels: list
    names: list
    settings: list
    drawn: str
    trained: int
    dynamic: pd.DataFrame
    skipped: dict


def bands_view(d: int, base: float, trained: int, factor: float, config_text: str = "", at: str = "controls") -> BandsView:
    """θ′/θ against each pair's wavelength 2π/θ, band by band (turns within L / slower than L).

    Returns {"target": the classics' target length, "frame": DataFrame(method, name, pair, wavelength, ratio, band), "summary":
    DataFrame(method, kept_max_change, slow_min, slow_max, logit_scale), "labels", "names", "settings", "trained", "dynamic": DataFrame(length,
    effective_scale) of dynamic NTK (its base is b * scale^(d/(d-2))), "skipped"}.
    """
    e = entries(d, base, trained, factor, config_text, at)
    frames, rows = [], []
    for m in e["methods"]:
        b = pair_bands(m["theta"], m["inv"], m["trained"])
        frames.append(_curve(m, pair=np.arange(b["ratio"].size), wavelength=b["wavelength"], ratio=b["ratio"],
                             band=np.where(b["fast"], "turns within L", "slower than L")))
        rows.append({"method": m["label"], "kept_max_change": b["kept_max_change"], "slow_min": b["slow_range"][0],
                     "slow_max": b["slow_range"][1], "logit_scale": m["logit"]})
    L, s, T = e["trained"], e["factor"], e["target"]
    lengths = sorted({L, 2 * L, T, int(round(L * s))} | ({e["model"].served_length} if e["model"] and e["model"].served_length else set()))
    dyn = pd.DataFrame({"length": lengths, "effective_scale": [dynamic_scale(s, n, L) for n in lengths]})
    return {"target": T, "dynamic_at_target": dynamic_scale(s, T, L), "frame": pd.concat(frames, ignore_index=True),
            "summary": pd.DataFrame(rows), **_said(e["methods"], e), "trained": L, "dynamic": dyn, "skipped": e["skipped"]}


class FidelityView(TypedDict):
    frame: pd.DataFrame
    table: pd.DataFrame
    labels: list
    names: list
    settings: list
    drawn: str
    window: int
    n_samples: int


def fidelity_view(d: int, base: float, trained: int, factor: float, config_text: str = "", at: str = "controls", window: int = 64,
                  n_samples: int = 256, seed: int = 0) -> FidelityView:
    """Short-range fidelity of every method against plain RoPE at the same width and base:
    |Δscore| / (|q||k|) at distances 0 .. window over ``n_samples`` seeded random q ≠ k.

    Returns {"frame": DataFrame(method, name, distance, max, mean), "table": DataFrame(method, max, mean),
    "labels", "names", "settings", "window", "n_samples"}; plain RoPE itself is the reference and is not listed.
    """
    e = entries(d, base, trained, factor, config_text, at)
    frames, rows = [], []
    for m in e["methods"][1:]:
        # against plain RoPE at the model's own softmax scale (query_pre_attn_scalar, attention_multiplier): the change the
        # RoPE scaling makes, not the model's constant scale
        f = short_range_fidelity(m["theta"], m["inv"], window=window, logit_ref=m.get("ref_logit", 1.0), logit_scale=m["logit"],
                                 n_samples=n_samples, seed=seed)
        frames.append(_curve(m, distance=f["distance"], max=f["max"], mean=f["mean"]))
        rows.append({"method": m["label"], "max": f["max_all"], "mean": f["mean_all"]})
    return {"frame": pd.concat(frames, ignore_index=True), "table": pd.DataFrame(rows), **_said(e["methods"][1:], e),
            "window": int(window), "n_samples": int(n_samples)}


class LongRangeView(TypedDict):
    logits: pd.DataFrame
    entropy: pd.DataFrame
    table: pd.DataFrame
    labels: list
    names: list
    settings: list
    drawn: str
    rho: float
    n_samples: int
    n_entropy: int
    entropy_len: int


def long_range_view(d: int, base: float, trained: int, factor: float, config_text: str = "", at: str = "controls", rho: float = 0.5,
                    seed: int = 0) -> LongRangeView:
    """Logit percentiles against distance and softmax entropy against context length, to each curve's target.

    Returns {"logits": DataFrame(method, name, distance >= 1, p5, p50, p95), "entropy": DataFrame(method, name, length, p5,
    p50, p95, uniform), "table": DataFrame(method, entropy_at_L, entropy_at_target, entropy_change,
    logit_at_target), "labels", "names", "settings", "rho", "n_samples", "n_entropy", "entropy_len"} (see analysis.long_range).
    """
    e = entries(d, base, trained, factor, config_text, at)
    lg, en, rows, last = [], [], [], {}
    ranges = pmap(lambda m: long_range(m["inv"], target=m["target"], logit_scale=m["logit"], rho=rho, seed=seed), e["methods"])
    for m, r in zip(e["methods"], ranges):
        lg.append(_curve(m, distance=r["distance"], **{f"p{p}": r["logit"][p] for p in (5, 50, 95)}).iloc[1:])
        en.append(_curve(m, length=r["length"], **{f"p{p}": r["entropy"][p] for p in (5, 50, 95)}, uniform=r["uniform"]))
        at_L = float(np.interp(np.log(m["trained"]), np.log(r["length"]), r["entropy"][50]))
        rows.append({"method": m["label"], "entropy_at_L": at_L, "entropy_at_target": float(r["entropy"][50][-1]),
                     "entropy_change": float(r["entropy"][50][-1]) - at_L, "logit_at_target": float(r["logit"][50][-1])})
        last = r
    return {"logits": pd.concat(lg, ignore_index=True), "entropy": pd.concat(en, ignore_index=True), "table": pd.DataFrame(rows),
            **_said(e["methods"], e), "rho": float(rho), "n_samples": last["n_samples"],
            "n_entropy": last["n_entropy"], "entropy_len": last["entropy_len"]}


def logit_scale_cells(lr: dict, name: str) -> list[tuple[int, str]]:
    """The (row, column) cells of ``summary_table`` that hold method ``name``'s logit scale (its rows follow ``lr``'s)."""
    return [(i, "logit scale") for i, nm in enumerate(lr["names"]) if nm == name]


def summary_table(fid: dict, lr: dict, bands: dict) -> pd.DataFrame:
    """One row per method: short-range change, long-range behaviour, fine-tuning per its paper, lab link."""
    f = fid["table"].set_index("method")
    b = bands["summary"].set_index("method")
    out = []
    name_of = dict(zip(lr["labels"], lr["names"]))  # "PI (linear) · d 128, ..." -> "PI (linear)"
    for _, r in lr["table"].iterrows():
        name = name_of[r["method"]]
        out.append({"method": r["method"],
                    "short-range max |Δ|": float(f["max"].get(r["method"], 0.0)),
                    "fast pairs changed by": float(b["kept_max_change"].get(r["method"], float("nan"))),
                    "logit scale": float(b["logit_scale"].get(r["method"], 1.0)),
                    "entropy at target − at L (nats)": float(r["entropy_change"]),
                    "fine-tuning (paper)": FINE_TUNING.get(name, "the model's own training"),
                    "Extrapolation lab": LAB})
    return pd.DataFrame(out)

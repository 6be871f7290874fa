"""Data for the extrapolation lab page: one function per figure, a run in, tidy frames out.

A run is {"results": the dict of posenc.lab.experiment.run_experiment, "weights": {scheme:
{name: array}}} -- the shipped one (posenc.lab.results.load_shipped) or a custom one.  Spread
over seeds is min-max with the mean; nothing here trains.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from posenc._validate import check_choice, check_int
from posenc.charts.base import downsample, matrix_frame, narrow_ints, spread_labels, wrap_label
from posenc.lab.evaluate import attention_layers, eval_sequences, mass_on_context
from posenc.lab.experiment import LabConfig
from posenc.lab.positions import EXTENSION_NAMES, NAMES, REGISTRY_KEY, unseen_share, untrainable
from posenc.lab.results import (  # noqa: F401 (the page reads them here)
    HOLDS,
    LEARNED_FRACTION,
    VERDICTS,
    band_gaps,
    band_label,
    beyond_fraction,
    bootstrap_interval,
    extended_scheme,
    gaps,
    learned_check,
    load_task,
    spread,
    spread_text,
    task_of,
    task_title,
    uniform_band_gaps,
)
from posenc.registry import get_scheme
from posenc.views.lab_findings import (  # noqa: F401 (the findings in words and the order sweep, re-exported)
    BAND_PLOT_PX,
    LABEL_PX,
    ORDER_COLUMNS,
    ORDERS_CAPTION,
    ORDERS_FILE,
    ORDERS_TITLE,
    WITHIN,
    _names,
    finding,
    order_sentence,
    order_sweep,
    order_view,
    top_sentence,
    uniform_gap,
    worse_than_uniform,
    yarn_llama3_identity,
)

ATTENTION_SEQS = 16  # sequences the attention maps are averaged over
HEATMAP_CELLS = 16_384


def _cat(values, order) -> pd.Categorical:
    """Categories in ``order``, each once (two lab schemes may share a registry key: T5 and T5 scaled)."""
    return pd.Categorical(values, categories=list(dict.fromkeys(order)))


def _gap_rows(res: dict, budget: str) -> tuple[list[dict], list[dict]]:
    """Long rows (scheme, key, length, multiple, gap, lo, hi, std, seeds, budget) and the wide table's lines."""
    L = res["config"]["train_len"]
    rows, table = [], []
    for s in res["runs"]:
        line = {"scheme": NAMES[s]}
        for n in res["lengths"]:
            vals = gaps(res, s, n)
            line[f"{n // L}L = {n}" if n != L else f"L = {n}"] = spread_text(vals)
            if (sp := spread(vals))["n"]:
                rows.append({"scheme": NAMES[s], "key": REGISTRY_KEY[s], "length": n, "multiple": n // L, "gap": sp["mean"], "lo": sp["min"],
                             "hi": sp["max"], "std": sp["std"], "seeds": sp["n"], "budget": budget})
        table.append(line)
    return rows, table


def _checks(res: dict) -> pd.DataFrame:
    checks = pd.DataFrame(learned_check(res))
    checks["scheme"] = [NAMES[s] for s in checks["scheme"]]
    return checks


def _steps(res: dict) -> str:
    return f"{res['config']['steps']:,} steps"


def overview(run: dict) -> dict:
    """Mean gap per scheme and length (min-max band), the table of docs/lab.md, the "learned it" check.

    Returns {"frame": DataFrame(scheme, key (the registry entry it stands for: its colour), length, multiple, gap, lo, hi,
    std, seeds, budget), "table": wide
    DataFrame (one row per scheme, one column per length, "mean (min–max)"), "checks": DataFrame,
    "floor", "uniform", "bayes_at_L", "n_learned", "n_models", "not_learned": {name: [seeds]} (gap at L over
    "learned_fraction" of uniform − floor), "undefined": {name: reason},
    "train_len", "order", "vocab", "names" (display order), "keys" (the registry entry each name stands for: its colour),
    "seeds", "steps", "randomize" (the run's range of randomized positions, 0: each scheme's own),
    "seconds_per_run" (wall, train + evaluate),
    "longer": None, or for a run that carries a follow-up (run["longer"]: the schemes that did not learn, trained
    with more steps) {"table", "checks", "n_learned", "n_models", "steps", "names"}; its rows are in "frame" too,
    with "budget" = its step count ("budget" tells the two apart)}.
    """
    res = run["results"]
    L = res["config"]["train_len"]
    names = [NAMES[s] for s in res["runs"]]
    rows, table = _gap_rows(res, _steps(res))
    longer = None
    if run.get("longer") is not None:
        more, more_table = _gap_rows(run["longer"], _steps(run["longer"]))
        rows += more
        lc = _checks(run["longer"])
        longer = {"table": pd.DataFrame(more_table), "checks": lc, "n_learned": int(lc["learned"].sum()), "n_models": len(lc),
                  "steps": run["longer"]["config"]["steps"], "names": [NAMES[s] for s in run["longer"]["runs"]]}
    frame = pd.DataFrame(rows)
    frame["scheme"] = _cat(frame["scheme"], names)
    checks = _checks(res)
    bayes_L = float(np.mean(res["bayes_by_position"][:L]))
    return {"frame": frame, "table": pd.DataFrame(table), "checks": checks, "floor": res["floor"], "uniform": res["uniform"],
            "bayes_at_L": bayes_L, "n_learned": int(checks["learned"].sum()), "n_models": len(checks),
            "learned_fraction": LEARNED_FRACTION,
            "not_learned": {name: [int(x) for x in g["seed"]] for name, g in checks[~checks["learned"]].groupby("scheme", sort=False)},
            "undefined": {NAMES[s]: why for s, why in res["undefined"].items()}, "train_len": L,
            "order": res["config"]["order"], "vocab": res["config"]["vocab"], "names": names,
            "keys": [REGISTRY_KEY[s] for s in res["runs"]], "seeds": res["config"]["n_seeds"], "steps": res["config"]["steps"],
            "randomize": res["config"].get("randomize", 0),
            "seconds_per_run": float(np.mean([t["train"] + t["evaluate"] for t in res["seconds"].values()])),
            "longer": longer}


def by_position(run: dict) -> dict:
    """Gap per position (mean over seeds, min-max band) at the longest length each scheme has.

    Returns {"frame": DataFrame(scheme, key, position, gap, lo, hi), "train_len", "length", "names", "keys"}.
    """
    res = run["results"]
    parts = []
    for s, runs in res["runs"].items():
        curves = np.array([r["gap_by_position"] for r in runs.values()])  # (seeds, n)
        parts.append(pd.DataFrame({"scheme": NAMES[s], "key": REGISTRY_KEY[s], "position": np.arange(curves.shape[1]),
                                   "gap": curves.mean(axis=0),
                                   "lo": curves.min(axis=0), "hi": curves.max(axis=0)}))
    frame = pd.concat(parts, ignore_index=True)
    frame["scheme"] = _cat(frame["scheme"], [NAMES[s] for s in res["runs"]])
    frame["key"] = _cat(frame["key"], [REGISTRY_KEY[s] for s in res["runs"]])
    return {"frame": frame, "train_len": res["config"]["train_len"], "length": max(res["lengths"]),
            "names": [NAMES[s] for s in res["runs"]], "keys": [REGISTRY_KEY[s] for s in res["runs"]]}


def not_trained() -> list[tuple[str, str]]:
    """(registry name, why the lab does not train it) for every registry scheme that is not a lab scheme."""
    return [(get_scheme(key).name, why) for key, why in untrainable().items()]


def extensions(run: dict) -> dict | None:
    """RoPE trained at L, evaluated at 4L and 8L plain and with each test-time extension.

    Returns {"frame": DataFrame(method, length, gap, lo, hi), "methods", "best": {length: method}}
    or None when the run has no RoPE model.
    """
    res = run["results"]
    extended = extended_scheme(res)
    if extended is None:
        return None
    runs = list(res["runs"][extended].values())
    methods = [f"{NAMES[extended]} (no extension)"] + [extension_source(e)[0] for e in runs[0]["extensions"]]
    rows = []
    for n in res["extension_lengths"]:
        sp = spread([r["mean"][str(n)]["gap"] for r in runs])
        rows.append({"method": methods[0], "length": n, "gap": sp["mean"], "lo": sp["min"], "hi": sp["max"]})
        for e, name in zip(runs[0]["extensions"], methods[1:]):
            sp = spread([r["extensions"][e].get(str(n), {}).get("gap") for r in runs])
            if sp["n"]:  # a fine-tuned row may be evaluated at 4L only
                rows.append({"method": name, "length": n, "gap": sp["mean"], "lo": sp["min"], "hi": sp["max"]})
    frame = pd.DataFrame(rows)
    frame["method"] = _cat(frame["method"], methods)
    best = {int(n): str(g.loc[g["gap"].idxmin(), "method"]) for n, g in frame.groupby("length")}
    return {"frame": frame, "methods": methods, "best": best, "train_len": res["config"]["train_len"]}


def attention_stack(run: dict, scheme: str, multiple: int) -> dict:
    """The first seed's attention at L and at multiple x L for every layer and head, and its mass on the
    previous k tokens: everything the page's layer and head pickers choose among, sent at once.

    Averaged over the first 16 evaluation sequences.  Returns {"maps": {label: DataFrame(layer, head,
    query, key, weight)} (layer and head from 1; each map downsampled to <= 16,384 cells by striding),
    "steps": {label: (row, col) stride}, "mass": DataFrame(layer, head, position, mass) at multiple x L,
    "mass_summary": [[(mean mass before L, after L) per head] per layer], "note", "layers", "heads",
    "train_len", "length", "order", "name"}.  The learned table has no row past L: its long map and
    mass stop at L, and "note" says so (the mass after L is then NaN).
    """
    res = run["results"]
    cfg = LabConfig.from_dict(res["config"])
    scheme = check_choice("scheme", scheme, list(res["runs"]))
    multiple = check_int("multiple", multiple, lo=2, hi=8)
    L = cfg.train_len
    source = cfg.source()
    params = run["weights"][scheme]
    note = None
    n_long = multiple * L
    if scheme in res["undefined"]:
        note = res["undefined"][scheme]
        n_long = L
    seqs = eval_sequences(source, ATTENTION_SEQS, n_long)
    labels = {"short": f"L = {L}", "long": f"{multiple}L = {multiple * L}"}
    parts: dict[str, list[pd.DataFrame]] = {labels["short"]: []} | ({} if n_long == L else {labels["long"]: []})
    steps, mass_parts, summary = {}, [], []
    longs = attention_layers(params, scheme, source, cfg.model(), seqs, train_len=L, randomize=cfg.random)  # (layers, H, n, n)
    shorts = longs if n_long == L else attention_layers(params, scheme, source, cfg.model(), seqs[:, :L], train_len=L,
                                                        randomize=cfg.random)
    for layer, (long, short) in enumerate(zip(longs, shorts)):
        for label, A in ((labels["short"], short), (labels["long"], long)):
            if label not in parts:
                continue
            for head in range(cfg.n_heads):
                rows, cols, sub, step = downsample(A[head], HEATMAP_CELLS)
                frame = matrix_frame(sub, rows, cols, row="query", col="key", value="weight")
                parts[label].append(frame.assign(layer=layer + 1, head=head + 1)[["layer", "head", "query", "key", "weight"]])
                steps[label] = step
        mass = mass_on_context(long, cfg.order)  # (H, n)
        mass_parts.append(pd.DataFrame({"layer": layer + 1, "head": np.repeat(np.arange(1, cfg.n_heads + 1), mass.shape[1]),
                                        "position": np.tile(np.arange(mass.shape[1]), cfg.n_heads), "mass": mass.ravel()}))
        summary.append([(float(m[:L].mean()), float(m[L:].mean()) if m.size > L else float("nan")) for m in mass])
    # every layer and head is sent to the browser: whole numbers in the narrowest type
    maps = {label: narrow_ints(pd.concat(frames, ignore_index=True), skip=("weight",)) for label, frames in parts.items()}
    return {"maps": maps, "steps": steps,
            "mass": pd.concat(mass_parts, ignore_index=True), "mass_summary": summary, "note": note,
            "layers": cfg.n_layers, "heads": cfg.n_heads, "train_len": L, "length": n_long, "order": cfg.order,
            "name": NAMES[scheme]}


def shipped_attention_stack(task: str, scheme: str, multiple: int) -> dict:
    """``attention_stack`` of the run shipped for ``task`` (``results.load_task``): keyed on scalars alone, so a page
    caches it in the shared cache and computes the next long length ahead (``posenc.ui.ahead``)."""
    return attention_stack(load_task(task), scheme, multiple)


def attention_view(run: dict, scheme: str, layer: int, head: int, multiple: int) -> dict:
    """One layer and head of ``attention_stack`` (both from 0): the first seed's attention at L and at
    multiple x L, and its mass on the previous k tokens.

    Returns {"maps": {label: DataFrame(query, key, weight)}, "steps": {label: (row, col) stride},
    "mass": DataFrame(head, position, mass) for every head of ``layer`` at multiple x L, "mass_L",
    "mass_far": the chosen head's mean mass over positions < L and >= L, "note"} (and the stack's
    "train_len", "length", "order", "name").
    """
    res = run["results"]
    cfg = LabConfig.from_dict(res["config"])
    layer = check_int("layer", layer, lo=0, hi=cfg.n_layers - 1)
    head = check_int("head", head, lo=0, hi=cfg.n_heads - 1)
    st = attention_stack(run, scheme, multiple)
    maps = {label: f[(f["layer"] == layer + 1) & (f["head"] == head + 1)][["query", "key", "weight"]].reset_index(drop=True)
            for label, f in st["maps"].items()}
    m = st["mass"][st["mass"]["layer"] == layer + 1]
    mass = pd.DataFrame({"head": [f"head {h}" for h in m["head"]], "position": m["position"].to_numpy(), "mass": m["mass"].to_numpy()})
    before, after = st["mass_summary"][layer][head]
    return {"maps": maps, "steps": st["steps"], "mass": mass, "mass_L": before, "mass_far": after, "note": st["note"],
            "train_len": st["train_len"], "length": st["length"], "order": st["order"], "name": st["name"]}


def bands_view(run: dict, custom: dict | None = None) -> dict:
    """Gap per band of positions ([0, L), [L, 2L), [2L, 4L), [4L, 8L)) per scheme: mean over seeds with its bootstrap
    interval (``results.bootstrap_interval``), and the uniform guess's gap per band; a ``custom`` run's bands drawn over
    the shipped ones (its rows "run" = "custom", never replacing them).

    Returns {"frame": DataFrame(run, scheme, key, label (the line's end label), band (index from 0), band_label,
    gap, lo, hi, seeds, unseen (``positions.unseen_share`` at the band's end: the share of the scheme's positional inputs
    over positions 0 .. end − 1 that training never produced)), "uniform": DataFrame(band, band_label, gap), "labels":
    DataFrame(label, scheme, key, run, band, gap, y (the label's height, spread so that no two overlap); only the lines
    that reach the last band), "names",
    "keys", "band_labels", "domain" (the y axis: every value and label), "fractions": {label: beyond-L fraction}}."""
    rows = []
    for which, r in (("shipped", run), ("custom", custom)):
        if r is None:
            continue
        res = r["results"]
        cfg = res["config"]
        L = cfg["train_len"]
        for s in res["runs"]:
            label = NAMES[s] if which == "shipped" else f"{NAMES[s]} (your run)"
            for i, (b, per) in enumerate(band_gaps(res, s).items()):
                lo, hi = bootstrap_interval(per)
                unseen = unseen_share(s, b[1], train_len=L, d_model=cfg["d_model"], n_heads=cfg["n_heads"],
                                      randomize=cfg.get("randomize") or None)
                rows.append({"run": which, "scheme": NAMES[s], "key": REGISTRY_KEY[s], "label": label, "band": i,
                             "band_label": band_label(b, L), "gap": float(np.mean(per)), "lo": lo, "hi": hi, "seeds": len(per),
                             "unseen": unseen})
    frame = pd.DataFrame(rows)
    res = run["results"]
    L = res["config"]["train_len"]
    ub = uniform_band_gaps(res)
    uniform = pd.DataFrame({"band": range(len(ub)), "band_label": [band_label(b, L) for b in ub], "gap": list(ub.values())})
    ends = frame.loc[frame.groupby("label", sort=False)["band"].idxmax()]
    ends = ends[ends["band"] == frame["band"].max()].reset_index(drop=True)  # a line that stops at L keeps its tooltip only
    lo = float(min(frame["lo"].min(), frame["gap"].min(), uniform["gap"].min()))
    hi = float(max(frame["hi"].max(), frame["gap"].max(), uniform["gap"].max()))
    domain = [lo, hi]
    # a long name on two lines (at 390 px the plot leaves ~110 px right of the last band: "T5 buckets scaled to L" was cut)
    # -- unless the stack of labels would then outgrow the plot (a custom run's 24 labels): spacing them would widen the
    # axis without end, as the spacing grows with the axis's range
    ends["text"] = [wrap_label(t) for t in ends["label"]]
    lines = ends["text"].str.count("\n").to_numpy() + 1
    if lines.sum() * LABEL_PX > 0.8 * BAND_PLOT_PX:
        ends["text"], lines = ends["label"], np.ones(len(ends), dtype=int)
    for _ in range(50):  # the labels' spacing in decades depends on the axis's range, which the labels may widen: until
        decades = np.log10(domain[1] / domain[0])  # the range they were spaced for is the range they widen it to
        ends["y"] = spread_labels(ends["gap"].to_numpy(), gap=decades * LABEL_PX / BAND_PLOT_PX * 1.001, lines=lines)
        wider = [min(lo, float(ends["y"].min())) / 10 ** 0.05, max(hi, float(ends["y"].max())) * 10 ** 0.05]
        done, domain = np.log10(wider[1] / wider[0]) <= decades * 1.001, wider
        if done:
            break
    names = [NAMES[s] for s in res["runs"]]
    return {"frame": frame, "uniform": uniform, "labels": ends[["label", "text", "scheme", "key", "run", "band", "gap", "y"]],
            "names": names, "keys": [REGISTRY_KEY[s] for s in res["runs"]], "band_labels": list(uniform["band_label"]), "domain": domain,
            "fractions": {NAMES[s]: beyond_fraction(res, s)["fraction"] for s in res["runs"]}}


def extension_table(run: dict) -> pd.DataFrame | None:
    """The extended model's rows, one per method (plain, each test-time extension, any fine-tuned row such as "pi_ft"),
    with the paper it comes from and its gap per length ("gap at 4L": "mean (min–max)" over seeds, nats); None without
    one."""
    res = run["results"]
    extended = extended_scheme(res)
    if extended is None:
        return None
    runs = list(res["runs"][extended].values())
    base = get_scheme(REGISTRY_KEY[extended])
    rows = [{"method": f"{NAMES[extended]} (no extension)", "paper": base.paper}
            | {f"gap at {n // res['config']['train_len']}L": spread_text(gaps(res, extended, n)) for n in res["extension_lengths"]}]
    for e in runs[0]["extensions"]:
        name, paper = extension_source(e)
        rows.append({"method": name, "paper": paper}
                    | {f"gap at {n // res['config']['train_len']}L": spread_text([r["extensions"][e].get(str(n), {}).get("gap") for r in runs],
                                                                           "not evaluated") for n in res["extension_lengths"]})
    return pd.DataFrame(rows)


FINE_TUNED = {  # extension rows that are not a registry scheme: fine-tuned at 4L (issue 37)
    "pi_ft": ("PI + fine-tuning at 4L", "Chen et al., Position Interpolation (arXiv:2306.15595): PI, then a short fine-tune"),
    "ft": ("RoPE + fine-tuning at 4L", "Chen et al. (arXiv:2306.15595): direct fine-tuning at the longer length, their baseline"),
}


def extension_source(extension: str) -> tuple[str, str]:
    """(shown name, paper) of an extension row: the registry's for a test-time extension, ``FINE_TUNED``'s otherwise."""
    from posenc.lab.positions import EXTENSIONS

    if extension in EXTENSIONS:
        s = get_scheme(EXTENSIONS[extension])
        return EXTENSION_NAMES.get(extension, s.short_name), s.paper
    if extension in FINE_TUNED:
        return FINE_TUNED[extension]
    raise ValueError(f"extension must be one of {[*EXTENSIONS, *FINE_TUNED]}, got {extension!r}")


def eta_text(done: float, elapsed: float) -> str:
    """The progress bar's estimate: the time left if the rest runs at the pace so far ("about 1 min 20 s left");
    "estimating" before any progress."""
    if not 0.0 <= done <= 1.0:
        raise ValueError(f"done must be in [0, 1], got {done!r}")
    if elapsed < 0:
        raise ValueError(f"elapsed must be >= 0 seconds, got {elapsed!r}")
    if done <= 0.0 or elapsed == 0.0:
        return "estimating the time left"
    left = round(elapsed * (1.0 - done) / done)
    return f"about {left // 60} min {left % 60} s left" if left >= 60 else f"about {left} s left"


WHY_KEYS = ("scheme", "mult", "layer", "head")  # the lab page's "why" controls: a link that sets one opens its box


def extension_identity(run: dict) -> dict:
    """``yarn_llama3_identity`` at the run's training length and head size (and "head_dim", and "sentence": what
    the page says when the two are identical)."""
    cfg = run["results"]["config"]
    hd = cfg["d_model"] // cfg["n_heads"]
    ident = yarn_llama3_identity(cfg["train_len"], hd)
    return {**ident, "head_dim": hd,
            "sentence": f"At head size {hd}, YaRN and Llama 3 give these models identical frequencies (each ramp leaves the "
                        "fastest pair and divides the other three by s), so their two rows differ only by YaRN's attention "
                        "temperature (0.1 ln s + 1: " + ", ".join(f"{t:.3f} at {m}L" for m, t in ident["temperature"].items()) + ")."}

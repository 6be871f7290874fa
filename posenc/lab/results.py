"""The shipped results, and the summaries every view (and the Compare table) reads from them.

axes: seeds, lengths L .. 8L.

``load_shipped()`` returns the results dict written by ``python -m posenc.lab`` (data/lab_results.json),
the first seed's weights (data/lab_weights.npz, float32) and the follow-up run of the schemes that did not
learn the task at the default budget, trained with more steps (data/lab_longer.json; experiment.longer_config).  Spread over seeds is always the
min-max range, with the mean; the standard deviation is reported alongside (ddof = 0).
"""

from __future__ import annotations

import copy
import functools
import json
import math
from pathlib import Path

import numpy as np

from posenc._validate import check_int
from posenc.lab.bootstrap import BOOTSTRAP_LEVEL, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, bootstrap_interval  # noqa: F401 (their home was here)

DATA = Path(__file__).resolve().parent / "data"
RESULTS_FILE = DATA / "lab_results.json"
WEIGHTS_FILE = DATA / "lab_weights.npz"
LONGER_FILE = DATA / "lab_longer.json"  # the follow-up run; absent when every model learned at the defaults
LEARNED_FRACTION = 0.1  # "it learned the task": gap at L <= 10 % of the uniform-to-floor gap


def save(results: dict, weights: dict[str, dict[str, np.ndarray]], directory: Path = DATA, *, longer: dict | None = None) -> None:
    """Write the results JSON, the weights (float32, one array per scheme/parameter) and the follow-up
    run's JSON (removed when there is none)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / RESULTS_FILE.name).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    if longer is None:
        (directory / LONGER_FILE.name).unlink(missing_ok=True)
    else:
        (directory / LONGER_FILE.name).write_text(json.dumps(longer, indent=1) + "\n", encoding="utf-8")
    flat = {f"{s}/{k}": v.astype(np.float32) for s, ps in weights.items() for k, v in ps.items()}
    np.savez_compressed(directory / WEIGHTS_FILE.name, **flat)


def _read_weights(path: Path) -> dict[str, dict[str, np.ndarray]]:
    out: dict[str, dict[str, np.ndarray]] = {}
    with np.load(path, allow_pickle=False) as z:
        for name in z.files:
            scheme, key = name.split("/", 1)
            arr = z[name].astype(np.float64)
            arr.setflags(write=False)
            out.setdefault(scheme, {})[key] = arr
    return out


@functools.lru_cache(maxsize=1)
def load_shipped() -> dict:
    """{"results": the shipped results dict, "weights": {scheme: {name: float64 array}}, "longer": the
    follow-up results dict or None}."""
    results = json.loads(RESULTS_FILE.read_text(encoding="utf-8"))
    longer = json.loads(LONGER_FILE.read_text(encoding="utf-8")) if LONGER_FILE.exists() else None
    return {"results": results, "weights": _read_weights(WEIGHTS_FILE), "longer": longer}


def spread(values) -> dict:
    """Mean, min, max and std (ddof 0) of the finite values; NaNs if there are none."""
    a = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=np.float64)
    if a.size == 0:
        return {"mean": math.nan, "min": math.nan, "max": math.nan, "std": math.nan, "n": 0}
    return {"mean": float(a.mean()), "min": float(a.min()), "max": float(a.max()), "std": float(a.std()), "n": int(a.size)}


def spread_text(values, undefined: str = "no row past L") -> str:
    """"mean (min–max)" of the finite values to 3 decimals, as docs/lab.md and the page print a cell; ``undefined``
    when there are none."""
    sp = spread(values)
    return undefined if sp["n"] == 0 else f"{sp['mean']:.3f} ({sp['min']:.3f}–{sp['max']:.3f})"


def gaps(results: dict, scheme: str, n: int) -> list[float | None]:
    """Mean gap (loss - Bayes loss) at length n for each seed; None where undefined."""
    out = []
    for run in results["runs"][scheme].values():
        m = run["mean"].get(str(n))
        out.append(None if m is None else m["gap"])
    return out


def ratio(results: dict, scheme: str, *, at: int = 4) -> dict:
    """(loss at at*L - floor) / (loss at L - floor) per seed, with its spread; for the Compare table.

    Uses the gap against the Bayes loss on the same contexts (the exact floor of that sample).
    Returns {"ratio": mean, "min", "max", "std", "per_seed": [...], "reason": None or why it is NaN}.
    """
    L = results["config"]["train_len"]
    if scheme in results["undefined"] and all(g is None for g in gaps(results, scheme, at * L)):
        reason = results["undefined"][scheme]
        return {"ratio": math.nan, "min": math.nan, "max": math.nan, "std": math.nan, "per_seed": [], "reason": reason}
    per = [b / a if a is not None and b is not None and a > 0 else math.nan
           for a, b in zip(gaps(results, scheme, L), gaps(results, scheme, at * L))]
    s = spread(per)
    return {"ratio": s["mean"], "min": s["min"], "max": s["max"], "std": s["std"], "per_seed": per, "reason": None}


def extrapolation_ratios(results: dict | None = None, *, at: int = 4) -> dict[str, dict]:
    """{scheme key: ratio(...)} for every trained scheme (default: the shipped results).

    The lead's Compare table reads this: "Extrapolates beyond training length?" becomes the
    measured (loss at 4L - floor) / (loss at L - floor); NaN with a reason for the learned table.
    """
    res = load_shipped()["results"] if results is None else results
    return {s: ratio(res, s, at=at) for s in res["runs"]}


def extended_scheme(results: dict) -> str | None:
    """The scheme whose runs were also evaluated with the test-time context extensions (None: no such run)."""
    return next((s for s, runs in results["runs"].items() if any(r.get("extensions") for r in runs.values())), None)


def learned_check(results: dict) -> list[dict]:
    """Per (scheme, seed): did the model learn the task?  gap at L <= 10 % of (log V - floor)."""
    L = results["config"]["train_len"]
    budget = LEARNED_FRACTION * (results["uniform"] - results["floor"])
    rows = []
    for scheme, runs in results["runs"].items():
        for seed, run in runs.items():
            gap = run["mean"][str(L)]["gap"]
            rows.append({"scheme": scheme, "seed": int(seed), "gap_at_L": gap, "budget": budget,
                         "fraction": gap / (results["uniform"] - results["floor"]), "learned": bool(gap <= budget)})
    return rows


EXTRAPOLATES_RATIO = 2.0  # "extrapolates": the gap at 4L is at most twice the gap at L


def compare_rows(results: dict | None = None, *, at: int = 4, longer: dict | None = None) -> dict[str, dict]:
    """The lab's measurement for each registry scheme it covers, keyed by registry key (the Compare table).

    {key: {"ratio", "ratio_min", "ratio_max", "gap_L", "gap_at", "gap_at_min", "gap_at_max", "at",
    "extrapolates" (ratio <= EXTRAPOLATES_RATIO; None when undefined), "reason", "measured_as"}}.
    A RoPE context extension is the RoPE model with that extension applied at test time: its ratio
    is (its gap at at*L) / (plain RoPE's gap at L).  Every lookup table of the registry gets the
    lab's learned table, which has no row past L.  Registry schemes the lab does not train are absent.
    A scheme that did not learn the task takes its row from ``longer`` (the follow-up run with more steps;
    with the shipped results it defaults to the shipped one) if it learned there at every seed.
    """
    from posenc.lab.positions import ENGINE, EXTENSION_NAMES, EXTENSIONS, NAMES, REGISTRY_KEY
    from posenc.registry import SCHEMES

    tables = [k for k, s in SCHEMES.items() if s.max_len is not None]

    res = load_shipped()["results"] if results is None else results
    if results is None and longer is None:
        longer = load_shipped()["longer"]
    L = res["config"]["train_len"]
    out: dict[str, dict] = {}
    relearned = set()
    if longer is not None:
        late = {r["scheme"] for r in learned_check(longer) if not r["learned"]}
        relearned = set(longer["runs"]) - late

    def row(per: list, gap_l: list, gap_at: list, reason, measured_as: str) -> dict:
        r, g = spread(per), spread(gap_at)
        ok = None if reason or not math.isfinite(r["mean"]) else bool(r["mean"] <= EXTRAPOLATES_RATIO)
        return {"ratio": r["mean"], "ratio_min": r["min"], "ratio_max": r["max"], "gap_L": spread(gap_l)["mean"],
                "gap_at": g["mean"], "gap_at_min": g["min"], "gap_at_max": g["max"], "at": at * L,
                "extrapolates": ok, "reason": reason, "measured_as": measured_as}

    unlearned = {r["scheme"]: r for r in learned_check(res) if not r["learned"]}
    for scheme in res["runs"]:
        src, measured_as = res, NAMES[scheme]
        if scheme in unlearned and scheme in relearned:
            src = longer
            measured_as = (f"{NAMES[scheme]} trained {longer['config']['steps']:,} steps (at {res['config']['steps']:,} it "
                           "did not learn the task)")
        g_l, g_at = gaps(src, scheme, L), gaps(src, scheme, at * L)
        rat = ratio(src, scheme, at=at)
        if src is res and scheme in unlearned and rat["reason"] is None:
            bad = unlearned[scheme]
            rat["reason"] = (f"it did not learn the task at L (gap {bad['gap_at_L']:.3f} nats at seed {bad['seed']}, "
                             f"above {LEARNED_FRACTION:.0%} of the uniform-to-floor gap), so its ratio says nothing")
        # the lab's learned table stands for every lookup table of the registry (each has no row past its last)
        keys = tables if ENGINE[scheme].table else [REGISTRY_KEY[scheme]]
        for key in keys:
            out[key] = row(rat["per_seed"], g_l, g_at, rat["reason"], measured_as)
    extended = extended_scheme(res)
    if extended is not None:
        base = gaps(res, extended, L)
        for ext, key in EXTENSIONS.items():
            ext_at = [r["extensions"].get(ext, {}).get(str(at * L), {}).get("gap") for r in res["runs"][extended].values()]
            per = [b / a if a and b is not None else math.nan for a, b in zip(base, ext_at)]
            out[key] = row(per, base, ext_at, None, f"{NAMES[extended]} + {EXTENSION_NAMES[ext]} at test time")
    return out


# ------------------------------------------------ issue 37: bands and the verdict (its bootstrap: posenc.lab.bootstrap)
HOLDS, DEGRADES = 0.10, 1.0  # the verdict's thresholds, chosen before looking at any result (issue 37)
VERDICTS = ("holds", "degrades", "worse than a uniform guess")
VERDICT_RULE = (f"Beyond L = mean gap over positions [L, 8L) ÷ the uniform guess's gap over the same positions, mean over "
                f"seeds with a {BOOTSTRAP_LEVEL:.0%} bootstrap interval over seeds: **holds** at most {HOLDS:.0%}, **degrades** "
                f"at most {DEGRADES:.0%}, **worse than a uniform guess** above {DEGRADES:.0%}. Thresholds fixed before the runs.")


def task_of(results: dict) -> str:
    """The task a results dict measures: its ``config["task"]``, "markov" when the file predates tasks."""
    return str(results["config"].get("task", "markov"))


def task_title(task: str) -> str:
    """How the pages name a task: "Markov" for the order-k Markov source, else the task's own name."""
    return "Markov" if task == "markov" else task


def bands(train_len: int, length: int) -> list[tuple[int, int]]:
    """The position bands [0, L), [L, 2L), [2L, 4L), [4L, 8L), ... that lie within ``length`` positions."""
    train_len = check_int("train_len", train_len, lo=1)
    length = check_int("length", length, lo=train_len)
    out, lo, hi = [], 0, train_len
    while hi <= length:
        out.append((lo, hi))
        lo, hi = hi, 2 * hi
    return out


def band_label(band: tuple[int, int], train_len: int) -> str:
    """"[0, L)", "[L, 2L)", "[2L, 4L)" ... for a band of ``bands``."""
    def m(x: int) -> str:
        return "0" if x == 0 else ("L" if x == train_len else f"{x // train_len}L")
    return f"[{m(band[0])}, {m(band[1])})"


def uniform_band_gaps(results: dict) -> dict[tuple[int, int], float]:
    """The uniform guess's gap on each band: mean over its positions of log V − the Bayes loss there (the file's
    ``uniform`` − ``bayes_by_position``), i.e. its KL from the source on the same positions the models are scored on."""
    L, bayes = results["config"]["train_len"], np.asarray(results["bayes_by_position"], dtype=np.float64)
    return {b: float(np.mean(results["uniform"] - bayes[b[0]:b[1]])) for b in bands(L, bayes.size)}


def band_gaps(results: dict, scheme: str) -> dict[tuple[int, int], list[float]]:
    """Mean gap on each band per seed, from each run's ``gap_by_position`` (at the longest length it is defined at:
    a learned table's bands stop at L)."""
    if scheme not in results["runs"]:
        raise ValueError(f"scheme must be one of {list(results['runs'])}, got {scheme!r}")
    L = results["config"]["train_len"]
    curves = [np.asarray(r["gap_by_position"], dtype=np.float64) for r in results["runs"][scheme].values()]
    n = min(c.size for c in curves)
    return {b: [float(c[b[0]:b[1]].mean()) for c in curves] for b in bands(L, n)}


def verdict_word(fraction: float) -> str | None:
    """The rule's word for a beyond-L fraction of the uniform guess's gap (None: no fraction)."""
    if fraction is None or not math.isfinite(fraction):
        return None
    return VERDICTS[0] if fraction <= HOLDS else VERDICTS[1] if fraction <= DEGRADES else VERDICTS[2]


def _fraction_row(per_seed: list[float], span: str, reason: str | None) -> dict:
    sp = spread(per_seed)
    lo, hi = bootstrap_interval(per_seed)
    return {"fraction": sp["mean"], "lo": lo, "hi": hi, "per_seed": per_seed, "seeds": sp["n"], "span": span,
            "verdict": None if reason else verdict_word(sp["mean"]), "reason": reason}


def beyond_fraction(results: dict, scheme: str) -> dict:
    """The verdict of one scheme: its mean gap over [L, end) ÷ the uniform guess's gap over [L, end), per seed, with
    end = 8L or the longest length its gap is defined at.  Returns {"fraction" (mean over seeds), "lo", "hi" (bootstrap
    interval), "per_seed", "seeds", "span" ("[L, 8L)"), "verdict" (``verdict_word``), "reason" (why there is none,
    e.g. a learned table's: it has no row past L)}."""
    L = results["config"]["train_len"]
    per_band = band_gaps(results, scheme)
    past = [b for b in per_band if b[0] >= L]
    if not past:
        why = results.get("undefined", {}).get(scheme, f"no position past L = {L} was measured")
        return {"fraction": math.nan, "lo": math.nan, "hi": math.nan, "per_seed": [], "seeds": 0, "span": None,
                "verdict": None, "reason": why}
    end = past[-1][1]
    bayes = np.asarray(results["bayes_by_position"], dtype=np.float64)[L:end]
    u = float(np.mean(results["uniform"] - bayes))
    curves = [np.asarray(r["gap_by_position"], dtype=np.float64) for r in results["runs"][scheme].values()]
    per = [float(c[L:end].mean()) / u for c in curves]
    return _fraction_row(per, band_label((L, end), L), None)


def extension_fraction(results: dict, extension: str) -> dict:
    """``beyond_fraction`` of the extended scheme with a test-time extension (or a fine-tuned row, e.g. "pi_ft"):
    the extension rows store a mean gap per length, not per position, so the fraction is its mean gap over all
    positions of the longest length it was evaluated at ÷ the uniform guess's gap over the same positions
    ("span" says which)."""
    extended = extended_scheme(results)
    if extended is None:
        raise ValueError("results has no run with extension rows")
    runs = list(results["runs"][extended].values())
    have = [e for e in runs[0]["extensions"]]
    if extension not in have:
        raise ValueError(f"extension must be one of {have}, got {extension!r}")
    L = results["config"]["train_len"]
    n = max(int(k) for k in runs[0]["extensions"][extension])
    u = float(np.mean(results["uniform"] - np.asarray(results["bayes_by_position"], dtype=np.float64)[:n]))
    per = [r["extensions"][extension][str(n)]["gap"] / u for r in runs]
    return _fraction_row(per, band_label((0, n), L) + " (whole sequence)", None)


def verdict_rows(results: dict | None = None, *, longer: dict | None = None) -> dict[str, dict]:
    """The Compare table's verdict for one task, keyed by registry key: ``beyond_fraction`` (+ "measured_as",
    "task"), with the rows of ``compare_rows`` (lookup tables share the lab's learned table, a scheme that did not
    learn the task is measured from ``longer`` if it learned there and gets no verdict otherwise, each RoPE
    extension is ``extension_fraction``)."""
    from posenc.lab.positions import ENGINE, EXTENSION_NAMES, EXTENSIONS, LAB, NAMES, REGISTRY_KEY
    from posenc.registry import SCHEMES

    res = load_shipped()["results"] if results is None else results
    if results is None and longer is None:
        longer = load_shipped()["longer"]
    task, tables = task_of(res), [k for k, s in SCHEMES.items() if s.max_len is not None]
    relearned = set()
    if longer is not None:
        relearned = set(longer["runs"]) - {r["scheme"] for r in learned_check(longer) if not r["learned"]}
    unlearned = {r["scheme"]: r for r in learned_check(res) if not r["learned"]}
    out: dict[str, dict] = {}
    for scheme in res["runs"]:
        src, measured_as = res, NAMES[scheme]
        if scheme in unlearned and scheme in relearned:
            src = longer
            measured_as = f"{NAMES[scheme]} trained {longer['config']['steps']:,} steps (at {res['config']['steps']:,} it did not learn the task)"
        row = beyond_fraction(src, scheme)
        if src is res and scheme in unlearned and row["reason"] is None:
            bad = unlearned[scheme]
            why = f"it did not learn the task at L (gap {bad['gap_at_L']:.3f} nats at seed {bad['seed']})"
            again = [r for r in learned_check(longer) if r["scheme"] == scheme and not r["learned"]] if longer else []
            if again:  # trained longer, and still not learned at some seed
                worst = max(again, key=lambda r: r["gap_at_L"])
                why += (f", nor with {longer['config']['steps']:,} steps (gap {worst['gap_at_L']:.3f} nats at seed "
                        f"{worst['seed']})")
            row.update(verdict=None, reason=why)
        for key in tables if ENGINE[scheme].table else [REGISTRY_KEY[scheme]]:
            new = {**row, "measured_as": measured_as, "task": task}
            if key in out:  # two lab schemes of one entry (T5 at HF's buckets and scaled to L): the one set from L
                first, second = (out[key], new) if LAB[scheme].per_length else (new, out[key])
                new = {**second, "measured_as": f"{second['measured_as']} (as {first['measured_as']}: "
                                                f"{first['fraction']:.0%} of a uniform guess's gap)"}
            out[key] = new
    extended = extended_scheme(res)
    if extended is not None:
        for ext in next(iter(res["runs"][extended].values()))["extensions"]:
            if ext in EXTENSIONS:
                out[EXTENSIONS[ext]] = {**extension_fraction(res, ext), "task": task,
                                        "measured_as": f"{NAMES[extended]} + {EXTENSION_NAMES[ext]} at test time"}
    return out


def task_files(directory: Path | None = None) -> dict[str, Path]:
    """{task: results file} of the shipped tasks: lab_results.json (its config's task, "markov" when absent) and every
    lab_<task>.json beside it that is not a follow-up (lab_longer.json, lab_*_longer.json) or the order sweep
    (lab_orders.json); ``directory`` defaults to the package's data."""
    out: dict[str, Path] = {}
    directory = DATA if directory is None else directory
    files = [directory / RESULTS_FILE.name] + sorted(p for p in directory.glob("lab_*.json") if p.name != RESULTS_FILE.name)
    for path in files:
        if not path.exists() or path.stem.endswith("longer") or path.stem == "lab_orders":
            continue
        out.setdefault(task_of(json.loads(path.read_text(encoding="utf-8"))), path)
    return out


@functools.lru_cache(maxsize=1)
def load_tasks() -> dict[str, dict]:
    """{task: its results dict} for every shipped task, the Markov task (lab_results.json) first."""
    return {task: json.loads(path.read_text(encoding="utf-8")) for task, path in task_files().items()}


_SHIPPED_VERDICTS: dict = {}  # the shipped tasks' verdicts, kept while load_tasks() returns the same files


def task_verdicts(tasks: dict[str, dict] | None = None) -> dict[str, dict[str, dict]]:
    """{task: verdict_rows(its results)} (default: every shipped task, each with its follow-up run if one ships).

    The shipped verdicts depend on no control, and Compare and the claims ask for them at every new setting: they are
    computed once per ``load_tasks()`` result (the same files) and each call gets its own copy."""
    if tasks is None:
        shipped, kept = load_tasks(), _SHIPPED_VERDICTS.get("kept", (None, None))
        if kept[0] is not shipped:
            kept = shipped, {t: verdict_rows(r, longer=load_task(t)["longer"]) for t, r in shipped.items()}
            _SHIPPED_VERDICTS["kept"] = kept  # one assignment: a concurrent reader sees the old pair or the new
        return copy.deepcopy(kept[1])
    return {t: verdict_rows(r) for t, r in tasks.items()}


def load_task(task: str) -> dict:
    """A shipped task as a run: the Markov task is ``load_shipped()``; another is {"results": its file, "weights": its
    weights (lab_<task>_weights.npz beside it) or None when none ship, "longer": its follow-up
    (lab_<task>_longer.json) or None}."""
    shipped = load_shipped()
    if task == task_of(shipped["results"]):
        return shipped
    files = task_files()
    if task not in files:
        raise ValueError(f"task must be one of {list(files)}, got {task!r}")
    path = files[task]
    weights, longer = path.with_name(f"{path.stem}_weights.npz"), path.with_name(f"{path.stem}_longer.json")
    return {"results": load_tasks()[task], "weights": _read_weights(weights) if weights.exists() else None,
            "longer": json.loads(longer.read_text(encoding="utf-8")) if longer.exists() else None}

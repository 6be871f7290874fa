"""The shipped results, and the summaries every view (and the Compare table) reads from them.

axes: seeds, lengths L .. 8L.

``load_shipped()`` returns the results dict written by ``python -m posenc.lab`` (data/lab_results.json),
the first seed's weights (data/lab_weights.npz, float32) and the follow-up run of the schemes that did not
learn the task at the default budget, trained with more steps (data/lab_longer.json; experiment.longer_config).  Spread over seeds is always the
min-max range, with the mean; the standard deviation is reported alongside (ddof = 0).
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import numpy as np

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

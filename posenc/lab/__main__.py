"""`python -m posenc.lab`: train the default configuration and write the shipped results.

Writes posenc/lab/data/lab_results.json, lab_weights.npz and README.md (provenance: command,
settings, seeds, date, versions, wall time), and lab_longer.json: the schemes that did not learn the
task at some seed, trained again with experiment.LONGER x the steps (experiment.longer_config).  The default schemes are
positions.DEFAULT_SCHEMES (derived from the registry); ``--schemes rope,t5`` picks others (for a look, not for shipping);
``--randomize N`` trains and evaluates every scheme at randomized positions from [0, N) (Ruoss et al. 2023);
``--out DIR`` writes elsewhere.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

from posenc.lab.experiment import LONGER, LabConfig, longer_config, run_experiment
from posenc.lab.positions import DEFAULT_SCHEMES, KIND, LAB, LAB_SCHEMES, NAMES
from posenc.lab.results import DATA, extended_scheme, gaps, learned_check, save, spread_text


def _table(results: dict) -> str:
    """The results table of docs/lab.md and of the provenance README.md: scheme x length, mean gap and min-max over seeds."""
    L = results["config"]["train_len"]
    head = "| scheme | " + " | ".join(f"{n // L}L = {n}" if n != L else f"L = {n}" for n in results["lengths"]) + " |"
    lines = [head, "|---|" + "---|" * len(results["lengths"])]
    for s in results["runs"]:
        lines.append(f"| {NAMES[s]} | " + " | ".join(spread_text(gaps(results, s, n)) for n in results["lengths"]) + " |")
    extended = extended_scheme(results)
    if extended is not None:
        runs = list(results["runs"][extended].values())
        for ext in runs[0]["extensions"]:
            cells = [spread_text([r["extensions"][ext][str(n)]["gap"] for r in runs]) if str(n) in runs[0]["extensions"][ext]
                     else "—" for n in results["lengths"]]
            lines.append(f"| {NAMES[extended]} + {ext} (test time) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _longer_section(longer: dict | None, results: dict) -> str:
    if longer is None:
        return "Every model learned the task: there is no follow-up run (`lab_longer.json`)."
    checks = learned_check(longer)
    names = ", ".join(NAMES[s] for s in longer["runs"])
    return f"""- `lab_longer.json` (same format): {names}, which did not learn the task at some seed, trained again with
  {LONGER} x the steps ({longer["config"]["steps"]}; every other setting equal, by `experiment.longer_config`).
  Learned the task there: {sum(c["learned"] for c in checks)} of {len(checks)} models.

{_table(longer)}"""


def provenance(results: dict, command: str, seconds: float, longer: dict | None = None) -> str:
    import scipy

    cfg = results["config"]
    checks = learned_check(results)
    trained = ", ".join(NAMES[s] for s in cfg["schemes"] if KIND[s] == "trained bias")
    settings = "; ".join(_lab_setting(s, cfg.get("randomize", 0)) for s in cfg["schemes"] if _lab_setting(s, cfg.get("randomize", 0)))
    learned = sum(c["learned"] for c in checks)
    return f"""# Shipped results of the extrapolation lab

Produced by `{command}` on {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())} in {seconds:.0f} s wall.
Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, {platform.machine()} ({platform.system()}).

- `lab_results.json`: every number the lab page and the table of docs/lab.md show (format {results["format"]}).
- `lab_weights.npz`: the trained weights of seed {0} for every scheme, stored as float32 (for the attention
  views only; every number in the JSON comes from the float64 run).

Settings: {", ".join(f"{k} = {v}" for k, v in cfg.items() if k != "schemes")};
schemes: {", ".join(cfg["schemes"])}; training seeds 0 .. {cfg["n_seeds"] - 1}; evaluation sequences from
`numpy.random.default_rng([10000, 3])`; Markov source from `default_rng({cfg["source_seed"]})`.
What the lab sets in the registry's entries (`posenc.lab.positions.LAB`): {settings or "nothing"}.
Trained biases start from their scheme's own initialisation (`TrainableBias.init`): {trained or "none"}.

Floor (the source's conditional entropy): {results["floor"]:.6f} nats; uniform guess: {results["uniform"]:.6f} nats.
Learned the task (gap at L ≤ 10 % of the uniform-to-floor gap): {learned} of {len(checks)} models.

Gap = loss − Bayes loss on the same contexts (nats), mean (min–max) over seeds:

{_table(results)}

## The follow-up run

{_longer_section(longer, results)}
"""


def _lab_setting(scheme: str, randomize: int) -> str:
    """What the lab sets in a scheme's registry entry, in words ("" for nothing)."""
    s = LAB[scheme]
    parts = [f"{k} = {v}" for k, v in s.params.items()]
    if s.model != s.key:
        parts.append(f"trained as `{s.model}`")
    if randomize or s.randomize:
        parts.append(f"randomized positions from [0, {randomize or s.randomize}) in training and evaluation")
    return f"{NAMES[scheme]} (`{s.key}`): " + ", ".join(parts) if parts else ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m posenc.lab", description=__doc__)
    ap.add_argument("--schemes", default=",".join(DEFAULT_SCHEMES), help="comma-separated, of: " + ", ".join(LAB_SCHEMES))
    ap.add_argument("--randomize", type=int, default=0, metavar="N",
                    help="randomized positions from [0, N) for every scheme, in training and evaluation (0: off)")
    ap.add_argument("--out", default=str(DATA), help="output directory (default: the package's data/)")
    args = ap.parse_args(argv)
    schemes = tuple(s.strip() for s in args.schemes.split(",") if s.strip())
    try:
        cfg = LabConfig(schemes=schemes, randomize=args.randomize)
    except ValueError as exc:
        ap.error(str(exc))
    t0 = time.perf_counter()

    def progress(info):
        if info["step"] == info["steps"]:
            print(f"[{info['run'] + 1}/{info['runs']}] {info['name']} seed {info['seed']}: final training loss "
                  f"{info['loss']:.4f} ({time.perf_counter() - t0:.0f} s)", flush=True)

    results, weights = run_experiment(cfg, progress=progress)
    again = longer_config(cfg, results)
    longer = None
    if again is not None:
        print(f"not learned at {cfg.steps} steps: {', '.join(again.schemes)}; training them with {again.steps}", flush=True)
        longer, _ = run_experiment(again, progress=progress)
    seconds = time.perf_counter() - t0
    out = Path(args.out)
    save(results, weights, out, longer=longer)
    command = ("python -m posenc.lab" + ("" if schemes == DEFAULT_SCHEMES else f" --schemes {args.schemes}")
               + (f" --randomize {args.randomize}" if args.randomize else ""))
    (out / "README.md").write_text(provenance(results, command, seconds, longer), encoding="utf-8")
    print(_table(results))
    if longer is not None:
        print(_table(longer))
    print(f"wrote {out} in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`python -m posenc.lab`: train the lab's schemes and write their results.

Writes lab_results.json, lab_weights.npz and README.md (provenance: command, settings, seeds, date, versions, wall
time), and lab_longer.json: the schemes that did not learn the task at some seed, trained again with
experiment.LONGER x the steps (experiment.longer_config), to --out DIR (default ./lab_run).  A run never writes the
package's data/ unless asked with --ship (the default settings only: `python -m posenc.lab --ship` regenerates the
shipped files, ~30 min on 2 cores).  --schemes rope,t5 picks schemes (default: positions.DEFAULT_SCHEMES, derived from
the registry); --seeds K, --steps S; --randomize N trains and evaluates every scheme at randomized positions from
[0, N) (Ruoss et al. 2023).

Check one scheme and seed against the shipped file (exit 1 on a mismatch beyond 1e-6):
    python -m posenc.lab --schemes t5 --seeds 1 --check
Re-evaluate only the shipped extension rows (dynamic NTK position by position):
    python -m posenc.lab --reevaluate-extensions --ship
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
from posenc.lab.results import DATA, extended_scheme, gaps, learned_check, load_shipped, save, spread_text


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


TASKS = ("markov",)  # the lab's tasks: a k-th order Markov source with an exact floor (task.py)
DEFAULT_OUT = Path("lab_run")  # a default run writes here, under the working directory -- never the package's data/
CHECK_TOLERANCE = 1e-6  # --check: every number of the run within this of the shipped file


def _inside(path: Path, directory: Path) -> bool:
    path, directory = path.resolve(), directory.resolve()
    return path == directory or directory in path.parents


def check_against(results: dict, shipped: dict, *, tol: float = CHECK_TOLERANCE) -> list[str]:
    """What of ``results`` does not reproduce ``shipped`` within ``tol`` ([]: all of it).

    The run's settings must be the shipped run's but for its schemes and number of seeds (a one-scheme, one-seed run
    checks that scheme and seed); every number of each (scheme, seed) run -- training loss, mean losses, gap by position,
    extension rows -- is compared, as are the floor and the uniform guess."""
    mine, theirs = dict(results["config"]), dict(shipped["config"])
    for k in ("schemes", "n_seeds"):
        mine.pop(k), theirs.pop(k)
    if mine != theirs:
        return [f"settings differ from the shipped run: {k} = {mine.get(k)!r}, shipped {theirs.get(k)!r}"
                for k in sorted(set(mine) | set(theirs)) if mine.get(k) != theirs.get(k)]
    out = [f"{k}: {results[k]!r} != shipped {shipped[k]!r}" for k in ("floor", "uniform")
           if abs(results[k] - shipped[k]) > tol]
    for scheme, runs in results["runs"].items():
        for seed, run in runs.items():
            old = shipped["runs"].get(scheme, {}).get(seed)
            if old is None:
                out.append(f"{scheme} seed {seed}: not in the shipped file")
                continue
            out += [f"{scheme} seed {seed} {path}: {msg}" for path, msg in _diff(run, old, tol, "")]
    return out


def _diff(a, b, tol: float, path: str):
    """(path, what differs) for every leaf of two JSON values that differs by more than tol."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            yield path or "/", f"keys {sorted(set(a) ^ set(b))} in one only"
        for k in set(a) & set(b):
            yield from _diff(a[k], b[k], tol, f"{path}/{k}")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield path, f"length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            yield from _diff(x, y, tol, f"{path}/{i}")
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if not abs(a - b) <= tol:
            yield path, f"{a!r} != shipped {b!r} (by {abs(a - b):.2g})"
    elif a != b:
        yield path, f"{a!r} != shipped {b!r}"


def _parser() -> argparse.ArgumentParser:
    d = LabConfig()
    ap = argparse.ArgumentParser(prog="python -m posenc.lab", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default=TASKS[0], choices=TASKS, help="the task (default: %(default)s)")
    ap.add_argument("--schemes", default=",".join(DEFAULT_SCHEMES), help="comma-separated, of: " + ", ".join(LAB_SCHEMES))
    ap.add_argument("--seeds", type=int, default=d.n_seeds, metavar="K",
                    help="training seeds 0 .. K-1 (1 to 10; default %(default)s)")
    ap.add_argument("--steps", type=int, default=d.steps, help="training steps per model (default %(default)s)")
    ap.add_argument("--randomize", type=int, default=0, metavar="N",
                    help="randomized positions from [0, N) for every scheme, in training and evaluation (0: off)")
    ap.add_argument("--out", default=None, metavar="DIR",
                    help=f"output directory (default: ./{DEFAULT_OUT}); never the package's data/ (that is --ship)")
    ap.add_argument("--ship", action="store_true",
                    help="write the package's data/ (the shipped results, weights, follow-up run and README.md); only "
                         "with the default settings")
    ap.add_argument("--check", action="store_true",
                    help=f"write nothing: compare the run's numbers with the shipped file (within {CHECK_TOLERANCE:g}) and "
                         "exit 1 on a mismatch, e.g. --schemes t5 --seeds 1 --check")
    ap.add_argument("--reevaluate-extensions", action="store_true",
                    help="re-evaluate only the shipped run's test-time extension rows (dynamic NTK, position by position), "
                         "retraining its RoPE seeds and checking them against the shipped numbers; writes lab_results.json "
                         "to --out, or with --ship to data/ (every other byte unchanged)")
    return ap


def _destination(ap, args) -> Path | None:
    """Where the run writes (None: --check writes nothing); refuses the package's data/ without --ship."""
    if args.check:
        if args.ship or args.out:
            ap.error("--check writes nothing: drop --out / --ship")
        return None
    if args.ship:
        if args.out and not _inside(Path(args.out), DATA):
            ap.error("--ship writes the package's data/: drop --out")
        return DATA
    out = Path(args.out) if args.out else DEFAULT_OUT
    if _inside(out, DATA):
        ap.error(f"{out} is the package's data/ (the shipped results): pass --ship to regenerate them, or another --out")
    return out


def _reevaluate(out: Path) -> int:
    from posenc.lab.reevaluate import dumps, run

    t0 = time.perf_counter()
    new = run(None, progress=lambda msg: print(msg, flush=True))
    out.mkdir(parents=True, exist_ok=True)
    (out / "lab_results.json").write_text(dumps(new), encoding="utf-8")
    readme = out / "README.md"
    if out.resolve() == DATA.resolve() and readme.exists():  # the provenance file's table rows of the extensions
        rows = {line.split(" |")[0]: line for line in _table(new).splitlines() if "(test time)" in line}
        text = readme.read_text(encoding="utf-8").splitlines()
        text = [rows.get(line.split(" |")[0], line) if "(test time)" in line else line for line in text]
        readme.write_text("\n".join(text) + "\n", encoding="utf-8")
    print(f"wrote {out / 'lab_results.json'} in {time.perf_counter() - t0:.0f} s")
    return 0


def main(argv=None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    out = _destination(ap, args)
    if args.reevaluate_extensions:
        if args.check:
            ap.error("--reevaluate-extensions checks its retrained models itself: drop --check")
        return _reevaluate(out)
    schemes = tuple(s.strip() for s in args.schemes.split(",") if s.strip())
    try:
        cfg = LabConfig(schemes=schemes, randomize=args.randomize, n_seeds=args.seeds, steps=args.steps)
    except ValueError as exc:
        ap.error(str(exc))
    if args.ship and cfg != LabConfig():
        ap.error("--ship regenerates the shipped files: only with the default settings (no --schemes, --seeds, --steps, "
                 "--randomize)")
    t0 = time.perf_counter()

    def progress(info):
        if info["step"] == info["steps"]:
            print(f"[{info['run'] + 1}/{info['runs']}] {info['name']} seed {info['seed']}: final training loss "
                  f"{info['loss']:.4f} ({time.perf_counter() - t0:.0f} s)", flush=True)

    results, weights = run_experiment(cfg, progress=progress)
    if args.check:
        bad = check_against(results, load_shipped()["results"])
        for line in bad:
            print("MISMATCH", line)
        print(f"{'does not reproduce' if bad else 'reproduces'} the shipped file (tolerance {CHECK_TOLERANCE:g}): "
              f"{', '.join(schemes)}, seeds 0 .. {cfg.n_seeds - 1}")
        return 1 if bad else 0
    again = longer_config(cfg, results)
    longer = None
    if again is not None:
        print(f"not learned at {cfg.steps} steps: {', '.join(again.schemes)}; training them with {again.steps}", flush=True)
        longer, _ = run_experiment(again, progress=progress)
    seconds = time.perf_counter() - t0
    save(results, weights, out, longer=longer)
    command = ("python -m posenc.lab" + (" --ship" if args.ship else "")
               + ("" if schemes == DEFAULT_SCHEMES else f" --schemes {args.schemes}")
               + (f" --seeds {args.seeds}" if args.seeds != LabConfig().n_seeds else "")
               + (f" --steps {args.steps}" if args.steps != LabConfig().steps else "")
               + (f" --randomize {args.randomize}" if args.randomize else ""))
    (out / "README.md").write_text(provenance(results, command, seconds, longer), encoding="utf-8")
    print(_table(results))
    if longer is not None:
        print(_table(longer))
    print(f"wrote {out} in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

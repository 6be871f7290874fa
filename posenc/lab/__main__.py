"""`python -m posenc.lab`: train the lab's schemes on a task and write their results.

A run writes lab_results.json, lab_weights.npz and README.md (provenance: command, settings, seeds, date, versions, wall
time), and lab_longer.json: the schemes that did not learn the task at some seed, trained again with
experiment.LONGER x the steps (experiment.longer_config), to --out DIR (default ./lab_run).  A run never writes the
package's data/ unless asked with --ship, which regenerates every shipped file in one command, default settings only:
both tasks with SHIP_SEEDS seeds each (lab_results.json: Markov order 2; lab_induction.json), their follow-up runs, and the Markov
order sweep k = 1..4 (lab_orders.json, one seed each).  Every (task, scheme, seed) run is an independent job:
--jobs N runs them in N local processes, --cluster ADDRESS on an existing Dask scheduler (pip install distributed);
the numbers are the same bit for bit, and a progress line per finished job goes to stderr.

Check one scheme and seed against the shipped file of its task (exit 1 on a mismatch beyond 1e-6):
    python -m posenc.lab --schemes t5 --seeds 1 --check
    python -m posenc.lab --task induction --schemes alibi --seeds 1 --check
    python -m posenc.lab --order 3 --schemes rope --seeds 1 --check --cluster tcp://127.0.0.1:8786
Regenerate every shipped file (the coordinator's command, ~30 min on 2 cores):
    python -m posenc.lab --ship --jobs 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from posenc.lab.experiment import (
    LONGER,
    LabConfig,
    longer_config,
    run_experiment,
    run_many,
)
from posenc.lab.parallel import MAX_JOBS
from posenc.lab.positions import DEFAULT_SCHEMES, LAB_SCHEMES, MAX_RANGE
from posenc.lab.provenance import (  # noqa: F401 (the shipped files' names and settings, re-exported for callers)
    ORDER_SEEDS,
    ORDERS,
    ORDERS_FILE,
    SHIP_SEEDS,
    _table,
    longer_file,
    provenance,
    task_file,
    weights_file,
)
from posenc.lab.results import DATA, save
from posenc.lab.task import TASK_DEFAULTS, TASKS

SHIP_JOBS = 2  # --ship's default --jobs (the machine's cores)
DEFAULT_OUT = Path("lab_run")  # a default run writes here, under the working directory -- never the package's data/
CHECK_TOLERANCE = 1e-6  # --check: every number of the run within this of the shipped file
MAX_ORDER = 4  # --order: 1 .. 4 at the Markov task's vocabulary 8



def ship_configs() -> dict[str, LabConfig]:
    """{shipped file: its config}: each task at its defaults with SHIP_SEEDS seeds, then the Markov orders."""
    out = {task_file(t): LabConfig.for_task(t, n_seeds=SHIP_SEEDS) for t in TASKS}
    for k in ORDERS:
        out[f"{ORDERS_FILE}/{k}"] = LabConfig.for_task("markov", order=k, n_seeds=ORDER_SEEDS)
    return out


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


def shipped_for(cfg: LabConfig, directory: Path | None = None) -> dict:
    """The shipped results a run at ``cfg`` is checked against (in ``directory``, default the package's data/): its
    task's file, or for another Markov order than the default the order sweep's entry.  Raises ValueError when nothing
    shipped at that setting."""
    directory = DATA if directory is None else directory
    if cfg.task == "markov" and cfg.order != TASK_DEFAULTS["markov"]["order"]:
        path = directory / ORDERS_FILE
        orders = json.loads(path.read_text(encoding="utf-8"))["orders"] if path.exists() else {}
        if str(cfg.order) not in orders:
            raise ValueError(f"no shipped results at order {cfg.order}: the sweep has {', '.join(orders) or 'none'}")
        return orders[str(cfg.order)]
    path = directory / task_file(cfg.task)
    if not path.exists():
        raise ValueError(f"no shipped results for the task {cfg.task!r} ({path.name})")
    return json.loads(path.read_text(encoding="utf-8"))


def _save_task(results: dict, weights: dict, out: Path, longer: dict | None) -> None:
    """A task's files: results.save's for the Markov task, lab_<task>.json / _longer.json / _weights.npz for another."""
    task = results["config"].get("task", "markov")
    if task == "markov":
        save(results, weights, out, longer=longer)
        return
    out.mkdir(parents=True, exist_ok=True)
    (out / task_file(task)).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (out / longer_file(task)).unlink(missing_ok=True)
    if longer is not None:
        (out / longer_file(task)).write_text(json.dumps(longer, indent=1) + "\n", encoding="utf-8")
    flat = {f"{s}/{k}": v.astype(np.float32) for s, ps in weights.items() for k, v in ps.items()}
    np.savez_compressed(out / weights_file(task), **flat)


def _parser() -> argparse.ArgumentParser:
    d = LabConfig()
    ap = argparse.ArgumentParser(prog="python -m posenc.lab", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="markov", choices=tuple(TASKS), help="the task (default: %(default)s)")
    ap.add_argument("--order", type=int, default=None, metavar="K",
                    help=f"the Markov task's order (1 to {MAX_ORDER}; default {TASK_DEFAULTS['markov']['order']})")
    ap.add_argument("--schemes", default=",".join(DEFAULT_SCHEMES), help="comma-separated, of: " + ", ".join(LAB_SCHEMES))
    ap.add_argument("--seeds", type=int, default=d.n_seeds, metavar="K",
                    help="training seeds 0 .. K-1 (1 to 10; default %(default)s)")
    ap.add_argument("--steps", type=int, default=d.steps, help="training steps per model (1 to 100000; default %(default)s)")
    ap.add_argument("--randomize", type=int, default=0, metavar="N",
                    help=f"randomized positions from [0, N) for every scheme, in training and evaluation (0: off; "
                         f"L to {MAX_RANGE})")
    ap.add_argument("--out", default=None, metavar="DIR",
                    help=f"output directory (default: ./{DEFAULT_OUT}); never the package's data/ (that is --ship)")
    ap.add_argument("--ship", action="store_true",
                    help=f"regenerate every shipped file in the package's data/ (both tasks x {SHIP_SEEDS} seeds, "
                         f"follow-ups, orders {ORDERS[0]}..{ORDERS[-1]}); default settings only; --jobs {SHIP_JOBS} unless given")
    ap.add_argument("--check", action="store_true",
                    help=f"write nothing: compare the run's numbers with its task's shipped file (within "
                         f"{CHECK_TOLERANCE:g}) and exit 1 on a mismatch, e.g. --schemes t5 --seeds 1 --check")
    ap.add_argument("--jobs", type=int, default=None, metavar="N",
                    help=f"run the (task, scheme, seed) jobs in N local processes, one BLAS thread each (1 to {MAX_JOBS}; "
                         "default 1)")
    ap.add_argument("--cluster", default=None, metavar="ADDRESS",
                    help="submit the jobs to an existing Dask scheduler, e.g. tcp://10.0.0.5:8786 (pip install distributed)")
    ap.add_argument("--cache", type=Path, default=None, metavar="DIR",
                    help="keep every finished job in DIR and read back those already there, so a stopped run resumes "
                         "(same numbers bit for bit; empty it after changing the engine)")
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


def _flag(ap, flag: str, value, lo: int, hi: int) -> int:
    """An integer flag within [lo, hi], or argparse's error naming the flag and the range."""
    try:
        from posenc._validate import check_int

        return check_int(flag, value, lo=lo, hi=hi)
    except ValueError as exc:
        ap.error(f"argument {exc}")


def _config(ap, args) -> LabConfig:
    """The run's LabConfig from the flags, each refused with its name and range."""
    _flag(ap, "--seeds", args.seeds, 1, 10)
    _flag(ap, "--steps", args.steps, 1, 100_000)
    _flag(ap, "--randomize", args.randomize, 0, MAX_RANGE)
    settings = {}
    if args.order is not None:
        if args.task != "markov":
            ap.error(f"argument --order: the Markov task's order; the {args.task} task has none")
        settings["order"] = _flag(ap, "--order", args.order, 1, MAX_ORDER)
    schemes = tuple(s.strip() for s in args.schemes.split(",") if s.strip())
    bad = [s for s in schemes if s not in LAB_SCHEMES]
    if bad or not schemes:
        ap.error(f"argument --schemes: {', '.join(bad) or 'none given'}: choose from {', '.join(LAB_SCHEMES)}")
    try:
        return LabConfig.for_task(args.task, schemes=schemes, randomize=args.randomize, n_seeds=args.seeds,
                                  steps=args.steps, **settings)
    except ValueError as exc:
        ap.error(str(exc))


def _runner_flags(ap, args) -> dict:
    jobs = args.jobs
    if jobs is not None:
        _flag(ap, "--jobs", jobs, 1, MAX_JOBS)
    if args.cluster is not None:
        if jobs not in (None, 1):
            ap.error("argument --jobs: give --jobs or --cluster, not both (the cluster's workers are its processes)")
        if not args.cluster.strip():
            ap.error("argument --cluster: a Dask scheduler address such as tcp://127.0.0.1:8786")
        return {"jobs": 1, "cluster": args.cluster, "cache": args.cache}
    return {"jobs": jobs or (SHIP_JOBS if args.ship else 1), "cluster": None, "cache": args.cache}


def _command(args, default: LabConfig) -> str:
    parts = ["python -m posenc.lab"] + (["--ship"] if args.ship else [])
    parts += [] if args.task == "markov" else [f"--task {args.task}"]
    parts += [] if args.order is None else [f"--order {args.order}"]
    parts += [] if args.schemes == ",".join(DEFAULT_SCHEMES) else [f"--schemes {args.schemes}"]
    parts += [f"--seeds {args.seeds}"] if args.seeds != default.n_seeds else []
    parts += [f"--steps {args.steps}"] if args.steps != default.steps else []
    parts += [f"--randomize {args.randomize}"] if args.randomize else []
    parts += [f"--jobs {args.jobs}"] if args.jobs else []
    parts += [f"--cluster {args.cluster}"] if args.cluster else []
    parts += [f"--cache {args.cache}"] if args.cache else []
    return " ".join(parts)


def _follow_ups(pairs: dict, runner: dict) -> dict:
    """{file: follow-up results or None} of the runs in ``pairs`` {file: (results, weights)}, one executor for all."""
    again = {name: longer_config(LabConfig.from_dict(res["config"]), res) for name, (res, _) in pairs.items()}
    todo = {name: c for name, c in again.items() if c is not None}
    for name, c in todo.items():
        print(f"{name}: not learned at {c.steps // LONGER} steps: {', '.join(c.schemes)}; training them with {c.steps}",
              file=sys.stderr, flush=True)
    done = run_many(list(todo.values()), stream=sys.stderr, **runner) if todo else []
    out = {name: None for name in pairs}
    out.update({name: res for name, (res, _) in zip(todo, done)})
    return out


def _ship(args, runner: dict, t0: float) -> int:
    cfgs = ship_configs()
    print(f"--ship: {len(cfgs)} experiments on {runner['cluster'] or str(runner['jobs']) + ' process(es)'}",
          file=sys.stderr, flush=True)
    ran = dict(zip(cfgs, run_many(list(cfgs.values()), stream=sys.stderr, **runner)))
    tasks = {name: pair for name, pair in ran.items() if not name.startswith(ORDERS_FILE)}
    longer = _follow_ups(tasks, runner)
    seconds = time.perf_counter() - t0
    for name, (res, w) in tasks.items():
        _save_task(res, w, DATA, longer[name])
    orders = {name.split("/")[1]: res for name, (res, _) in ran.items() if name.startswith(ORDERS_FILE)}
    from posenc.lab.experiment import FORMAT

    (DATA / ORDERS_FILE).write_text(json.dumps({"format": FORMAT, "task": "markov", "orders": orders}, indent=1) + "\n",
                                    encoding="utf-8")
    main_name = task_file("markov")
    others = [(name, res, longer[name]) for name, (res, _) in tasks.items() if name != main_name]
    (DATA / "README.md").write_text(provenance(tasks[main_name][0], _command(args, LabConfig()), seconds, longer[main_name],
                                               others=others, orders=orders), encoding="utf-8")
    print(f"wrote {DATA} in {seconds:.0f} s", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    out = _destination(ap, args)
    runner = _runner_flags(ap, args)
    cfg = _config(ap, args)
    if args.ship and (cfg != LabConfig.for_task(args.task) or args.task != "markov" or args.order is not None):
        ap.error("--ship regenerates every shipped file at the default settings: drop --task, --order, --schemes, "
                 "--seeds, --steps, --randomize")
    t0 = time.perf_counter()
    if args.ship:
        return _ship(args, runner, t0)
    if args.check:
        try:
            shipped = shipped_for(cfg)
        except ValueError as exc:
            ap.error(f"--check: {exc}")
    results, weights = run_experiment(cfg, stream=sys.stderr, **runner)
    if args.check:
        bad = check_against(results, shipped)
        for line in bad:
            print("MISMATCH", line)
        print(f"{'does not reproduce' if bad else 'reproduces'} the shipped file (tolerance {CHECK_TOLERANCE:g}): "
              f"{cfg.task}, {', '.join(cfg.schemes)}, seeds 0 .. {cfg.n_seeds - 1}")
        return 1 if bad else 0
    again = longer_config(cfg, results)
    longer = None
    if again is not None:
        print(f"not learned at {cfg.steps} steps: {', '.join(again.schemes)}; training them with {again.steps}",
              file=sys.stderr, flush=True)
        longer, _ = run_experiment(again, stream=sys.stderr, **runner)
    seconds = time.perf_counter() - t0
    _save_task(results, weights, out, longer)
    (out / "README.md").write_text(provenance(results, _command(args, LabConfig()), seconds, longer), encoding="utf-8")
    print(_table(results))
    if longer is not None:
        print(_table(longer))
    print(f"wrote {out} in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
